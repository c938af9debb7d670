/* tests/fuzz/fuzz_experiment.c: libFuzzer harness for
 * experiment_load_data() (config/experiment.h): the GLib key file, the
 * --set overrides, the sweep, every key's typed parser (the units of
 * models/units.h, codec specs through codec_create(), gradient
 * distributions) and the checks that need several keys.
 *
 * Input: an experiment file. Each line that starts with "#set " (a
 * comment to GKeyFile) also gives its rest as one --set expression, in
 * order, so the shipped experiments are seeds as they are. Sweeps are
 * capped at MAX_POINTS points (larger ones fail with the limit's message,
 * which is checked like any other).
 *
 * Properties checked besides memory safety and leaks (abort() on
 * violation):
 *   - a failure is NULL with a non-empty one-line message that starts
 *     with the file's name or "--set";
 *   - an experiment has 1..MAX_POINTS points, each with a 16-hex-digit
 *     hash, nodes >= 1 and, with stragglers, a slowdown >= 1 for every
 *     worker;
 *   - the effective configuration of a point (what `gradsim run` writes
 *     to config.txt and reads back) loads again as an experiment of one
 *     point with the same configuration and hash. */
#include "experiment.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* g_strsplit() finds each line with strstr(), whose AddressSanitizer
 * wrapper measures the whole rest of the string first: quadratic in the
 * file's length, about 100 times slower on the shipped files. The
 * parsers are not quadratic without the wrapper. */
const char *__asan_default_options(void) { return "intercept_strstr=0"; }

enum { MAX_POINTS = 32 };
static const char NAME[] = "fuzz.ini";

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_experiment: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  abort();
}

static void check_error(const char *err) {
  if (!err || !*err)
    fail("failure without a message", NULL);
  if (strchr(err, '\n'))
    fail("the error message spans several lines", err);
  if (strncmp(err, NAME, strlen(NAME)) != 0 && strncmp(err, "--set", 5) != 0)
    fail("the error message names neither the file nor --set", err);
}

static void check_point(const struct point *p) {
  if (strlen(p->hash) != 16 || strspn(p->hash, "0123456789abcdef") != 16)
    fail("the hash is not 16 hex digits", p->hash);
  if (!p->config || !*p->config)
    fail("no effective configuration", NULL);
  if (p->nodes < 1)
    fail("a point without workers", p->config);
  if (!p->slowdown != !(p->stragglers && *p->stragglers))
    fail("slowdowns without stragglers, or stragglers without", p->config);
  for (int w = 0; p->slowdown && w < p->nodes; w++)
    if (!(p->slowdown[w] >= 1) || !isfinite(p->slowdown[w]))
      fail("a slowdown below 1 or not finite", p->config);

  /* The configuration, loaded again, is the same single point. */
  char *err = NULL;
  struct experiment *again = experiment_load_data(
      NAME, p->config, strlen(p->config), NULL, MAX_POINTS, &err);
  if (!again)
    fail("the effective configuration does not load again", err);
  if (again->points->len != 1)
    fail("the effective configuration sweeps", p->config);
  const struct point *q = g_ptr_array_index(again->points, 0);
  if (strcmp(q->config, p->config) != 0 || strcmp(q->hash, p->hash) != 0)
    fail("the effective configuration changes when loaded again", p->config);
  experiment_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The "#set " lines. */
  GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; i < size;) {
    const uint8_t *nl = memchr(data + i, '\n', size - i);
    size_t end = nl ? (size_t)(nl - data) : size;
    if (end - i >= 5 && memcmp(data + i, "#set ", 5) == 0)
      g_ptr_array_add(sets, g_strndup((const char *)data + i + 5, end - i - 5));
    i = end + 1;
  }
  g_ptr_array_add(sets, NULL);

  char *err = NULL;
  struct experiment *e = experiment_load_data(
      NAME, (const char *)data, size, (char **)sets->pdata, MAX_POINTS, &err);
  if (!e) {
    check_error(err);
  } else {
    if (err)
      fail("an experiment and an error message", err);
    if (e->points->len < 1 || e->points->len > MAX_POINTS)
      fail("the number of points is outside 1..MAX_POINTS", NULL);
    if (strcmp(e->path, NAME) != 0)
      fail("the experiment is not named after its file", e->path);
    if ((e->points->len > 1) != (e->swept->len > 0))
      fail("points and swept keys disagree", NULL);
    for (guint i = 0; i < e->points->len; i++)
      check_point(g_ptr_array_index(e->points, i));
  }
  g_free(err);
  experiment_free(e);
  g_ptr_array_free(sets, TRUE);
  return 0;
}
