/* codecs/trunc.c: drop the N low bits of each fp32 bit pattern.
 * INCEPTIONN (seeds/000) compares with 16b-T, 22b-T and 24b-T truncation
 * (Fig. 14); Pipe-SGD (seeds/001) truncates to 16 bits inside allreduce
 * (Section 4, "+T").
 *
 * Payload: the W = 32-N high bits of every value, packed LSB-first into a
 * little-endian bit stream (value i occupies stream bits [iW, iW+W)),
 * ceil(nW/8) bytes, unused bits of the last byte zero. Decoding shifts the
 * bits back up with zeros below, which truncates toward zero. */
#include "codec_impl.h"

#include <stdio.h>

struct trunc_params {
  int bits; /* N, dropped */
};
_Static_assert(sizeof(struct trunc_params) <= CODEC_PARAMS_MAX, "params");

static void trunc_init(codec_t *c) {
  CODEC_PARAMS(c, struct trunc_params)->bits = 16;
}

static int trunc_configure(codec_t *c, const char *key, const char *value,
                           char *err, size_t errlen) {
  if (strcmp(key, "bits") != 0)
    return codec_unknown_key("trunc", key, "bits", err, errlen);
  long v;
  int rc = codec_parse_int("trunc", "bits", value, 1, 31, &v, err, errlen);
  if (rc == 0)
    CODEC_PARAMS(c, struct trunc_params)->bits = (int)v;
  return rc;
}

static void trunc_describe(const codec_t *c, char *buf, size_t len) {
  snprintf(buf, len, "bits=%d", CODEC_CPARAMS(c, struct trunc_params)->bits);
}

static size_t payload_bytes(size_t n, unsigned w) {
  /* n*w/8 rounded up, without overflowing n*w for huge n. */
  return n / 8 * w + (n % 8 * w + 7) / 8;
}

static size_t trunc_bound(const codec_t *c, size_t n) {
  unsigned w = 32u - (unsigned)CODEC_CPARAMS(c, struct trunc_params)->bits;
  return payload_bytes(n, w);
}

/* W = 16 and W = 8 are whole halves and bytes: plain vectorisable loops. */
static CODEC_HOT void pack16(const float *in, unsigned char *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint16_t h = (uint16_t)(kern_float_to_bits(in[i]) >> 16);
    memcpy(out + 2 * i, &h, 2);
  }
}
static CODEC_HOT void pack8(const float *in, unsigned char *out, size_t n) {
  for (size_t i = 0; i < n; i++)
    out[i] = (unsigned char)(kern_float_to_bits(in[i]) >> 24);
}

/* Any width: a 64-bit bit buffer, flushed 32 bits at a time. Writes exactly
 * payload_bytes(n, w) bytes. */
static CODEC_HOT void pack_any(const float *in, unsigned char *out, size_t n,
                               unsigned w) {
  unsigned shift = 32 - w;
  uint64_t buf = 0;
  unsigned nb = 0;
  size_t i = 0;
  /* Eight values fill exactly W bytes, so whole groups need no tail. */
  for (; i + 8 <= n; i += 8) {
    for (unsigned j = 0; j < 8; j++) {
      buf |= (uint64_t)(kern_float_to_bits(in[i + j]) >> shift) << nb;
      nb += w;
      if (nb >= 32) {
        kern_store32(out, (uint32_t)buf);
        out += 4;
        buf >>= 32;
        nb -= 32;
      }
    }
  }
  for (; i < n; i++) {
    buf |= (uint64_t)(kern_float_to_bits(in[i]) >> shift) << nb;
    nb += w;
    if (nb >= 32) {
      kern_store32(out, (uint32_t)buf);
      out += 4;
      buf >>= 32;
      nb -= 32;
    }
  }
  for (; nb > 0; nb = nb > 8 ? nb - 8 : 0) {
    *out++ = (unsigned char)buf;
    buf >>= 8;
  }
}

static inline void store64(unsigned char *p, uint64_t v) {
  memcpy(p, &v, 8); /* little-endian host (codec.c) */
}
static inline uint64_t load64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* W < 16: eight values are 8W bits, two 64-bit words holding four values
 * each (4W <= 60 bits) spliced together, stored as 16 bytes and advanced
 * by W. Runs while the 16-byte store fits in the payload; returns the
 * number of values packed (a multiple of 8, so the rest starts on a
 * byte). */
static size_t pack_narrow(const float *in, unsigned char *out, size_t n,
                          unsigned w) {
  unsigned shift = 32 - w;
  size_t total = payload_bytes(n, w), i = 0;
  for (size_t pos = 0; i + 8 <= n && pos + 16 <= total; i += 8, pos += w) {
    uint64_t lo = 0, hi = 0;
    for (unsigned j = 0; j < 4; j++) {
      lo |= (uint64_t)(kern_float_to_bits(in[i + j]) >> shift) << (j * w);
      hi |= (uint64_t)(kern_float_to_bits(in[i + 4 + j]) >> shift) << (j * w);
    }
    store64(out + pos, lo | hi << (4 * w));
    store64(out + pos + 8, hi >> (64 - 4 * w));
  }
  return i;
}

#if CODEC_X86
#include <immintrin.h>

/* pack_narrow on eight lanes: the W high bits of each pattern; each pair
 * of lanes (one 64-bit lane) merged into 2W bits, each pair of pairs into
 * 4W bits at the bottom of its 128-bit half, the two halves spliced into
 * 8W bits and stored as 16 bytes, as pack_narrow stores them. */
CODEC_AVX2 static size_t pack_narrow_avx2(const float *in, unsigned char *out,
                                          size_t n, unsigned w) {
  const __m128i sh_top = _mm_cvtsi32_si128((int)(32 - w));
  const __m128i sh_w = _mm_cvtsi32_si128((int)w);
  const __m128i sh_2w = _mm_cvtsi32_si128((int)(2 * w));
  const __m128i sh_4w = _mm_cvtsi32_si128((int)(4 * w));
  const __m128i sh_rest = _mm_cvtsi32_si128((int)(64 - 4 * w));
  const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
  size_t total = payload_bytes(n, w), i = 0;
  for (size_t pos = 0; i + 8 <= n && pos + 16 <= total; i += 8, pos += w) {
    __m256i v = _mm256_srl_epi32(
        _mm256_loadu_si256((const __m256i *)(const void *)(in + i)), sh_top);
    /* Odd lane's bits after the even lane's: the odd one shifted down
     * from bit 32 to bit W (the even lane, below 2^W, shifts out). */
    __m256i pair = _mm256_or_si256(
        _mm256_and_si256(v, low32),
        _mm256_srl_epi64(v, _mm_sub_epi64(_mm_cvtsi32_si128(32), sh_w)));
    __m256i quad = _mm256_or_si256(
        pair, _mm256_sll_epi64(_mm256_bsrli_epi128(pair, 8), sh_2w));
    __m128i a = _mm256_castsi256_si128(quad);
    __m128i b = _mm256_extracti128_si256(quad, 1);
    /* 8W bits: A's 4W, then B's from bit 4W on, over the 64-bit halves. */
    __m128i lo = _mm_or_si128(a, _mm_sll_epi64(b, sh_4w));
    __m128i hi = _mm_bslli_si128(_mm_srl_epi64(b, sh_rest), 8);
    _mm_storeu_si128((__m128i *)(void *)(out + pos),
                     _mm_or_si128(_mm_move_epi64(lo), hi));
  }
  return i;
}
#endif

static ptrdiff_t trunc_encode(codec_state_t *s, const float *in,
                              unsigned char *out) {
  unsigned w =
      32u - (unsigned)CODEC_CPARAMS(s->codec, struct trunc_params)->bits;
  size_t n = s->n;
  if (w == 16) {
    pack16(in, out, n);
  } else if (w == 8) {
    pack8(in, out, n);
  } else {
    size_t done = 0;
#if CODEC_X86
    if (w < 16 && codec_use_avx2(s->codec))
      done = pack_narrow_avx2(in, out, n, w);
    else
#endif
        if (w < 16)
      done = pack_narrow(in, out, n, w);
    pack_any(in + done, out + done / 8 * w, n - done, w);
  }
  return (ptrdiff_t)payload_bytes(n, w);
}

static CODEC_HOT void unpack16(const unsigned char *in, float *out, size_t n,
                               bool add) {
  if (add)
    for (size_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, in + 2 * i, 2);
      out[i] += kern_bits_to_float((uint32_t)h << 16);
    }
  else
    for (size_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, in + 2 * i, 2);
      out[i] = kern_bits_to_float((uint32_t)h << 16);
    }
}

static CODEC_HOT void unpack8(const unsigned char *in, float *out, size_t n,
                              bool add) {
  if (add)
    for (size_t i = 0; i < n; i++)
      out[i] += kern_bits_to_float((uint32_t)in[i] << 24);
  else
    for (size_t i = 0; i < n; i++)
      out[i] = kern_bits_to_float((uint32_t)in[i] << 24);
}

/* Reads exactly payload_bytes(n, w) bytes; returns the unused high bits of
 * the last byte, which a valid payload keeps zero. */
static CODEC_HOT unsigned unpack_any(const unsigned char *in, float *out,
                                     size_t n, unsigned w, bool add) {
  unsigned shift = 32 - w;
  uint64_t mask = (UINT64_C(1) << w) - 1;
  size_t avail = payload_bytes(n, w);
  uint64_t buf = 0;
  unsigned nb = 0;
  for (size_t i = 0; i < n; i++) {
    if (nb < w) {
      if (avail >= 4) {
        buf |= (uint64_t)kern_load32(in) << nb;
        in += 4;
        avail -= 4;
        nb += 32;
      } else {
        while (nb < w && avail > 0) {
          buf |= (uint64_t)*in++ << nb;
          avail--;
          nb += 8;
        }
      }
    }
    float v = kern_bits_to_float((uint32_t)(buf & mask) << shift);
    buf >>= w;
    nb -= w;
    if (add)
      out[i] += v;
    else
      out[i] = v;
  }
  return (unsigned)buf;
}

/* The inverse of pack_narrow: while 16 bytes can be loaded, eight values
 * from two 64-bit words. Returns the number of values done. */
static size_t unpack_narrow(const unsigned char *in, float *out, size_t n,
                            unsigned w, bool add) {
  unsigned shift = 32 - w;
  uint64_t m4 = (UINT64_C(1) << (4 * w)) - 1, m1 = (UINT64_C(1) << w) - 1;
  size_t total = payload_bytes(n, w), i = 0;
  for (size_t pos = 0; i + 8 <= n && pos + 16 <= total; i += 8, pos += w) {
    uint64_t a = load64(in + pos), b = load64(in + pos + 8);
    uint64_t lo = a & m4, hi = (a >> (4 * w) | b << (64 - 4 * w)) & m4;
    for (unsigned j = 0; j < 4; j++) {
      float v0 = kern_bits_to_float((uint32_t)((lo >> (j * w)) & m1) << shift);
      float v1 = kern_bits_to_float((uint32_t)((hi >> (j * w)) & m1) << shift);
      if (add) {
        out[i + j] += v0;
        out[i + 4 + j] += v1;
      } else {
        out[i + j] = v0;
        out[i + 4 + j] = v1;
      }
    }
  }
  return i;
}

#if CODEC_X86
#include <immintrin.h>

/* unpack_narrow on eight lanes: value j starts at bit jW, in bytes
 * jW/8 .. jW/8 + 2 (a shift of at most 7 plus W <= 15 bits); one byte
 * shuffle brings those bytes to lane j, a variable shift aligns them. */
CODEC_AVX2 static size_t unpack_narrow_avx2(const unsigned char *in, float *out,
                                            size_t n, unsigned w, bool add) {
  unsigned char mask[32];
  int32_t sh[8];
  for (unsigned j = 0; j < 8; j++) {
    unsigned o = j * w, lane = (j % 4) * 4 + (j / 4) * 16;
    for (unsigned k = 0; k < 4; k++)
      mask[lane + k] = k < 3 ? (unsigned char)(o / 8 + k) : 0x80;
    sh[j] = (int32_t)(o % 8);
  }
  const __m256i shuf = _mm256_loadu_si256((const __m256i *)(void *)mask);
  const __m256i shifts = _mm256_loadu_si256((const __m256i *)(void *)sh);
  const __m256i fieldm = _mm256_set1_epi32((int)((1u << w) - 1));
  const __m128i up = _mm_cvtsi32_si128((int)(32 - w));
  size_t total = payload_bytes(n, w), i = 0;
  for (size_t pos = 0; i + 8 <= n && pos + 16 <= total; i += 8, pos += w) {
    __m256i d = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(const void *)(in + pos)));
    __m256i f = _mm256_srlv_epi32(_mm256_shuffle_epi8(d, shuf), shifts);
    f = _mm256_sll_epi32(_mm256_and_si256(f, fieldm), up);
    __m256 v = _mm256_castsi256_ps(f);
    if (add)
      v = _mm256_add_ps(_mm256_loadu_ps(out + i), v);
    _mm256_storeu_ps(out + i, v);
  }
  return i;
}
#endif

static int trunc_decode(const codec_t *c, const unsigned char *in, size_t len,
                        float *out, size_t n, bool add) {
  unsigned w = 32u - (unsigned)CODEC_CPARAMS(c, struct trunc_params)->bits;
  if (len != payload_bytes(n, w))
    return -EBADMSG;
  if (w == 16) {
    unpack16(in, out, n, add);
  } else if (w == 8) {
    unpack8(in, out, n, add);
  } else {
    size_t done = 0;
#if CODEC_X86
    if (w < 16 && codec_use_avx2(c))
      done = unpack_narrow_avx2(in, out, n, w, add);
    else
#endif
        if (w < 16)
      done = unpack_narrow(in, out, n, w, add);
    if (unpack_any(in + done / 8 * w, out + done, n - done, w, add) != 0)
      return -EBADMSG; /* padding bits must be zero */
  }
  return 0;
}

/* Dropping N low bits of a bit pattern moves |x| towards zero by less
 * than 2^N ulps: 2^(N-23) of |x| for normal values, 2^(N-149) below; and
 * never past zero, so at most |x| (with N > 23 the exponent loses bits). */
static void trunc_error_bounds(const codec_t *c, const float *in,
                               const float *rb, const float *ra, size_t n,
                               double *out) {
  (void)rb;
  (void)ra;
  int bits = CODEC_CPARAMS(c, struct trunc_params)->bits;
  double rel = ldexp(1.0, bits - 23), sub = ldexp(1.0, bits - 149);
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)in[i]);
    double e = x * rel + sub;
    out[i] = !isfinite(x) ? INFINITY : e < x ? e : x;
  }
}

static const char *const trunc_settings[] = {
    "trunc:bits=16", "trunc:bits=22", "trunc:bits=24", NULL};

const struct codec_ops codec_trunc_ops = {
    .info = {.name = "trunc",
             .params = "bits=N  low bits dropped, integer 1..31 (default 16)",
             .description = "fp32 with the N low bits dropped (INCEPTIONN "
                            "xb-T baselines, Pipe-SGD 16-bit truncation)",
             .settings = trunc_settings},
    .init = trunc_init,
    .configure = trunc_configure,
    .describe = trunc_describe,
    .bound = trunc_bound,
    .encode_passes = 1,
    .error_bounds = trunc_error_bounds,
    .encode = trunc_encode,
    .decode = trunc_decode,
};
