/* models/model_catalog.c: every model file, loaded (model_catalog.h). */
#include "model_catalog.h"

#include <glib.h>

int model_catalog_load(const struct model_opts *opts,
                       struct model_catalog *out, char *err, size_t errlen) {
  char *names = model_list(opts);
  char **list = g_strsplit(names, ", ", -1);
  g_free(names);
  out->n = 0;
  out->models = g_new0(struct model *, g_strv_length(list) + 1);
  int rc = 0;
  for (char **name = list; *name && rc == 0; name++) {
    rc = model_load(*name, opts, &out->models[out->n], err, errlen);
    if (rc == 0)
      out->n++;
  }
  g_strfreev(list);
  if (rc != 0)
    model_catalog_fini(out);
  return rc;
}

void model_catalog_fini(struct model_catalog *c) {
  for (size_t i = 0; i < c->n; i++)
    model_free(c->models[i]);
  g_free(c->models);
  c->n = 0;
  c->models = NULL;
}
