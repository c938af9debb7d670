/* models/units.h: quantities with units, written as in SimGrid platform
 * files: "10Gbps", "1.25GBps", "5us", "64MiB".
 *
 * Every parser takes the whole string (a number, optionally followed
 * directly by a unit), rejects negative, zero-where-meaningless,
 * non-finite and trailing garbage, and returns 0 or -EINVAL with a message
 * naming the value and the accepted units. */
#ifndef GRADSIM_MODELS_UNITS_H
#define GRADSIM_MODELS_UNITS_H

#include <stdbool.h>
#include <stddef.h>

/* Bandwidth in bytes per second. Units: Bps (bytes/s, the default when
 * there is none) and bps (bits/s), with a decimal prefix k, M, G, T, P
 * (powers of 1000) or a binary one Ki, Mi, Gi, Ti, Pi (powers of 1024):
 * "10Gbps" = 1.25e9, "1.25GBps" = 1.25e9. Must be > 0. */
int units_bandwidth(const char *s, double *bytes_per_s, char *err,
                    size_t errlen);

/* Time in seconds. Units: s (default), ms, us, ns, ps, m (minutes), h, d,
 * w. Must be >= 0. */
int units_time(const char *s, double *seconds, char *err, size_t errlen);

/* Size in bytes. Units: B (default) and b (bits), with the prefixes of
 * units_bandwidth: "64MB" = 64e6, "64MiB" = 67108864. Must be >= 0. */
int units_size(const char *s, double *bytes, char *err, size_t errlen);

/* Seconds per byte, for gamma ("2.5e-10", or "2.5e-10s"). Must be >= 0. */
int units_time_per_byte(const char *s, double *s_per_byte, char *err,
                        size_t errlen);

/* Whether the quantity S names its unit ("10Gbps", "64MiB", "5us"), not
 * only a number ("10"): what the experiment keys require of rates and
 * sizes, whose unit-less default (bytes) is never what a user meant. */
bool units_named(const char *s);

/* BYTES as text in decimal units ("20.0 TB"), g_free'd by the caller. */
char *units_bytes_text(double bytes);

#endif
