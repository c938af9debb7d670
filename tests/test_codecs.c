/* tests/test_codecs.c: the gradient codecs (codecs/codec.h) against their
 * specification: exact payload bytes for hand-computed examples, tiny
 * reference implementations written from the specification (never from the
 * code under test) on random inputs, the codec.h contract (bound, bound - 1,
 * -ENOSPC and -EDOM leave the state untouched, truncated, corrupted and
 * padded payloads, decode_add), spec parsing and its error messages, and
 * the SIMD kernels against their portable twins. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */

#include "codec.h"
#include "inceptionn.h"
#include "quartic.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86 1
#include <immintrin.h>
#else
#define HAVE_X86 0
#endif

/* ---- helpers ------------------------------------------------------- */

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static float getf(const unsigned char *p) { return u2f(get32(p)); }
static void putf(unsigned char *p, float f) { put32(p, f2u(f)); }

/* splitmix64: a small deterministic generator for the test inputs. */
struct rng {
  uint64_t s;
};

static uint64_t rng_u64(struct rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unif(struct rng *r) {
  return (double)(rng_u64(r) >> 11) * 0x1p-53;
}

static size_t rng_below(struct rng *r, size_t n) {
  return (size_t)(rng_u64(r) % n);
}

/* Laplace with scale B: the heavy-tailed shape of gradients. */
static float rng_laplace(struct rng *r, double b) {
  double u = rng_unif(r);
  double e = -log(1.0 - u) * b;
  return (float)(rng_u64(r) & 1 ? e : -e);
}

/* Laplace values with some exact zeros, powers of two, tiny and huge
 * magnitudes mixed in (all finite). */
static void fill_mixed(struct rng *r, float *x, size_t n, double scale) {
  for (size_t i = 0; i < n; i++) {
    unsigned k = (unsigned)rng_below(r, 16);
    float v;
    switch (k) {
    case 0:
    case 1:
      v = 0.0f;
      break;
    case 2:
      v = ldexpf(1.0f, (int)rng_below(r, 60) - 40);
      break;
    case 3:
      v = (float)(rng_laplace(r, 1.0) * 1e-38); /* subnormals and tiny */
      break;
    case 4:
      v = (float)(rng_laplace(r, 1.0) * 1e30);
      break;
    default:
      v = rng_laplace(r, scale);
    }
    if (k == 2 && rng_u64(r) & 1)
      v = -v;
    x[i] = v;
  }
}

static void fill_laplace(struct rng *r, float *x, size_t n, double scale) {
  for (size_t i = 0; i < n; i++)
    x[i] = rng_laplace(r, scale);
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  cr_assert_not_null(p);
  return p;
}

static codec_t *mk(const char *spec) {
  codec_t *c = NULL;
  char err[CODEC_ERR_MAX] = "";
  int rc = codec_create(spec, &c, err, sizeof err);
  cr_assert_eq(rc, 0, "codec_create(\"%s\") = %d: %s", spec, rc, err);
  cr_assert_not_null(c);
  return c;
}

/* A codec created with GRADSIM_CODEC_PORTABLE set (PORTABLE) or unset. */
static codec_t *mk_mode(const char *spec, bool portable) {
  if (portable)
    setenv("GRADSIM_CODEC_PORTABLE", "1", 1);
  else
    unsetenv("GRADSIM_CODEC_PORTABLE");
  codec_t *c = mk(spec);
  unsetenv("GRADSIM_CODEC_PORTABLE");
  return c;
}

static codec_state_t *mkstate(const codec_t *c, size_t n, uint64_t seed) {
  codec_state_t *s = NULL;
  int rc = codec_state_create(c, n, seed, &s);
  cr_assert_eq(rc, 0, "codec_state_create(%s, n=%zu) = %d", codec_spec(c), n,
               rc);
  return s;
}

/* Encode X into a fresh buffer of codec_bound() bytes (at least 1), assert
 * success and return the payload; *LEN gets its size. */
static unsigned char *enc(codec_state_t *s, const float *x, size_t n,
                          size_t *len) {
  const codec_t *c = codec_state_codec(s);
  size_t cap = codec_bound(c, n);
  cr_assert(cap > 0, "%s: codec_bound(%zu) = 0", codec_spec(c), n);
  unsigned char *p = xmalloc(cap);
  ptrdiff_t r = codec_encode(s, x, n, p, cap);
  cr_assert(r >= 0, "%s: encode n=%zu failed: %td (%s)", codec_spec(c), n, r,
            codec_strerror((int)r));
  cr_assert((size_t)r <= cap, "%s: payload %td above the bound %zu",
            codec_spec(c), r, cap);
  *len = (size_t)r;
  return p;
}

/* One encode of X by a fresh stream of SPEC (seed 1). */
static unsigned char *enc_spec(const char *spec, const float *x, size_t n,
                               size_t *len) {
  codec_t *c = mk(spec);
  codec_state_t *s = mkstate(c, n, 1);
  unsigned char *p = enc(s, x, n, len);
  codec_state_free(s);
  codec_free(c);
  return p;
}

/* Decode into a buffer with guard values behind OUT[N) and check they are
 * untouched. Returns the decode's result. */
static int dec_guarded(const codec_t *c, const unsigned char *p, size_t len,
                       float *out, size_t n) {
  enum { GUARD = 16 };
  float *buf = xmalloc((n + GUARD) * sizeof *buf);
  for (size_t i = 0; i < n + GUARD; i++)
    buf[i] = 12345.0f;
  int rc = codec_decode(c, p, len, buf, n);
  for (size_t i = n; i < n + GUARD; i++)
    cr_assert(f2u(buf[i]) == f2u(12345.0f),
              "%s: decode wrote beyond out[%zu] (at %zu)", codec_spec(c), n, i);
  memcpy(out, buf, n * sizeof *out);
  free(buf);
  return rc;
}

static void assert_bytes(const unsigned char *got, size_t got_len,
                         const unsigned char *want, size_t want_len,
                         const char *what) {
  cr_assert_eq(got_len, want_len, "%s: %zu bytes, expected %zu", what, got_len,
               want_len);
  for (size_t i = 0; i < want_len; i++)
    cr_assert(got[i] == want[i], "%s: byte %zu is 0x%02x, expected 0x%02x",
              what, i, got[i], want[i]);
}

/* Bitwise equality of float vectors (so -0.0 != 0.0 and NaN == same NaN). */
static void assert_floats_bits(const float *got, const float *want, size_t n,
                               const char *what) {
  for (size_t i = 0; i < n; i++)
    cr_assert(f2u(got[i]) == f2u(want[i]),
              "%s: value %zu is %a (0x%08x), expected %a (0x%08x)", what, i,
              (double)got[i], f2u(got[i]), (double)want[i], f2u(want[i]));
}

/* The codec settings exercised by the generic tests. */
static const char *const ALL_SPECS[] = {
    "fp32",
    "fp16",
    "bf16",
    "trunc:bits=1",
    "trunc:bits=5",
    "trunc:bits=8",
    "trunc:bits=13",
    "trunc:bits=16",
    "trunc:bits=17",
    "trunc:bits=22",
    "trunc:bits=24",
    "trunc:bits=27",
    "trunc:bits=31",
    "q8",
    "inceptionn:eb=-1",
    "inceptionn:eb=-6",
    "inceptionn:eb=-8",
    "inceptionn:eb=-10",
    "inceptionn:eb=-23",
    "inceptionn:eb=-126",
    "3lc:s=1",
    "3lc:s=1.5,zre=0",
    "3lc:s=1.9,zre=1",
    "terngrad",
    "qsgd:levels=1,bucket=512",
    "qsgd:levels=7,bucket=5",
    "qsgd:levels=4,bucket=13",
    "qsgd:levels=127,bucket=64",
    "qsgd:levels=1,bucket=1",
    "qsgd:levels=32768,bucket=3",
    "qsgd:levels=100,bucket=1048576",
    "onebit",
    "topk:ratio=0.05",
    "topk:ratio=0.3",
    "topk:ratio=1",
    "rgc:ratio=0.05,select=exact",
    "rgc:ratio=0.05,select=trimmed",
    "rgc:ratio=0.05,select=binsearch",
    "rgc:ratio=0.05,select=sampled",
    "rgc:ratio=0.2,select=exact,asq=1",
    "rgc:ratio=0.2,select=trimmed,asq=1",
    "rgc:ratio=0.2,select=binsearch,asq=1",
    "rgc:ratio=1,select=exact",
};
enum { NSPECS = sizeof ALL_SPECS / sizeof ALL_SPECS[0] };

/* Codecs that must reject NaN and infinity with -EDOM. */
static bool needs_finite(const codec_t *c) {
  const char *n = codec_name(c);
  return strcmp(n, "q8") == 0 || strcmp(n, "3lc") == 0 ||
         strcmp(n, "terngrad") == 0 || strcmp(n, "qsgd") == 0 ||
         strcmp(n, "onebit") == 0 || strcmp(n, "topk") == 0 ||
         strcmp(n, "rgc") == 0;
}

/* ---- registry and spec parsing -------------------------------------- */

Test(registry, every_codec_by_name) {
  static const char *const names[] = {
      "fp32", "fp16",   "bf16", "trunc", "q8",  "inceptionn", "3lc",
      "terngrad", "qsgd", "onebit", "topk", "rgc", "powersgd"};
  size_t k = sizeof names / sizeof names[0];
  cr_assert_eq(codec_count(), k);
  for (size_t j = 0; j < k; j++) {
    bool found = false;
    for (size_t i = 0; i < codec_count(); i++) {
      const struct codec_info *info = codec_info(i);
      cr_assert_not_null(info);
      cr_assert_not_null(info->name);
      cr_assert_not_null(info->params);
      cr_assert_not_null(info->description);
      cr_assert(strlen(info->description) > 0);
      if (strcmp(info->name, names[j]) == 0)
        found = true;
    }
    cr_assert(found, "codec %s is not registered", names[j]);
    codec_t *c = mk(names[j]);
    cr_assert_str_eq(codec_name(c), names[j]);
    codec_free(c);
  }
  cr_assert_null(codec_info(codec_count()));
}

Test(registry, lossless_and_stateful_flags) {
  static const struct {
    const char *spec;
    bool lossless, stateful;
  } t[] = {
      {"fp32", true, false},  {"fp16", false, false},
      {"bf16", false, false}, {"trunc", false, false},
      {"q8", false, false},   {"inceptionn", false, false},
      {"3lc", false, true},   {"terngrad", false, false},
      {"qsgd", false, false}, {"onebit", false, true},
      {"topk", false, true},  {"rgc", false, true},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    codec_t *c = mk(t[i].spec);
    cr_assert_eq(codec_is_lossless(c), t[i].lossless, "%s", t[i].spec);
    cr_assert_eq(codec_is_stateful(c), t[i].stateful, "%s", t[i].spec);
    codec_state_t *s = mkstate(c, 10, 0);
    cr_assert_eq(codec_state_residual(s) != NULL, t[i].stateful, "%s",
                 t[i].spec);
    cr_assert_eq(codec_state_codec(s), c);
    cr_assert_eq(codec_state_step(s), 0);
    codec_state_free(s);
    codec_free(c);
  }
}

/* ---- properties (codec.h): what the layers above ask --------------- */

/* One encode of X through S, decoded: the identity the oracle's ledger
 * relies on, |decode - (x + rb - ra)| <= codec_error_bounds, on every
 * value; SCALE multiplies the decoded values first (a decoder off by 1%),
 * and the return is whether any value broke its bound. */
static bool bounds_broken(codec_state_t *s, const float *x, size_t n,
                          float scale, bool *finite) {
  const codec_t *c = codec_state_codec(s);
  size_t cap = codec_bound(c, n);
  unsigned char *out = xmalloc(cap);
  float *rb = xmalloc(4 * n), *y = xmalloc(4 * n);
  double *e = xmalloc(8 * n);
  const float *res = codec_state_residual(s);
  if (res)
    memcpy(rb, res, 4 * n);
  ptrdiff_t len = codec_encode(s, x, n, out, cap);
  cr_assert_geq(len, 0, "%s: %s", codec_spec(c), codec_strerror((int)len));
  cr_assert_eq(codec_decode(c, out, (size_t)len, y, n), 0);
  codec_error_bounds(c, x, res ? rb : NULL, res, n, e);
  bool broken = false;
  *finite = true;
  for (size_t i = 0; i < n; i++) {
    double want = (double)x[i] + (res ? (double)rb[i] - (double)res[i] : 0);
    double got = (double)y[i] * scale;
    if (!isfinite(e[i])) {
      *finite = false;
      continue;
    }
    if (!(fabs(got - want) <= e[i]))
      broken = true;
  }
  free(out);
  free(rb);
  free(y);
  free(e);
  return broken;
}

/* Every paper setting of every codec keeps its own error bounds, step
 * after step (residuals carried), on gradients with zeros, powers of two,
 * subnormals and huge values mixed in; a lossless codec's are zero; and
 * finite input gets finite bounds but where a value overflows (fp16). */
Test(properties, error_bounds_hold_for_every_setting) {
  struct rng r = {11};
  size_t n = 5003;
  float *x = xmalloc(4 * n);
  for (size_t k = 0; k < codec_setting_count(); k++) {
    codec_t *c = mk(codec_setting(k));
    codec_state_t *s = mkstate(c, n, 3);
    for (int step = 0; step < 6; step++) {
      if (step % 2)
        fill_mixed(&r, x, n, 1e-3);
      else
        fill_laplace(&r, x, n, step ? 1e-3 : 1.0);
      bool finite;
      cr_assert_not(bounds_broken(s, x, n, 1.0f, &finite), "%s, step %d",
                    codec_spec(c), step);
      if (step % 2 == 0)
        cr_assert(finite, "%s: no bound on plain gradients", codec_spec(c));
    }
    if (codec_is_lossless(c)) {
      double e[4];
      float v[4] = {1.0f, -3.5f, 1e-40f, 0.0f};
      codec_error_bounds(c, v, NULL, NULL, 4, e);
      for (int i = 0; i < 4; i++)
        cr_assert_eq(e[i], 0.0, "%s", codec_spec(c));
    }
    codec_state_free(s);
    codec_free(c);
  }
  free(x);
}

/* The bounds are tight enough that a decoder 1% off breaks them: every
 * setting but those whose own error is coarser than 1% (truncation to one
 * mantissa bit or none: 22 and 24 bits dropped lose up to half and all of
 * |x|) and ASQ's, whose bound is the spread of the values it replaced by
 * their mean (rgc.c). */
Test(properties, a_decoder_one_percent_off_breaks_the_bounds) {
  struct rng r = {12};
  size_t n = 4096;
  float *x = xmalloc(4 * n);
  for (size_t k = 0; k < codec_setting_count(); k++) {
    codec_t *c = mk(codec_setting(k));
    if (strstr(codec_spec(c), "asq=1") || codec_is_lossless(c) ||
        !strcmp(codec_spec(c), "trunc:bits=22") ||
        !strcmp(codec_spec(c), "trunc:bits=24")) {
      codec_free(c);
      continue;
    }
    codec_state_t *s = mkstate(c, n, 5);
    fill_laplace(&r, x, n, 1.0);
    bool finite;
    cr_assert(bounds_broken(s, x, n, 1.01f, &finite), "%s",
              codec_spec(c));
    codec_state_free(s);
    codec_free(c);
  }
  free(x);
}

/* A fixed-size codec's payloads are exactly its bound on any values (and
 * zeros); a data-dependent one has values whose payload is not. */
Test(properties, fixed_size_means_the_bound) {
  struct rng r = {13};
  size_t n = 1001;
  float *x = xmalloc(4 * n), *z = calloc(n, 4);
  for (size_t k = 0; k < codec_setting_count(); k++) {
    codec_t *c = mk(codec_setting(k));
    size_t cap = codec_bound(c, n);
    unsigned char *out = xmalloc(cap);
    bool differs = false;
    for (int step = 0; step < 4; step++) {
      codec_state_t *s = mkstate(c, n, 7);
      if (step == 3)
        memcpy(x, z, 4 * n);
      else
        fill_laplace(&r, x, n, step ? 1e-4 : 1.0);
      for (int rep = 0; rep < 3; rep++) {
        ptrdiff_t len = codec_encode(s, x, n, out, cap);
        cr_assert_geq(len, 0);
        if (codec_size_is_fixed(c))
          cr_assert_eq((size_t)len, cap, "%s: %td of %zu bytes",
                       codec_spec(c), len, cap);
        differs |= (size_t)len != cap;
      }
      codec_state_free(s);
    }
    cr_assert_eq(differs, !codec_size_is_fixed(c), "%s", codec_spec(c));
    free(out);
    codec_free(c);
  }
  free(x);
  free(z);
}

/* Sparse codecs say how many values a payload carries; cost families;
 * value classes. */
Test(properties, sparse_families_and_classes) {
  static const struct {
    const char *spec, *family;
    bool sparse;
    size_t classes;
  } t[] = {
      {"fp32", "", false, 0},
      {"q8", "", false, 0},
      {"inceptionn", "", false, 4},
      {"3lc", "", false, 0},
      {"bf16", "", false, 0},
      {"qsgd:levels=1,bucket=7", "", false, 0},
      {"topk:ratio=0.1", "", true, 0},
      {"rgc:ratio=0.01,select=binsearch", "rgc/binsearch", true, 0},
      {"rgc:ratio=0.01,asq=1", "rgc/trimmed", true, 0},
  };
  struct rng r = {14};
  size_t n = 1000;
  float *x = xmalloc(4 * n);
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    codec_t *c = mk(t[i].spec);
    char fam[CODEC_SPEC_MAX];
    cr_assert_eq(codec_cost_family(c, fam, sizeof fam), *t[i].family != 0);
    cr_assert_str_eq(fam, t[i].family, "%s", t[i].spec);
    cr_assert_eq(codec_is_sparse(c), t[i].sparse, "%s", t[i].spec);
    cr_assert_eq(codec_class_count(c), t[i].classes, "%s", t[i].spec);
    codec_state_t *s = mkstate(c, n, 1);
    size_t cap = codec_bound(c, n);
    unsigned char *out = xmalloc(cap);
    fill_laplace(&r, x, n, 1.0);
    ptrdiff_t len = codec_encode(s, x, n, out, cap);
    cr_assert_geq(len, 0);
    ptrdiff_t vals = codec_payload_values(c, out, (size_t)len, n);
    if (t[i].sparse) {
      /* binsearch sends between k and 2k values; the others k = 10 or
       * 100. */
      cr_assert(vals >= (strstr(t[i].spec, "topk") ? 100 : 10) &&
                    vals <= (strstr(t[i].spec, "topk") ? 100 : 20),
                "%s sent %td", t[i].spec, vals);
      cr_assert_eq(codec_payload_values(c, out, (size_t)len - 1, n),
                   -EBADMSG);
    } else {
      cr_assert_eq(vals, (ptrdiff_t)n);
    }
    uint64_t counts[CODEC_CLASS_MAX] = {0};
    uint8_t *cls = xmalloc(n);
    int rc = codec_classes(c, out, (size_t)len, n, cls, counts);
    if (t[i].classes) {
      cr_assert_eq(rc, 0);
      uint64_t sum = 0, bits = 0;
      for (size_t k = 0; k < t[i].classes; k++) {
        sum += counts[k];
        bits += counts[k] * codec_class_bits(c, k);
      }
      cr_assert_eq(sum, n);
      /* inceptionn: 2 tag bits a value, then the fields, in bytes. */
      cr_assert_eq((2 * n + bits + 7) / 8, (size_t)len);
      for (size_t j = 0; j < n; j++)
        cr_assert_lt(cls[j], t[i].classes);
      cr_assert_eq(codec_classes(c, out, (size_t)len - 1, n, NULL, NULL),
                   -EBADMSG);
    } else {
      cr_assert_eq(rc, -EINVAL, "%s", t[i].spec);
    }
    free(cls);
    free(out);
    codec_state_free(s);
    codec_free(c);
  }
  free(x);
}

/* The encoder's passes over memory (codec.h): streaming codecs 1, a
 * whole-vector statistic first 2, selections and factorisations 0; qsgd
 * by its bucket. */
Test(properties, encode_passes) {
  static const struct {
    const char *spec;
    unsigned passes;
  } t[] = {
      {"fp32", 1},
      {"fp16", 1},
      {"bf16", 1},
      {"trunc:bits=22", 1},
      {"inceptionn", 1},
      {"q8", 2},
      {"terngrad", 2},
      {"3lc", 2},
      {"3lc:s=1.9,zre=0", 2},
      {"onebit", 2},
      {"qsgd", 1},
      {"qsgd:bucket=8192", 1},
      {"qsgd:bucket=8193", 2},
      {"topk", 0},
      {"rgc", 0},
      {"powersgd", 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    codec_t *c = mk(t[i].spec);
    cr_assert_eq(codec_encode_passes(c), t[i].passes, "%s: %u", t[i].spec,
                 codec_encode_passes(c));
    codec_free(c);
  }
  /* Every registered codec is in the table above. */
  for (size_t k = 0; k < codec_count(); k++) {
    bool found = false;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
      size_t len = strcspn(t[i].spec, ":");
      found |= strlen(codec_info(k)->name) == len &&
               strncmp(t[i].spec, codec_info(k)->name, len) == 0;
    }
    cr_assert(found, "%s has no expected passes", codec_info(k)->name);
  }
}

/* The codecs whose payloads sum (codec.h: codec_sums), as NCCL sums fp16
 * and bf16 buffers: fp32, fp16 and bf16, and no other. Every paper setting
 * of a summing codec encodes N values into N codes of codec_value_bytes()
 * bytes each, whatever the values, and each code depends on its own value
 * alone (a value changed changes its code and no other): so a collective
 * adds payloads code by code. A codec that does not sum has no width. */
Test(properties, summing_codecs) {
  static const struct {
    const char *name;
    unsigned bytes;
  } t[] = {
      {"fp32", 4},     {"fp16", 2},       {"bf16", 2}, {"trunc", 0},
      {"q8", 0},       {"inceptionn", 0}, {"3lc", 0},  {"terngrad", 0},
      {"qsgd", 0},     {"onebit", 0},     {"topk", 0}, {"rgc", 0},
      {"powersgd", 0},
  };
  struct rng r = {15};
  size_t n = 1001, j = 500;
  float *x = xmalloc(4 * n);
  for (size_t k = 0; k < codec_setting_count(); k++) {
    codec_t *c = mk(codec_setting(k));
    size_t i = 0;
    while (i < sizeof t / sizeof t[0] && strcmp(t[i].name, codec_name(c)))
      i++;
    cr_assert_lt(i, sizeof t / sizeof t[0], "%s is not in the table",
                 codec_name(c));
    unsigned vb = codec_value_bytes(c);
    cr_assert_eq(vb, t[i].bytes, "%s: %u bytes a value", codec_spec(c), vb);
    cr_assert_eq(codec_sums(c), vb > 0, "%s", codec_spec(c));
    if (!vb) {
      codec_free(c);
      continue;
    }
    size_t cap = codec_bound(c, n);
    unsigned char *p0 = xmalloc(cap), *p1 = xmalloc(cap);
    codec_state_t *s = mkstate(c, n, 1);
    fill_laplace(&r, x, n, 1.0);
    cr_assert_eq(codec_encode(s, x, n, p0, cap), (ptrdiff_t)(n * vb), "%s",
                 codec_spec(c));
    x[j] = x[j] * 1000.0f + 1.0f;
    cr_assert_eq(codec_encode(s, x, n, p1, cap), (ptrdiff_t)(n * vb));
    cr_assert_eq(memcmp(p0, p1, j * vb), 0, "%s", codec_spec(c));
    cr_assert_neq(memcmp(p0 + j * vb, p1 + j * vb, vb), 0);
    cr_assert_eq(memcmp(p0 + (j + 1) * vb, p1 + (j + 1) * vb, (n - j - 1) * vb),
                 0, "%s", codec_spec(c));
    codec_state_free(s);
    free(p0);
    free(p1);
    codec_free(c);
  }
  /* Every registered codec is in the table above. */
  for (size_t k = 0; k < codec_count(); k++) {
    bool found = false;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
      found |= strcmp(codec_info(k)->name, t[i].name) == 0;
    cr_assert(found, "%s has no expected summing", codec_info(k)->name);
  }
  free(x);
}

/* The settings the benchmarks measure: every codec, its paper settings. */
Test(properties, settings_cover_every_codec) {
  size_t k = codec_setting_count();
  cr_assert_geq(k, codec_count());
  for (size_t i = 0; i < codec_count(); i++) {
    bool found = false;
    for (size_t j = 0; j < k; j++) {
      codec_t *c = mk(codec_setting(j));
      found |= strcmp(codec_name(c), codec_info(i)->name) == 0;
      codec_free(c);
    }
    cr_assert(found, "%s has no setting", codec_info(i)->name);
  }
  cr_assert_null(codec_setting(k));
}

Test(registry, free_null_and_strerror) {
  codec_free(NULL);
  codec_state_free(NULL);
  const int errs[] = {0,        -EINVAL, -ENOSPC,   -EDOM,
                      -EBADMSG, -ENOMEM, -EOVERFLOW};
  for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
    const char *m = codec_strerror(errs[i]);
    cr_assert_not_null(m);
    cr_assert(strlen(m) > 0);
    for (size_t j = 0; j < i; j++)
      cr_assert_str_neq(m, codec_strerror(errs[j]), "errors %d and %d", errs[i],
                        errs[j]);
  }
}

/* SPEC must be rejected with -EINVAL, a NULL codec and a message holding
 * every string of WANT (NULL-terminated). */
static void assert_rejected(const char *spec, const char *const *want) {
  codec_t *c = (codec_t *)(uintptr_t)1;
  char err[CODEC_ERR_MAX];
  memset(err, 0, sizeof err);
  int rc = codec_create(spec, &c, err, sizeof err);
  cr_assert_eq(rc, -EINVAL, "codec_create(\"%s\") = %d, expected -EINVAL", spec,
               rc);
  cr_assert_null(c, "codec_create(\"%s\") failed but set *out", spec);
  cr_assert(strlen(err) > 0 && strlen(err) < sizeof err,
            "codec_create(\"%s\"): no message", spec);
  cr_assert_null(strchr(err, '\n'), "\"%s\": message is not one line: %s", spec,
                 err);
  for (size_t i = 0; want[i]; i++)
    cr_expect_not_null(strstr(err, want[i]),
                       "codec_create(\"%s\"): message \"%s\" lacks \"%s\"",
                       spec, err, want[i]);
  /* No message buffer at all is fine too. */
  c = NULL;
  cr_assert_eq(codec_create(spec, &c, NULL, 0), -EINVAL, "%s", spec);
  cr_assert_null(c);
}

#define REJECT(spec, ...)                                                      \
  do {                                                                         \
    static const char *const want_[] = {__VA_ARGS__, NULL};                    \
    assert_rejected(spec, want_);                                              \
  } while (0)

Test(parse, inceptionn_eb_range) {
  REJECT("inceptionn:eb=0", "eb", "-126", "-1");
  REJECT("inceptionn:eb=-127", "eb", "-126", "-1");
  REJECT("inceptionn:eb=5", "eb", "-126", "-1");
  REJECT("inceptionn:eb=2^-127", "eb", "-126", "-1");
  REJECT("inceptionn:eb=2^0", "eb", "-126", "-1");
  REJECT("inceptionn:eb=-10x", "eb", "-126", "-1");
  REJECT("inceptionn:eb=", "eb");
  codec_t *c = mk("inceptionn:eb=-126");
  codec_free(c);
  c = mk("inceptionn:eb=-1");
  codec_free(c);
}

Test(parse, tlc_s_range) {
  REJECT("3lc:s=2", "s=2", "[1, 2)");
  REJECT("3lc:s=0.99", "s=0.99", "[1, 2)");
  REJECT("3lc:s=-1", "s=-1", "[1, 2)");
  REJECT("3lc:s=nan", "s=nan", "[1, 2)");
  REJECT("3lc:s=1.5,zre=2", "zre");
  codec_t *c = mk("3lc:s=1");
  codec_free(c);
  c = mk("3lc:s=1.999");
  codec_free(c);
}

Test(parse, topk_ratio_range) {
  REJECT("topk:ratio=0", "ratio", "(0, 1]");
  REJECT("topk:ratio=1.01", "ratio", "(0, 1]");
  REJECT("topk:ratio=-0.5", "ratio", "(0, 1]");
  codec_t *c = mk("topk:ratio=1");
  codec_free(c);
}

Test(parse, rgc_parameters) {
  REJECT("rgc:ratio=0", "ratio", "(0, 1]");
  REJECT("rgc:ratio=2", "ratio", "(0, 1]");
  REJECT("rgc:select=fastest", "select", "exact", "trimmed", "binsearch",
         "sampled");
  REJECT("rgc:asq=2", "asq");
  codec_t *c = mk("rgc:ratio=1,select=binsearch,asq=1");
  codec_free(c);
}

Test(parse, trunc_bits_range) {
  REJECT("trunc:bits=0", "bits", "1", "31");
  REJECT("trunc:bits=32", "bits", "1", "31");
  codec_t *c = mk("trunc:bits=31");
  codec_free(c);
  c = mk("trunc:bits=1");
  codec_free(c);
}

Test(parse, unknown_codec_key_duplicate_empty) {
  REJECT("zstd", "zstd", "fp32", "rgc");
  REJECT("fp33", "fp33");
  REJECT("", "codec");
  REJECT("q8:bits=8", "bits");
  REJECT("fp32:x=1", "x");
  REJECT("3lc:t=1", "t");
  REJECT("inceptionn:eb=-10,eb=-6", "eb");
  REJECT("3lc:s=1.5,s=1.5", "s");
  REJECT("3lc:", "3lc");
  REJECT("3lc:s=1.5,", "3lc");
  REJECT("3lc:,s=1.5", "3lc");
  REJECT("3lc:s=1.5,,zre=1", "3lc");
  REJECT("3lc:s", "s");
  REJECT("rgc:ratio=0.1,select=sampled,asq=1", "asq", "sampled");
  REJECT("rgc:asq=1,select=sampled", "asq", "sampled");
  /* Longer than CODEC_SPEC_MAX - 1. */
  char longspec[CODEC_SPEC_MAX + 8];
  memset(longspec, 'a', sizeof longspec - 1);
  longspec[sizeof longspec - 1] = '\0';
  codec_t *c = NULL;
  cr_assert_eq(codec_create(longspec, &c, NULL, 0), -EINVAL);
  cr_assert_null(c);
  cr_assert_eq(codec_create(NULL, &c, NULL, 0), -EINVAL);
}

Test(parse, canonical_spec_round_trips) {
  static const char *const specs[] = {"fp32",
                                      "fp16",
                                      "trunc",
                                      "trunc:bits=22",
                                      "q8",
                                      "inceptionn",
                                      "inceptionn:eb=2^-10",
                                      "inceptionn:eb=-6",
                                      "inceptionn:eb=-126",
                                      "3lc",
                                      "3lc:s=1.5",
                                      "3lc:zre=0,s=1.25",
                                      "3lc:s=1.9,zre=1",
                                      "terngrad",
                                      "onebit",
                                      "topk",
                                      "topk:ratio=0.25",
                                      "topk:ratio=0.050",
                                      "rgc",
                                      "rgc:ratio=0.01,select=binsearch,asq=1",
                                      "rgc:select=sampled",
                                      "rgc:asq=0,ratio=1e-3,select=exact",
                                      "bf16",
                                      "qsgd",
                                      "qsgd:bucket=100",
                                      "qsgd:levels=32768,bucket=1"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    codec_t *a = mk(specs[i]);
    char canon[CODEC_SPEC_MAX];
    snprintf(canon, sizeof canon, "%s", codec_spec(a));
    cr_assert(strncmp(canon, codec_name(a), strlen(codec_name(a))) == 0,
              "spec %s does not start with the name", canon);
    codec_t *b = mk(canon);
    cr_assert_str_eq(codec_spec(b), canon, "%s: canonical %s reparses as %s",
                     specs[i], canon, codec_spec(b));
    cr_assert_str_eq(codec_name(b), codec_name(a));
    codec_free(a);
    codec_free(b);
  }
}

/* Specs that mean the same codec have the same canonical spelling. */
Test(parse, equivalent_specs_same_canonical) {
  static const char *const same[][3] = {
      {"inceptionn:eb=2^-10", "inceptionn:eb=-10", NULL},
      {"inceptionn:eb=2^-6", "inceptionn:eb=-6", NULL},
      {"3lc:zre=0,s=1.25", "3lc:s=1.25,zre=0", NULL},
      {"rgc:asq=1,ratio=0.01,select=exact",
       "rgc:select=exact,ratio=0.010,asq=1", NULL},
      {"topk:ratio=0.25", "topk:ratio=2.5e-1", NULL},
      {"trunc:bits=22", "trunc:bits=+22", NULL},
      {"qsgd", "qsgd:bucket=512,levels=07", NULL},
      {"qsgd:levels=+1", "qsgd:levels=1,bucket=512", NULL},
  };
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    codec_t *a = mk(same[i][0]), *b = mk(same[i][1]);
    cr_assert_str_eq(codec_spec(a), codec_spec(b), "%s vs %s", same[i][0],
                     same[i][1]);
    codec_free(a);
    codec_free(b);
  }
  /* Different parameters, different specs. */
  codec_t *a = mk("inceptionn:eb=-10"), *b = mk("inceptionn:eb=-9");
  cr_assert_str_neq(codec_spec(a), codec_spec(b));
  cr_assert_not_null(strstr(codec_spec(a), "-10"));
  codec_free(a);
  codec_free(b);
}

/* ---- fp32 ------------------------------------------------------------ */

Test(fp32, identity_bytes_and_decode) {
  const float x[] = {0.0f,
                     -0.0f,
                     1.0f,
                     -3.5f,
                     FLT_MIN,
                     1e-45f,
                     FLT_MAX,
                     INFINITY,
                     -INFINITY,
                     u2f(0x7fc00001u),
                     u2f(0xff800123u)};
  size_t n = sizeof x / sizeof x[0], len;
  unsigned char *p = enc_spec("fp32", x, n, &len);
  cr_assert_eq(len, 4 * n);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(get32(p + 4 * i), f2u(x[i]), "value %zu", i);
  codec_t *c = mk("fp32");
  float out[sizeof x / sizeof x[0]];
  cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
  assert_floats_bits(out, x, n, "fp32 decode");
  free(p);
  codec_free(c);
}

/* ---- fp16 ------------------------------------------------------------ */

/* Reference binary16 encoding, round to nearest even (rint in the default
 * rounding mode), from the format's definition. NaN: the quiet NaN with
 * the top payload bits (only its NaN-ness is checked against it). */
static uint16_t ref_f16(float f) {
  uint32_t u = f2u(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  if (isnan(f))
    return (uint16_t)(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
  double a = fabs((double)f);
  if (a >= 65520.0) /* halfway between 65504 and 65536: even is 2^16 */
    return (uint16_t)(sign | 0x7c00u);
  if (a < 0x1p-14) /* subnormal: m 2^-24; m = 1024 is the smallest normal */
    return (uint16_t)(sign | (uint16_t)rint(a * 0x1p24));
  int e;
  frexp(a, &e);                            /* a in [2^(e-1), 2^e) */
  double m = rint(a * ldexp(1.0, 11 - e)); /* in [1024, 2048] */
  uint32_t h = ((uint32_t)(e - 1 + 15) << 10) + ((uint32_t)m - 1024u);
  return (uint16_t)(sign | h); /* m = 2048 carries into the exponent */
}

/* Reference binary16 decoding (NaN: any NaN of the same sign). */
static float ref_f16_dec(uint16_t h) {
  unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  double v;
  if (e == 0)
    v = ldexp((double)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp((double)(1024 + m), (int)e - 25);
  float f = (float)v;
  return h & 0x8000u ? -f : f;
}

static bool is_half_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

Test(fp16, hand_values) {
  static const struct {
    float x;
    uint16_t h;
  } t[] = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {65504.0f, 0x7bff},
      {65519.99f, 0x7bff},
      {65520.0f, 0x7c00}, /* tie between 65504 and 2^16: to even, inf */
      {1e10f, 0x7c00},    /* overflow */
      {-1e10f, 0xfc00},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      {1.0f + 0x1p-11f, 0x3c00},     /* tie: to even (down) */
      {1.0f + 3 * 0x1p-11f, 0x3c02}, /* tie: to even (up) */
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},
      {2048.0f + 1.0f, 0x6800}, /* tie at ulp 2: even */
      {2048.0f + 3.0f, 0x6802},
      {0x1p-14f, 0x0400},     /* smallest normal */
      {0x1p-24f, 0x0001},     /* smallest subnormal */
      {0x1p-25f, 0x0000},     /* tie: to even zero */
      {3 * 0x1p-25f, 0x0002}, /* tie: to even 2 */
      {0x1p-25f + 0x1p-40f, 0x0001},
      {-5 * 0x1p-25f, 0x8002},       /* 2.5 ulp: even 2 */
      {0x1p-14f - 0x1p-25f, 0x0400}, /* rounds up into the normals */
      {1e-30f, 0x0000},
      {0.1f, 0x2e66},
      {0.333333343f, 0x3555},
  };
  size_t n = sizeof t / sizeof t[0];
  float x[sizeof t / sizeof t[0]];
  for (size_t i = 0; i < n; i++)
    x[i] = t[i].x;
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("fp16", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    cr_assert_eq(len, 2 * n);
    for (size_t i = 0; i < n; i++) {
      uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
      cr_assert_eq(h, t[i].h, "portable=%d: fp16(%a) = 0x%04x, expected 0x%04x",
                   portable, (double)t[i].x, h, t[i].h);
      cr_assert_eq(ref_f16(t[i].x), t[i].h, "reference of %a", (double)t[i].x);
    }
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
}

Test(fp16, nan_stays_nan) {
  const float x[] = {NAN,
                     -NAN,
                     u2f(0x7f800001u),
                     u2f(0x7fffffffu),
                     u2f(0xff812345u),
                     u2f(0x7fc00000u),
                     u2f(0x7f802000u),
                     u2f(0x7f800010u),
                     1.0f};
  size_t n = sizeof x / sizeof x[0];
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("fp16", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    float out[sizeof x / sizeof x[0]];
    cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
    for (size_t i = 0; i + 1 < n; i++) {
      uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
      cr_assert(is_half_nan(h), "portable=%d: NaN 0x%08x encoded as 0x%04x",
                portable, f2u(x[i]), h);
      cr_assert_eq(h >> 15, f2u(x[i]) >> 31, "sign of NaN %zu", i);
      cr_assert(isnan(out[i]), "NaN %zu decoded to %a", i, (double)out[i]);
    }
    cr_assert_eq(out[n - 1], 1.0f);
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
}

/* Every float exactly halfway between two adjacent halves, one float ulp
 * on each side of it, and a stride through all bit patterns. */
static float *fp16_sweep(size_t *np) {
  size_t cap = 3 * 2 * 0x7c00 + 2 * 0x100000 + 16, n = 0;
  float *x = xmalloc(cap * sizeof *x);
  for (uint32_t h = 0; h < 0x7c00; h++) {
    double lo = ref_f16_dec((uint16_t)h);
    double hi = h + 1 < 0x7c00 ? ref_f16_dec((uint16_t)(h + 1)) : 65536.0;
    float mid = (float)((lo + hi) / 2); /* exact in float */
    cr_assert_eq((double)mid, (lo + hi) / 2);
    float v[3] = {mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY)};
    for (int k = 0; k < 3; k++) {
      x[n++] = v[k];
      x[n++] = -v[k];
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093)
    x[n++] = u2f((uint32_t)u);
  cr_assert(n <= cap);
  *np = n;
  return x;
}

Test(fp16, round_to_nearest_even_sweep) {
  size_t n;
  float *x = fp16_sweep(&n);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("fp16", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    cr_assert_eq(len, 2 * n);
    for (size_t i = 0; i < n; i++) {
      uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
      uint16_t want = ref_f16(x[i]);
      if (isnan(x[i]))
        cr_assert(is_half_nan(h) && (h >> 15) == (want >> 15),
                  "portable=%d: NaN 0x%08x -> 0x%04x", portable, f2u(x[i]), h);
      else if (h != want)
        cr_assert_fail("portable=%d: fp16(%a = 0x%08x) = 0x%04x, expected "
                       "0x%04x",
                       portable, (double)x[i], f2u(x[i]), h, want);
    }
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
  free(x);
}

Test(fp16, decode_all_halves) {
  size_t n = 65536;
  unsigned char *p = xmalloc(2 * n);
  for (size_t i = 0; i < n; i++) {
    p[2 * i] = (unsigned char)i;
    p[2 * i + 1] = (unsigned char)(i >> 8);
  }
  float *out = xmalloc(n * sizeof *out), *acc = xmalloc(n * sizeof *acc);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("fp16", portable);
    cr_assert_eq(dec_guarded(c, p, 2 * n, out, n), 0);
    for (size_t i = 0; i < n; i++) {
      float want = ref_f16_dec((uint16_t)i);
      if (is_half_nan((uint16_t)i))
        cr_assert(isnan(out[i]) && signbit(out[i]) == signbit(want),
                  "portable=%d: half 0x%04zx -> %a", portable, i,
                  (double)out[i]);
      else if (f2u(out[i]) != f2u(want))
        cr_assert_fail("portable=%d: half 0x%04zx -> %a, expected %a", portable,
                       i, (double)out[i], (double)want);
    }
    /* decode_add adds exactly those values. */
    for (size_t i = 0; i < n; i++)
      acc[i] = 1.0f;
    cr_assert_eq(codec_decode_add(c, p, 2 * n, acc, n), 0);
    for (size_t i = 0; i < n; i++) {
      float want = 1.0f + out[i];
      cr_assert(isnan(want) ? isnan(acc[i]) : f2u(acc[i]) == f2u(want),
                "decode_add of half 0x%04zx: %a", i, (double)acc[i]);
    }
    codec_free(c);
  }
  free(p);
  free(out);
  free(acc);
}

#if HAVE_X86
#include <cpuid.h>

/* F16C present and usable (the OS saves the AVX state): CPUID, not
 * __builtin_cpu_supports("f16c"), which older clang lacks. */
static bool have_f16c(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return false;
  const unsigned osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
  if ((c & (osxsave | avx | f16c)) != (osxsave | avx | f16c))
    return false;
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  (void)hi;
  return (lo & 6u) == 6u; /* XMM and YMM state enabled */
}

__attribute__((target("f16c"))) static void
hw_f32_to_f16(const float *x, uint16_t *h, size_t n) {
  for (size_t i = 0; i < n; i++)
    h[i] = (uint16_t)_cvtss_sh(x[i], 0);
}

__attribute__((target("f16c"))) static void
hw_f16_to_f32(const uint16_t *h, uint32_t *bits, size_t n) {
  for (size_t i = 0; i < n; i++)
    bits[i] = f2u(_cvtsh_ss(h[i]));
}
#endif

/* The F16C instructions are the reference for every bit, NaN payloads
 * included, in both the SIMD and the portable path. */
Test(fp16, matches_f16c_instructions) {
#if HAVE_X86
  if (!have_f16c()) {
    cr_skip_test("no F16C on this CPU");
    return;
  }
  size_t n;
  float *x = fp16_sweep(&n);
  /* The sweep holds NaNs with many payloads, both signs. */
  uint16_t *hw = xmalloc(n * sizeof *hw);
  hw_f32_to_f16(x, hw, n);
  uint16_t halves[65536];
  uint32_t hwdec[65536];
  for (size_t i = 0; i < 65536; i++)
    halves[i] = (uint16_t)i;
  hw_f16_to_f32(halves, hwdec, 65536);
  float *out = xmalloc(65536 * sizeof *out);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("fp16", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    for (size_t i = 0; i < n; i++) {
      uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
      if (h != hw[i])
        cr_assert_fail("portable=%d: fp16(0x%08x) = 0x%04x, F16C 0x%04x",
                       portable, f2u(x[i]), h, hw[i]);
    }
    free(p);
    unsigned char hp[2 * 65536];
    for (size_t i = 0; i < 65536; i++) {
      hp[2 * i] = (unsigned char)i;
      hp[2 * i + 1] = (unsigned char)(i >> 8);
    }
    cr_assert_eq(codec_decode(c, hp, sizeof hp, out, 65536), 0);
    for (size_t i = 0; i < 65536; i++)
      if (f2u(out[i]) != hwdec[i])
        cr_assert_fail("portable=%d: half 0x%04zx -> 0x%08x, F16C 0x%08x",
                       portable, i, f2u(out[i]), hwdec[i]);
    codec_state_free(s);
    codec_free(c);
  }
  free(out);
  free(hw);
  free(x);
#else
  cr_skip_test("not x86");
#endif
}

/* ---- bf16 ------------------------------------------------------------ */

/* Reference bfloat16 encoding from the format's definition (Intel,
 * "BFLOAT16 - Hardware Numerics Definition": fp32's sign and exponent, 7
 * fraction bits), rounded to nearest even by rint in double, subnormals
 * kept. NaN: the top 16 bits with the quiet bit (fraction bit 6) set, as
 * Intel's VCVTNEPS2BF16 defines it. */
static uint16_t ref_bf16(float f) {
  uint32_t u = f2u(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  if (isnan(f))
    return (uint16_t)((u >> 16) | 0x40u);
  double a = fabs((double)f);
  /* The largest finite bf16 is (2 - 2^-7) 2^127; from the midpoint to
   * 2^128 on (a tie: even is 2^128) the value overflows. */
  if (a >= 0x1.ffp127)
    return (uint16_t)(sign | 0x7f80u);
  if (a < 0x1p-126) /* subnormal: m 2^-133; m = 128 is the smallest normal */
    return (uint16_t)(sign | (uint16_t)rint(a * 0x1p133));
  int e;
  frexp(a, &e);                           /* a in [2^(e-1), 2^e) */
  double m = rint(a * ldexp(1.0, 8 - e)); /* in [128, 256] */
  uint32_t h = ((uint32_t)(e - 1 + 127) << 7) + ((uint32_t)m - 128u);
  return (uint16_t)(sign | h); /* m = 256 carries into the exponent */
}

/* Reference bfloat16 value (NaN: any NaN of the same sign). */
static float ref_bf16_dec(uint16_t h) {
  unsigned e = (h >> 7) & 0xffu, m = h & 0x7fu;
  double v;
  if (e == 0)
    v = ldexp((double)m, -133);
  else if (e == 255)
    v = m ? NAN : INFINITY;
  else
    v = ldexp((double)(128 + m), (int)e - 134);
  float f = (float)v;
  return h & 0x8000u ? -f : f;
}

static bool is_bf16_nan(uint16_t h) {
  return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0;
}

static uint16_t get16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

/* Bit patterns worked out by hand: the kept half is the top 16 bits, the
 * dropped half decides the rounding (0x8000 is the tie). */
Test(bf16, hand_values) {
  static const struct {
    uint32_t x;
    uint16_t h;
  } t[] = {
      {0x3f800000u, 0x3f80}, /* 1 */
      {0xc0000000u, 0xc000}, /* -2 */
      {0x00000000u, 0x0000}, /* 0 */
      {0x80000000u, 0x8000}, /* -0 */
      {0x3dcccccdu, 0x3dcd}, /* 0.1: dropped 0xcccd above the tie */
      {0x3f808000u, 0x3f80}, /* 1 + 2^-8, tie: kept 0x3f80 even, down */
      {0x3f818000u, 0x3f82}, /* tie: kept 0x3f81 odd, up */
      {0x3f808001u, 0x3f81}, /* just above the tie */
      {0x3f807fffu, 0x3f80}, /* just below the tie */
      {0xbf818000u, 0xbf82}, /* negative tie, to even */
      {0x3fff8000u, 0x4000}, /* tie, odd 0x3fff: carries into 2 */
      {0x7f7f0000u, 0x7f7f}, /* largest finite bf16 */
      {0x7f7f7fffu, 0x7f7f}, /* below the midpoint to 2^128 */
      {0x7f7f8000u, 0x7f80}, /* the midpoint, tie: even is infinity */
      {0x7f7fffffu, 0x7f80}, /* FLT_MAX overflows */
      {0xff7fffffu, 0xff80}, /* -FLT_MAX */
      {0x7f800000u, 0x7f80}, /* inf */
      {0xff800000u, 0xff80}, /* -inf */
      {0x00800000u, 0x0080}, /* smallest normal, 2^-126 */
      {0x00010000u, 0x0001}, /* smallest bf16 subnormal, 2^-133 */
      {0x00000001u, 0x0000}, /* smallest fp32 subnormal: far below 2^-134 */
      {0x00008000u, 0x0000}, /* 2^-134, tie: to even 0 */
      {0x00018000u, 0x0002}, /* 3 2^-134, tie: to even 2 */
      {0x00008001u, 0x0001}, /* just above the tie */
      {0x80018000u, 0x8002}, /* negative subnormal tie */
      {0x007fffffu, 0x0080}, /* largest fp32 subnormal rounds up to 2^-126 */
      {0x007f7fffu, 0x007f}, /* largest bf16 subnormal */
  };
  size_t n = sizeof t / sizeof t[0];
  float x[sizeof t / sizeof t[0]];
  for (size_t i = 0; i < n; i++)
    x[i] = u2f(t[i].x);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("bf16", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    cr_assert_eq(len, 2 * n);
    for (size_t i = 0; i < n; i++) {
      uint16_t h = get16(p + 2 * i);
      cr_assert_eq(h, t[i].h,
                   "portable=%d: bf16(0x%08x) = 0x%04x, expected "
                   "0x%04x",
                   portable, t[i].x, h, t[i].h);
      cr_assert_eq(ref_bf16(x[i]), t[i].h, "reference of 0x%08x", t[i].x);
    }
    /* Decoding shifts the half back up. */
    float out[sizeof t / sizeof t[0]];
    cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(f2u(out[i]), (uint32_t)t[i].h << 16, "decode of 0x%04x",
                   t[i].h);
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
}

/* NaN stays NaN with its sign and its top payload bits, quiet, even where
 * rounding or truncation would read as infinity (0x7f800001: top half
 * 0x7f80) or carry out of the exponent (0x7fffffff). */
Test(bf16, nan_stays_nan) {
  static const uint32_t x32[] = {
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7f80ffffu,
      0x7f808000u, 0x7fffffffu, 0xffffffffu, 0x7fa12345u, 0x7f810000u};
  static const uint16_t want[] = {0x7fc0, 0xffc0, 0x7fc0, 0xffc0, 0x7fc0,
                                  0x7fc0, 0x7fff, 0xffff, 0x7fe1, 0x7fc1};
  enum { N = sizeof x32 / sizeof x32[0] };
  float x[N];
  for (size_t i = 0; i < N; i++)
    x[i] = u2f(x32[i]);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("bf16", portable);
    codec_state_t *s = mkstate(c, N, 0);
    size_t len;
    unsigned char *p = enc(s, x, N, &len);
    float out[N];
    cr_assert_eq(dec_guarded(c, p, len, out, N), 0);
    for (size_t i = 0; i < N; i++) {
      uint16_t h = get16(p + 2 * i);
      cr_assert_eq(h, want[i],
                   "portable=%d: NaN 0x%08x encoded as 0x%04x, "
                   "expected 0x%04x",
                   portable, x32[i], h, want[i]);
      cr_assert(is_bf16_nan(h) && (h & 0x40u), "quiet NaN");
      cr_assert(isnan(out[i]) && signbit(out[i]) == signbit(x[i]),
                "NaN %zu decoded to %a", i, (double)out[i]);
    }
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
}

/* Every float exactly halfway between two adjacent finite bf16 values,
 * one float ulp on each side of it, both signs, and a stride through all
 * bit patterns (NaNs included), against the reference. */
Test(bf16, round_to_nearest_even_sweep) {
  size_t cap = 3 * 2 * 0x7f80 + 2 * 0x100000 + 16, n = 0;
  float *x = xmalloc(cap * sizeof *x);
  for (uint32_t h = 0; h < 0x7f80; h++) {
    double lo = ref_bf16_dec((uint16_t)h);
    double hi = h + 1 < 0x7f80 ? ref_bf16_dec((uint16_t)(h + 1)) : 0x1p128;
    double mid = (lo + hi) / 2; /* the last: 0x1.ffp127, below FLT_MAX */
    float m = (float)mid;       /* exact: 9 significant bits */
    cr_assert_eq((double)m, mid);
    float v[3] = {m, nextafterf(m, 0.0f), nextafterf(m, INFINITY)};
    for (int k = 0; k < 3; k++) {
      x[n++] = v[k];
      x[n++] = -v[k];
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093)
    x[n++] = u2f((uint32_t)u);
  cr_assert(n <= cap);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("bf16", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    cr_assert_eq(len, 2 * n);
    for (size_t i = 0; i < n; i++) {
      uint16_t h = get16(p + 2 * i), want = ref_bf16(x[i]);
      if (h != want)
        cr_assert_fail("portable=%d: bf16(%a = 0x%08x) = 0x%04x, expected "
                       "0x%04x",
                       portable, (double)x[i], f2u(x[i]), h, want);
    }
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
  free(x);
}

/* All 65536 payload values decode to the pattern shifted up by 16 bits,
 * which is the value the format defines; decode_add adds exactly it. */
Test(bf16, decode_all_values) {
  size_t n = 65536;
  unsigned char *p = xmalloc(2 * n);
  for (size_t i = 0; i < n; i++) {
    p[2 * i] = (unsigned char)i;
    p[2 * i + 1] = (unsigned char)(i >> 8);
  }
  float *out = xmalloc(n * sizeof *out), *acc = xmalloc(n * sizeof *acc);
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("bf16", portable);
    cr_assert_eq(dec_guarded(c, p, 2 * n, out, n), 0);
    for (size_t i = 0; i < n; i++) {
      float want = ref_bf16_dec((uint16_t)i);
      cr_assert_eq(f2u(out[i]), (uint32_t)i << 16, "portable=%d: 0x%04zx",
                   portable, i);
      if (is_bf16_nan((uint16_t)i))
        cr_assert(isnan(out[i]) && signbit(out[i]) == signbit(want));
      else
        cr_assert_eq(f2u(out[i]), f2u(want),
                     "bf16 0x%04zx -> %a, expected "
                     "%a",
                     i, (double)out[i], (double)want);
    }
    for (size_t i = 0; i < n; i++)
      acc[i] = 1.0f;
    cr_assert_eq(codec_decode_add(c, p, 2 * n, acc, n), 0);
    for (size_t i = 0; i < n; i++) {
      float want = 1.0f + out[i];
      cr_assert(isnan(want) ? isnan(acc[i]) : f2u(acc[i]) == f2u(want),
                "decode_add of 0x%04zx: %a", i, (double)acc[i]);
    }
    codec_free(c);
  }
  free(p);
  free(out);
  free(acc);
}

/* Half a bf16 ulp, |x| 2^-8 + 2^-134, is reached at a tie; no bound where
 * x overflows or is not finite. */
Test(bf16, error_bounds_by_hand) {
  const float x[] = {1.0f + 0x1p-8f,
                     0x1p-134f,
                     0x1.fefffep127f,
                     0x1.ffp127f,
                     -INFINITY,
                     NAN,
                     0.0f};
  const double want[] = {(1.0 + 0x1p-8) * 0x1p-8 + 0x1p-134,
                         0x1p-142 + 0x1p-134,
                         0x1.fefffep127 * 0x1p-8 + 0x1p-134,
                         INFINITY,
                         INFINITY,
                         INFINITY,
                         0x1p-134};
  enum { N = sizeof x / sizeof x[0] };
  double e[N];
  codec_t *c = mk("bf16");
  codec_error_bounds(c, x, NULL, NULL, N, e);
  for (size_t i = 0; i < N; i++)
    cr_assert_eq(e[i], want[i], "bound of %a: %a, expected %a", (double)x[i],
                 e[i], want[i]);
  /* The two ties: the error is the whole of half an ulp. */
  size_t len;
  unsigned char *p = enc_spec("bf16", x, 2, &len);
  float out[2];
  cr_assert_eq(codec_decode(c, p, len, out, 2), 0);
  cr_assert_eq((double)out[0], 1.0);
  cr_assert_eq((double)out[1], 0.0);
  free(p);
  codec_free(c);
}

/* ---- trunc ----------------------------------------------------------- */

/* Reference: the 32 - BITS high bits of each pattern, LSB-first into a
 * little-endian bit stream. Returns the length. */
static size_t ref_trunc(const float *x, size_t n, int bits,
                        unsigned char *out) {
  unsigned w = 32u - (unsigned)bits;
  size_t len = (n * w + 7) / 8;
  memset(out, 0, len);
  for (size_t i = 0; i < n; i++) {
    uint32_t v = f2u(x[i]) >> bits;
    for (unsigned b = 0; b < w; b++)
      if (v >> b & 1u) {
        size_t pos = i * w + b;
        out[pos / 8] |= (unsigned char)(1u << (pos % 8));
      }
  }
  return len;
}

Test(trunc, bits22_exact_bytes) {
  /* W = 10: 1.0f = 0x3f800000 -> 0x0fe, -2.0f = 0xc0000000 -> 0x300,
   * 0.1f = 0x3dcccccd -> 0x0f7. Stream: 0x0fe | 0x300 << 10 | 0x0f7 << 20
   * = 0x0f7c00fe, 30 bits in 4 bytes. */
  const float x[] = {1.0f, -2.0f, 0.1f};
  const unsigned char want[] = {0xfe, 0x00, 0x7c, 0x0f};
  size_t len;
  unsigned char *p = enc_spec("trunc:bits=22", x, 3, &len);
  assert_bytes(p, len, want, sizeof want, "trunc:bits=22");
  codec_t *c = mk("trunc:bits=22");
  float out[3];
  cr_assert_eq(dec_guarded(c, p, len, out, 3), 0);
  cr_assert_eq(out[0], 1.0f);
  cr_assert_eq(out[1], -2.0f);
  cr_assert_eq(out[2], 0.09375f); /* 0x3dc00000 */
  /* An unused bit of the last byte set: malformed. */
  unsigned char bad[4];
  memcpy(bad, want, 4);
  bad[3] |= 0x40;
  cr_assert_eq(codec_decode(c, bad, 4, out, 3), -EBADMSG);
  cr_assert_eq(codec_decode(c, want, 3, out, 3), -EBADMSG);
  free(p);
  codec_free(c);
}

Test(trunc, every_width_matches_reference) {
  static const size_t sizes[] = {1,  2,  3,  5,  7,   8,   9,   13,
                                 16, 17, 31, 64, 100, 257, 1003};
  struct rng r = {11};
  float x[1003], out[1003], acc[1003];
  unsigned char want[4 * 1003];
  for (int bits = 1; bits <= 31; bits++) {
    char spec[32];
    snprintf(spec, sizeof spec, "trunc:bits=%d", bits);
    codec_t *c = mk(spec);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      size_t n = sizes[k];
      fill_mixed(&r, x, n, 1.0);
      x[0] = u2f((uint32_t)rng_u64(&r)); /* any pattern, NaN included */
      codec_state_t *s = mkstate(c, n, 0);
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      size_t wl = ref_trunc(x, n, bits, want);
      char what[64];
      snprintf(what, sizeof what, "%s n=%zu", spec, n);
      assert_bytes(p, len, want, wl, what);
      cr_assert_eq(codec_bound(c, n), wl, "%s", what);
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
      uint32_t mask = ~(uint32_t)0 << bits;
      for (size_t i = 0; i < n; i++)
        cr_assert_eq(f2u(out[i]), f2u(x[i]) & mask, "%s: value %zu", what, i);
      for (size_t i = 0; i < n; i++)
        acc[i] = (float)i - 3.0f;
      cr_assert_eq(codec_decode_add(c, p, len, acc, n), 0);
      for (size_t i = 0; i < n; i++) {
        float w = ((float)i - 3.0f) + out[i];
        cr_assert(isnan(w) ? isnan(acc[i]) : f2u(acc[i]) == f2u(w),
                  "%s: decode_add %zu", what, i);
      }
      /* A set padding bit is malformed. */
      if ((n * (32u - (unsigned)bits)) % 8) {
        p[len - 1] |= 0x80;
        cr_assert_eq(codec_decode(c, p, len, out, n), -EBADMSG, "%s", what);
      }
      free(p);
      codec_state_free(s);
    }
    codec_free(c);
  }
}

/* ---- q8 -------------------------------------------------------------- */

Test(q8, hand_example) {
  /* max 127 -> scale 1: codes round half away from zero. */
  const float x[] = {127.0f, -63.5f, 0.5f, -0.49f, 0.0f, 1.5f, -2.5f, -127.0f};
  const unsigned char want[] = {0x00, 0x00, 0x80, 0x3f, 0x7f, 0xc0,
                                0x01, 0x00, 0x00, 0x02, 0xfd, 0x81};
  size_t len;
  unsigned char *p = enc_spec("q8", x, 8, &len);
  assert_bytes(p, len, want, sizeof want, "q8");
  codec_t *c = mk("q8");
  float out[8];
  const float dec[] = {127.0f, -64.0f, 1.0f, 0.0f, 0.0f, 2.0f, -3.0f, -127.0f};
  cr_assert_eq(dec_guarded(c, p, len, out, 8), 0);
  for (size_t i = 0; i < 8; i++)
    cr_assert_eq(out[i], dec[i], "value %zu: %g", i, (double)out[i]);
  /* A -128 code is never produced: rejected. */
  p[6] = 0x80;
  cr_assert_eq(codec_decode(c, p, len, out, 8), -EBADMSG);
  cr_assert_eq(codec_decode_add(c, p, len, out, 8), -EBADMSG);
  free(p);
  codec_free(c);
}

Test(q8, zeros_and_scale) {
  float x[5] = {0};
  size_t len;
  unsigned char *p = enc_spec("q8", x, 5, &len);
  cr_assert_eq(len, 9);
  for (size_t i = 0; i < len; i++)
    cr_assert_eq(p[i], 0, "byte %zu", i);
  free(p);
  /* scale = max|x| / 127 as a float. */
  const float y[] = {0.3f, -1.7f, 0.0f};
  p = enc_spec("q8", y, 3, &len);
  cr_assert_eq(len, 7);
  cr_assert_eq(f2u(getf(p)), f2u(1.7f / 127.0f));
  cr_assert_eq((signed char)p[5], -127);
  free(p);
}

/* Values whose quotient x / scale lies within a few ulps of a
 * half-integer, where a quantizer that multiplies by 1 / scale could round
 * the other way (codecs/q8.c keeps the division for them), and a scale
 * below the normal range, whose reciprocal overflows: the reference's
 * bytes, from the default (SIMD) and the portable kernels. */
Test(q8, near_halves_and_tiny_scales_match_reference) {
  struct rng r = {8};
  enum { N = 4099 };
  float *x = xmalloc(N * sizeof *x);
  unsigned char *want = xmalloc(N + 4);
  static const float maxima[] = {1.7f, 127.0f, 3e-3f, 0x1p-130f, 1e-44f, 3e38f};
  for (size_t t = 0; t < sizeof maxima / sizeof maxima[0]; t++) {
    float m = maxima[t], scale = m / 127.0f;
    x[0] = -m;
    for (size_t i = 1; i < N; i++) {
      /* k + 1/2 times the scale, moved by up to 4 ulps; or random. */
      float k = (float)rng_below(&r, 127) + 0.5f;
      float v = k * scale;
      int ulps = (int)rng_below(&r, 9) - 4;
      for (; ulps > 0; ulps--)
        v = nextafterf(v, INFINITY);
      for (; ulps < 0; ulps++)
        v = nextafterf(v, 0.0f);
      if (rng_below(&r, 4) == 0)
        v = (float)rng_below(&r, 1u << 20) * 0x1p-20f * m;
      v = fabsf(v) > m ? m : v;
      x[i] = rng_below(&r, 2) ? -v : v;
    }
    memset(x + 32, 0, 32 * sizeof *x); /* 0 times an infinite 1 / scale */
    putf(want, scale);
    for (size_t i = 0; i < N; i++) {
      /* 1e-44 / 127 rounds to a zero scale: every code 0. */
      float q = scale > 0 ? roundf(x[i] / scale) : 0.0f;
      q = q > 127 ? 127 : q < -127 ? -127 : q;
      want[4 + i] = (unsigned char)(signed char)q;
    }
    for (int portable = 0; portable < 2; portable++) {
      codec_t *c = mk_mode("q8", portable);
      codec_state_t *s = mkstate(c, N, 0);
      size_t len;
      unsigned char *p = enc(s, x, N, &len);
      char what[64];
      snprintf(what, sizeof what, "q8 max %a portable=%d", (double)m, portable);
      assert_bytes(p, len, want, N + 4, what);
      free(p);
      codec_state_free(s);
      codec_free(c);
    }
  }
  free(x);
  free(want);
}

Test(q8, random_matches_reference) {
  struct rng r = {7};
  codec_t *c = mk("q8");
  float x[777], out[777];
  unsigned char want[781];
  for (int rep = 0; rep < 40; rep++) {
    size_t n = 1 + rng_below(&r, 777);
    fill_mixed(&r, x, n, rep % 2 ? 1e-3 : 10.0);
    float m = 0;
    for (size_t i = 0; i < n; i++)
      m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    float scale = m / 127.0f;
    putf(want, scale);
    for (size_t i = 0; i < n; i++) {
      float q = scale > 0 ? roundf(x[i] / scale) : 0.0f;
      q = q > 127 ? 127 : q < -127 ? -127 : q;
      want[4 + i] = (unsigned char)(signed char)q;
    }
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    assert_bytes(p, len, want, n + 4, "q8 random");
    cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(f2u(out[i]), f2u((float)(signed char)want[4 + i] * scale),
                   "value %zu", i);
    free(p);
    codec_state_free(s);
  }
  codec_free(c);
}

/* ---- inceptionn ------------------------------------------------------ */

static unsigned ref_inc_tag(float x, int eb) {
  int e = (int)((f2u(x) >> 23) & 0xffu);
  int lo = 127 + eb;
  if (e >= 127)
    return 3;
  if (e < lo)
    return 0;
  return e >= lo + (-eb) / 2 ? 2 : 1;
}

static uint32_t ref_inc_field(float x, unsigned tag) {
  uint32_t sign = f2u(x) >> 31;
  double a = fabs((double)x);
  if (tag == 3)
    return f2u(x);
  if (tag == 2)
    return sign << 15 | (uint32_t)floor(a * 32768.0);
  if (tag == 1)
    return sign << 7 | (uint32_t)floor(a * 128.0);
  return 0;
}

/* Reference encoder of inceptionn.h's layout; TAGS gets the tag words and
 * COUNTS the class counts. */
static size_t ref_inc_encode(const float *x, size_t n, int eb,
                             unsigned char *out, uint16_t *tags,
                             uint64_t counts[4]) {
  size_t p = 0;
  memset(counts, 0, 4 * sizeof counts[0]);
  for (size_t g = 0; g < n; g += 8) {
    size_t r = n - g < 8 ? n - g : 8;
    unsigned w = 0;
    for (size_t j = 0; j < r; j++) {
      unsigned t = ref_inc_tag(x[g + j], eb);
      w |= t << (2 * j);
      counts[t]++;
    }
    tags[g / 8] = (uint16_t)w;
    size_t tb = (2 * r + 7) / 8;
    for (size_t b = 0; b < tb; b++)
      out[p++] = (unsigned char)(w >> (8 * b));
    for (size_t j = 0; j < r; j++) {
      unsigned t = ref_inc_tag(x[g + j], eb);
      uint32_t f = ref_inc_field(x[g + j], t);
      unsigned fb = t == 3 ? 4 : t;
      for (unsigned b = 0; b < fb; b++)
        out[p++] = (unsigned char)(f >> (8 * b));
    }
  }
  return p;
}

static float ref_inc_value(float x, int eb) {
  unsigned t = ref_inc_tag(x, eb);
  if (t == 0)
    return 0.0f;
  if (t == 3)
    return x;
  float a = (float)(floor(fabs((double)x) * (t == 2 ? 32768.0 : 128.0)) /
                    (t == 2 ? 32768.0 : 128.0));
  return signbit(x) ? -a : a;
}

Test(inceptionn, hand_example_eb10) {
  /* eb = -10: tag 0 below 2^-10, 8 bits in [2^-10, 2^-5), 16 bits in
   * [2^-5, 1), 32 bits from 1 up. */
  const float x[] = {
      0.0f,                       /* 0 */
      0x1p-10f,                   /* 1: floor(2^-3) = 0 */
      nextafterf(0x1p-10f, 0.0f), /* 0 */
      0x1p-5f,                    /* 2: 1024 = 0x0400 */
      nextafterf(0x1p-5f, 0.0f),  /* 1: floor(3.99..) = 3 */
      0.75f,                      /* 2: 0x6000 */
      nextafterf(1.0f, 0.0f),     /* 2: 0x7fff */
      1.0f,                       /* 3 */
      -0.3f,                      /* 2: 0x8000 | 9830 = 0xa666 */
      -0.01f,                     /* 1: 0x80 | 1 */
      -0x1p-12f,                  /* 0 */
      -1.5f,                      /* 3: 0xbfc00000 */
      -0.001f,                    /* 1: 0x80 | 0 */
  };
  /* Tag words: 0 | 1<<2 | 0<<4 | 2<<6 | 1<<8 | 2<<10 | 2<<12 | 3<<14 =
   * 0xe984; last group 2 | 1<<2 | 0<<4 | 3<<6 | 1<<8 = 0x1c6 in
   * ceil(10/8) = 2 bytes. 186 bits: 24 bytes. */
  const unsigned char want[] = {0x84, 0xe9, 0x00, 0x00, 0x04, 0x03, 0x00, 0x60,
                                0xff, 0x7f, 0x00, 0x00, 0x80, 0x3f, 0xc6, 0x01,
                                0x66, 0xa6, 0x81, 0x00, 0x00, 0xc0, 0xbf, 0x80};
  size_t n = sizeof x / sizeof x[0], len;
  unsigned char *p = enc_spec("inceptionn:eb=-10", x, n, &len);
  assert_bytes(p, len, want, sizeof want, "inceptionn eb=-10");
  codec_t *c = mk("inceptionn:eb=2^-10");
  float out[sizeof x / sizeof x[0]];
  cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
  const float dec[] = {0.0f,
                       0.0f,
                       0.0f,
                       0x1p-5f,
                       3.0f / 128,
                       0.75f,
                       32767.0f / 32768,
                       1.0f,
                       -9830.0f / 32768,
                       -1.0f / 128,
                       0.0f,
                       -1.5f,
                       -0.0f};
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(out[i], dec[i], "value %zu: %a, expected %a", i,
                 (double)out[i], (double)dec[i]);
  cr_assert(signbit(out[12]), "-0.001 keeps its sign as -0.0");
  cr_assert(!signbit(out[1]));
  /* Table III counts and the tag vectors. */
  uint16_t tags[2] = {0, 0};
  uint64_t counts[4] = {9, 9, 9, 9};
  cr_assert_eq(inceptionn_scan(p, len, n, tags, counts), 0);
  cr_assert_eq(tags[0], 0xe984);
  cr_assert_eq(tags[1], 0x1c6);
  cr_assert_eq(counts[0], 3);
  cr_assert_eq(counts[1], 4);
  cr_assert_eq(counts[2], 4);
  cr_assert_eq(counts[3], 2);
  cr_assert_eq(inceptionn_scan(p, len, n, NULL, NULL), 0);
  cr_assert_eq(inceptionn_scan(p, len - 1, n, NULL, counts), -EBADMSG);
  unsigned char longer[sizeof want + 1];
  memcpy(longer, want, sizeof want);
  longer[sizeof want] = 0;
  cr_assert_eq(inceptionn_scan(longer, sizeof longer, n, NULL, counts),
               -EBADMSG);
  cr_assert_eq(codec_decode(c, longer, sizeof longer, out, n), -EBADMSG);
  /* An unused tag bit of the last group set: malformed. */
  memcpy(longer, want, sizeof want);
  longer[15] |= 0x08;
  cr_assert_eq(codec_decode(c, longer, sizeof want, out, n), -EBADMSG);
  free(p);
  codec_free(c);
}

Test(inceptionn, inf_nan_pass_through) {
  const float x[] = {INFINITY,         -INFINITY, u2f(0x7fc00001u),
                     u2f(0xff800001u), FLT_MAX,   -1.0f};
  size_t n = 6, len;
  unsigned char *p = enc_spec("inceptionn", x, n, &len);
  cr_assert_eq(len, 2 + 4 * n);
  cr_assert_eq(p[0] | p[1] << 8, 0xfff);
  codec_t *c = mk("inceptionn");
  float out[6];
  cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
  assert_floats_bits(out, x, n, "inceptionn inf/nan");
  free(p);
  codec_free(c);
}

/* For each error bound, the class boundaries: exactly 2^E and just below,
 * the 8/16-bit boundary 2^(E + (-E)/2) and just below, just below one and
 * one, each with both signs. */
Test(inceptionn, class_boundaries_every_eb) {
  static const int ebs[] = {-1,  -2,  -3,  -4,  -5,  -6,  -7,   -8,
                            -10, -15, -16, -23, -24, -60, -125, -126};
  for (size_t k = 0; k < sizeof ebs / sizeof ebs[0]; k++) {
    int eb = ebs[k];
    int b16 = eb + (-eb) / 2; /* exponent of the 8/16-bit boundary */
    float lo = ldexpf(1.0f, eb), mid = ldexpf(1.0f, b16);
    struct {
      float x;
      unsigned tag;
    } t[] = {
        {lo, b16 == eb ? 2u : 1u},
        {nextafterf(lo, 0.0f), 0},
        {mid, 2},
        {nextafterf(mid, 0.0f), b16 == eb ? 0u : 1u},
        {nextafterf(1.0f, 0.0f), 2},
        {1.0f, 3},
        {0.0f, 0},
        {FLT_MIN, eb == -126 ? 1u : 0u},
        {0x1p-149f, 0},
    };
    size_t nt = sizeof t / sizeof t[0];
    float x[2 * sizeof t / sizeof t[0]];
    unsigned want_tag[2 * sizeof t / sizeof t[0]];
    for (size_t i = 0; i < nt; i++) {
      x[2 * i] = t[i].x;
      x[2 * i + 1] = -t[i].x;
      want_tag[2 * i] = want_tag[2 * i + 1] = t[i].tag;
      cr_assert_eq(ref_inc_tag(t[i].x, eb), t[i].tag, "eb %d ref %zu", eb, i);
    }
    size_t n = 2 * nt;
    char spec[40];
    snprintf(spec, sizeof spec, "inceptionn:eb=%d", eb);
    size_t len;
    unsigned char *p = enc_spec(spec, x, n, &len);
    uint16_t tags[3];
    uint64_t counts[4], want_counts[4] = {0, 0, 0, 0};
    cr_assert_eq(inceptionn_scan(p, len, n, tags, counts), 0, "%s", spec);
    size_t bits = 0;
    for (size_t i = 0; i < n; i++) {
      unsigned tag = (tags[i / 8] >> (2 * (i % 8))) & 3u;
      cr_assert_eq(tag, want_tag[i], "%s: value %a has tag %u, expected %u",
                   spec, (double)x[i], tag, want_tag[i]);
      cr_assert_eq(inceptionn_classify(f2u(x[i]), eb), want_tag[i],
                   "%s: classify(%a)", spec, (double)x[i]);
      want_counts[want_tag[i]]++;
      bits += 2 + (want_tag[i] == 3 ? 32 : 8 * want_tag[i]);
    }
    for (int j = 0; j < 4; j++)
      cr_assert_eq(counts[j], want_counts[j], "%s: class %d", spec, j);
    cr_assert_eq(len, (bits + 7) / 8, "%s: payload size", spec);
    codec_t *c = mk(spec);
    float out[2 * sizeof t / sizeof t[0]];
    cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(f2u(out[i]), f2u(ref_inc_value(x[i], eb)),
                   "%s: %a decodes to %a", spec, (double)x[i], (double)out[i]);
    free(p);
    codec_free(c);
  }
}

Test(inceptionn, random_matches_reference) {
  static const int ebs[] = {-1, -3, -6, -8, -10, -20, -126};
  static const size_t sizes[] = {1,  2,  3,   4,    5,    7,    8,    9,   15,
                                 16, 17, 100, 2047, 2048, 2049, 4100, 9001};
  struct rng r = {5};
  size_t maxn = 9001;
  float *x = xmalloc(maxn * sizeof *x), *out = xmalloc(maxn * sizeof *out);
  unsigned char *want = xmalloc(5 * maxn);
  uint16_t *tags = xmalloc((maxn / 8 + 1) * sizeof *tags);
  uint16_t *wtags = xmalloc((maxn / 8 + 1) * sizeof *tags);
  for (size_t e = 0; e < sizeof ebs / sizeof ebs[0]; e++) {
    char spec[40];
    snprintf(spec, sizeof spec, "inceptionn:eb=%d", ebs[e]);
    codec_t *c = mk(spec);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      size_t n = sizes[k];
      fill_mixed(&r, x, n, k % 2 ? 0.01 : 0.3);
      if (n > 3)
        x[n / 2] = NAN;
      uint64_t wc[4], cnt[4];
      size_t wl = ref_inc_encode(x, n, ebs[e], want, wtags, wc);
      codec_state_t *s = mkstate(c, n, 0);
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      char what[64];
      snprintf(what, sizeof what, "%s n=%zu", spec, n);
      assert_bytes(p, len, want, wl, what);
      cr_assert_eq(inceptionn_scan(p, len, n, tags, cnt), 0, "%s", what);
      for (int j = 0; j < 4; j++)
        cr_assert_eq(cnt[j], wc[j], "%s: class %d", what, j);
      for (size_t g = 0; g < (n + 7) / 8; g++)
        cr_assert_eq(tags[g], wtags[g], "%s: group %zu", what, g);
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
      for (size_t i = 0; i < n; i++) {
        float w = ref_inc_value(x[i], ebs[e]);
        if (f2u(out[i]) != f2u(w))
          cr_assert_fail("%s: value %zu = %a decodes to %a, expected %a", what,
                         i, (double)x[i], (double)out[i], (double)w);
      }
      free(p);
      codec_state_free(s);
    }
    codec_free(c);
  }
  free(x);
  free(out);
  free(want);
  free(tags);
  free(wtags);
}

/* ---- quartic and zero-run references (3lc, terngrad) ------------------ */

static size_t qlen(size_t n) { return (n + 4) / 5; }

/* Quartic bytes of the digits D (N of them, each in {0, 1, 2}). */
static void ref_quartic(const unsigned char *d, size_t n, unsigned char *out) {
  size_t L = qlen(n);
  for (size_t j = 0; j < L; j++) {
    unsigned byte = 0;
    for (size_t k = 0; k < 5; k++) {
      size_t i = k * L + j;
      byte = 3 * byte + (i < n ? d[i] : 0u);
    }
    out[j] = (unsigned char)byte;
  }
}

/* Zero-run encoding: runs of 2..14 bytes 121 become 243 + (k - 2), longer
 * runs are cut greedily, a single 121 stays. Returns the new length. */
static size_t ref_zre(const unsigned char *in, size_t len, unsigned char *out) {
  size_t w = 0;
  for (size_t i = 0; i < len;) {
    if (in[i] != 121) {
      out[w++] = in[i++];
      continue;
    }
    size_t k = 0;
    while (i + k < len && in[i + k] == 121)
      k++;
    i += k;
    while (k >= 2) {
      size_t run = k < 14 ? k : 14;
      out[w++] = (unsigned char)(243 + run - 2);
      k -= run;
    }
    if (k == 1)
      out[w++] = 121;
  }
  return w;
}

/* Digits of a (not zero-run encoded) quartic stream, or false when a byte
 * is above 242 or a padding digit is not zero. */
static bool ref_unquartic(const unsigned char *q, size_t n, unsigned char *d) {
  size_t L = qlen(n);
  for (size_t j = 0; j < L; j++) {
    if (q[j] > 242)
      return false;
    unsigned b = q[j];
    unsigned dig[5] = {b / 81, b / 27 % 3, b / 9 % 3, b / 3 % 3, b % 3};
    for (size_t k = 0; k < 5; k++) {
      size_t i = k * L + j;
      if (i < n)
        d[i] = (unsigned char)dig[k];
      else if (dig[k] != 0)
        return false;
    }
  }
  return true;
}

/* One 3LC step on the reference residual B: returns the payload length. */
static size_t ref_tlc_step(float *b, const float *x, size_t n, double s,
                           bool zre, unsigned char *out, unsigned char *dig,
                           unsigned char *tmp) {
  float mx = 0.0f;
  for (size_t i = 0; i < n; i++) {
    float v = b[i] + x[i];
    mx = fabsf(v) > mx ? fabsf(v) : mx;
  }
  float m = (float)((double)mx * s);
  putf(out, m);
  for (size_t i = 0; i < n; i++) {
    float v = b[i] + x[i];
    float q = m > 0.0f ? roundf(v / m) : 0.0f;
    b[i] = v - m * q;
    dig[i] = (unsigned char)(q + 1.0f);
  }
  size_t L = qlen(n);
  ref_quartic(dig, n, tmp);
  if (!zre) {
    memcpy(out + 4, tmp, L);
    return 4 + L;
  }
  return 4 + ref_zre(tmp, L, out + 4);
}

/* ---- 3lc ------------------------------------------------------------- */

Test(tlc, hand_example_with_padding) {
  /* M = 1; q = 1, -1, 0, 1, -1, 0, 0; digits 2 0 1 2 0 1 1, padded with
   * three zeros to 10: p0 = 2 0, p1 = 1 2, p2 = 0 1, p3 = 1 0, p4 = 0 0.
   * Bytes 162 + 27 + 3 = 192 and 54 + 9 = 63. */
  const float x[] = {1.0f, -1.0f, 0.2f, 0.6f, -0.6f, 0.0f, 0.49f};
  const unsigned char want[] = {0x00, 0x00, 0x80, 0x3f, 192, 63};
  for (int zre = 0; zre < 2; zre++) {
    codec_t *c = mk(zre ? "3lc:s=1,zre=1" : "3lc:s=1,zre=0");
    codec_state_t *s = mkstate(c, 7, 0);
    size_t len;
    unsigned char *p = enc(s, x, 7, &len);
    assert_bytes(p, len, want, sizeof want, "3lc hand example");
    const float *b = codec_state_residual(s);
    cr_assert_not_null(b);
    const float rb[] = {0.0f,         0.0f, 0.2f, 0.6f - 1.0f,
                        -0.6f + 1.0f, 0.0f, 0.49f};
    assert_floats_bits(b, rb, 7, "3lc residual");
    float out[7];
    const float dec[] = {1, -1, 0, 1, -1, 0, 0};
    cr_assert_eq(dec_guarded(c, p, len, out, 7), 0);
    for (size_t i = 0; i < 7; i++)
      cr_assert_eq(out[i], dec[i], "value %zu", i);
    /* A nonzero padding digit (p4[0] = 1) is malformed. */
    p[4] = 193;
    cr_assert_eq(codec_decode(c, p, len, out, 7), -EBADMSG);
    p[4] = 243; /* a run of two: zre=1 it expands to two bytes 121 */
    p[5] = 0;   /* ... followed by a third byte: too long */
    cr_assert_eq(codec_decode(c, p, len, out, 7), -EBADMSG);
    /* Alone, its padding digits are 1 (zre=1), or it is above 242. */
    cr_assert_eq(codec_decode(c, p, len - 1, out, 7), -EBADMSG);
    p[4] = 250; /* 9 bytes 121 (zre) or above 242 (no zre) */
    cr_assert_eq(codec_decode(c, p, len - 1, out, 7), -EBADMSG);
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
}

/* |b / M| = 1/2 rounds away from zero, in the SIMD and portable paths
 * (n = 400: 80 columns, most done eight at a time). */
Test(tlc, half_rounds_away_from_zero) {
  size_t n = 400;
  float x[400];
  for (size_t i = 0; i < n; i++)
    x[i] = i % 3 == 0 ? 0.5f : i % 3 == 1 ? -0.5f : 0.25f;
  x[7] = 1.0f;
  for (int portable = 0; portable < 2; portable++) {
    codec_t *c = mk_mode("3lc:zre=0", portable);
    codec_state_t *s = mkstate(c, n, 0);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    float out[400];
    cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
    for (size_t i = 0; i < n; i++) {
      float want = i == 7          ? 1.0f
                   : x[i] == 0.25f ? 0.0f
                   : x[i] > 0      ? 1.0f
                                   : -1.0f;
      cr_assert_eq(out[i], want, "portable=%d value %zu = %g -> %g", portable,
                   i, (double)x[i], (double)out[i]);
    }
    free(p);
    codec_state_free(s);
    codec_free(c);
  }
}

Test(tlc, sparsity_multiplier) {
  /* s = 1.5: M = 1.5; ratios 0.667, 0.467, 0.507, -0.533 give q = 1, 0, 1,
   * -1; digits 2 1 2 0, one byte 162 + 27 + 18 = 207. */
  const float x[] = {1.0f, 0.7f, 0.76f, -0.8f};
  const unsigned char want[] = {0x00, 0x00, 0xc0, 0x3f, 207};
  size_t len;
  unsigned char *p = enc_spec("3lc:s=1.5", x, 4, &len);
  assert_bytes(p, len, want, sizeof want, "3lc s=1.5");
  free(p);
}

static void tlc_runs_case(size_t k, const unsigned char *want, size_t wl) {
  /* L = k + 2 columns, n = 5L: column 0 holds 1 (byte 202), the last
   * column -1 (byte 40), the k columns between are all zero (121). */
  size_t L = k + 2, n = 5 * L;
  float *x = calloc(n, sizeof *x);
  cr_assert_not_null(x);
  x[0] = 1.0f;
  x[L - 1] = -1.0f;
  size_t len;
  unsigned char *p = enc_spec("3lc", x, n, &len);
  unsigned char full[40];
  cr_assert(wl + 4 <= sizeof full);
  memcpy(full, "\0\0\x80\x3f", 4);
  memcpy(full + 4, want, wl);
  char what[32];
  snprintf(what, sizeof what, "3lc zero run of %zu", k);
  assert_bytes(p, len, full, wl + 4, what);
  codec_t *c = mk("3lc");
  float *out = xmalloc(n * sizeof *out);
  cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(out[i], x[i], "%s: value %zu", what, i);
  free(p);
  codec_free(c);
  /* Without zero-run encoding: the raw bytes 202, k x 121, 40. */
  p = enc_spec("3lc:zre=0", x, n, &len);
  cr_assert_eq(len, 4 + L, "%s, zre=0", what);
  cr_assert_eq(p[4], 202);
  for (size_t j = 1; j + 1 < L; j++)
    cr_assert_eq(p[4 + j], 121, "%s, zre=0: byte %zu", what, j);
  cr_assert_eq(p[4 + L - 1], 40);
  c = mk("3lc:zre=0");
  cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(out[i], x[i], "%s zre=0: value %zu", what, i);
  codec_free(c);
  free(out);
  free(p);
  free(x);
}

Test(tlc, zero_run_lengths) {
  tlc_runs_case(1, (const unsigned char[]){202, 121, 40}, 3);
  tlc_runs_case(2, (const unsigned char[]){202, 243, 40}, 3);
  tlc_runs_case(3, (const unsigned char[]){202, 244, 40}, 3);
  tlc_runs_case(14, (const unsigned char[]){202, 255, 40}, 3);
  tlc_runs_case(15, (const unsigned char[]){202, 255, 121, 40}, 4);
  tlc_runs_case(16, (const unsigned char[]){202, 255, 243, 40}, 4);
  tlc_runs_case(28, (const unsigned char[]){202, 255, 255, 40}, 4);
  tlc_runs_case(29, (const unsigned char[]){202, 255, 255, 121, 40}, 5);
}

Test(tlc, zre_encode_inplace_runs) {
  static const struct {
    size_t k, len;
    unsigned char out[4];
  } t[] = {{1, 1, {121}},
           {2, 1, {243}},
           {14, 1, {255}},
           {15, 2, {255, 121}},
           {29, 3, {255, 255, 121}},
           {30, 3, {255, 255, 243}}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    unsigned char buf[40];
    memset(buf, 121, t[i].k);
    size_t w = zre_encode_inplace(buf, t[i].k);
    assert_bytes(buf, w, t[i].out, t[i].len, "zre_encode_inplace");
  }
  cr_assert_eq(quartic_len(0), 0);
  cr_assert_eq(quartic_len(1), 1);
  cr_assert_eq(quartic_len(5), 1);
  cr_assert_eq(quartic_len(6), 2);
}

Test(tlc, all_zero_tensor_is_280x) {
  static const size_t ks[] = {1, 3, 100, 1000};
  for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
    size_t n = 70 * ks[t];
    float *x = calloc(n, sizeof *x);
    cr_assert_not_null(x);
    codec_t *c = mk("3lc");
    codec_state_t *s = mkstate(c, n, 0);
    for (int step = 0; step < 2; step++) {
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      cr_assert_eq(len, 4 + ks[t], "n=%zu: %zu bytes", n, len);
      cr_assert_eq(4 * n, 280 * (len - 4));
      cr_assert_eq(get32(p), 0, "M = 0");
      for (size_t i = 4; i < len; i++)
        cr_assert_eq(p[i], 255, "n=%zu byte %zu", n, i);
      float *out = xmalloc(n * sizeof *out);
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
      for (size_t i = 0; i < n; i++)
        cr_assert_eq(out[i], 0.0f);
      free(out);
      free(p);
    }
    codec_state_free(s);
    codec_free(c);
    free(x);
  }
}

Test(tlc, error_accumulation_by_hand) {
  /* x = 1, 0.3, 0, 0, 0 three times: the 0.3 accumulates and is sent at
   * the second step. */
  const float x[] = {1.0f, 0.3f, 0.0f, 0.0f, 0.0f};
  codec_t *c = mk("3lc");
  codec_state_t *s = mkstate(c, 5, 0);
  float b1 = 0.3f, b2 = (0.3f + 0.3f) - 1.0f, b3 = (b2 + 0.3f);
  /* digits: 2 1 1 1 1 = 202; 2 2 1 1 1 = 229; step 3 again 202. */
  const unsigned char bytes[3] = {202, 229, 202};
  const float resid1[3] = {b1, b2, b3};
  for (int step = 0; step < 3; step++) {
    size_t len;
    unsigned char *p = enc(s, x, 5, &len);
    cr_assert_eq(len, 5);
    cr_assert_eq(getf(p), 1.0f, "step %d M", step);
    cr_assert_eq(p[4], bytes[step], "step %d: byte %u", step, p[4]);
    const float *b = codec_state_residual(s);
    cr_assert_eq(f2u(b[0]), 0);
    cr_assert_eq(f2u(b[1]), f2u(resid1[step]), "step %d: %a", step,
                 (double)b[1]);
    cr_assert_eq(codec_state_step(s), (uint64_t)step + 1);
    free(p);
  }
  codec_state_reset(s);
  cr_assert_eq(codec_state_step(s), 0);
  cr_assert_eq(codec_state_residual(s)[1], 0.0f);
  codec_state_free(s);
  codec_free(c);
}

Test(tlc, random_steps_match_reference) {
  static const struct {
    const char *spec;
    double s;
    bool zre;
  } cfg[] = {{"3lc", 1.0, true},
             {"3lc:s=1.5,zre=0", 1.5, false},
             {"3lc:s=1.25", 1.25, true},
             {"3lc:s=1.75,zre=1", 1.75, true}};
  static const size_t sizes[] = {1,  2,  4,  5,  6,   9,   10,
                                 11, 39, 40, 41, 333, 4099};
  struct rng r = {3};
  size_t maxn = 4099;
  float *x = xmalloc(maxn * sizeof *x), *b = xmalloc(maxn * sizeof *b);
  float *out = xmalloc(maxn * sizeof *out);
  unsigned char *want = xmalloc(maxn + 8), *dig = xmalloc(maxn),
                *tmp = xmalloc(maxn);
  for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
    codec_t *c = mk(cfg[k].spec);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      size_t n = sizes[z];
      codec_state_t *s = mkstate(c, n, 0);
      memset(b, 0, n * sizeof *b);
      for (int step = 0; step < 6; step++) {
        /* Mostly small values with a few big ones, so that most digits are
         * zero and runs form. */
        for (size_t i = 0; i < n; i++)
          x[i] = rng_below(&r, 8) ? rng_laplace(&r, 0.01) : rng_laplace(&r, 1);
        if (step == 3)
          memset(x, 0, n * sizeof *x);
        size_t wl = ref_tlc_step(b, x, n, cfg[k].s, cfg[k].zre, want, dig, tmp);
        size_t len;
        unsigned char *p = enc(s, x, n, &len);
        char what[80];
        snprintf(what, sizeof what, "%s n=%zu step %d", cfg[k].spec, n, step);
        assert_bytes(p, len, want, wl, what);
        assert_floats_bits(codec_state_residual(s), b, n, what);
        cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
        float m = getf(want);
        for (size_t i = 0; i < n; i++)
          cr_assert_eq(out[i], m * ((float)dig[i] - 1.0f), "%s: value %zu",
                       what, i);
        free(p);
      }
      codec_state_free(s);
    }
    codec_free(c);
  }
  free(x);
  free(b);
  free(out);
  free(want);
  free(dig);
  free(tmp);
}

/* The quantizer compares v with a threshold instead of dividing by M
 * (codecs/tlc.c): the digits must be those of round(v / M) in float, also
 * for v within a few ulps of +-M/2, for tiny (subnormal) and huge M. */
Test(tlc, threshold_digits_equal_division) {
  struct rng r = {99};
  for (int mode = 0; mode < 2; mode++) {
    codec_t *c = mk_mode("3lc:s=1,zre=0", mode == 1);
    codec_state_t *s = mkstate(c, 2, 1);
    for (int trial = 0; trial < 4000; trial++) {
      float m =
          ldexpf(1.0f + (float)rng_unif(&r), (int)rng_below(&r, 270) - 148);
      if (trial % 7 == 0)
        m = u2f(1u + (uint32_t)rng_below(&r, 0x7fffff)); /* subnormal */
      if (!isfinite(m) || m == 0.0f)
        continue;
      float v = 0.5f * m;
      for (int k = (int)rng_below(&r, 9) - 4; k < 0; k++)
        v = nextafterf(v, 0.0f);
      for (int k = (int)rng_below(&r, 9) - 4; k > 0; k--)
        v = nextafterf(v, INFINITY);
      if (rng_u64(&r) & 1)
        v = -v;
      if (fabsf(v) > m)
        v = copysignf(m, v);
      float x[2] = {m, v};
      codec_state_reset(s);
      size_t len;
      unsigned char *p = enc(s, x, 2, &len);
      float q = roundf(v / m);
      unsigned want = 81 * 2 + 27 * (unsigned)(q + 1.0f);
      cr_assert_eq(p[4], want, "M %a v %a: byte %u, want %u (mode %d)",
                   (double)m, (double)v, p[4], want, mode);
      cr_assert_eq(f2u(codec_state_residual(s)[1]), f2u(v - m * q),
                   "M %a v %a: residual", (double)m, (double)v);
      free(p);
    }
    codec_state_free(s);
    codec_free(c);
  }
}

/* Awkward lengths (no whole vector of SIMD lanes, a tail of every size, a
 * million and three) against the reference, both kernels. */
Test(tlc, awkward_lengths_match_reference) {
  static const size_t sizes[] = {1, 7, 63, 1000003};
  static const char *const specs[] = {"3lc:s=1", "3lc:s=1.9,zre=1",
                                      "3lc:s=1.5,zre=0"};
  static const double svals[] = {1.0, 1.9, 1.5};
  struct rng r = {7};
  size_t maxn = 1000003;
  float *x = xmalloc(maxn * sizeof *x), *b = xmalloc(maxn * sizeof *b);
  unsigned char *want = xmalloc(maxn + 8), *dig = xmalloc(maxn),
                *tmp = xmalloc(maxn);
  for (size_t k = 0; k < 3; k++)
    for (int mode = 0; mode < 2; mode++) {
      codec_t *c = mk_mode(specs[k], mode == 1);
      for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        codec_state_t *s = mkstate(c, n, 0);
        memset(b, 0, n * sizeof *b);
        for (int step = 0; step < 3; step++) {
          for (size_t i = 0; i < n; i++)
            x[i] =
                rng_below(&r, 16) ? rng_laplace(&r, 0.01) : rng_laplace(&r, 1);
          size_t wl = ref_tlc_step(b, x, n, svals[k], k != 2, want, dig, tmp);
          size_t len;
          unsigned char *p = enc(s, x, n, &len);
          char what[96];
          snprintf(what, sizeof what, "%s %s n=%zu step %d", specs[k],
                   mode ? "portable" : "simd", n, step);
          assert_bytes(p, len, want, wl, what);
          assert_floats_bits(codec_state_residual(s), b, n, what);
          free(p);
        }
        codec_state_free(s);
      }
      codec_free(c);
    }
  free(x);
  free(b);
  free(want);
  free(dig);
  free(tmp);
}

/* zre_encode_inplace scans eight bytes at a time: against the reference
 * on streams of runs of every length and literals, at awkward lengths. */
Test(tlc, zre_matches_reference_on_random_streams) {
  static const size_t sizes[] = {0, 1, 7, 63, 1000003};
  struct rng r = {31};
  unsigned char *in = xmalloc(1000003), *buf = xmalloc(1000003),
                *want = xmalloc(1000003);
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
    for (int trial = 0; trial < 20; trial++) {
      size_t n = sizes[z];
      for (size_t i = 0; i < n;) {
        size_t run = rng_below(&r, trial % 2 ? 40 : 4) + 1;
        bool zero = rng_below(&r, 3) != 0;
        for (size_t k = 0; k < run && i < n; k++, i++)
          in[i] = zero ? 121 : (unsigned char)rng_below(&r, 243);
      }
      memcpy(buf, in, n);
      size_t wl = ref_zre(in, n, want);
      size_t got = zre_encode_inplace(buf, n);
      char what[64];
      snprintf(what, sizeof what, "zre n=%zu trial %d", n, trial);
      assert_bytes(buf, got, want, wl, what);
    }
  free(in);
  free(buf);
  free(want);
}

/* The block-by-block zero-run encoder (zre_begin, zre_feed, zre_end),
 * scalar and AVX2 (where the processor has it), against the reference on
 * streams of short and long runs cut into blocks of random sizes. Before
 * each feed the 64 bytes after the block hold garbage, as they may in an
 * encoder that writes the next block only before feeding it: reading them
 * would change the result. */
Test(tlc, zre_stream_in_blocks_matches_reference) {
  codec_t *c = mk("3lc");
  bool avx2 = strcmp(codec_kernels(c), "avx2") == 0;
  codec_free(c);
  struct rng r = {33};
  enum { MAXN = 20000 };
  unsigned char *in = xmalloc(MAXN + 64), *buf = xmalloc(MAXN + 64),
                *want = xmalloc(MAXN);
  static const size_t longest[] = {2, 5, 20, 60, 400};
  for (int trial = 0; trial < 400; trial++) {
    size_t n = trial % 7 == 0 ? rng_below(&r, 100) : 1 + rng_below(&r, MAXN);
    size_t zmax = longest[trial % 5];
    for (size_t i = 0; i < n;) {
      bool zero = rng_below(&r, 4) != 0;
      size_t run = 1 + rng_below(&r, zero ? zmax : 3);
      for (size_t k = 0; k < run && i < n; k++, i++)
        in[i] = zero ? 121 : (unsigned char)rng_below(&r, 243);
    }
    size_t wl = ref_zre(in, n, want);
    for (int simd = 0; simd <= (int)avx2; simd++) {
      struct zre_stream z;
      zre_begin(&z, simd);
      size_t most = trial % 3 ? 5000 : 40;
      for (size_t j = 0; j < n;) {
        size_t e = j + 1 + rng_below(&r, most);
        e = e < n ? e : n;
        memcpy(buf + j, in + j, e - j);
        for (size_t k = e; k < e + 64; k++)
          buf[k] = rng_below(&r, 2) ? 121 : (unsigned char)rng_below(&r, 256);
        zre_feed(buf, j, e, &z);
        j = e;
      }
      size_t got = zre_end(buf, &z);
      char what[80];
      snprintf(what, sizeof what, "zre blocks n=%zu trial %d simd %d", n, trial,
               simd);
      assert_bytes(buf, got, want, wl, what);
    }
  }
  free(in);
  free(buf);
  free(want);
}

/* ---- terngrad -------------------------------------------------------- */

Test(terngrad, layout_and_values) {
  const float x[] = {1.0f,  0.5f,  -0.25f, 0.1f, -0.9f, 0.0f,
                     0.75f, -1.0f, 0.0f,   0.3f, -0.6f};
  size_t n = sizeof x / sizeof x[0];
  codec_t *c = mk("terngrad");
  for (uint64_t seed = 0; seed < 50; seed++) {
    codec_state_t *s = mkstate(c, n, seed);
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    cr_assert_eq(len, 4 + qlen(n));
    cr_assert_eq(getf(p), 1.0f, "M = max|x|");
    unsigned char d[sizeof x / sizeof x[0]];
    cr_assert(ref_unquartic(p + 4, n, d), "seed %llu: bad quartic bytes",
              (unsigned long long)seed);
    float out[sizeof x / sizeof x[0]];
    cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
    for (size_t i = 0; i < n; i++) {
      float v = (float)d[i] - 1.0f;
      cr_assert_eq(out[i], v, "seed %llu value %zu", (unsigned long long)seed,
                   i);
      if (x[i] == 0.0f)
        cr_assert_eq(v, 0.0f, "zero stays zero");
      else if (fabsf(x[i]) == 1.0f)
        cr_assert_eq(v, x[i], "|x| = M is always sent");
      else
        cr_assert(v == 0.0f || (v > 0) == (x[i] > 0), "sign kept");
    }
    free(p);
    codec_state_free(s);
  }
  codec_free(c);
}

Test(terngrad, zero_input_and_padding) {
  /* n = 7, L = 2: column 0 holds values 0 2 4 6 and one padding digit,
   * column 1 values 1 3 5 and two: digits 1 1 1 1 0 = 120, 1 1 1 0 0 =
   * 117. */
  const float x[7] = {0};
  const unsigned char want[] = {0, 0, 0, 0, 120, 117};
  size_t len;
  unsigned char *p = enc_spec("terngrad", x, 7, &len);
  assert_bytes(p, len, want, sizeof want, "terngrad zeros");
  free(p);
}

Test(terngrad, seeds) {
  size_t n = 1000;
  struct rng r = {99};
  float *x = xmalloc(n * sizeof *x);
  fill_laplace(&r, x, n, 1.0);
  codec_t *c = mk("terngrad");
  codec_state_t *a = mkstate(c, n, 42), *b = mkstate(c, n, 42),
                *d = mkstate(c, n, 43);
  for (int step = 0; step < 3; step++) {
    size_t la, lb, ld;
    unsigned char *pa = enc(a, x, n, &la), *pb = enc(b, x, n, &lb),
                  *pd = enc(d, x, n, &ld);
    assert_bytes(pa, la, pb, lb, "same seed");
    cr_assert_eq(la, ld);
    cr_assert(memcmp(pa, pd, la) != 0, "seeds 42 and 43 gave the same payload");
    free(pa);
    free(pb);
    free(pd);
  }
  codec_state_free(a);
  codec_state_free(b);
  codec_state_free(d);
  codec_free(c);
  free(x);
}

Test(terngrad, unbiased_over_seeds) {
  const float x[] = {1.0f, 0.5f,  -0.25f, 0.1f, -0.9f,
                     0.0f, 0.75f, -0.02f, 0.6f};
  enum { N = sizeof x / sizeof x[0], SEEDS = 4000 };
  double sum[N] = {0};
  codec_t *c = mk("terngrad");
  for (uint64_t seed = 0; seed < SEEDS; seed++) {
    codec_state_t *s = mkstate(c, N, seed * 7919 + 1);
    size_t len;
    unsigned char *p = enc(s, x, N, &len);
    float out[N];
    cr_assert_eq(codec_decode(c, p, len, out, N), 0);
    for (size_t i = 0; i < N; i++)
      sum[i] += out[i];
    free(p);
    codec_state_free(s);
  }
  /* Each value is M Bernoulli(|x| / M): standard deviation of the mean at
   * most M / (2 sqrt(4000)) = 0.0079; allow 6 of them. */
  for (size_t i = 0; i < N; i++)
    cr_assert(fabs(sum[i] / SEEDS - x[i]) < 0.048,
              "value %zu: mean %g over %d seeds, x = %g", i, sum[i] / SEEDS,
              SEEDS, (double)x[i]);
  codec_free(c);
}

/* ---- qsgd ------------------------------------------------------------ */

/* Field width W by the specification: a sign bit and ceil(log2(S + 1))
 * level bits, worked out by hand. */
static const struct {
  unsigned levels, w;
} QSGD_W[] = {{1, 2},   {2, 3},    {3, 3},     {4, 4},      {5, 4},
              {7, 4},   {8, 5},    {12, 5},    {127, 8},    {128, 9},
              {255, 9}, {256, 10}, {1000, 11}, {32767, 16}, {32768, 17}};

static unsigned qsgd_w(unsigned levels) {
  for (size_t a = 0; a < sizeof QSGD_W / sizeof QSGD_W[0]; a++)
    if (QSGD_W[a].levels == levels)
      return QSGD_W[a].w;
  cr_assert_fail("levels=%u is not in QSGD_W", levels);
  return 0;
}

/* Payload bytes by the specification: each bucket of m values is its
 * norm (4 bytes) and m fields of W bits rounded up to a byte. */
static size_t ref_qsgd_len(size_t n, size_t d, unsigned w) {
  size_t len = 0;
  for (size_t b = 0; b < n; b += d) {
    size_t m = n - b < d ? n - b : d;
    len += 4 + (m * w + 7) / 8;
  }
  return len;
}

Test(parse, qsgd_parameters) {
  REJECT("qsgd:levels=0", "levels", "1", "32768");
  REJECT("qsgd:levels=32769", "levels", "1", "32768");
  REJECT("qsgd:levels=1.5", "levels");
  REJECT("qsgd:bucket=0", "bucket", "1", "1048576");
  REJECT("qsgd:bucket=1048577", "bucket", "1", "1048576");
  REJECT("qsgd:bits=4", "bits", "levels", "bucket");
  REJECT("qsgd:levels=7,levels=7", "levels");
  codec_t *c = mk("qsgd");
  cr_assert_str_eq(codec_spec(c), "qsgd:levels=7,bucket=512");
  codec_free(c);
  c = mk("qsgd:bucket=1048576,levels=32768");
  cr_assert_str_eq(codec_spec(c), "qsgd:levels=32768,bucket=1048576");
  codec_free(c);
}

/* Values on levels (|v| S / ||v|| an integer: probability 0 or 1, no
 * randomness), payloads worked out by hand from the layout: per bucket
 * the norm (f32 LE), then per value sign (bit 0) and level (the bits
 * above), W bits, LSB-first, zero padding to a byte. Every seed and step
 * gives these bytes; decoding gives the values back. */
Test(qsgd, layout_on_levels) {
  /* levels=12 (W = 1 + 4 = 5), bucket=5, n = 11: three buckets.
   * B1 = (0.75, -0.5, 0.25, -0.25, 0.25): norm sqrt(9 + 4 + 1 + 1 + 1)/4
   * = 1, levels 9 6 3 3 3, fields 18 13 6 7 6: the 25-bit stream
   * 18 | 13 << 5 | 6 << 10 | 7 << 15 | 6 << 20 = 0x6399b2.
   * B2 = (0, 0, -0.125, 0, 0): norm 0.125, level 12, field 25 at value 2:
   * 25 << 10 = 0x6400. B3 = (-3): norm 3, level 12, field 25, one byte. */
  static const float x1[] = {0.75f, -0.5f,   0.25f, -0.25f, 0.25f, 0.0f,
                             0.0f,  -0.125f, 0.0f,  0.0f,   -3.0f};
  static const unsigned char p1[] = {
      0x00, 0x00, 0x80, 0x3f, 0xb2, 0x99, 0x63, 0x00, /* B1 */
      0x00, 0x00, 0x00, 0x3e, 0x00, 0x64, 0x00, 0x00, /* B2 */
      0x00, 0x00, 0x40, 0x40, 0x19};                  /* B3 */
  /* levels=1 (W = 2), bucket=8, n = 16: B1 = (0, 0, -2, 0, 0, 0, 0, 0),
   * norm 2, field 3 (sign, level 1) at value 2: bits 4-5 of byte 0;
   * B2 all zero: norm 0, fields 0. */
  static const float x2[] = {0, 0, -2.0f, 0, 0, 0, 0, 0,
                             0, 0, 0,     0, 0, 0, 0, 0};
  static const unsigned char p2[] = {0x00, 0x00, 0x00, 0x40, 0x30, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  /* levels=4 (W = 4), bucket=5, n = 5: B1 as above, levels 3 2 1 1 1,
   * fields 6 5 2 3 2, two to a byte, the fifth padded: 0x56 0x32 0x02. */
  static const unsigned char p3[] = {0x00, 0x00, 0x80, 0x3f, 0x56, 0x32, 0x02};
  /* levels=127 (W = 8), bucket=4, n = 4: (0, 0.5, 0, 0): norm 0.5,
   * level 127 (field 254) at value 1; -0 is level 0, sign bit clear. */
  static const float x4[] = {0.0f, 0.5f, -0.0f, 0.0f};
  static const unsigned char p4[] = {0x00, 0x00, 0x00, 0x3f,
                                     0x00, 0xfe, 0x00, 0x00};
  static const struct {
    const char *spec;
    const float *x;
    size_t n;
    const unsigned char *p;
    size_t len;
  } t[] = {
      {"qsgd:levels=12,bucket=5", x1, 11, p1, sizeof p1},
      {"qsgd:levels=1,bucket=8", x2, 16, p2, sizeof p2},
      {"qsgd:levels=4,bucket=5", x1, 5, p3, sizeof p3},
      {"qsgd:levels=127,bucket=4", x4, 4, p4, sizeof p4},
  };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
    for (int portable = 0; portable < 2; portable++) {
      codec_t *c = mk_mode(t[k].spec, portable);
      for (uint64_t seed = 0; seed < 20; seed++) {
        codec_state_t *s = mkstate(c, t[k].n, seed);
        for (int step = 0; step < 3; step++) {
          size_t len;
          unsigned char *p = enc(s, t[k].x, t[k].n, &len);
          assert_bytes(p, len, t[k].p, t[k].len, t[k].spec);
          free(p);
        }
        codec_state_free(s);
      }
      float out[16];
      cr_assert_eq(dec_guarded(c, t[k].p, t[k].len, out, t[k].n), 0);
      /* ||v|| sgn(v) xi / s: the input, up to the float rounding of the
       * decoder (none of these values needs any). */
      for (size_t i = 0; i < t[k].n; i++)
        cr_assert(fabs((double)out[i] - (double)t[k].x[i]) <=
                      fabs((double)t[k].x[i]) * 0x1p-22,
                  "%s: value %zu decodes to %a, expected %a", t[k].spec, i,
                  (double)out[i], (double)t[k].x[i]);
      codec_free(c);
    }
}

/* The payload size of the specification, for every W of the table and
 * bucket sizes that divide n, do not, and exceed it. */
Test(qsgd, payload_sizes) {
  struct rng r = {31};
  static const size_t ns[] = {1, 2, 7, 64, 100, 513, 1031};
  static const size_t ds[] = {1, 3, 8, 64, 512, 1000};
  float x[1031];
  for (size_t a = 0; a < sizeof QSGD_W / sizeof QSGD_W[0]; a++)
    for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++) {
      char spec[64];
      snprintf(spec, sizeof spec, "qsgd:levels=%u,bucket=%zu", QSGD_W[a].levels,
               ds[b]);
      codec_t *c = mk(spec);
      for (size_t z = 0; z < sizeof ns / sizeof ns[0]; z++) {
        size_t n = ns[z], len;
        fill_laplace(&r, x, n, 1.0);
        size_t want = ref_qsgd_len(n, ds[b], QSGD_W[a].w);
        cr_assert_eq(codec_bound(c, n), want, "%s n=%zu", spec, n);
        codec_state_t *s = mkstate(c, n, 1);
        unsigned char *p = enc(s, x, n, &len);
        cr_assert_eq(len, want, "%s n=%zu: %zu bytes, expected %zu", spec, n,
                     len, want);
        free(p);
        codec_state_free(s);
      }
      codec_free(c);
    }
}

/* Every decoded value is on its bucket's grid, ||v|| xi / S with the norm
 * M the payload carries, within one level, ||v|| / S, of its input (the
 * norm computed here in double), with the input's sign or zero; M is the
 * bucket's 2-norm rounded to float (capped at the largest float). On
 * gradients with zeros, subnormals and huge values, for levels from 1 to
 * 2^15 and buckets from 1 to more than n. */
Test(qsgd, within_one_level_of_the_input) {
  static const char *const specs[] = {
      "qsgd:levels=1,bucket=512",    "qsgd:levels=7,bucket=512",
      "qsgd:levels=127,bucket=512",  "qsgd:levels=1,bucket=1",
      "qsgd:levels=3,bucket=7",      "qsgd:levels=12,bucket=100",
      "qsgd:levels=32768,bucket=3",  "qsgd:levels=1000,bucket=4096",
      "qsgd:levels=5,bucket=1048576"};
  struct rng r = {77};
  size_t n = 3001;
  float *x = xmalloc(n * sizeof *x), *out = xmalloc(n * sizeof *out);
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    codec_t *c = mk(specs[k]);
    unsigned levels;
    size_t d;
    cr_assert_eq(sscanf(specs[k], "qsgd:levels=%u,bucket=%zu", &levels, &d), 2);
    unsigned w = qsgd_w(levels);
    codec_state_t *s = mkstate(c, n, 5);
    for (int step = 0; step < 6; step++) {
      if (step % 3 == 0)
        fill_mixed(&r, x, n, 1e-3);
      else if (step == 5) /* norms beyond the largest float */
        for (size_t i = 0; i < n; i++)
          x[i] = (float)((rng_u64(&r) & 1 ? 0.5 : -0.5) * (1 + rng_unif(&r)) *
                         FLT_MAX);
      else
        fill_laplace(&r, x, n, step == 1 ? 1.0 : step == 2 ? 1e30 : 1e-3);
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
      size_t off = 0;
      for (size_t b = 0; b < n; b += d) {
        size_t m = n - b < d ? n - b : d;
        double sum = 0;
        for (size_t i = b; i < b + m; i++)
          sum += (double)x[i] * (double)x[i];
        double norm = sqrt(sum);
        float mf = getf(p + off);
        double want_m = norm > FLT_MAX ? FLT_MAX : (double)(float)norm;
        cr_assert(fabs((double)mf - want_m) <= want_m * 0x1p-23,
                  "%s step %d bucket %zu: norm %a, expected %a", specs[k], step,
                  b / d, (double)mf, want_m);
        double level = (double)mf / levels;
        for (size_t i = b; i < b + m; i++) {
          double got = out[i], err = fabs(got - (double)x[i]);
          cr_assert(err <= norm / levels * (1 + 0x1p-20) + 0x1p-140,
                    "%s step %d: value %zu = %a decoded to %a, %g levels off",
                    specs[k], step, i, (double)x[i], got, err / level);
          cr_assert(got == 0 || (got < 0) == (x[i] < 0), "%s: sign of %zu",
                    specs[k], i);
          if (mf == 0.0f) { /* a bucket of zeros */
            cr_assert_eq(f2u(out[i]), 0, "%s: value %zu", specs[k], i);
            continue;
          }
          double q = fabs(got) / level;
          /* The decoder's roundings: 3 2^-24 relative, 2^-150 absolute. */
          cr_assert(q <= levels * (1 + 0x1p-20) + 0x1p-149 / level &&
                        fabs(q - nearbyint(q)) <=
                            0x1p-20 * levels + 0x1p-149 / level,
                    "%s: value %zu decodes to %g levels", specs[k], i, q);
        }
        off += 4 + (m * w + 7) / 8;
      }
      cr_assert_eq(off, len);
      free(p);
    }
    codec_state_free(s);
    codec_free(c);
  }
  free(x);
  free(out);
}

/* Unbiased: the mean over many streams is close to the input. Each
 * decoded value is l or l + 1 levels of h = M / S, the upper one with
 * probability p: variance h^2 p (1 - p) <= h^2 / 4, so the mean of N
 * independent draws has standard deviation at most h / (2 sqrt N); six of
 * them, plus the draws' resolution (p is met to 2^-24) and the float
 * rounding (M 2^-20), bound it. */
Test(qsgd, unbiased_over_seeds) {
  static const char *const specs[] = {"qsgd:levels=1,bucket=50",
                                      "qsgd:levels=7,bucket=64",
                                      "qsgd:levels=127,bucket=200"};
  enum { N = 200, STREAMS = 20000 };
  struct rng r = {101};
  float x[N];
  fill_laplace(&r, x, N, 1.0);
  x[3] = 0.0f;
  x[4] = -x[5];
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    codec_t *c = mk(specs[k]);
    unsigned levels;
    size_t d;
    cr_assert_eq(sscanf(specs[k], "qsgd:levels=%u,bucket=%zu", &levels, &d), 2);
    double sum[N] = {0};
    /* Half the draws from new streams, half from later steps of one. */
    codec_state_t *one = mkstate(c, N, 424242);
    for (uint64_t t = 0; t < STREAMS; t++) {
      codec_state_t *s = t % 2 ? one : mkstate(c, N, t * 7919 + 1);
      size_t len;
      unsigned char *p = enc(s, x, N, &len);
      float out[N];
      cr_assert_eq(codec_decode(c, p, len, out, N), 0);
      for (size_t i = 0; i < N; i++)
        sum[i] += out[i];
      free(p);
      if (s != one)
        codec_state_free(s);
    }
    codec_state_free(one);
    double drift = 0; /* sum of the errors in levels, toward |x| */
    for (size_t b = 0; b < N; b += d) {
      size_t m = N - b < d ? N - b : d;
      double norm = 0;
      for (size_t i = b; i < b + m; i++)
        norm += (double)x[i] * x[i];
      norm = sqrt(norm);
      double h = norm / levels;
      double tol =
          6 * h / (2 * sqrt((double)STREAMS)) + h * 0x1p-23 + norm * 0x1p-20;
      for (size_t i = b; i < b + m; i++)
        drift += (sum[i] / STREAMS - x[i]) * (x[i] < 0 ? -1 : 1) / h;
      for (size_t i = b; i < b + m; i++)
        cr_assert(fabs(sum[i] / STREAMS - x[i]) <= tol,
                  "%s: value %zu: mean %.9g over %d streams, x = %.9g (level "
                  "%g, tolerance %g)",
                  specs[k], i, sum[i] / STREAMS, STREAMS, (double)x[i], h, tol);
    }
    /* All N STREAMS errors together, each of variance at most 1/4 level^2:
     * a bias toward or away from zero of a small fraction of a level shows
     * here though each value's own mean hides it. */
    double sd = 1 / (2 * sqrt((double)N * STREAMS));
    cr_assert(fabs(drift / N) <= 6 * sd, "%s: mean error %g levels (sd %g)",
              specs[k], drift / N, sd);
    codec_free(c);
  }
}

/* The same seed gives the same bytes, another seed or the next step other
 * bytes; a stream's payloads do not depend on other streams. */
Test(qsgd, seeds_and_steps) {
  size_t n = 2000;
  struct rng r = {98};
  float *x = xmalloc(n * sizeof *x);
  fill_laplace(&r, x, n, 1.0);
  codec_t *c = mk("qsgd:levels=7,bucket=512");
  codec_state_t *a = mkstate(c, n, 42), *b = mkstate(c, n, 42),
                *d = mkstate(c, n, 43);
  unsigned char *prev = NULL;
  for (int step = 0; step < 3; step++) {
    size_t la, lb, ld;
    unsigned char *pa = enc(a, x, n, &la);
    unsigned char *pd = enc(d, x, n, &ld);
    unsigned char *pb = enc(b, x, n, &lb);
    assert_bytes(pb, lb, pa, la, "same seed");
    cr_assert_eq(la, ld);
    cr_assert(memcmp(pa, pd, la) != 0, "seeds 42 and 43 gave the same bytes");
    if (prev)
      cr_assert(memcmp(pa, prev, la) != 0, "steps %d and %d: same bytes",
                step - 1, step);
    free(prev);
    prev = pa;
    free(pb);
    free(pd);
  }
  free(prev);
  codec_state_free(a);
  codec_state_free(b);
  codec_state_free(d);
  codec_free(c);
  free(x);
}

/* Payloads no encoder writes are -EBADMSG: a level above S, a sign on a
 * zero level, a negative, -0, infinite or NaN norm, a nonzero field under
 * a zero norm, a padding bit, a wrong length. Starts from the levels=4
 * (W = 4), bucket=5 payload of layout_on_levels, fields 6 5 2 3 2. */
Test(qsgd, malformed_payloads) {
  static const unsigned char good[] = {0x00, 0x00, 0x80, 0x3f,
                                       0x56, 0x32, 0x02};
  static const struct {
    size_t at;
    unsigned char byte;
    const char *what;
  } bad[] = {
      {4, 0x5a, "level 5 > S = 4 (field 10)"},
      {4, 0x5e, "level 7 (field 14)"},
      {6, 0x01, "sign bit on a zero level"},
      {3, 0xbf, "negative norm"},
      {6, 0x12, "a padding bit"},
      {6, 0x82, "the top padding bit"},
  };
  codec_t *c = mk("qsgd:levels=4,bucket=5");
  float out[5];
  cr_assert_eq(dec_guarded(c, good, sizeof good, out, 5), 0);
  unsigned char q[sizeof good + 1];
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    memcpy(q, good, sizeof good);
    q[bad[k].at] = bad[k].byte;
    cr_assert_eq(dec_guarded(c, q, sizeof good, out, 5), -EBADMSG, "%s",
                 bad[k].what);
    for (size_t i = 0; i < 5; i++)
      out[i] = 1.0f;
    cr_assert_eq(codec_decode_add(c, q, sizeof good, out, 5), -EBADMSG, "%s",
                 bad[k].what);
  }
  static const uint32_t norms[] = {0x80000000u, 0x7f800000u, 0xff800000u,
                                   0x7fc00000u, 0xffc00000u, 0x00000000u};
  for (size_t k = 0; k < sizeof norms / sizeof norms[0]; k++) {
    memcpy(q, good, sizeof good);
    put32(q, norms[k]); /* the last one: zero norm, nonzero fields */
    cr_assert_eq(dec_guarded(c, q, sizeof good, out, 5), -EBADMSG,
                 "norm 0x%08x", norms[k]);
  }
  /* A zero norm with zero fields is the encoding of zeros. */
  memset(q, 0, sizeof good);
  cr_assert_eq(dec_guarded(c, q, sizeof good, out, 5), 0);
  for (size_t i = 0; i < 5; i++)
    cr_assert_eq(f2u(out[i]), 0);
  /* Lengths: one byte short, one too many, and for another n. */
  memcpy(q, good, sizeof good);
  q[sizeof good] = 0;
  cr_assert_eq(dec_guarded(c, q, sizeof good - 1, out, 5), -EBADMSG);
  cr_assert_eq(dec_guarded(c, q, sizeof good + 1, out, 5), -EBADMSG);
  cr_assert_eq(dec_guarded(c, q, sizeof good, out, 4), -EBADMSG);
  codec_free(c);
}

/* ---- onebit ---------------------------------------------------------- */

Test(onebit, hand_example) {
  /* Non-negative: 1 2 0 0.5 4 1.5, mean 9/6 = 1.5; negative: -1 -3 -0.5 -2,
   * mean -6.5/4 = -1.625. Bits 0 1 4 5 7 | 9: 0xb3, 0x02. */
  const float x[] = {1, 2, -1, -3, 0, 0.5f, -0.5f, 4, -2, 1.5f};
  const unsigned char want[] = {0x00, 0x00, 0xc0, 0x3f, 0x00,
                                0x00, 0xd0, 0xbf, 0xb3, 0x02};
  codec_t *c = mk("onebit");
  codec_state_t *s = mkstate(c, 10, 0);
  size_t len;
  unsigned char *p = enc(s, x, 10, &len);
  assert_bytes(p, len, want, sizeof want, "onebit");
  const float rb[] = {-0.5f, 0.5f,   0.625f, -1.375f, -1.5f,
                      -1.0f, 1.125f, 2.5f,   -0.375f, 0.0f};
  assert_floats_bits(codec_state_residual(s), rb, 10, "onebit residual");
  float out[10];
  cr_assert_eq(dec_guarded(c, p, len, out, 10), 0);
  for (size_t i = 0; i < 10; i++)
    cr_assert_eq(out[i], x[i] >= 0 ? 1.5f : -1.625f, "value %zu", i);
  /* An unused bitmap bit set: malformed. */
  p[9] |= 0x04;
  cr_assert_eq(codec_decode(c, p, len, out, 10), -EBADMSG);
  free(p);
  /* Second step: b + x = 0.5 2.5 -0.375 -4.375 -1.5 -0.5 0.625 6.5
   * -2.375 1.5: non-negative 0.5 2.5 0.625 6.5 1.5 = 11.625 / 5 = 2.325,
   * negative -9.125 / 5 = -1.825; bits 0 1 6 7 | 9. */
  p = enc(s, x, 10, &len);
  cr_assert_eq(len, 10);
  cr_assert_eq(f2u(getf(p)), f2u((float)(11.625 / 5)));
  cr_assert_eq(f2u(getf(p + 4)), f2u((float)(-9.125 / 5)));
  cr_assert_eq(p[8], 0xc3);
  cr_assert_eq(p[9], 0x02);
  free(p);
  codec_state_free(s);
  codec_free(c);
}

Test(onebit, negative_zero_is_non_negative) {
  const float x[] = {-0.0f, -1.0f, 3.0f};
  size_t len;
  unsigned char *p = enc_spec("onebit", x, 3, &len);
  cr_assert_eq(len, 9);
  cr_assert_eq(p[8], 0x05);
  cr_assert_eq(getf(p), 1.5f);
  cr_assert_eq(getf(p + 4), -1.0f);
  free(p);
}

/* Over several random steps: the bitmap is the sign of b + x, the two
 * levels are the means of its parts (to a float rounding), the residual
 * is b + x minus the decoded value, bit for bit. */
Test(onebit, error_feedback_steps) {
  static const size_t sizes[] = {1, 7, 8, 9, 63, 64, 65, 1000, 4097};
  struct rng r = {21};
  codec_t *c = mk("onebit");
  float *x = xmalloc(4097 * sizeof *x), *v = xmalloc(4097 * sizeof *v);
  float *out = xmalloc(4097 * sizeof *out);
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    size_t n = sizes[z];
    codec_state_t *s = mkstate(c, n, 0);
    for (int step = 0; step < 5; step++) {
      fill_laplace(&r, x, n, 1.0);
      const float *b = codec_state_residual(s);
      double sp = 0, sn = 0;
      size_t cp = 0;
      for (size_t i = 0; i < n; i++) {
        v[i] = b[i] + x[i];
        if (v[i] >= 0) {
          sp += v[i];
          cp++;
        } else {
          sn += v[i];
        }
      }
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      cr_assert_eq(len, 8 + (n + 7) / 8);
      float mp = getf(p), mn = getf(p + 4);
      if (cp)
        cr_assert(fabs(mp - sp / (double)cp) <= 1e-6 * fabs(sp / (double)cp),
                  "n=%zu step %d: mean %g vs %g", n, step, (double)mp,
                  sp / (double)cp);
      if (cp < n)
        cr_assert(fabs(mn - sn / (double)(n - cp)) <=
                      1e-6 * fabs(sn / (double)(n - cp)),
                  "n=%zu step %d: mean %g vs %g", n, step, (double)mn,
                  sn / (double)(n - cp));
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0);
      b = codec_state_residual(s);
      for (size_t i = 0; i < n; i++) {
        bool bit = (p[8 + i / 8] >> (i % 8)) & 1u;
        cr_assert_eq(bit, v[i] >= 0, "n=%zu step %d: bit %zu", n, step, i);
        float o = bit ? mp : mn;
        cr_assert_eq(f2u(out[i]), f2u(o));
        cr_assert_eq(f2u(b[i]), f2u(v[i] - o), "n=%zu step %d: residual %zu", n,
                     step, i);
      }
      if (n % 8)
        cr_assert_eq(p[len - 1] >> (n % 8), 0, "unused bits zero");
      free(p);
    }
    codec_state_free(s);
  }
  free(x);
  free(v);
  free(out);
  codec_free(c);
}

/* ---- selection references (topk, rgc) -------------------------------- */

struct keyed {
  float key;
  uint32_t i;
};

/* Larger key first, then lower index. */
static int keyed_cmp(const void *a, const void *b) {
  const struct keyed *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

enum key_kind { BY_ABS, BY_POS, BY_NEG };

/* The K best of V by KIND (ties to the lower index), as a 0/1 mask. */
static void ref_select(const float *v, size_t n, size_t k, enum key_kind kind,
                       unsigned char *mask) {
  struct keyed *t = xmalloc(n * sizeof *t);
  for (size_t i = 0; i < n; i++) {
    t[i].key = kind == BY_ABS ? fabsf(v[i]) : kind == BY_POS ? v[i] : -v[i];
    t[i].i = (uint32_t)i;
  }
  qsort(t, n, sizeof *t, keyed_cmp);
  memset(mask, 0, n);
  for (size_t j = 0; j < k && j < n; j++)
    mask[t[j].i] = 1;
  free(t);
}

/* k = max(1, ceil(R n)) for R = NUM / DEN, exactly. */
static size_t ref_k(size_t n, size_t num, size_t den) {
  size_t k = (num * n + den - 1) / den;
  return k < 1 ? 1 : k > n ? n : k;
}

/* ---- topk ------------------------------------------------------------ */

Test(topk, hand_example_ties_and_accumulation) {
  /* ratio 0.3 of 10: k = 3. |x| = 3 (1), then 2 at 4, 5 and 7: ties go to
   * the lower index, so 1, 4, 5 are sent. */
  const float x[] = {0.5f, -3, 1, 0, 2, -2, 0.1f, 2, 0, 1};
  codec_t *c = mk("topk:ratio=0.3");
  codec_state_t *s = mkstate(c, 10, 0);
  size_t len;
  unsigned char *p = enc(s, x, 10, &len);
  unsigned char want[14] = {0x32, 0x00};
  putf(want + 2, -3.0f);
  putf(want + 6, 2.0f);
  putf(want + 10, -2.0f);
  assert_bytes(p, len, want, sizeof want, "topk step 1");
  const float b1[] = {0.5f, 0, 1, 0, 0, 0, 0.1f, 2, 0, 1};
  assert_floats_bits(codec_state_residual(s), b1, 10, "topk residual 1");
  float out[10];
  cr_assert_eq(dec_guarded(c, p, len, out, 10), 0);
  const float d1[] = {0, -3, 0, 0, 2, -2, 0, 0, 0, 0};
  assert_floats_bits(out, d1, 10, "topk decode");
  free(p);
  /* Step 2: b + x = 1 -3 2 0 2 -2 0.2 4 0 2: 4 (7), 3 (1), then the
   * first 2, index 2. */
  p = enc(s, x, 10, &len);
  unsigned char want2[14] = {0x86, 0x00};
  putf(want2 + 2, -3.0f);
  putf(want2 + 6, 2.0f);
  putf(want2 + 10, 4.0f);
  assert_bytes(p, len, want2, sizeof want2, "topk step 2");
  const float b2[] = {1, 0, 0, 0, 2, -2, 0.1f + 0.1f, 0, 0, 2};
  assert_floats_bits(codec_state_residual(s), b2, 10, "topk residual 2");
  free(p);
  codec_state_free(s);
  codec_free(c);
}

Test(topk, k_from_ratio) {
  static const struct {
    const char *spec;
    size_t n, k;
  } t[] = {
      {"topk:ratio=0.07", 100, 7}, /* not 8: 0.07 * 100 is 7 */
      {"topk:ratio=0.3", 10, 3},     {"topk:ratio=0.25", 10, 3},
      {"topk:ratio=0.01", 5, 1}, /* at least one */
      {"topk:ratio=1", 13, 13},      {"topk:ratio=0.05", 1000, 50},
      {"topk:ratio=0.05", 1001, 51}, {"topk:ratio=0.1", 30, 3},
      {"topk:ratio=0.7", 10, 7},     {"topk:ratio=0.001", 1, 1},
  };
  struct rng r = {8};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    float *x = xmalloc(t[i].n * sizeof *x);
    fill_laplace(&r, x, t[i].n, 1.0);
    size_t len;
    unsigned char *p = enc_spec(t[i].spec, x, t[i].n, &len);
    cr_assert_eq(len, (t[i].n + 7) / 8 + 4 * t[i].k, "%s n=%zu: %zu bytes",
                 t[i].spec, t[i].n, len);
    free(p);
    free(x);
  }
}

static void topk_random_case(const char *spec, size_t num, size_t den) {
  static const size_t sizes[] = {1, 2, 7, 8, 9, 17, 100, 1001, 5000};
  struct rng r = {num * 31 + den};
  codec_t *c = mk(spec);
  size_t maxn = 5000;
  float *x = xmalloc(maxn * sizeof *x), *b = xmalloc(maxn * sizeof *b);
  float *out = xmalloc(maxn * sizeof *out);
  unsigned char *mask = xmalloc(maxn), *want = xmalloc(maxn * 5 + 8);
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    size_t n = sizes[z], k = ref_k(n, num, den);
    codec_state_t *s = mkstate(c, n, 0);
    memset(b, 0, n * sizeof *b);
    for (int step = 0; step < 5; step++) {
      fill_mixed(&r, x, n, 1.0);
      for (size_t i = 0; i < n; i++)
        b[i] += x[i];
      ref_select(b, n, k, BY_ABS, mask);
      size_t nb = (n + 7) / 8, w = nb;
      memset(want, 0, nb);
      for (size_t i = 0; i < n; i++)
        if (mask[i]) {
          want[i / 8] |= (unsigned char)(1u << (i % 8));
          putf(want + w, b[i]);
          w += 4;
        }
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      char what[80];
      snprintf(what, sizeof what, "%s n=%zu step %d", spec, n, step);
      assert_bytes(p, len, want, w, what);
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
      for (size_t i = 0; i < n; i++) {
        cr_assert_eq(f2u(out[i]), mask[i] ? f2u(b[i]) : 0u, "%s: value %zu",
                     what, i);
        if (mask[i])
          b[i] = 0.0f;
      }
      assert_floats_bits(codec_state_residual(s), b, n, what);
      free(p);
    }
    codec_state_free(s);
  }
  free(x);
  free(b);
  free(out);
  free(mask);
  free(want);
  codec_free(c);
}

Test(topk, random_steps_match_reference) {
  topk_random_case("topk:ratio=0.05", 1, 20);
  topk_random_case("topk:ratio=0.3", 3, 10);
  topk_random_case("topk:ratio=0.07", 7, 100);
  topk_random_case("topk:ratio=1", 1, 1);
}

Test(topk, malformed_payloads) {
  codec_t *c = mk("topk:ratio=0.5");
  float out[10];
  unsigned char p[2 + 4 * 5] = {0x1f, 0x00};
  for (int i = 0; i < 5; i++)
    putf(p + 2 + 4 * i, (float)i);
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 10), 0);
  cr_assert_eq(codec_decode(c, p, sizeof p - 4, out, 10), -EBADMSG);
  p[0] = 0x3f; /* six bits, five values */
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 10), -EBADMSG);
  p[0] = 0x0f;
  p[1] = 0x04; /* bit 10 of 10 values */
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 10), -EBADMSG);
  codec_free(c);
}

/* ---- rgc ------------------------------------------------------------- */

/* Parse an rgc payload: count, indices (checked strictly increasing and
 * below N) and values or the ASQ mean. */
static size_t rgc_parse(const unsigned char *p, size_t len, size_t n, bool asq,
                        uint32_t *idx, float *val, float *mean) {
  cr_assert(len >= 4);
  size_t c = get32(p);
  cr_assert(c <= n, "count %zu of %zu", c, n);
  cr_assert_eq(len, asq ? 8 + 4 * c : 4 + 8 * c, "payload of %zu values", c);
  for (size_t j = 0; j < c; j++) {
    idx[j] = get32(p + 4 + 4 * j);
    cr_assert(idx[j] < n);
    cr_assert(j == 0 || idx[j] > idx[j - 1], "indices not increasing at %zu",
              j);
    if (!asq)
      val[j] = getf(p + 4 + 4 * c + 4 * j);
  }
  if (asq)
    *mean = getf(p + 4 + 4 * c);
  return c;
}

struct rgc_cfg {
  const char *spec;
  size_t num, den;
  bool asq, exact; /* exact: the set is the exact top-k */
};

static void rgc_random_case(const struct rgc_cfg *cfg) {
  static const size_t sizes[] = {1, 2, 9, 40, 100, 1001, 6000};
  struct rng r = {cfg->num * 131 + cfg->den + cfg->exact};
  codec_t *c = mk(cfg->spec);
  size_t maxn = 6000;
  float *x = xmalloc(maxn * sizeof *x), *v = xmalloc(maxn * sizeof *v);
  float *out = xmalloc(maxn * sizeof *out), *val = xmalloc(maxn * sizeof *val);
  uint32_t *idx = xmalloc(maxn * sizeof *idx);
  unsigned char *mask = xmalloc(maxn), *sent = xmalloc(maxn);
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    size_t n = sizes[z], k = ref_k(n, cfg->num, cfg->den);
    codec_state_t *s = mkstate(c, n, 0);
    memset(v, 0, n * sizeof *v);
    for (int step = 0; step < 6; step++) {
      fill_laplace(&r, x, n, step % 3 ? 1.0 : 0.1);
      for (size_t i = 0; i < n; i++)
        v[i] += x[i];
      enum key_kind kind = !cfg->asq ? BY_ABS : step % 2 ? BY_NEG : BY_POS;
      size_t len;
      unsigned char *p = enc(s, x, n, &len);
      char what[100];
      snprintf(what, sizeof what, "%s n=%zu step %d", cfg->spec, n, step);
      float mean = 0;
      size_t cnt = rgc_parse(p, len, n, cfg->asq, idx, val, &mean);
      memset(sent, 0, n);
      for (size_t j = 0; j < cnt; j++)
        sent[idx[j]] = 1;
      if (cfg->exact) {
        ref_select(v, n, k, kind, mask);
        cr_assert_eq(cnt, k, "%s: %zu sent, expected %zu", what, cnt, k);
        for (size_t i = 0; i < n; i++)
          cr_assert_eq(sent[i], mask[i], "%s: index %zu", what, i);
      } else {
        size_t hi = 2 * k < n ? 2 * k : n;
        cr_assert(cnt >= k && cnt <= hi, "%s: %zu sent, expected %zu..%zu",
                  what, cnt, k, hi);
        /* A threshold set: every sent key at least every unsent one. */
        float minsent = INFINITY, maxunsent = -INFINITY;
        for (size_t i = 0; i < n; i++) {
          float key = kind == BY_ABS   ? fabsf(v[i])
                      : kind == BY_POS ? v[i]
                                       : -v[i];
          if (sent[i])
            minsent = key < minsent ? key : minsent;
          else
            maxunsent = key > maxunsent ? key : maxunsent;
        }
        cr_assert(minsent >= maxunsent, "%s: sent %g below unsent %g", what,
                  (double)minsent, (double)maxunsent);
      }
      double sum = 0;
      for (size_t j = 0; j < cnt; j++) {
        if (!cfg->asq)
          cr_assert_eq(f2u(val[j]), f2u(v[idx[j]]), "%s: value of %u", what,
                       idx[j]);
        sum += v[idx[j]];
      }
      if (cfg->asq && cnt)
        cr_assert(fabs(mean - sum / (double)cnt) <=
                      1e-6 * fabs(sum / (double)cnt) + 1e-30,
                  "%s: mean %g, expected %g", what, (double)mean,
                  sum / (double)cnt);
      cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
      for (size_t i = 0; i < n; i++) {
        float want = !sent[i] ? 0.0f : cfg->asq ? mean : v[i];
        cr_assert_eq(f2u(out[i]), f2u(want), "%s: decoded %zu", what, i);
        if (sent[i])
          v[i] = 0.0f;
      }
      assert_floats_bits(codec_state_residual(s), v, n, what);
      free(p);
    }
    codec_state_free(s);
  }
  free(x);
  free(v);
  free(out);
  free(val);
  free(idx);
  free(mask);
  free(sent);
  codec_free(c);
}

Test(rgc, exact_and_trimmed_are_top_k) {
  static const struct rgc_cfg cfg[] = {
      {"rgc:ratio=0.05,select=exact", 1, 20, false, true},
      {"rgc:ratio=0.05,select=trimmed", 1, 20, false, true},
      {"rgc:ratio=0.001,select=trimmed", 1, 1000, false, true},
      {"rgc:ratio=0.3,select=trimmed", 3, 10, false, true},
      {"rgc:ratio=0.07,select=exact", 7, 100, false, true},
      {"rgc:ratio=1,select=trimmed", 1, 1, false, true},
  };
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
    rgc_random_case(&cfg[i]);
}

Test(rgc, binsearch_between_k_and_2k) {
  static const struct rgc_cfg cfg[] = {
      {"rgc:ratio=0.05,select=binsearch", 1, 20, false, false},
      {"rgc:ratio=0.001,select=binsearch", 1, 1000, false, false},
      {"rgc:ratio=0.3,select=binsearch", 3, 10, false, false},
  };
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
    rgc_random_case(&cfg[i]);
}

Test(rgc, asq_alternates_signs) {
  static const struct rgc_cfg cfg[] = {
      {"rgc:ratio=0.05,select=exact,asq=1", 1, 20, true, true},
      {"rgc:ratio=0.05,select=trimmed,asq=1", 1, 20, true, true},
      {"rgc:ratio=0.3,select=trimmed,asq=1", 3, 10, true, true},
      {"rgc:ratio=0.05,select=binsearch,asq=1", 1, 20, true, false},
  };
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
    rgc_random_case(&cfg[i]);
}

Test(rgc, asq_hand_example) {
  /* ratio 0.25 of 8: k = 2. Step 0: the two largest, 5 (3) and 3 (6),
   * mean 4; step 1 (same x, V = 2x with those two zeroed): the two most
   * negative, -8 (1) and -2 (4), mean -5. */
  const float x[] = {0.5f, -4, 1, 5, -1, 0, 3, -0.5f};
  codec_t *c = mk("rgc:ratio=0.25,select=exact,asq=1");
  codec_state_t *s = mkstate(c, 8, 0);
  size_t len;
  unsigned char *p = enc(s, x, 8, &len);
  unsigned char want[16];
  put32(want, 2);
  put32(want + 4, 3);
  put32(want + 8, 6);
  putf(want + 12, 4.0f);
  assert_bytes(p, len, want, 16, "rgc asq step 0");
  free(p);
  p = enc(s, x, 8, &len);
  put32(want, 2);
  put32(want + 4, 1);
  put32(want + 8, 4);
  putf(want + 12, -5.0f);
  assert_bytes(p, len, want, 16, "rgc asq step 1");
  const float rb[] = {1, 0, 2, 5, 0, 0, 3, -1};
  assert_floats_bits(codec_state_residual(s), rb, 8, "rgc asq residual");
  float out[8];
  cr_assert_eq(dec_guarded(c, p, len, out, 8), 0);
  const float d[] = {0, -5, 0, 0, -5, 0, 0, 0};
  assert_floats_bits(out, d, 8, "rgc asq decode");
  free(p);
  codec_state_free(s);
  codec_free(c);
}

Test(rgc, exact_hand_example) {
  /* ratio 0.25 of 8: k = 2: |x| = 5 (3) and 4 (1), in index order. */
  const float x[] = {0.5f, -4, 1, 5, -1, 0, 3, -0.5f};
  unsigned char want[20];
  put32(want, 2);
  put32(want + 4, 1);
  put32(want + 8, 3);
  putf(want + 12, -4.0f);
  putf(want + 16, 5.0f);
  static const char *const specs[] = {"rgc:ratio=0.25,select=exact",
                                      "rgc:ratio=0.25,select=trimmed"};
  for (int i = 0; i < 2; i++) {
    size_t len;
    unsigned char *p = enc_spec(specs[i], x, 8, &len);
    assert_bytes(p, len, want, sizeof want, specs[i]);
    free(p);
  }
}

/* All values equal: no threshold separates k to 2k of them; the set size
 * must still be in [k, 2k]. */
Test(rgc, binsearch_ties) {
  size_t n = 100;
  float x[100];
  for (size_t i = 0; i < n; i++)
    x[i] = 1.0f;
  static const char *const specs[] = {
      "rgc:ratio=0.1,select=binsearch", "rgc:ratio=0.1,select=binsearch,asq=1",
      "rgc:ratio=0.1,select=sampled", "rgc:ratio=0.1,select=trimmed",
      "rgc:ratio=0.1,select=exact"};
  for (size_t t = 0; t < sizeof specs / sizeof specs[0]; t++) {
    size_t len;
    unsigned char *p = enc_spec(specs[t], x, n, &len);
    size_t c = get32(p);
    cr_assert(c >= 10 && c <= 20, "%s: %zu values sent", specs[t], c);
    free(p);
  }
}

/* sampled: the threshold found at step 0 is reused at steps 1 to 4 (so
 * ten times larger inputs send far more than 2k values), and searched
 * again at step 5. */
Test(rgc, sampled_reuses_threshold) {
  size_t n = 2000, k = 100;
  struct rng r = {77};
  codec_t *c = mk("rgc:ratio=0.05,select=sampled");
  codec_state_t *s = mkstate(c, n, 0);
  float *x = xmalloc(n * sizeof *x), *v = calloc(n, sizeof *v);
  cr_assert_not_null(v);
  uint32_t *idx = xmalloc(n * sizeof *idx);
  float *val = xmalloc(n * sizeof *val);
  unsigned char *sent = xmalloc(n);
  float lo0 = 0, hi0 = 0;
  for (int step = 0; step < 7; step++) {
    fill_laplace(&r, x, n, step == 0 ? 1.0 : 100.0);
    for (size_t i = 0; i < n; i++)
      v[i] += x[i];
    size_t len;
    unsigned char *p = enc(s, x, n, &len);
    float mean;
    size_t cnt = rgc_parse(p, len, n, false, idx, val, &mean);
    memset(sent, 0, n);
    for (size_t j = 0; j < cnt; j++) {
      sent[idx[j]] = 1;
      cr_assert_eq(f2u(val[j]), f2u(v[idx[j]]));
    }
    float minsent = INFINITY, maxunsent = 0;
    for (size_t i = 0; i < n; i++) {
      float a = fabsf(v[i]);
      if (sent[i])
        minsent = a < minsent ? a : minsent;
      else
        maxunsent = a > maxunsent ? a : maxunsent;
    }
    cr_assert(minsent >= maxunsent, "step %d: not a threshold set", step);
    if (step == 0 || step == 5) {
      cr_assert(cnt >= k && cnt <= 2 * k, "step %d: %zu sent", step, cnt);
      if (step == 0) {
        lo0 = maxunsent;
        hi0 = minsent;
      }
    } else if (step < 5) {
      cr_assert(cnt > 2 * k, "step %d: %zu sent: threshold not reused", step,
                cnt);
      cr_assert(minsent > lo0 && maxunsent < hi0,
                "step %d: threshold outside step 0's (%g, %g]", step,
                (double)lo0, (double)hi0);
    }
    for (size_t i = 0; i < n; i++)
      if (sent[i])
        v[i] = 0;
    assert_floats_bits(codec_state_residual(s), v, n, "sampled residual");
    free(p);
  }
  free(x);
  free(v);
  free(idx);
  free(val);
  free(sent);
  codec_state_free(s);
  codec_free(c);
}

Test(rgc, malformed_payloads) {
  codec_t *c = mk("rgc:ratio=0.5,select=exact");
  float out[4];
  unsigned char p[4 + 8 * 2];
  put32(p, 2);
  put32(p + 4, 1);
  put32(p + 8, 3);
  putf(p + 12, 1.0f);
  putf(p + 16, 2.0f);
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 4), 0);
  cr_assert_eq(out[1], 1.0f);
  cr_assert_eq(out[3], 2.0f);
  cr_assert_eq(out[0], 0.0f);
  put32(p + 8, 1); /* not increasing */
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 4), -EBADMSG);
  put32(p + 8, 4); /* out of range */
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 4), -EBADMSG);
  put32(p + 8, 3);
  put32(p, 3); /* count and length disagree */
  cr_assert_eq(codec_decode(c, p, sizeof p, out, 4), -EBADMSG);
  put32(p, 5); /* more than n */
  cr_assert_eq(codec_decode(c, p, 4 + 8 * 5, out, 4), -EBADMSG);
  codec_free(c);
}

/* ---- the codec.h contract, every codec -------------------------------- */

static const size_t CONTRACT_SIZES[] = {1, 5, 13, 64, 333};
enum { NCONTRACT = sizeof CONTRACT_SIZES / sizeof CONTRACT_SIZES[0] };

static float *snapshot_residual(const codec_state_t *s, size_t n) {
  const float *b = codec_state_residual(s);
  if (!b)
    return NULL;
  float *copy = xmalloc(n * sizeof *copy);
  memcpy(copy, b, n * sizeof *copy);
  return copy;
}

static void assert_state_equal(const codec_state_t *a, const codec_state_t *b,
                               size_t n, const char *what) {
  cr_assert_eq(codec_state_step(a), codec_state_step(b), "%s: step", what);
  const float *ra = codec_state_residual(a), *rb = codec_state_residual(b);
  cr_assert_eq(ra == NULL, rb == NULL);
  if (ra)
    assert_floats_bits(rb, ra, n, what);
}

/* Encoding into exactly the payload size succeeds and writes nothing
 * beyond it; one byte less fails with -ENOSPC, writes nothing at or beyond
 * the capacity and leaves the state unchanged, so that the stream goes on
 * exactly as an uninterrupted one. */
Test(contract, exact_capacity_and_one_byte_less) {
  struct rng r = {1234};
  enum { CANARY = 16 };
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *c = mk(ALL_SPECS[t]);
    for (size_t z = 0; z < NCONTRACT; z++) {
      size_t n = CONTRACT_SIZES[z];
      float *x = xmalloc(n * sizeof *x);
      codec_state_t *a = mkstate(c, n, 9), *b = mkstate(c, n, 9);
      for (int step = 0; step < 4; step++) {
        char what[96];
        snprintf(what, sizeof what, "%s n=%zu step %d", ALL_SPECS[t], n, step);
        fill_mixed(&r, x, n, step % 2 ? 0.01 : 1.0);
        size_t la;
        unsigned char *pa = enc(a, x, n, &la);
        cr_assert(la >= 1, "%s: empty payload", what);
        unsigned char *buf = xmalloc(la + CANARY);
        float *before = snapshot_residual(b, n);
        uint64_t step_before = codec_state_step(b);
        for (size_t cap = 0; cap < la;
             cap += (cap + 1 < la ? la - 1 - cap : 1)) {
          memset(buf, 0xa5, la + CANARY);
          ptrdiff_t rc = codec_encode(b, x, n, buf, cap);
          cr_assert_eq(rc, -ENOSPC, "%s: cap %zu of %zu: %td", what, cap, la,
                       rc);
          for (size_t i = cap; i < la + CANARY; i++)
            cr_assert_eq(buf[i], 0xa5, "%s: cap %zu: byte %zu written", what,
                         cap, i);
          cr_assert_eq(codec_state_step(b), step_before, "%s", what);
          if (before)
            assert_floats_bits(codec_state_residual(b), before, n, what);
        }
        memset(buf, 0xa5, la + CANARY);
        ptrdiff_t rc = codec_encode(b, x, n, buf, la);
        cr_assert_eq(rc, (ptrdiff_t)la, "%s: exact capacity: %td", what, rc);
        assert_bytes(buf, la, pa, la, what);
        for (size_t i = la; i < la + CANARY; i++)
          cr_assert_eq(buf[i], 0xa5, "%s: byte %zu beyond the payload", what,
                       i);
        assert_state_equal(a, b, n, what);
        free(before);
        free(buf);
        free(pa);
      }
      codec_state_free(a);
      codec_state_free(b);
      free(x);
    }
    codec_free(c);
  }
}

/* NaN or infinity: -EDOM and no change for the codecs that need finite
 * values; an ordinary payload for the others. */
Test(contract, non_finite_input) {
  struct rng r = {55};
  const float bad[] = {NAN, INFINITY, -INFINITY, u2f(0xff800001u)};
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *c = mk(ALL_SPECS[t]);
    for (size_t z = 0; z < NCONTRACT; z++) {
      size_t n = CONTRACT_SIZES[z];
      float *x = xmalloc(n * sizeof *x), *y = xmalloc(n * sizeof *y);
      codec_state_t *a = mkstate(c, n, 3), *b = mkstate(c, n, 3);
      size_t cap = codec_bound(c, n);
      unsigned char *buf = xmalloc(cap);
      for (int step = 0; step < 3; step++) {
        char what[96];
        snprintf(what, sizeof what, "%s n=%zu step %d", ALL_SPECS[t], n, step);
        fill_mixed(&r, x, n, 1.0);
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
          memcpy(y, x, n * sizeof *y);
          y[rng_below(&r, n)] = bad[k];
          float *before = snapshot_residual(b, n);
          uint64_t sb = codec_state_step(b);
          ptrdiff_t rc = codec_encode(b, y, n, buf, cap);
          if (needs_finite(c)) {
            cr_assert_eq(rc, -EDOM, "%s: non-finite %zu gave %td", what, k, rc);
            cr_assert_eq(codec_state_step(b), sb, "%s", what);
            if (before)
              assert_floats_bits(codec_state_residual(b), before, n, what);
          } else {
            cr_assert(rc > 0, "%s: non-finite %zu gave %td", what, k, rc);
            /* Keep B in step with A. */
            codec_state_free(b);
            b = mkstate(c, n, 3);
            for (int j = 0; j < step; j++) {
              size_t l;
              free(enc(b, x, n, &l));
            }
          }
          free(before);
        }
        size_t la, lb;
        unsigned char *pa = enc(a, x, n, &la), *pb = enc(b, x, n, &lb);
        assert_bytes(pb, lb, pa, la, what);
        assert_state_equal(a, b, n, what);
        free(pa);
        free(pb);
      }
      free(buf);
      codec_state_free(a);
      codec_state_free(b);
      free(x);
      free(y);
    }
    codec_free(c);
  }
}

/* For x in the state that STEPS encodes of random inputs left: truncated
 * prefixes and trailing bytes are rejected, every single-bit flip gives 0
 * or -EBADMSG and never writes outside the output, decode_add adds. */
Test(contract, decode_validates) {
  struct rng r = {4321};
  static const size_t sizes[] = {1, 3, 8, 13, 41};
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *c = mk(ALL_SPECS[t]);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      size_t n = sizes[z];
      float *x = xmalloc(n * sizeof *x), *out = xmalloc(n * sizeof *out);
      float *acc = xmalloc(n * sizeof *acc), *acc0 = xmalloc(n * sizeof *acc0);
      codec_state_t *s = mkstate(c, n, 5);
      for (int step = 0; step < 2; step++) {
        char what[96];
        snprintf(what, sizeof what, "%s n=%zu step %d", ALL_SPECS[t], n, step);
        fill_mixed(&r, x, n, 1.0);
        size_t len;
        unsigned char *p = enc(s, x, n, &len);
        cr_assert_eq(dec_guarded(c, p, len, out, n), 0, "%s", what);
        /* decode_add */
        for (size_t i = 0; i < n; i++)
          acc[i] = acc0[i] = (float)rng_laplace(&r, 1.0) + 0x1p-10f;
        cr_assert_eq(codec_decode_add(c, p, len, acc, n), 0, "%s", what);
        for (size_t i = 0; i < n; i++) {
          float w = acc0[i] + out[i];
          cr_assert(isnan(w) ? isnan(acc[i]) : f2u(acc[i]) == f2u(w),
                    "%s: decode_add %zu: %a + %a gave %a", what, i,
                    (double)acc0[i], (double)out[i], (double)acc[i]);
        }
        /* Truncated: every prefix, in a buffer of exactly its size. */
        for (size_t l = 0; l < len; l++) {
          unsigned char *q = xmalloc(l);
          memcpy(q, p, l);
          int rc = dec_guarded(c, q, l, out, n);
          cr_assert_eq(rc, -EBADMSG, "%s: prefix of %zu of %zu bytes: %d", what,
                       l, len, rc);
          free(q);
        }
        /* Trailing bytes. */
        static const unsigned char extra[] = {0x00, 0x79, 0xff};
        unsigned char *q = xmalloc(len + 4);
        memcpy(q, p, len);
        for (size_t e = 0; e < sizeof extra; e++) {
          q[len] = extra[e];
          int rc = dec_guarded(c, q, len + 1, out, n);
          cr_assert_eq(rc, -EBADMSG, "%s: trailing 0x%02x: %d", what, extra[e],
                       rc);
          memset(q + len, extra[e], 4);
          rc = dec_guarded(c, q, len + 4, out, n);
          cr_assert_eq(rc, -EBADMSG, "%s: 4 trailing 0x%02x: %d", what,
                       extra[e], rc);
        }
        /* Every single-bit flip. */
        for (size_t bit = 0; bit < 8 * len; bit++) {
          memcpy(q, p, len);
          q[bit / 8] ^= (unsigned char)(1u << (bit % 8));
          int rc = dec_guarded(c, q, len, out, n);
          cr_assert(rc == 0 || rc == -EBADMSG, "%s: flip %zu: %d", what, bit,
                    rc);
          for (size_t i = 0; i < n; i++)
            acc[i] = 1.0f;
          rc = codec_decode_add(c, q, len, acc, n);
          cr_assert(rc == 0 || rc == -EBADMSG, "%s: flip %zu: add %d", what,
                    bit, rc);
        }
        free(q);
        free(p);
      }
      codec_state_free(s);
      free(x);
      free(out);
      free(acc);
      free(acc0);
    }
    codec_free(c);
  }
}

Test(contract, canonical_spec_encodes_the_same) {
  struct rng r = {66};
  size_t n = 257;
  float x[257];
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *a = mk(ALL_SPECS[t]);
    codec_t *b = mk(codec_spec(a));
    cr_assert_str_eq(codec_spec(b), codec_spec(a));
    codec_state_t *sa = mkstate(a, n, 17), *sb = mkstate(b, n, 17);
    for (int step = 0; step < 3; step++) {
      fill_mixed(&r, x, n, 1.0);
      size_t la, lb;
      unsigned char *pa = enc(sa, x, n, &la), *pb = enc(sb, x, n, &lb);
      assert_bytes(pb, lb, pa, la, ALL_SPECS[t]);
      free(pa);
      free(pb);
    }
    codec_state_free(sa);
    codec_state_free(sb);
    codec_free(a);
    codec_free(b);
  }
}

Test(contract, reset_bad_arguments_and_limits) {
  struct rng r = {88};
  size_t n = 100;
  float x[101];
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *c = mk(ALL_SPECS[t]);
    const char *spec = ALL_SPECS[t];
    codec_state_t *s = mkstate(c, n, 2), *f = mkstate(c, n, 2);
    size_t cap = codec_bound(c, n + 1);
    unsigned char *buf = xmalloc(cap);
    /* A different n, NULL input: -EINVAL. */
    fill_mixed(&r, x, n + 1, 1.0);
    cr_assert_eq(codec_encode(s, x, n + 1, buf, cap), -EINVAL, "%s", spec);
    cr_assert_eq(codec_encode(s, x, n - 1, buf, cap), -EINVAL, "%s", spec);
    cr_assert_eq(codec_encode(s, NULL, n, buf, cap), -EINVAL, "%s", spec);
    cr_assert_eq(codec_encode(NULL, x, n, buf, cap), -EINVAL, "%s", spec);
    cr_assert_eq(codec_state_step(s), 0);
    /* Steps count; reset goes back to a fresh stream. */
    for (int step = 0; step < 3; step++) {
      size_t l;
      free(enc(s, x, n, &l));
      cr_assert_eq(codec_state_step(s), (uint64_t)step + 1, "%s", spec);
    }
    codec_state_reset(s);
    cr_assert_eq(codec_state_step(s), 0);
    if (codec_state_residual(s))
      for (size_t i = 0; i < n; i++)
        cr_assert_eq(f2u(codec_state_residual(s)[i]), 0, "%s: reset", spec);
    size_t ls, lf;
    unsigned char *ps = enc(s, x, n, &ls), *pf = enc(f, x, n, &lf);
    assert_bytes(ps, ls, pf, lf, spec);
    free(ps);
    free(pf);
    /* No bound for absurd sizes. */
    cr_assert_eq(codec_bound(c, SIZE_MAX), 0, "%s", spec);
    codec_state_t *big = (codec_state_t *)(uintptr_t)1;
    cr_assert_eq(codec_state_create(c, SIZE_MAX, 0, &big), -EOVERFLOW, "%s",
                 spec);
    cr_assert_null(big);
    float o[4];
    cr_assert_eq(codec_decode(c, buf, 4, o, SIZE_MAX), -EOVERFLOW, "%s", spec);
    free(buf);
    codec_state_free(s);
    codec_state_free(f);
    codec_free(c);
  }
  /* rgc's indices are 32-bit. */
  codec_t *c = mk("rgc");
  size_t huge = (size_t)UINT32_MAX + 1;
  cr_assert_eq(codec_bound(c, huge), 0);
  codec_state_t *s = NULL;
  cr_assert_eq(codec_state_create(c, huge, 0, &s), -EOVERFLOW);
  cr_assert(codec_bound(c, 1000) > 0);
  codec_free(c);
}

/* The payload sizes of the specification. */
Test(contract, payload_sizes) {
  struct rng r = {91};
  static const size_t sizes[] = {1, 2, 5, 7, 8, 9, 100, 1001};
  float x[1001];
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    size_t n = sizes[z], len;
    fill_laplace(&r, x, n, 1.0);
    unsigned char *p;
    p = enc_spec("fp32", x, n, &len);
    cr_assert_eq(len, 4 * n);
    free(p);
    p = enc_spec("fp16", x, n, &len);
    cr_assert_eq(len, 2 * n);
    free(p);
    p = enc_spec("bf16", x, n, &len);
    cr_assert_eq(len, 2 * n);
    free(p);
    p = enc_spec("trunc:bits=16", x, n, &len);
    cr_assert_eq(len, 2 * n);
    free(p);
    p = enc_spec("trunc:bits=9", x, n, &len);
    cr_assert_eq(len, (23 * n + 7) / 8);
    free(p);
    p = enc_spec("q8", x, n, &len);
    cr_assert_eq(len, n + 4);
    free(p);
    p = enc_spec("3lc:zre=0", x, n, &len);
    cr_assert_eq(len, 4 + (n + 4) / 5);
    free(p);
    p = enc_spec("terngrad", x, n, &len);
    cr_assert_eq(len, 4 + (n + 4) / 5);
    free(p);
    p = enc_spec("onebit", x, n, &len);
    cr_assert_eq(len, 8 + (n + 7) / 8);
    free(p);
    p = enc_spec("topk:ratio=0.25", x, n, &len);
    cr_assert_eq(len, (n + 7) / 8 + 4 * ref_k(n, 1, 4));
    free(p);
    p = enc_spec("rgc:ratio=0.25,select=exact", x, n, &len);
    cr_assert_eq(len, 4 + 8 * ref_k(n, 1, 4));
    free(p);
    p = enc_spec("rgc:ratio=0.25,select=trimmed,asq=1", x, n, &len);
    cr_assert_eq(len, 8 + 4 * ref_k(n, 1, 4));
    free(p);
    /* inceptionn: the worst case (every value 32 bits) is the bound. */
    for (size_t i = 0; i < n; i++)
      x[i] = 1.0f + (float)i;
    p = enc_spec("inceptionn", x, n, &len);
    cr_assert_eq(len, (34 * n + 7) / 8);
    free(p);
  }
}

/* ---- SIMD kernels against their portable twins ----------------------- */

/* For every codec setting, a stream created with GRADSIM_CODEC_PORTABLE
 * unset and one created with it set give the same payloads, residuals,
 * decoded values and decode_add sums, for sizes around the vector widths
 * and several steps. */
Test(portable, same_bytes_as_simd) {
  static const size_t sizes[] = {1,  3,   7,   8,    9,    15,   16,   17,   31,
                                 33, 100, 127, 1000, 1023, 2049, 4099, 20000};
  struct rng r = {2024};
  size_t maxn = 20000;
  float *x = xmalloc(maxn * sizeof *x);
  float *o1 = xmalloc(maxn * sizeof *o1), *o2 = xmalloc(maxn * sizeof *o2);
  float *a1 = xmalloc(maxn * sizeof *a1), *a2 = xmalloc(maxn * sizeof *a2);
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *simd = mk_mode(ALL_SPECS[t], false);
    codec_t *port = mk_mode(ALL_SPECS[t], true);
    cr_assert_str_eq(codec_spec(simd), codec_spec(port));
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      size_t n = sizes[z];
      codec_state_t *s1 = mkstate(simd, n, 77), *s2 = mkstate(port, n, 77);
      for (int step = 0; step < 4; step++) {
        char what[96];
        snprintf(what, sizeof what, "%s n=%zu step %d", ALL_SPECS[t], n, step);
        fill_mixed(&r, x, n, step == 2 ? 1e-3 : 1.0);
        if (step == 0) /* quarters: exact halves of the maximum (ties) */
          for (size_t i = 0; i < n; i++)
            x[i] = (float)((int)rng_below(&r, 9) - 4) * 0.25f;
        if (step == 3 && n > 4)
          memset(x, 0, n / 2 * sizeof *x); /* long zero runs */
        if (!needs_finite(simd) && n > 2) {
          x[rng_below(&r, n)] =
              u2f(0x7fa00001u | (uint32_t)rng_below(&r, 1u << 20));
          x[rng_below(&r, n)] = -INFINITY;
        }
        size_t l1, l2;
        unsigned char *p1 = enc(s1, x, n, &l1), *p2 = enc(s2, x, n, &l2);
        assert_bytes(p2, l2, p1, l1, what);
        assert_state_equal(s1, s2, n, what);
        cr_assert_eq(codec_decode(simd, p1, l1, o1, n), 0, "%s", what);
        cr_assert_eq(codec_decode(port, p1, l1, o2, n), 0, "%s", what);
        assert_floats_bits(o2, o1, n, what);
        for (size_t i = 0; i < n; i++)
          a1[i] = a2[i] = rng_laplace(&r, 1.0);
        cr_assert_eq(codec_decode_add(simd, p1, l1, a1, n), 0, "%s", what);
        cr_assert_eq(codec_decode_add(port, p1, l1, a2, n), 0, "%s", what);
        assert_floats_bits(a2, a1, n, what);
        free(p1);
        free(p2);
      }
      codec_state_free(s1);
      codec_state_free(s2);
    }
    codec_free(simd);
    codec_free(port);
  }
  free(x);
  free(o1);
  free(o2);
  free(a1);
  free(a2);
}

/* The same at the awkward lengths 0, 1, 7, 63 and 1000003 (no whole
 * vector of lanes, tails of every size, a long vector), two steps each. */
Test(portable, awkward_lengths_same_bytes_as_simd) {
  static const size_t sizes[] = {0, 1, 7, 63, 1000003};
  struct rng r = {4242};
  size_t maxn = 1000003;
  float *x = xmalloc(maxn * sizeof *x);
  float *o1 = xmalloc(maxn * sizeof *o1), *o2 = xmalloc(maxn * sizeof *o2);
  for (size_t t = 0; t < NSPECS; t++) {
    codec_t *simd = mk_mode(ALL_SPECS[t], false);
    codec_t *port = mk_mode(ALL_SPECS[t], true);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      size_t n = sizes[z], cap = codec_bound(simd, n);
      codec_state_t *s1 = mkstate(simd, n, 5), *s2 = mkstate(port, n, 5);
      unsigned char *p1 = xmalloc(cap), *p2 = xmalloc(cap);
      for (int step = 0; step < 2; step++) {
        char what[96];
        snprintf(what, sizeof what, "%s n=%zu step %d", ALL_SPECS[t], n, step);
        fill_mixed(&r, x, n, 1e-2);
        ptrdiff_t l1 = codec_encode(s1, x, n, p1, cap);
        ptrdiff_t l2 = codec_encode(s2, x, n, p2, cap);
        cr_assert(l1 >= 0, "%s: %td", what, l1);
        assert_bytes(p2, (size_t)l2, p1, (size_t)l1, what);
        assert_state_equal(s1, s2, n, what);
        cr_assert_eq(codec_decode(simd, p1, (size_t)l1, o1, n), 0, "%s", what);
        cr_assert_eq(codec_decode(port, p1, (size_t)l1, o2, n), 0, "%s", what);
        assert_floats_bits(o2, o1, n, what);
      }
      free(p1);
      free(p2);
      codec_state_free(s1);
      codec_state_free(s2);
    }
    codec_free(simd);
    codec_free(port);
  }
  free(x);
  free(o1);
  free(o2);
}

/* An empty vector is a valid stream (codec.h: -EOVERFLOW only for N beyond
 * the codec's limit): it encodes to the formula's size (0 bytes for the
 * per-value formats) and decodes back. */
Test(contract, empty_vector) {
  static const struct {
    const char *spec;
    ptrdiff_t len; /* -1: not fixed by the specification */
  } t[] = {{"fp32", 0},
           {"fp16", 0},
           {"bf16", 0},
           {"trunc:bits=22", 0},
           {"q8", 4},
           {"inceptionn", 0},
           {"3lc", 4},
           {"terngrad", 4},
           {"qsgd", 0},
           {"onebit", 8},
           {"topk", -1},
           {"rgc", 4},
           {"rgc:asq=1,select=exact", 8}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    codec_t *c = mk(t[i].spec);
    codec_state_t *s = NULL;
    int rc = codec_state_create(c, 0, 0, &s);
    cr_expect_eq(rc, 0, "%s: codec_state_create(n=0) = %d (%s)", t[i].spec, rc,
                 codec_strerror(rc));
    if (rc == 0) {
      unsigned char buf[16];
      ptrdiff_t r = codec_encode(s, NULL, 0, buf, sizeof buf);
      cr_expect(r >= 0 && (t[i].len < 0 || r == t[i].len),
                "%s: encode(n=0) = %td", t[i].spec, r);
      if (r >= 0)
        cr_expect_eq(codec_decode(c, buf, (size_t)r, NULL, 0), 0, "%s",
                     t[i].spec);
      codec_state_free(s);
    }
    codec_free(c);
  }
}

/* ---- PowerSGD (Vogels et al. 2019) --------------------------------------- */

/* Which matrices are compressed, and the factors' lengths: rank r of a
 * rows x cols matrix when r (rows + cols) < rows cols (PyTorch's rule),
 * vectors and small matrices whole in round 0's message. */
Test(powersgd, rounds_lengths) {
  codec_t *c = mk("powersgd:rank=4");
  cr_assert(codec_is_linear(c));
  struct codec_shape sh[] = {{100, 50}, {3, 3}, {10, 10}, {64, 1}};
  /* 100 x 50: P 400, Q 200; 3 x 3 at rank 3: 9 <= 18, whole; 10 x 10: 100
   * > 80, P 40, Q 40; the vector whole. */
  cr_assert_eq(codec_lin_len(c, sh, 4, 0), 400 + 9 + 40 + 64);
  cr_assert_eq(codec_lin_len(c, sh, 4, 1), 200 + 40);
  codec_t *c5 = mk("powersgd:rank=5");
  struct codec_shape ten = {10, 10};
  cr_assert_eq(codec_lin_len(c5, &ten, 1, 1), 0, "100 <= 100: whole");
  codec_t *q8 = mk("q8");
  cr_assert_not(codec_is_linear(q8));
  codec_free(q8);
  codec_free(c5);
  codec_free(c);
}

/* One stream alone: a rank-1 matrix u v^T at rank 1 is recovered in one
 * step (P = M Q is u times a number, P^ = u / |u|, Q = M^T P^ = |u| v), its
 * residual is zero; the payload is 4 + 20 + 4 (rows + cols) bytes. */
Test(powersgd, rank_one_matrix_is_exact) {
  codec_t *c = mk("powersgd:rank=1");
  size_t rows = 30, cols = 20, n = rows * cols;
  codec_state_t *s = mkstate(c, n, 0);
  struct codec_shape sh = {rows, cols};
  cr_assert_eq(codec_state_set_shapes(s, &sh, 1), 0);
  float *x = xmalloc(4 * n), *y = xmalloc(4 * n);
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      x[i * cols + j] = (float)((double)(i + 1) * 0.25 * (j % 2 ? -1.0 : 0.5 * j));
  size_t cap = codec_bound(c, n);
  unsigned char *out = xmalloc(cap);
  ptrdiff_t len = codec_encode(s, x, n, out, cap);
  cr_assert_eq(len, 4 + 20 + 4 * (30 + 20));
  cr_assert_eq(codec_decode(c, out, (size_t)len, y, n), 0);
  const float *e = codec_state_residual(s);
  for (size_t i = 0; i < n; i++) {
    cr_assert_float_eq(y[i], x[i], 1e-5 * (fabs(x[i]) + 1), "%zu", i);
    cr_assert_float_eq(e[i], 0, 1e-5 * (fabs(x[i]) + 1), "%zu", i);
  }
  /* Below the payload: -ENOSPC, the stream untouched (step 1 still). */
  cr_assert_eq(codec_encode(s, x, n, out, (size_t)len - 1), -ENOSPC);
  cr_assert_eq(codec_state_step(s), 1);
  free(out);
  free(x);
  free(y);
  codec_state_free(s);
  codec_free(c);
}

/* Three workers through the rounds (the sums taken here, as a collective
 * would): matrices u v_w^T sharing u sum to a rank-1 matrix, which rank 1
 * delivers whole; a vector travels whole; and in general what each worker
 * delivers and keeps adds up to what it owed (the EF identity the oracle
 * checks). */
Test(powersgd, three_workers_rounds) {
  codec_t *c = mk("powersgd:rank=1");
  enum { W = 3, R = 12, C = 8, V = 5, N = R * C + V };
  struct codec_shape sh[] = {{R, C}, {V, 1}};
  codec_state_t *s[W];
  float x[W][N], out[W][N];
  for (int w = 0; w < W; w++) {
    s[w] = mkstate(c, N, (uint64_t)w);
    cr_assert_eq(codec_state_set_shapes(s[w], sh, 2), 0);
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C; j++)
        x[w][i * C + j] = (float)((i - 5) * 0.125 * ((j + w) % 4 - 1.5));
    for (int k = 0; k < V; k++)
      x[w][R * C + k] = (float)(w + k) * 0.5f;
  }
  uint64_t l0 = codec_lin_len(c, sh, 2, 0), l1 = codec_lin_len(c, sh, 2, 1);
  cr_assert_eq(l0, R + V);
  cr_assert_eq(l1, C);
  float m0[W][R + V], sum0[R + V] = {0}, m1[W][C], sum1[C] = {0};
  cr_assert_eq(codec_lin_round(s[0], 1, sum0, m1[0]), -EINVAL,
               "round 1 before round 0");
  for (int w = 0; w < W; w++) {
    cr_assert_eq(codec_lin_round(s[w], 0, x[w], m0[w]), 0);
    for (uint64_t i = 0; i < l0; i++)
      sum0[i] += m0[w][i];
  }
  for (int w = 0; w < W; w++) {
    cr_assert_eq(codec_lin_round(s[w], 1, sum0, m1[w]), 0);
    for (uint64_t i = 0; i < l1; i++)
      sum1[i] += m1[w][i];
  }
  for (int w = 0; w < W; w++)
    cr_assert_eq(codec_lin_finish(s[w], sum1, out[w]), 0);
  for (int i = 0; i < N; i++) {
    double want = 0, kept = 0;
    for (int w = 0; w < W; w++) {
      want += x[w][i];
      kept += codec_state_residual(s[w])[i];
    }
    for (int w = 0; w < W; w++)
      cr_assert_float_eq(out[w][i], want, 1e-5 * (fabs(want) + 1),
                         "value %d, worker %d: %g, want %g", i, w,
                         out[w][i], want);
    cr_assert_float_eq(kept, 0, 1e-5, "nothing kept back at %d", i);
  }
  for (int w = 0; w < W; w++)
    codec_state_free(s[w]);
  codec_free(c);
}

/* A general gradient at rank 2: what the workers receive plus what they
 * keep back is what they owed, value by value, within the oracle's own
 * bound (codec_lin_bounds plus each worker's codec_error_bounds); and a
 * second step starts from the first's summed Q. */
Test(powersgd, exchange_keeps_the_books) {
  codec_t *c = mk("powersgd:rank=2");
  enum { W = 4, R = 40, C = 30, N = R * C };
  struct codec_shape sh = {R, C};
  struct rng r = {21};
  codec_state_t *s[W];
  static float x[W][N], rb[W][N], out[N], m0[W][2 * R], m1[W][2 * C];
  for (int w = 0; w < W; w++) {
    s[w] = mkstate(c, N, 0);
    cr_assert_eq(codec_state_set_shapes(s[w], &sh, 1), 0);
  }
  for (int step = 0; step < 3; step++) {
    float sum0[2 * R] = {0}, sum1[2 * C] = {0};
    double eb[N] = {0};
    for (int w = 0; w < W; w++) {
      fill_laplace(&r, x[w], N, 1e-3);
      memcpy(rb[w], codec_state_residual(s[w]), sizeof rb[w]);
      cr_assert_eq(codec_lin_round(s[w], 0, x[w], m0[w]), 0);
      for (int i = 0; i < 2 * R; i++)
        sum0[i] += m0[w][i];
    }
    size_t al = codec_lin_acc_len(s[0]);
    double *acc = xmalloc(8 * al), *lb = xmalloc(8 * N), *e = xmalloc(8 * N);
    codec_lin_acc_init(s[0], acc);
    for (int w = 0; w < W; w++) {
      cr_assert_eq(codec_lin_round(s[w], 1, sum0, m1[w]), 0);
      codec_lin_acc_add(s[w], acc);
      codec_error_bounds(c, x[w], rb[w], codec_state_residual(s[w]), N, e);
      for (int i = 0; i < N; i++)
        eb[i] += e[i];
      for (int i = 0; i < 2 * C; i++)
        sum1[i] += m1[w][i];
    }
    cr_assert_eq(codec_lin_finish(s[1], sum1, out), 0);
    codec_lin_bounds(s[1], acc, W, lb);
    for (int i = 0; i < N; i++) {
      double owed = 0;
      for (int w = 0; w < W; w++)
        owed += (double)x[w][i] + rb[w][i] - codec_state_residual(s[w])[i];
      cr_assert(fabs(out[i] - owed) <= eb[i] + lb[i],
                "step %d, value %d: %.9g, owed %.9g, bound %.3g", step, i,
                out[i], owed, eb[i] + lb[i]);
    }
    for (int w = 0; w != 1 && w < W; w++)
      cr_assert_eq(codec_lin_finish(s[w], sum1, out), 0);
    free(acc);
    free(lb);
    free(e);
  }
  for (int w = 0; w < W; w++)
    codec_state_free(s[w]);
  codec_free(c);
}

/* Bad use: shapes that do not add up, non-finite input (state kept),
 * payloads that do not parse. */
Test(powersgd, bad_input) {
  codec_t *c = mk("powersgd");
  codec_state_t *s = mkstate(c, 100, 0);
  struct codec_shape bad[] = {{10, 9}}, zero[] = {{0, 100}};
  cr_assert_eq(codec_state_set_shapes(s, bad, 1), -EINVAL);
  cr_assert_eq(codec_state_set_shapes(s, zero, 1), -EINVAL);
  float x[100];
  for (int i = 0; i < 100; i++)
    x[i] = (float)i;
  x[50] = NAN;
  float m[100];
  cr_assert_eq(codec_lin_round(s, 0, x, m), -EDOM);
  for (int i = 0; i < 100; i++)
    cr_assert_eq(codec_state_residual(s)[i], 0.0f);
  x[50] = 1;
  size_t cap = codec_bound(c, 100);
  unsigned char *out = xmalloc(cap);
  ptrdiff_t len = codec_encode(s, x, 100, out, cap);
  cr_assert_gt(len, 0);
  float y[100];
  cr_assert_eq(codec_decode(c, out, (size_t)len - 1, y, 100), -EBADMSG);
  cr_assert_eq(codec_decode(c, out, (size_t)len, y, 99), -EBADMSG);
  out[4] ^= 1; /* rows */
  cr_assert_eq(codec_decode(c, out, (size_t)len, y, 100), -EBADMSG);
  free(out);
  codec_state_free(s);
  codec_free(c);
}
