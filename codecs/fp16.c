/* codecs/fp16.c: IEEE 754 binary16, round to nearest even.
 * GradientFlow (seeds/003) exchanges gradients in half precision ("mixed
 * precision", Section 3.1 and Tables 1-2).
 *
 * The conversions are branch-free integer and float arithmetic so that the
 * compiler vectorises them; they produce the same bits as the F16C
 * instructions VCVTPS2PH (rounding imm 0) and VCVTPH2PS, including
 * subnormals, overflow to infinity and NaN payloads (tests/test_codecs.c
 * compares them on every float class). Method after F. Giesen, "float->half
 * variants" (2016). */
#include "codec_impl.h"

static inline uint16_t f32_to_f16(uint32_t x) {
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t a = x & 0x7fffffffu;
  /* Normal half results: rebias the exponent, round the 13 dropped bits to
   * nearest even (add 0xfff plus the lowest kept bit), shift. A carry out
   * of the mantissa correctly bumps the exponent, up to infinity. */
  uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  /* Subnormal half results (|x| < 2^-14): adding 0.5 lets the FPU do the
   * round-to-nearest-even at the right bit position. */
  float f = kern_bits_to_float(a) + 0.5f;
  uint32_t sub = kern_float_to_bits(f) - 0x3f000000u;
  /* NaN keeps its top 10 payload bits and becomes quiet, as F16C does. */
  uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  uint32_t h = a < 0x38800000u    ? sub
               : a < 0x47800000u  ? normal
               : a <= 0x7f800000u ? 0x7c00u
                                  : nan;
  return (uint16_t)(h | sign);
}

static inline uint32_t f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = h & 0x7c00u;
  uint32_t m = h & 0x03ffu;
  uint32_t normal = ((uint32_t)(h & 0x7fffu) << 13) + 0x38000000u;
  /* A signalling NaN comes out quiet, as VCVTPH2PS does. */
  uint32_t infnan = 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
  /* Subnormal: m * 2^-24, exact in float. */
  uint32_t sub = kern_float_to_bits((float)m * 0x1p-24f);
  uint32_t f = e == 0x7c00u ? infnan : e == 0 ? sub : normal;
  return f | sign;
}

static void fp16_init(codec_t *c) { (void)c; }

static int fp16_configure(codec_t *c, const char *key, const char *value,
                          char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("fp16", key, "", err, errlen);
}

static void fp16_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}

static size_t fp16_bound(const codec_t *c, size_t n) {
  (void)c;
  return 2 * n;
}

#if CODEC_X86
#include <immintrin.h>

/* The hardware conversions; the portable loops below give the same bits
 * (tests/test_codecs.c and the portable-twin test compare them). */
CODEC_AVX2 static size_t encode_f16c(const float *in, unsigned char *out,
                                     size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(
        (__m128i *)(void *)(out + 2 * i),
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return i;
}

CODEC_AVX2 static size_t decode_f16c(const unsigned char *in, float *out,
                                     size_t n, bool add) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 f = _mm256_cvtph_ps(
        _mm_loadu_si128((const __m128i *)(const void *)(in + 2 * i)));
    if (add)
      f = _mm256_add_ps(_mm256_loadu_ps(out + i), f);
    _mm256_storeu_ps(out + i, f);
  }
  return i;
}
#endif

static CODEC_HOT void encode_loop(const float *in, unsigned char *out,
                                  size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h = f32_to_f16(kern_float_to_bits(in[i]));
    memcpy(out + 2 * i, &h, sizeof h);
  }
}

static ptrdiff_t fp16_encode(codec_state_t *s, const float *in,
                             unsigned char *out) {
  size_t done = 0;
#if CODEC_X86
  if (codec_use_avx2(s->codec))
    done = encode_f16c(in, out, s->n);
#endif
  encode_loop(in + done, out + 2 * done, s->n - done);
  return (ptrdiff_t)(2 * s->n);
}

static CODEC_HOT void decode_loop(const unsigned char *in, float *out,
                                  size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, in + 2 * i, sizeof h);
    out[i] = kern_bits_to_float(f16_to_f32(h));
  }
}

static CODEC_HOT void decode_add_loop(const unsigned char *in, float *out,
                                      size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, in + 2 * i, sizeof h);
    out[i] += kern_bits_to_float(f16_to_f32(h));
  }
}

static int fp16_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  if (len != 2 * n)
    return -EBADMSG;
  size_t done = 0;
#if CODEC_X86
  if (codec_use_avx2(c))
    done = decode_f16c(in, out, n, add);
#else
  (void)c;
#endif
  if (add)
    decode_add_loop(in + 2 * done, out + done, n - done);
  else
    decode_loop(in + 2 * done, out + done, n - done);
  return 0;
}

/* Round to nearest even: half an ulp, 2^-11 of |x| for normal halves and
 * 2^-25 for subnormal ones; 65520 and above overflow to infinity. */
static void fp16_error_bounds(const codec_t *c, const float *in,
                              const float *rb, const float *ra, size_t n,
                              double *out) {
  (void)c;
  (void)rb;
  (void)ra;
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)in[i]);
    out[i] = x < 65520.0 ? x * 0x1p-11 + 0x1p-25 : INFINITY;
  }
}

const struct codec_ops codec_fp16_ops = {
    .info = {.name = "fp16",
             .params = "",
             .description = "IEEE binary16, round to nearest even "
                            "(GradientFlow mixed precision)"},
    .init = fp16_init,
    .configure = fp16_configure,
    .describe = fp16_describe,
    .bound = fp16_bound,
    .sum_bytes = 2,
    .encode_passes = 1,
    .error_bounds = fp16_error_bounds,
    .encode = fp16_encode,
    .decode = fp16_decode,
};
