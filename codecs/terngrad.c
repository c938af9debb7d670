/* codecs/terngrad.c: stochastic 3-value quantization (TernGrad, Wen et al.
 * 2017), 3LC's "Stoch 3-value + QE" baseline (seeds/004, Section 5.1):
 * M = max|x|; each value becomes sign(x) M with probability |x| / M and 0
 * otherwise; quartic encoding, no zero-run encoding, no error feedback.
 *
 * Payload: M (f32 LE) and quartic_len(n) quartic bytes: 4 + ceil(n/5).
 *
 * The random draws are a counter-based hash of (seed, step, index), so
 * they vectorise, and a stream's output depends only on its seed and the
 * number of encodes before it. */
#include "codec_impl.h"
#include "quartic.h"

#include <math.h>

static void tg_init(codec_t *c) { (void)c; }

static int tg_configure(codec_t *c, const char *key, const char *value,
                        char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("terngrad", key, "", err, errlen);
}

static void tg_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}

static size_t tg_bound(const codec_t *c, size_t n) {
  (void)c;
  return 4 + quartic_len(n);
}

/* Digit q + 1 of value I: nonzero with probability |x| / M. */
static inline unsigned draw(const float *x, size_t i, float m, uint32_t key) {
  float a = x[i] < 0 ? -x[i] : x[i];
  uint32_t h = kern_hash32(kern_draw_input(i, key));
  float u = (float)(h >> 8) * 0x1p-24f; /* [0, 1) */
  unsigned keep = u * m < a;
  unsigned neg = x[i] < 0;
  return 1u + keep - 2u * (keep & neg);
}

#if CODEC_X86
#include <immintrin.h>

CODEC_AVX2 static inline __m256i hash8(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
  return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

/* quantize_quartic's columns j < FULL, eight at a time, for N < 2^32 (the
 * index has no high half): draw() on eight lanes, Horner on floats.
 * Returns the columns done. */
CODEC_AVX2 static size_t quantize_quartic_avx2(const float *x, size_t n,
                                               float m, uint32_t key,
                                               unsigned char *out) {
  size_t L = quartic_len(n);
  size_t full = n > 4 * L ? n - 4 * L : 0;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i vkey = _mm256_set1_epi32((int)key);
  const __m256 vm = _mm256_set1_ps(m), zero = _mm256_setzero_ps();
  const __m256 one = _mm256_set1_ps(1.0f), three = _mm256_set1_ps(3.0f);
  const __m256 two = _mm256_set1_ps(2.0f), s24 = _mm256_set1_ps(0x1p-24f);
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  size_t j = 0;
  for (; j + 8 <= full; j += 8) {
    __m256 byte = _mm256_setzero_ps();
    for (size_t k = 0; k < 5; k++) {
      size_t i = k * L + j;
      __m256 v = _mm256_loadu_ps(x + i);
      __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)i), lane);
      __m256i h = hash8(_mm256_xor_si256(idx, vkey));
      __m256 u =
          _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(h, 8)), s24);
      __m256 keep = _mm256_cmp_ps(_mm256_mul_ps(u, vm), _mm256_and_ps(v, absm),
                                  _CMP_LT_OQ);
      __m256 neg = _mm256_cmp_ps(v, zero, _CMP_LT_OQ);
      /* 1 + keep - 2 (keep & neg) */
      __m256 d = _mm256_sub_ps(_mm256_add_ps(one, _mm256_and_ps(keep, one)),
                               _mm256_and_ps(_mm256_and_ps(keep, neg), two));
      byte = _mm256_add_ps(_mm256_mul_ps(byte, three), d);
    }
    __m256i i32 = _mm256_cvttps_epi32(byte);
    __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(i32),
                                   _mm256_extracti128_si256(i32, 1));
    _mm_storel_epi64((__m128i *)(void *)(out + j), _mm_packus_epi16(w16, w16));
  }
  return j;
}
#endif

static CODEC_HOT void quantize_quartic(const float *x, size_t n, float m,
                                       uint32_t key, unsigned char *out,
                                       size_t j0) {
  size_t L = quartic_len(n);
  size_t full = n > 4 * L ? n - 4 * L : 0;
  for (size_t j = j0; j < full; j++)
    out[j] =
        (unsigned char)(81 * draw(x, j, m, key) + 27 * draw(x, L + j, m, key) +
                        9 * draw(x, 2 * L + j, m, key) +
                        3 * draw(x, 3 * L + j, m, key) +
                        draw(x, 4 * L + j, m, key));
  for (size_t j = full > j0 ? full : j0; j < L; j++) {
    unsigned byte = 0;
    for (size_t k = 0; k < 5; k++) {
      size_t i = k * L + j;
      byte = 3 * byte + (i < n ? draw(x, i, m, key) : 0u);
    }
    out[j] = (unsigned char)byte;
  }
}

static ptrdiff_t tg_encode(codec_state_t *s, const float *in,
                           unsigned char *out) {
  size_t n = s->n;
  uint32_t mb = kern_absmax_bits(in, n);
  if (mb >= 0x7f800000u)
    return -EDOM;
  float m = kern_bits_to_float(mb);
  kern_storef(out, m);
  unsigned char *q = out + 4;
  size_t L = quartic_len(n);
  if (m == 0.0f) {
    for (size_t j = 0; j < L; j++) {
      unsigned byte = 0;
      for (size_t k = 0; k < 5; k++)
        byte = 3 * byte + (k * L + j < n);
      q[j] = (unsigned char)byte;
    }
  } else {
    uint32_t key = kern_stream_key(s->seed, s->step);
    size_t done = 0;
#if CODEC_X86
    if (codec_use_avx2(s->codec) && n < ((size_t)1 << 32))
      done = quantize_quartic_avx2(in, n, m, key, q);
#endif
    quantize_quartic(in, n, m, key, q, done);
  }
  return (ptrdiff_t)(4 + L);
}

static int tg_decode(const codec_t *c, const unsigned char *in, size_t len,
                     float *out, size_t n, bool add) {
  if (len < 4)
    return -EBADMSG;
  float m = kern_loadf(in);
  if (!(m >= 0.0f) || m == (float)INFINITY)
    return -EBADMSG;
  return quartic_decode(codec_use_avx2(c), in + 4, len - 4, false, m, out, n,
                        add);
}

/* Every value decodes to 0 or to sign(x) M, M = max|x| (exact in the
 * payload): it moves by |x| or by M - |x|, never more. */
static void tg_error_bounds(const codec_t *c, const float *in,
                            const float *rb, const float *ra, size_t n,
                            double *out) {
  (void)c;
  (void)rb;
  (void)ra;
  uint32_t mbits = kern_absmax_bits(in, n);
  double m = mbits >= 0x7f800000u ? INFINITY
                                  : (double)kern_bits_to_float(mbits);
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)in[i]);
    out[i] = (x > m - x ? x : m - x) * (1 + 0x1p-20);
  }
}

const struct codec_ops codec_terngrad_ops = {
    .info = {.name = "terngrad",
             .params = "",
             .description = "stochastic 3-value quantization, quartic encoded "
                            "(TernGrad; 3LC's Stoch 3-value + QE)"},
    .init = tg_init,
    .configure = tg_configure,
    .describe = tg_describe,
    .bound = tg_bound,
    .encode_passes = 2, /* the max, then the draws */
    .error_bounds = tg_error_bounds,
    .encode = tg_encode,
    .decode = tg_decode,
};
