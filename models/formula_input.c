/* models/formula_input.c: formula inputs from text (formula_input.h). */
#include "formula_input.h"

#include "units.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int formula_param_parse(enum formula_param p, const char *text, double *v,
                        char *err, size_t errlen) {
  const char *unit = formula_param_unit(p);
  if (strcmp(unit, "s") == 0)
    return units_time(text, v, err, errlen);
  if (strcmp(unit, "B") == 0)
    return units_size(text, v, err, errlen);
  if (strcmp(unit, "s/B") == 0)
    return units_time_per_byte(text, v, err, errlen);
  char *end;
  *v = g_ascii_strtod(text, &end);
  if (*text && *end == '\0' && isfinite(*v))
    return 0;
  snprintf(err, errlen, "'%s' is not a number", text);
  return -EINVAL;
}

int formula_rate_parse(const char *text, double *s_per_byte, char *err,
                       size_t errlen) {
  double rate;
  int rc = units_bandwidth(text, &rate, err, errlen);
  if (rc == 0 && !units_named(text)) {
    /* A bare number would be bytes per second, never what was meant. */
    snprintf(err, errlen, "bandwidth '%s' names no unit: expected e.g. "
                          "10Gbps, 1.25GBps (bps = bits/s, Bps = bytes/s)",
             text);
    return -EINVAL;
  }
  if (rc == 0)
    *s_per_byte = 1.0 / rate;
  return rc;
}

/* A whole number in 1..FORMULA_P_MAX at the start of S; *END after it. */
static bool count_prefix(const char *s, double *v, const char **end) {
  if (*s < '0' || *s > '9')
    return false;
  char *e;
  errno = 0;
  guint64 x = g_ascii_strtoull(s, &e, 10);
  if (errno || x < 1 || x > FORMULA_P_MAX)
    return false;
  *v = (double)x;
  *end = e;
  return true;
}

/* One item of a p list ("4", "2..64" or "2..1024x2") appended to PS;
 * false when it is malformed or its range takes PS beyond
 * FORMULA_P_LIST_MAX values. */
static bool p_item(const char *item, GArray *ps) {
  double lo, hi, mul = 0;
  const char *e;
  bool ok = count_prefix(item, &lo, &e);
  if (ok && *e == '\0') {
    g_array_append_val(ps, lo);
    return true;
  }
  ok = ok && strncmp(e, "..", 2) == 0 && count_prefix(e + 2, &hi, &e) &&
       hi >= lo;
  if (ok && *e == 'x') {
    char *e2;
    mul = g_ascii_strtod(e + 1, &e2);
    ok = e[1] && *e2 == '\0' && mul > 1 && isfinite(mul);
  } else {
    ok = ok && *e == '\0' && hi - lo <= FORMULA_P_LIST_MAX;
  }
  for (double v = lo; ok && v <= hi; v = mul ? ceil(v * mul) : v + 1) {
    g_array_append_val(ps, v);
    /* a factor barely above 1 counts by ones */
    ok = ps->len <= FORMULA_P_LIST_MAX;
  }
  return ok;
}

int formula_p_list_parse(const char *text, double **ps, size_t *n, char *err,
                         size_t errlen) {
  GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
  char **parts = g_strsplit(text, ",", -1);
  bool ok = parts[0] != NULL;
  for (char **p = parts; *p && ok; p++)
    ok = p_item(*p, a);
  g_strfreev(parts);
  if (!ok || a->len == 0) {
    g_array_free(a, TRUE);
    snprintf(err, errlen,
             "expected a whole number >= 1, a list (2,4,8), a range (2..64) "
             "or a geometric range (2..1024x2)");
    return -EINVAL;
  }
  *n = a->len;
  *ps = (double *)(void *)g_array_free(a, FALSE);
  return 0;
}

int formula_eval_each(const struct formula *f, const struct formula_in *in,
                      const double *ps, size_t np, struct formula_out *outs,
                      char *err, size_t errlen) {
  struct formula_in one = *in;
  for (size_t i = 0; i < np; i++) {
    one.v[FP_P] = ps[i];
    int rc = formula_eval(f, &one, &outs[i], err, errlen);
    if (rc != 0)
      return rc;
  }
  return 0;
}
