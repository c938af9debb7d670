/* tests/test_model_catalog.c: every model file loaded at once
 * (models/model_catalog.h). */
#include <criterion/criterion.h>

#include "model_catalog.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

Test(model_catalog, every_model_file) {
  struct model_opts o = {0};
  char *names = model_list(&o);
  char **list = g_strsplit(names, ", ", -1);
  struct model_catalog c;
  char err[512];
  cr_assert_eq(model_catalog_load(&o, &c, err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.n, g_strv_length(list));
  cr_assert_geq(c.n, 13);
  for (size_t i = 0; i < c.n; i++)
    cr_assert_str_eq(c.models[i]->name, list[i]);
  model_catalog_fini(&c);
  cr_assert(c.n == 0 && c.models == NULL);
  model_catalog_fini(&c); /* an empty catalog is fine */
  g_strfreev(list);
  g_free(names);
}

Test(model_catalog, options_apply_to_every_model) {
  struct model_opts o = {.device = "V100", .precision = "mixed", .batch = 16};
  struct model_catalog c;
  char err[512];
  cr_assert_eq(model_catalog_load(&o, &c, err, sizeof err), 0, "%s", err);
  for (size_t i = 0; i < c.n; i++) {
    cr_assert_str_eq(c.models[i]->device, "V100");
    cr_assert_eq(c.models[i]->batch, 16);
  }
  model_catalog_fini(&c);
}

Test(model_catalog, bad_device_fails_empty) {
  struct model_opts o = {.device = "K80"};
  struct model_catalog c;
  char err[512] = "";
  cr_assert_lt(model_catalog_load(&o, &c, err, sizeof err), 0);
  cr_assert(strstr(err, "K80"), "message: %s", err);
  cr_assert(c.n == 0 && c.models == NULL);
}
