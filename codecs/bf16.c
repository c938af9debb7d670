/* codecs/bf16.c: bfloat16, round to nearest even, as a codec: the cast a
 * bucket takes in PyTorch DDP's bf16_compress_hook (with [exchange]
 * compression = per-bucket: cast once, allreduced in bf16, cast back),
 * or at every hop of a ring that re-encodes partial sums (per-hop,
 * INCEPTIONN's way). Gradients that are bf16 already travel without a
 * codec ([model] grad_dtype = bf16). The format is fp32's sign, its 8
 * exponent bits and the top 7 of its 23 fraction bits (Intel, "BFLOAT16 -
 * Hardware Numerics Definition", 2018; Kalamkar et al., "A Study of
 * BFLOAT16 for Deep Learning Training", 2019), so a bf16 is the top half
 * of an fp32 bit pattern and decoding shifts it back up.
 *
 * Encoding rounds the dropped 16 bits to nearest even with one integer add
 * (the rounding bias 0x7fff plus the lowest kept bit): a carry out of the
 * fraction bumps the exponent, so values at or beyond the midpoint between
 * the largest finite bf16 and 2^128 become infinity, as IEEE rounding
 * requires. That is the rounding of Intel's definition and of its
 * VCVTNEPS2BF16 instruction, with two differences written down here:
 * subnormals are rounded like every other value instead of flushed to zero
 * (bf16 has fp32's exponent range, so the add is exact RNE there too), and
 * NaN is quieted as the instruction does (the top 16 bits with fraction
 * bit 6 set), so that no NaN payload can read as infinity.
 *
 * Payload: the n bf16 values, 2 bytes each, little-endian: 2n bytes. */
#include "codec_impl.h"

static inline uint16_t f32_to_bf16(uint32_t u) {
  uint32_t rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  uint32_t nan = (u >> 16) | 0x40u;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rne);
}

static void bf16_init(codec_t *c) { (void)c; }

static int bf16_configure(codec_t *c, const char *key, const char *value,
                          char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("bf16", key, "", err, errlen);
}

static void bf16_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}

static size_t bf16_bound(const codec_t *c, size_t n) {
  (void)c;
  return 2 * n;
}

/* Branch-free integer arithmetic and a select: GCC vectorises both loops
 * (AVX2 in the x86-64-v3 clone), and the clones compute the same bits. */
static CODEC_HOT void encode_loop(const float *in, unsigned char *out,
                                  size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h = f32_to_bf16(kern_float_to_bits(in[i]));
    memcpy(out + 2 * i, &h, sizeof h);
  }
}

#if CODEC_X86
#include <immintrin.h>

/* f32_to_bf16 on eight lanes, two vectors at a time, narrowed to 16 bits
 * by one pack (every result is below 2^16) and a permute that restores
 * the order the pack mixes across the 128-bit halves. Returns the values
 * done. */
CODEC_AVX2 static size_t encode_avx2(const float *in, unsigned char *out,
                                     size_t n) {
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  const __m256i absm = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i h[2];
    for (int k = 0; k < 2; k++) {
      __m256i u =
          _mm256_loadu_si256((const __m256i *)(const void *)(in + i + 8 * k));
      __m256i top = _mm256_srli_epi32(u, 16);
      __m256i rne =
          _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, bias),
                                             _mm256_and_si256(top, one)),
                            16);
      __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absm), inf);
      h[k] = _mm256_blendv_epi8(rne, _mm256_or_si256(top, quiet), nan);
    }
    _mm256_storeu_si256(
        (__m256i *)(void *)(out + 2 * i),
        _mm256_permute4x64_epi64(_mm256_packus_epi32(h[0], h[1]), 0xd8));
  }
  return i;
}
#endif

static ptrdiff_t bf16_encode(codec_state_t *s, const float *in,
                             unsigned char *out) {
  size_t done = 0;
#if CODEC_X86
  if (codec_use_avx2(s->codec))
    done = encode_avx2(in, out, s->n);
#endif
  encode_loop(in + done, out + 2 * done, s->n - done);
  return (ptrdiff_t)(2 * s->n);
}

static CODEC_HOT void decode_loop(const unsigned char *in, float *out,
                                  size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, in + 2 * i, sizeof h);
    out[i] = kern_bits_to_float((uint32_t)h << 16);
  }
}

static CODEC_HOT void decode_add_loop(const unsigned char *in, float *out,
                                      size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    memcpy(&h, in + 2 * i, sizeof h);
    out[i] += kern_bits_to_float((uint32_t)h << 16);
  }
}

/* Every 16-bit pattern is a bf16: only the length can be wrong. */
static int bf16_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  (void)c;
  if (len != 2 * n)
    return -EBADMSG;
  if (add)
    decode_add_loop(in, out, n);
  else
    decode_loop(in, out, n);
  return 0;
}

/* Round to nearest even moves a value by at most half a bf16 ulp. bf16
 * keeps 8 significant bits, so for |x| in the binade [2^e, 2^(e+1)),
 * e >= -126, the ulp is 2^(e-7) and half of it 2^(e-8) <= |x| 2^-8
 * (rounding up into the next binade moves |x| by no more). Below 2^-126
 * the spacing is that of the smallest binade, 2^-126 2^-7 = 2^-133, and
 * half of it 2^-134. Hence |bf16(x) - x| <= |x| 2^-8 + 2^-134 for every x
 * that rounds to a finite value; both terms and their sum are exact in
 * double, and so is the oracle's |decode - x| of two floats. The largest
 * finite bf16 is (2 - 2^-7) 2^127; from the midpoint (2 - 2^-8) 2^127 =
 * 0x1.ffp127 on (a tie there goes to the even 2^128) x rounds to
 * infinity: no bound, nor for a value that is not finite. */
static void bf16_error_bounds(const codec_t *c, const float *in,
                              const float *rb, const float *ra, size_t n,
                              double *out) {
  (void)c;
  (void)rb;
  (void)ra;
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)in[i]);
    out[i] = x < 0x1.ffp127 ? x * 0x1p-8 + 0x1p-134 : INFINITY;
  }
}

const struct codec_ops codec_bf16_ops = {
    .info = {.name = "bf16",
             .params = "",
             .description = "bfloat16, round to nearest even (Intel BF16 "
                            "numerics): DDP's bf16_compress_hook per "
                            "bucket; native bf16 gradients are "
                            "grad_dtype = bf16"},
    .init = bf16_init,
    .configure = bf16_configure,
    .describe = bf16_describe,
    .bound = bf16_bound,
    .sum_bytes = 2,
    .encode_passes = 1,
    .error_bounds = bf16_error_bounds,
    .encode = bf16_encode,
    .decode = bf16_decode,
};
