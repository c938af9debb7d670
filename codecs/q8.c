/* codecs/q8.c: 8-bit scalar quantization by the vector maximum.
 * Pipe-SGD (seeds/001) quantizes to 8 bits inside allreduce ("+Q"); 3LC
 * (seeds/004, Section 5.1) compares with "8-bit int", 255 levels in
 * [-127, 127] with -128 unused.
 *
 * scale = max|x| / 127 (float), q = round-half-away-from-zero(x / scale).
 * Payload: scale (f32 LE), then the n codes as int8: n + 4 bytes. */
#include "codec_impl.h"

#include <float.h>
#include <math.h>

static void q8_init(codec_t *c) { (void)c; }

static int q8_configure(codec_t *c, const char *key, const char *value,
                        char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("q8", key, "", err, errlen);
}

static void q8_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}

static size_t q8_bound(const codec_t *c, size_t n) {
  (void)c;
  return n + 4;
}

/* round-half-away-from-zero of a value in [-127.5, 127.5]: truncate
 * through int (exact here, and vectorisable, unlike roundf), then step
 * away from zero when the dropped fraction is at least one half; x - t is
 * exact in float. */
static inline int round_away(float x) {
  int t = (int)x;
  float d = x - (float)t;
  return t + (d >= 0.5f) - (d <= -0.5f);
}

static CODEC_HOT void quantize(const float *in, signed char *out, size_t n,
                               float scale) {
  for (size_t i = 0; i < n; i++) {
    /* |x/scale| <= 127 up to the rounding of scale; clamp anyway. */
    int q = round_away(in[i] / scale);
    q = q > 127 ? 127 : q < -127 ? -127 : q;
    out[i] = (signed char)q;
  }
}

#if CODEC_X86
#include <immintrin.h>

/* round_away() of eight values, clamped to [-127, 127]: truncate, then
 * step away from zero by the dropped fraction (exact). */
CODEC_AVX2 static inline __m256i round_away8(__m256 v) {
  __m256i t = _mm256_cvttps_epi32(v);
  __m256 d = _mm256_sub_ps(v, _mm256_cvtepi32_ps(t));
  /* t + (d >= 0.5) - (d <= -0.5); the masks are -1 where true. */
  t = _mm256_sub_epi32(t, _mm256_castps_si256(_mm256_cmp_ps(
                              d, _mm256_set1_ps(0.5f), _CMP_GE_OQ)));
  t = _mm256_add_epi32(t, _mm256_castps_si256(_mm256_cmp_ps(
                              d, _mm256_set1_ps(-0.5f), _CMP_LE_OQ)));
  return _mm256_min_epi32(_mm256_max_epi32(t, _mm256_set1_epi32(-127)),
                          _mm256_set1_epi32(127));
}

/* quantize() on 32 values at a time: the same bytes, without its division
 * except where a code could differ.
 *
 * The codes are q = round(f), f = fl(x / s), |x / s| <= 127.5 (|x| <= max,
 * s = fl(max / 127)), round() to the nearest integer, halves away from
 * zero. With r = fl(1 / s) and y = fl(x r): for s in the normal range, 1 /
 * s is in it too (s <= FLT_MAX / 127), so r = (1 / s)(1 + e1) and y = (x /
 * s)(1 + e1)(1 + e2) with |e1|, |e2| <= 2^-24 (or, where x r falls below
 * the normal range, within 2^-150 of it); and f = (x / s)(1 + e3), |e3| <=
 * 2^-24. So |y - f| <= 127.5 (3 2^-24 + 2^-48) + 2^-150 < 2.3e-5 < 2^-15.
 * Rounding to the nearest integer changes only at the half-integers: when y
 * is more than 2^-15 from every one of them, f lies strictly inside the
 * same interval between two of them, and both have the same nearest
 * integer, which is round(f). The processor's conversion (cvtps2dq, in any
 * rounding mode) gives an integer q within 1 of y, and y - q is exact: when
 * |y - q| < 1/2 - 2^-15, q is that nearest integer, and it lies within
 * [-127, 127] (y within 2^-15 of 127.5 fails the test). A group of 32 with
 * a lane that fails it (about 2 in 10^4 values of random data; all of
 * them when x / s sits on halves) is quantized again as quantize() does
 * it, with the division. Returns the values done. */
CODEC_AVX2 static size_t quantize_avx2(const float *in, signed char *out,
                                       size_t n, float scale) {
  const __m256 vs = _mm256_set1_ps(scale), vr = _mm256_set1_ps(1.0f / scale);
  const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 far = _mm256_set1_ps(0.5f - 0x1p-15f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  /* Below the normal range 1 / s may overflow: divide throughout. */
  const bool recip = scale >= 0x1p-126f;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i q[4];
    __m256 near = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
      __m256 y = _mm256_mul_ps(_mm256_loadu_ps(in + i + 8 * k), vr);
      q[k] = _mm256_cvtps_epi32(y);
      __m256 d =
          _mm256_and_ps(_mm256_sub_ps(y, _mm256_cvtepi32_ps(q[k])), absm);
      near = _mm256_or_ps(near, _mm256_cmp_ps(d, far, _CMP_GE_OQ));
    }
    if (!recip || _mm256_movemask_ps(near))
      for (int k = 0; k < 4; k++)
        q[k] = round_away8(_mm256_div_ps(_mm256_loadu_ps(in + i + 8 * k), vs));
    /* packs works within 128-bit halves; the permute restores order. */
    __m256i w = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]),
                                   _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256((__m256i *)(void *)(out + i),
                        _mm256_permutevar8x32_epi32(w, order));
  }
  return i;
}
#endif

static ptrdiff_t q8_encode(codec_state_t *s, const float *in,
                           unsigned char *out) {
  uint32_t mbits = kern_absmax_bits(in, s->n);
  if (mbits >= 0x7f800000u)
    return -EDOM;
  float scale = kern_bits_to_float(mbits) / 127.0f;
  kern_storef(out, scale);
  if (scale > 0.0f) {
    size_t done = 0;
#if CODEC_X86
    if (codec_use_avx2(s->codec))
      done = quantize_avx2(in, (signed char *)(out + 4), s->n, scale);
#endif
    quantize(in + done, (signed char *)(out + 4) + done, s->n - done, scale);
  } else
    memset(out + 4, 0, s->n);
  return (ptrdiff_t)(s->n + 4);
}

static CODEC_HOT int dequantize(const signed char *in, float *out, size_t n,
                                float scale, bool add) {
  int lowest = 0;
  if (add)
    for (size_t i = 0; i < n; i++) {
      out[i] += (float)in[i] * scale;
      lowest = in[i] < lowest ? in[i] : lowest;
    }
  else
    for (size_t i = 0; i < n; i++) {
      out[i] = (float)in[i] * scale;
      lowest = in[i] < lowest ? in[i] : lowest;
    }
  return lowest;
}

static int q8_decode(const codec_t *c, const unsigned char *in, size_t len,
                     float *out, size_t n, bool add) {
  (void)c;
  if (len != n + 4)
    return -EBADMSG;
  float scale = kern_loadf(in);
  if (!(scale >= 0.0f) || isinf(scale))
    return -EBADMSG;
  /* -128 is never produced: its presence means a corrupted payload. */
  if (dequantize((const signed char *)(in + 4), out, n, scale, add) < -127)
    return -EBADMSG;
  return 0;
}

/* q = round(fl(x / scale)) is within 1/2 + 2^-24 |x / scale| of x / scale,
 * and decoding rounds q scale once more: |d - x| <= scale (1/2 + 2^-24)
 * + 2^-23 |x|; a little more for safety, and an absolute term for a
 * scale below the normal range. */
static void q8_error_bounds(const codec_t *c, const float *in,
                            const float *rb, const float *ra, size_t n,
                            double *out) {
  (void)c;
  (void)rb;
  (void)ra;
  uint32_t mbits = kern_absmax_bits(in, n);
  double scale = (double)(kern_bits_to_float(mbits) / 127.0f);
  /* Near the top of the float range 127 scale may pass FLT_MAX, and
   * decoding overflows to infinity: no bound there. */
  double step = mbits >= 0x7f800000u || 127 * scale * (1 + 0x1p-22) > FLT_MAX
                    ? INFINITY
                    : 0.5 * scale * (1 + 0x1p-20) + 0x1p-140;
  for (size_t i = 0; i < n; i++)
    out[i] = step + fabs((double)in[i]) * 0x1p-22;
}

const struct codec_ops codec_q8_ops = {
    .info = {.name = "q8",
             .params = "",
             .description = "8-bit quantization by the vector max, codes "
                            "-127..127 (Pipe-SGD Q, 3LC 8-bit int)"},
    .init = q8_init,
    .configure = q8_configure,
    .describe = q8_describe,
    .bound = q8_bound,
    .encode_passes = 2, /* the max, then the codes */
    .error_bounds = q8_error_bounds,
    .encode = q8_encode,
    .decode = q8_decode,
};
