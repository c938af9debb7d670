/* tests/test_grad_dump.c: a model's synthetic gradient written to a file
 * (models/grad_dump.h): tensor selection, .f32 and .npy contents equal to
 * the generator's, and failures that leave nothing behind. Files live in
 * a fresh temporary directory per test. */
#include <criterion/criterion.h>

#include "array_io.h"
#include "grad_dump.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;

static void make_dir(void) {
  GError *e = NULL;
  dir = g_dir_make_tmp("gradsim-grad-dump-XXXXXX", &e);
  cr_assert_not_null(dir, "%s", e ? e->message : "");
}

static void remove_dir(void) {
  GDir *d = g_dir_open(dir, 0, NULL);
  for (const char *f; d && (f = g_dir_read_name(d));) {
    char *p = g_build_filename(dir, f, NULL);
    if (g_rmdir(p) != 0)
      g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
  g_free(dir);
}

TestSuite(grad_dump, .init = make_dir, .fini = remove_dir);

static struct model *hdc(void) {
  struct model *m;
  char err[512];
  cr_assert_eq(model_load("hdc", NULL, &m, err, sizeof err), 0, "%s", err);
  return m;
}

static guint files_in_dir(void) {
  guint n = 0;
  GDir *d = g_dir_open(dir, 0, NULL);
  while (d && g_dir_read_name(d))
    n++;
  if (d)
    g_dir_close(d);
  return n;
}

Test(grad_dump, ranges) {
  struct model *m = hdc();
  struct grad_dump_range r;
  cr_assert_eq(grad_dump_range(m, NULL, &r), 0);
  cr_assert(r.first == 0 && r.last == m->ntensors);
  cr_assert_eq(r.values, m->params);
  cr_assert_eq(grad_dump_range(m, m->tensors[2].name, &r), 0);
  cr_assert(r.first == 2 && r.last == 3);
  cr_assert_eq(r.values, m->tensors[2].elements);
  cr_assert_eq(grad_dump_range(m, "nope", &r), -ENOENT);
  model_free(m);
}

/* The values of tensors R the generator gives for worker 3, iteration 5. */
static float *expected(const struct model *m, const struct grad_dump_range *r,
                       const struct gradgen_params *gp) {
  float *x = g_new(float, r->values);
  size_t off = 0;
  for (size_t i = r->first; i < r->last; i++) {
    cr_assert_eq(gradgen_fill(gp, 3, (uint32_t)i, 5, 1.0, 0, x + off,
                              m->tensors[i].elements),
                 0);
    off += m->tensors[i].elements;
  }
  return x;
}

Test(grad_dump, files_hold_the_generated_values) {
  struct model *m = hdc();
  struct gradgen_params gp;
  gradgen_defaults(&gp);
  gp.seed = 9;
  struct grad_dump_range all, one;
  cr_assert_eq(grad_dump_range(m, NULL, &all), 0);
  cr_assert_eq(grad_dump_range(m, m->tensors[3].name, &one), 0);
  char err[512];
  char *f32 = g_build_filename(dir, "g.f32", NULL);
  char *npy = g_build_filename(dir, "g.npy", NULL);
  cr_assert_eq(grad_dump_write(f32, false, m, &one, &gp, 3, 5, err, sizeof err),
               0, "%s", err);
  cr_assert_eq(grad_dump_write(npy, true, m, &all, &gp, 3, 5, err, sizeof err),
               0, "%s", err);
  const struct {
    const char *path;
    const struct grad_dump_range *r;
  } cases[] = {{f32, &one}, {npy, &all}};
  for (size_t k = 0; k < 2; k++) {
    float *got, *want = expected(m, cases[k].r, &gp);
    size_t n;
    cr_assert_eq(array_read(cases[k].path, &got, &n, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(n, cases[k].r->values);
    cr_assert_eq(memcmp(got, want, 4 * n), 0, "%s differs", cases[k].path);
    free(got);
    g_free(want);
  }
  cr_assert_eq(files_in_dir(), 2, "temporary files left behind");
  g_free(f32);
  g_free(npy);
  model_free(m);
}

Test(grad_dump, failures_leave_nothing) {
  struct model *m = hdc();
  struct gradgen_params gp;
  gradgen_defaults(&gp);
  struct grad_dump_range r;
  cr_assert_eq(grad_dump_range(m, NULL, &r), 0);
  char err[512];
  char *nodir = g_build_filename(dir, "nodir", "g.f32", NULL);
  cr_assert_eq(grad_dump_write(nodir, false, m, &r, &gp, 0, 0, err, sizeof err),
               -ENOENT);
  cr_assert(strstr(err, "cannot create a file in") && strstr(err, "nodir"),
            "message: %s", err);
  /* PATH a directory: the rename fails, the temporary file goes. */
  char *sub = g_build_filename(dir, "sub.npy", NULL);
  cr_assert_eq(g_mkdir(sub, 0755), 0);
  int rc = grad_dump_write(sub, true, m, &r, &gp, 0, 0, err, sizeof err);
  cr_assert_lt(rc, 0);
  cr_assert(strstr(err, "writing") && strstr(err, "sub.npy"), "message: %s",
            err);
  cr_assert_eq(files_in_dir(), 1, "temporary file left behind");
  g_free(nodir);
  g_free(sub);
  model_free(m);
}
