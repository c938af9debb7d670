/* codecs/codec_impl.h: what a codec implementation provides and may use.
 * Included by the codec files and the registry, never by users of the
 * library (they see codec.h only).
 *
 * Adding a codec: one file defining a `const struct codec_ops`, and one
 * line in registry.c. */
#ifndef GRADSIM_CODECS_CODEC_IMPL_H
#define GRADSIM_CODECS_CODEC_IMPL_H

#include "codec.h"

#include <errno.h>
#include <math.h>
#include <stdalign.h>
#include <string.h>

/* The codecs use GCC/clang builtins (__builtin_popcount, __builtin_ctz,
 * __builtin_cpu_supports); both compilers provide them. */

/* With GCC, hot loops are compiled twice, for x86-64-v3 (AVX2, F16C, BMI)
 * and for the baseline, and the loader picks one (function
 * multi-versioning). Both clones compute bit-identical results: the build
 * uses -ffp-contract=off, so no clone fuses a multiply and an add. Not
 * with clang (14 gives the resolvers of same-named static functions in
 * different files one global name) nor under AddressSanitizer. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&       \
    !defined(GS_NO_CLONES) && !defined(__SANITIZE_ADDRESS__) &&             \
    !defined(__OPTIMIZE_SIZE__)
#define CODEC_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CODEC_HOT
#endif

enum { CODEC_PARAMS_MAX = 64, CODEC_PRIV_MAX = 64 };

/* Kernels written with x86 intrinsics are compiled for AVX2 + F16C with a
 * target attribute and chosen at run time; each has a portable twin that
 * computes the same bytes. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) &&        \
    !defined(GS_NO_SIMD)
#define CODEC_X86 1
#define CODEC_AVX2 __attribute__((target("avx2,f16c,popcnt")))
#else
#define CODEC_X86 0
#endif

struct codec_ops {
  struct codec_info info; /* name, parameters, description */

  /* Set the defaults in C->params (called before any key). */
  void (*init)(codec_t *c);
  /* One key=value of the spec. Unknown key or bad value: return -EINVAL
   * and a message naming the key, the value and the valid range. */
  int (*configure)(codec_t *c, const char *key, const char *value, char *err,
                   size_t errlen);
  /* After all keys: cross-parameter checks. May be NULL. */
  int (*finish)(codec_t *c, char *err, size_t errlen);
  /* The canonical parameter list ("eb=-10"), "" when there is none. */
  void (*describe)(const codec_t *c, char *buf, size_t len);

  size_t (*bound)(const codec_t *c, size_t n);
  /* Largest N the codec accepts (index fields). 0 means SIZE_MAX. */
  size_t max_n;
  /* Each stream keeps a residual of n floats (error feedback; false:
   * stateless). */
  bool has_residual;
  bool lossless;

  /* Properties (codec.h, "properties"). The payload size depends on the
   * data; SIZE_FIXED, when not NULL, answers per parameters instead. */
  bool size_varies;
  bool (*size_fixed)(const codec_t *c);
  bool sparse;
  /* codec_sums() and codec_value_bytes(): the payload is N values of this
   * many bytes each, in a format whose elementwise sum is again that
   * format (fp32 4, fp16 and bf16 2); 0: its payloads do not add. */
  unsigned sum_bytes;
  /* codec_encode_passes(): 1 or 2, or 0 for none stated; ENCODE_PASSES_OF,
   * when not NULL, answers per parameters instead. */
  unsigned encode_passes;
  unsigned (*encode_passes_of)(const codec_t *c);
  /* The cost-table family between the spec and the name; may be NULL. */
  void (*cost_family)(const codec_t *c, char *buf, size_t len);
  /* codec_error_bounds(); NULL: zeros for a lossless codec. Every lossy
   * codec provides it (tests/test_codecs.c checks each against its own
   * payloads). */
  void (*error_bounds)(const codec_t *c, const float *in, const float *rb,
                       const float *ra, size_t n, double *out);
  /* Value classes: NCLASSES (0: none), the field bits of each, and the
   * payload scan of codec_classes(). */
  size_t nclasses;
  const unsigned *class_bits;
  int (*classes)(const codec_t *c, const unsigned char *payload, size_t len,
                 size_t n, uint8_t *cls, uint64_t *counts);
  /* codec_payload_values() of a sparse codec; NULL: dense (N). */
  ptrdiff_t (*payload_values)(const codec_t *c, const unsigned char *in,
                              size_t len, size_t n);
  /* The exact size of S's next payload when it does not depend on the
   * values but on the stream (PowerSGD: its shapes); NULL otherwise. With
   * it, FINITE_ONLY says the codec refuses NaN and infinity (-EDOM). */
  ptrdiff_t (*payload_size)(const codec_state_t *s);
  bool finite_only;
  /* A linear compressor's rounds (codec.h); NULL for the others. */
  const struct codec_lin_ops *lin;
  /* Free what the codec keeps in S->ext; may be NULL. */
  void (*state_free)(codec_state_t *s);

  /* Encode S->n values of IN into OUT, which has bound(n) bytes (or, for
   * a codec with PAYLOAD_SIZE, that many: it writes no more). Returns
   * the payload size or a negative errno; on error the state must be left
   * unchanged (check the input before mutating it). */
  ptrdiff_t (*encode)(codec_state_t *s, const float *in, unsigned char *out);
  /* Decode: see codec_decode(). ADD selects OUT[i] += v over OUT[i] = v. */
  int (*decode)(const codec_t *c, const unsigned char *in, size_t len,
                float *out, size_t n, bool add);
  /* Zero or reseed the codec's private scalars (PRIV). May be NULL. */
  void (*state_init)(codec_state_t *s);
};

/* The rounds of a linear compressor, as codec.h describes them. */
struct codec_lin_ops {
  uint64_t (*len)(const codec_t *c, const struct codec_shape *shapes,
                  size_t k, int round);
  int (*round)(codec_state_t *s, int round, const float *in, float *out);
  int (*finish)(codec_state_t *s, const float *sum, float *out);
  size_t (*acc_len)(const codec_state_t *s);
  void (*acc_init)(const codec_state_t *s, double *acc);
  void (*acc_add)(const codec_state_t *s, double *acc);
  void (*bounds)(const codec_state_t *s, const double *acc, size_t p,
                 double *out);
};

struct codec {
  const struct codec_ops *ops;
  /* Use only the portable kernels, never the x86 SIMD ones: set when the
   * environment variable GRADSIM_CODEC_PORTABLE is non-empty at creation,
   * so that tests can check that both give the same bytes. */
  bool portable;
  char spec[CODEC_SPEC_MAX];
  alignas(8) unsigned char params[CODEC_PARAMS_MAX];
};

struct codec_state {
  const codec_t *codec;
  size_t n;
  uint64_t step;
  uint64_t seed;
  float *residual; /* n floats when ops->has_residual, else NULL */
  alignas(8) unsigned char priv[CODEC_PRIV_MAX];
  /* Scratch memory for the codec, grown on demand by codec_scratch(). */
  void *scratch;
  size_t scratch_cap;
  /* For encodes into a buffer below the bound: the payload goes here
   * first, and the residual is saved here to be restored on -ENOSPC. */
  unsigned char *spare_out;
  float *spare_residual;
  /* The tensors of the stream (codec_state_set_shapes), or none. */
  struct codec_shape *shapes;
  size_t nshapes;
  /* What a codec keeps beyond the residual (PowerSGD's factors), owned
   * by it: set up by state_init, freed by state_free. */
  void *ext;
};

/* Most tensors a stream may be cut into (codec_state_set_shapes). */
enum { CODEC_SHAPES_MAX = 65536 };

/* Typed views of the parameter and private areas: each codec defines its
 * own struct and checks its size against the area with a static assert. */
#define CODEC_PARAMS(c, type) ((type *)(void *)(c)->params)
#define CODEC_CPARAMS(c, type) ((const type *)(const void *)(c)->params)
#define CODEC_PRIV(s, type) ((type *)(void *)(s)->priv)

/* True when C may use the AVX2 kernels on this machine. */
bool codec_use_avx2(const codec_t *c);

/* codec_error_bounds() of an error-feedback codec whose encode is
 * b = RB + IN (a float sum), sends some d, and keeps RA = b - d (or
 * d = b, RA = 0, for the values it sends exactly): what was not sent is
 * RB + IN - RA up to the two roundings, 2^-24 of |b| and of |RA| each. */
void kern_feedback_bounds(const codec_t *c, const float *in, const float *rb,
                          const float *ra, size_t n, double *out);

/* Scratch of at least BYTES bytes, 64-byte aligned, owned by S; NULL when
 * the allocation fails. The contents are not preserved across calls. */
void *codec_scratch(codec_state_t *s, size_t bytes);

/* Write a formatted message into ERR when it is not NULL. */
void codec_errf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Parse helpers for configure(): whole-string numbers only. Each returns
 * 0 or -EINVAL with the message "codec NAME: KEY=VALUE ..., expected ...". */
int codec_parse_int(const char *codec, const char *key, const char *value,
                    long lo, long hi, long *out, char *err, size_t errlen);
int codec_parse_double(const char *codec, const char *key, const char *value,
                       double lo, double hi, bool hi_open, double *out,
                       char *err, size_t errlen);
/* The shortest decimal that reads back as V ("0.05", not
 * "0.050000000000000003"), for canonical specs, into BUF (LEN bytes, not
 * NULL). */
void codec_fmt_double(char *buf, size_t len, double v)
#if defined(__GNUC__)
    /* Stated, so that GCC's UBSan build (whose check of strtod's argument
     * adds a path with BUF NULL) does not warn of snprintf into NULL
     * there (-Wformat-truncation). */
    __attribute__((nonnull(1)))
#endif
    ;
int codec_unknown_key(const char *codec, const char *key, const char *valid,
                      char *err, size_t errlen);

/* ---- shared kernels (kernels.c) ------------------------------------- */

/* The largest |x| as an IEEE bit pattern with the sign cleared: compare
 * with 0x7f800000 to detect infinity (==) or NaN (>). One read pass. */
uint32_t kern_absmax_bits(const float *x, size_t n);
/* Like kern_absmax_bits over (a[i] + b[i]), computed as float sums. */
uint32_t kern_absmax_sum_bits(const float *a, const float *b, size_t n);

static inline float kern_bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint32_t kern_float_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Counter-based random numbers for the stochastic codecs (terngrad,
 * qsgd): a draw is a hash of (stream key, value index), so it vectorises
 * and a stream's payload depends only on its seed and step. */
/* "lowbias32" integer hash (C. Wellons, 2018): full avalanche on 32 bits. */
static inline uint32_t kern_hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
/* splitmix64's finaliser. */
static inline uint64_t kern_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
/* The key of a stream's encode: a new one for every seed and step. */
static inline uint32_t kern_stream_key(uint64_t seed, uint64_t step) {
  return (uint32_t)kern_mix64(seed ^ kern_mix64(step + 1));
}
/* The 32-bit input of value I's draw under KEY: the index's high half
 * enters too, so that vectors of over 2^32 values do not repeat their
 * draws. */
static inline uint32_t kern_draw_input(size_t i, uint32_t key) {
  return (uint32_t)i ^ key ^ (uint32_t)((uint64_t)i >> 32) * 0x9e3779b9u;
}

/* Little-endian loads and stores, unaligned. */
static inline uint32_t kern_load32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static inline void kern_store32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}
static inline float kern_loadf(const unsigned char *p) {
  return kern_bits_to_float(kern_load32(p));
}
static inline void kern_storef(unsigned char *p, float f) {
  kern_store32(p, kern_float_to_bits(f));
}

#endif
