/* codecs/tlc.c: 3LC (seeds/004, Section 3): 3-value quantization with a
 * sparsity multiplier and error accumulation, quartic encoding, zero-run
 * encoding.
 *
 *   b += x;  M = max|b| * s;  q = round(b / M) in {-1, 0, 1} (0 if M = 0);
 *   out = M q;  b -= out    (Equations 1-3 and Fig. 3)
 *
 * Payload: M (f32 LE), then the quartic bytes of q + 1, zero-run encoded
 * unless zre=0 (quartic.h). With 1 <= s < 2, |b / M| <= 1, so round() is
 * the comparison of |b / M| with one half (halves away from zero, as
 * roundf). */
#include "codec_impl.h"
#include "quartic.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

struct tlc_params {
  double s;
  bool zre;
};
_Static_assert(sizeof(struct tlc_params) <= CODEC_PARAMS_MAX, "params");

static void tlc_init(codec_t *c) {
  struct tlc_params *p = CODEC_PARAMS(c, struct tlc_params);
  p->s = 1.0;
  p->zre = true;
}

static int tlc_configure(codec_t *c, const char *key, const char *value,
                         char *err, size_t errlen) {
  struct tlc_params *p = CODEC_PARAMS(c, struct tlc_params);
  if (strcmp(key, "s") == 0)
    return codec_parse_double("3lc", "s", value, 1.0, 2.0, true, &p->s, err,
                              errlen);
  if (strcmp(key, "zre") == 0) {
    long v;
    int rc = codec_parse_int("3lc", "zre", value, 0, 1, &v, err, errlen);
    p->zre = v != 0;
    return rc;
  }
  return codec_unknown_key("3lc", key, "s, zre", err, errlen);
}

static void tlc_describe(const codec_t *c, char *buf, size_t len) {
  const struct tlc_params *p = CODEC_CPARAMS(c, struct tlc_params);
  char sv[32];
  codec_fmt_double(sv, sizeof sv, p->s);
  snprintf(buf, len, "s=%s,zre=%d", sv, p->zre ? 1 : 0);
}

static size_t tlc_bound(const codec_t *c, size_t n) {
  (void)c;
  return 4 + quartic_len(n);
}

/* round(v / M) is 1 when the float quotient fl(v / M) >= 1/2. The float
 * below 1/2 is 1/2 - 2^-25, and the midpoint 1/2 - 2^-26 rounds to 1/2
 * (ties to even), so fl(v / M) >= 1/2 exactly when the real v / M >=
 * 1/2 - 2^-26, that is v >= t = M (2^25 - 1) 2^-26, which is exact in
 * double (24 by 25 significant bits). For a float v that is v >= T, T the
 * least float >= t; rounding is symmetric, so round(v / M) = -1 exactly
 * when v <= -T. Two comparisons with T give the digits of the division
 * that Equation 2 states, bit for bit, without dividing (the divisions
 * were a third of the encode). M > 0. */
static float half_threshold(float m) {
  double t = (double)m * (0.5 - 0x1p-26);
  float f = (float)t;
  return (double)f < t ? nextafterf(f, INFINITY) : f;
}

/* The quantizer: the digit q + 1 of v = b + x, and b = v - M q; T is
 * half_threshold(M). */
static inline unsigned quant(float *b, const float *x, size_t i, float m,
                             float t) {
  float v = b[i] + x[i];
  int q = (v >= t) - (v <= -t);
  b[i] = v - m * (float)q;
  return (unsigned)(q + 1);
}

/* Quantize and quartic-encode all five partitions at once, column by
 * column, the columns [J0, J1); columns j < FULL have no padding digit. */
static CODEC_HOT void quantize_quartic(float *b, const float *x, size_t n,
                                       float m, unsigned char *out, size_t j0,
                                       size_t j1) {
  size_t L = quartic_len(n);
  float t = half_threshold(m);
  size_t full = n > 4 * L ? n - 4 * L : 0;
  full = full < j1 ? full : j1;
  for (size_t j = j0; j < full; j++) {
    unsigned d0 = quant(b, x, j, m, t);
    unsigned d1 = quant(b, x, L + j, m, t);
    unsigned d2 = quant(b, x, 2 * L + j, m, t);
    unsigned d3 = quant(b, x, 3 * L + j, m, t);
    unsigned d4 = quant(b, x, 4 * L + j, m, t);
    out[j] = (unsigned char)(81 * d0 + 27 * d1 + 9 * d2 + 3 * d3 + d4);
  }
  for (size_t j = full > j0 ? full : j0; j < j1; j++) {
    unsigned byte = 0;
    for (size_t k = 0; k < 5; k++) {
      size_t i = k * L + j;
      byte = 3 * byte + (i < n ? quant(b, x, i, m, t) : 0u);
    }
    out[j] = (unsigned char)byte;
  }
}

#if CODEC_X86
#include <immintrin.h>

/* One column group's digits of partition K: b + x at B and X, quantized as
 * quant() does, b updated, the byte ACC built up (Horner on small
 * integers from 0: exact in float). */
CODEC_AVX2 static inline __m256 quant8(float *b, const float *x, __m256 acc,
                                       __m256 vm, __m256 vt, __m256 vnt) {
  const __m256 one = _mm256_set1_ps(1.0f), three = _mm256_set1_ps(3.0f);
  __m256 v = _mm256_add_ps(_mm256_loadu_ps(b), _mm256_loadu_ps(x));
  __m256 q =
      _mm256_sub_ps(_mm256_and_ps(_mm256_cmp_ps(v, vt, _CMP_GE_OQ), one),
                    _mm256_and_ps(_mm256_cmp_ps(v, vnt, _CMP_LE_OQ), one));
  _mm256_storeu_ps(b, _mm256_sub_ps(v, _mm256_mul_ps(vm, q)));
  return _mm256_add_ps(_mm256_mul_ps(acc, three), _mm256_add_ps(q, one));
}

/* The bytes of eight columns from their Horner sums. */
CODEC_AVX2 static inline void store8(unsigned char *out, __m256 acc) {
  __m256i i32 = _mm256_cvttps_epi32(acc);
  __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(i32),
                                 _mm256_extracti128_si256(i32, 1));
  _mm_storel_epi64((__m128i *)(void *)out, _mm_packus_epi16(w16, w16));
}

/* quantize_quartic for the columns [J0, J1) below FULL: the same float
 * operations as quant(), on eight lanes. 128 columns at a time, each of the
 * ten streams (b and x of five partitions) read 512 bytes in order at a
 * visit: on this machine (AMD EPYC) that pass runs about 12% faster than
 * with 32 bytes a visit, and than one pass in order over b and x (the
 * first pass left the partitions' ends in the last-level cache, which
 * they reach early). Returns the column it stopped at. */
CODEC_AVX2 static size_t quantize_quartic_avx2(float *b, const float *x,
                                               size_t n, float m,
                                               unsigned char *out, size_t j0,
                                               size_t j1) {
  enum { COLS = 128 };
  size_t L = quartic_len(n);
  size_t full = n > 4 * L ? n - 4 * L : 0;
  full = full < j1 ? full : j1;
  const float t = half_threshold(m);
  const __m256 vm = _mm256_set1_ps(m), vt = _mm256_set1_ps(t);
  const __m256 vnt = _mm256_set1_ps(-t);
  size_t j = j0;
  for (; j + COLS <= full; j += COLS) {
    __m256 acc[COLS / 8];
    for (int u = 0; u < COLS / 8; u++)
      acc[u] = _mm256_setzero_ps();
    for (size_t k = 0; k < 5; k++)
      for (int u = 0; u < COLS / 8; u++) {
        size_t i = k * L + j + 8 * (size_t)u;
        acc[u] = quant8(b + i, x + i, acc[u], vm, vt, vnt);
      }
    for (int u = 0; u < COLS / 8; u++)
      store8(out + j + 8 * (size_t)u, acc[u]);
  }
  for (; j + 8 <= full; j += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (size_t k = 0; k < 5; k++)
      acc = quant8(b + k * L + j, x + k * L + j, acc, vm, vt, vnt);
    store8(out + j, acc);
  }
  return j;
}
#endif

static CODEC_HOT void accumulate(float *b, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    b[i] += x[i];
}

static ptrdiff_t tlc_encode(codec_state_t *st, const float *in,
                            unsigned char *out) {
  const struct tlc_params *p = CODEC_CPARAMS(st->codec, struct tlc_params);
  size_t n = st->n;
  float *b = st->residual;
  /* Pass 1 reads only, so that a NaN leaves the buffer untouched. */
  uint32_t mb = kern_absmax_sum_bits(b, in, n);
  if (mb >= 0x7f800000u)
    return -EDOM;
  double md = (double)kern_bits_to_float(mb) * p->s;
  /* max|b| near FLT_MAX times s would round to infinity, which decoding
   * rejects; FLT_MAX still bounds |b| / M by one. */
  float m = md > FLT_MAX ? FLT_MAX : (float)md;
  size_t L = quartic_len(n);
  kern_storef(out, m);
  if (m > 0.0f) {
    /* Blocks of 4096 columns (20 KB of b and of x, 4 KB of payload), each
     * zero-run encoded while its bytes are in the L1 cache. */
    enum { BLOCK = 4096 };
    bool avx2 = codec_use_avx2(st->codec);
    struct zre_stream z;
    zre_begin(&z, avx2);
    for (size_t j0 = 0; j0 < L; j0 += BLOCK) {
      size_t j1 = L - j0 < BLOCK ? L : j0 + BLOCK, j = j0;
#if CODEC_X86
      if (avx2)
        j = quantize_quartic_avx2(b, in, n, m, out + 4, j0, j1);
#else
      (void)avx2;
#endif
      quantize_quartic(b, in, n, m, out + 4, j, j1);
      if (p->zre)
        zre_feed(out + 4, j0, j1, &z);
    }
    size_t len = p->zre ? zre_end(out + 4, &z) : L;
    return (ptrdiff_t)(4 + len);
  } else {
    /* All of b + x is zero: q = 0 everywhere (digit 1), b stays zero. */
    accumulate(b, in, n);
    memset(out + 4, 0, L);
    for (size_t j = 0; j < L; j++)
      for (size_t k = 0; k < 5; k++)
        out[4 + j] = (unsigned char)(3 * out[4 + j] + (k * L + j < n));
  }
  size_t len = p->zre ? zre_encode_inplace(out + 4, L) : L;
  return (ptrdiff_t)(4 + len);
}

static int tlc_decode(const codec_t *c, const unsigned char *in, size_t len,
                      float *out, size_t n, bool add) {
  if (len < 4)
    return -EBADMSG;
  float m = kern_loadf(in);
  if (!(m >= 0.0f) || m == (float)INFINITY)
    return -EBADMSG;
  return quartic_decode(codec_use_avx2(c), in + 4, len - 4,
                        CODEC_CPARAMS(c, struct tlc_params)->zre, m, out, n,
                        add);
}

/* Without zero-run encoding every payload is 4 + ceil(n/5) bytes. */
static bool tlc_size_fixed(const codec_t *c) {
  return !CODEC_CPARAMS(c, struct tlc_params)->zre;
}

static const char *const tlc_settings[] = {
    "3lc:s=1", "3lc:s=1.5", "3lc:s=1.75", "3lc:s=1.9", "3lc:s=1,zre=0", NULL};

const struct codec_ops codec_3lc_ops = {
    .info = {.name = "3lc",
             .params = "s=S  sparsity multiplier in [1, 2) (default 1), "
                       "zre=0|1  zero-run encoding (default 1)",
             .description = "3LC: 3-value quantization with error "
                            "accumulation, quartic + zero-run encoding",
             .settings = tlc_settings},
    .init = tlc_init,
    .configure = tlc_configure,
    .describe = tlc_describe,
    .bound = tlc_bound,
    .encode_passes = 2, /* max|b + x|, then quantize and b -= out */
    .has_residual = true,
    .size_fixed = tlc_size_fixed,
    .error_bounds = kern_feedback_bounds,
    .encode = tlc_encode,
    .decode = tlc_decode,
};
