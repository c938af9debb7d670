/* models/units.c: SimGrid-style units (units.h). */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

/* The leading number of S; *REST is what follows it. */
static int number(const char *s, double *v, const char **rest) {
  if (!s || !*s || *s == ' ')
    return -EINVAL;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || errno == ERANGE || !isfinite(x))
    return -EINVAL;
  *v = x;
  *rest = end;
  return 0;
}

/* A decimal or binary prefix at the start of U: its factor, and its
 * length in *LEN (0 when there is no prefix). */
static double prefix(const char *u, size_t *len) {
  /* Decimal k M G T P; binary (IEC) Ki Mi Gi Ti Pi. */
  bool binary = u[0] && u[1] == 'i';
  const char *set = binary ? "KMGTP" : "kMGTP";
  const char *p = *u ? strchr(set, *u) : NULL;
  if (!p) {
    *len = 0;
    return 1.0;
  }
  int e = (int)(p - set) + 1;
  *len = binary ? 2 : 1;
  return pow(binary ? 1024.0 : 1000.0, e);
}

/* "<prefix>B<suffix>" or "<prefix>b<suffix>" (bits: factor 1/8). */
static int byte_unit(const char *u, const char *suffix, double *factor) {
  if (!*u) {
    *factor = 1.0;
    return 0;
  }
  size_t pl;
  double f = prefix(u, &pl);
  const char *b = u + pl;
  if ((*b != 'B' && *b != 'b') || strcmp(b + 1, suffix) != 0)
    return -EINVAL;
  *factor = *b == 'B' ? f : f / 8.0;
  return 0;
}

int units_bandwidth(const char *s, double *out, char *err, size_t errlen) {
  double v, f;
  const char *u;
  if (number(s, &v, &u) || byte_unit(u, "ps", &f))
    return fail(err, errlen,
                "bandwidth '%s' is not valid: expected a number with a unit "
                "such as 10Gbps, 1.25GBps, 100Mbps (bps = bits/s, Bps = "
                "bytes/s, prefixes k M G T P or Ki Mi Gi Ti Pi)",
                s ? s : "");
  if (!(v > 0))
    return fail(err, errlen, "bandwidth '%s' must be positive", s);
  *out = v * f;
  return 0;
}

int units_size(const char *s, double *out, char *err, size_t errlen) {
  double v, f;
  const char *u;
  if (number(s, &v, &u) || byte_unit(u, "", &f))
    return fail(err, errlen,
                "size '%s' is not valid: expected bytes, optionally with a "
                "unit such as 64MB, 64MiB, 512kB, 1GiB (B = bytes, b = bits)",
                s ? s : "");
  if (!(v >= 0))
    return fail(err, errlen, "size '%s' must not be negative", s);
  *out = v * f;
  return 0;
}

int units_time(const char *s, double *out, char *err, size_t errlen) {
  static const struct {
    const char *unit;
    double factor;
  } units[] = {{"", 1.0},        {"s", 1.0},      {"ms", 1e-3},
               {"us", 1e-6},     {"ns", 1e-9},    {"ps", 1e-12},
               {"m", 60.0},      {"h", 3600.0},   {"d", 86400.0},
               {"w", 604800.0}};
  double v;
  const char *u;
  if (number(s, &v, &u) == 0)
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp(u, units[i].unit) == 0) {
        if (!(v >= 0))
          return fail(err, errlen, "time '%s' must not be negative", s);
        *out = v * units[i].factor;
        return 0;
      }
  return fail(err, errlen,
              "time '%s' is not valid: expected seconds, optionally with a "
              "unit s, ms, us, ns, ps, m, h, d or w (e.g. 5us)",
              s ? s : "");
}

int units_time_per_byte(const char *s, double *out, char *err,
                        size_t errlen) {
  double v;
  const char *u;
  if (number(s, &v, &u) || (strcmp(u, "") != 0 && strcmp(u, "s") != 0))
    return fail(err, errlen,
                "'%s' is not valid: expected seconds per byte as a number "
                "(e.g. 2.5e-10)",
                s ? s : "");
  if (!(v >= 0))
    return fail(err, errlen, "'%s' must not be negative", s);
  *out = v;
  return 0;
}

bool units_named(const char *s) {
  double v;
  const char *u;
  return number(s, &v, &u) == 0 && *u;
}

char *units_bytes_text(double bytes) {
  static const char *const units[] = {"bytes", "KB", "MB", "GB", "TB",
                                      "PB",    "EB", "ZB", "YB"};
  size_t u = 0;
  while (bytes >= 1000 && u + 1 < G_N_ELEMENTS(units)) {
    bytes /= 1000;
    u++;
  }
  return g_strdup_printf(u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}
