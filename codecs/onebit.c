/* codecs/onebit.c: 1-bit quantization with error feedback (Seide et al.,
 * "1-bit SGD", 2014), 3LC's "MQE 1-bit int" baseline (seeds/004, Sections
 * 3.1 and 5.1): b += x; values >= 0 decode to the mean of b's non-negative
 * values and negative ones to the mean of its negative values (the two
 * levels that minimise the squared error); b -= out.
 *
 * Payload: the non-negative mean and the negative mean (f32 LE each), then
 * a bitmap of ceil(n/8) bytes, bit i%8 of byte i/8 set when value i is
 * non-negative, unused bits zero: ceil(n/8) + 8 bytes. */
#include "codec_impl.h"

static void ob_init(codec_t *c) { (void)c; }

static int ob_configure(codec_t *c, const char *key, const char *value,
                        char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("onebit", key, "", err, errlen);
}

static void ob_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}

static size_t bitmap_bytes(size_t n) { return n / 8 + (n % 8 != 0); }

static size_t ob_bound(const codec_t *c, size_t n) {
  (void)c;
  return bitmap_bytes(n) + 8;
}

enum { LANES = 8 };

/* Sums of the non-negative and negative parts of b + x and the count of
 * the non-negative ones. Element i goes to lane i % 8 (the tail to lane 0)
 * and the lanes are summed in order, so the AVX2 twin gets the same
 * doubles. A sum of finite floats cannot overflow a double (n < 2^900), so
 * b + x holds NaN or infinity if and only if a sum is not finite. */
struct moments {
  double lp[LANES], ln[LANES];
  size_t cp;
};

static void moments_tail(const float *b, const float *x, size_t i, size_t n,
                         struct moments *m) {
  for (; i < n; i++) {
    float v = b[i] + x[i];
    int pos = v >= 0.0f;
    m->lp[0] += pos ? (double)v : 0.0;
    m->ln[0] += pos ? 0.0 : (double)v;
    m->cp += (size_t)pos;
  }
}

static void moments_portable(const float *b, const float *x, size_t n,
                             struct moments *m) {
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) {
      float v = b[i + j] + x[i + j];
      int pos = v >= 0.0f;
      m->lp[j] += pos ? (double)v : 0.0;
      m->ln[j] += pos ? 0.0 : (double)v;
      m->cp += (size_t)pos;
    }
  moments_tail(b, x, i, n, m);
}

static void quantize_portable(float *b, const float *x, size_t n, float mp,
                              float mn, unsigned char *bits) {
  for (size_t i = 0; i < n; i += 8) {
    unsigned byte = 0;
    for (unsigned j = 0; j < 8 && i + j < n; j++) {
      float v = b[i + j] + x[i + j];
      unsigned pos = v >= 0.0f;
      b[i + j] = v - (pos ? mp : mn);
      byte |= pos << j;
    }
    bits[i / 8] = (unsigned char)byte;
  }
}

#if CODEC_X86
#include <immintrin.h>

/* The count of non-negative values is kept in eight 32-bit lanes (each
 * lane's mask, -1, subtracted), added up every 2^28 groups of eight, before
 * a lane could wrap. */
CODEC_AVX2 static void moments_avx2(const float *b, const float *x, size_t n,
                                    struct moments *m) {
  __m256d p0 = _mm256_setzero_pd(), p1 = p0, q0 = p0, q1 = p0;
  const __m256 zero = _mm256_setzero_ps();
  const __m256d dzero = _mm256_setzero_pd();
  size_t cp = 0, i = 0;
  while (i + LANES <= n) {
    size_t end = n - i < ((size_t)LANES << 28) ? n : i + ((size_t)LANES << 28);
    __m256i cnt = _mm256_setzero_si256();
    for (; i + LANES <= end; i += LANES) {
      __m256 v = _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_loadu_ps(x + i));
      cnt = _mm256_sub_epi32(
          cnt, _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_GE_OQ)));
      /* Converted once and split in double: the double of v compares
       * with zero as v does (the sign and NaN kept), and the lane that is
       * not added gets +0.0 either way. */
      __m256d d0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
      __m256d d1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      __m256d pos0 = _mm256_cmp_pd(d0, dzero, _CMP_GE_OQ);
      __m256d pos1 = _mm256_cmp_pd(d1, dzero, _CMP_GE_OQ);
      p0 = _mm256_add_pd(p0, _mm256_and_pd(d0, pos0));
      p1 = _mm256_add_pd(p1, _mm256_and_pd(d1, pos1));
      q0 = _mm256_add_pd(q0, _mm256_andnot_pd(pos0, d0));
      q1 = _mm256_add_pd(q1, _mm256_andnot_pd(pos1, d1));
    }
    uint32_t c[8];
    _mm256_storeu_si256((__m256i *)(void *)c, cnt);
    for (int j = 0; j < 8; j++)
      cp += c[j];
  }
  _mm256_storeu_pd(m->lp, p0);
  _mm256_storeu_pd(m->lp + 4, p1);
  _mm256_storeu_pd(m->ln, q0);
  _mm256_storeu_pd(m->ln + 4, q1);
  m->cp = cp;
  moments_tail(b, x, i, n, m);
}

CODEC_AVX2 static size_t quantize_avx2(float *b, const float *x, size_t n,
                                       float mp, float mn,
                                       unsigned char *bits) {
  const __m256 vp = _mm256_set1_ps(mp), vn = _mm256_set1_ps(mn);
  const __m256 zero = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_loadu_ps(x + i));
    __m256 pos = _mm256_cmp_ps(v, zero, _CMP_GE_OQ);
    _mm256_storeu_ps(b + i, _mm256_sub_ps(v, _mm256_blendv_ps(vn, vp, pos)));
    bits[i / 8] = (unsigned char)_mm256_movemask_ps(pos);
  }
  return i;
}

CODEC_AVX2 static size_t expand_avx2(const unsigned char *bits, float *out,
                                     size_t n, float mp, float mn, bool add) {
  const __m256 vp = _mm256_set1_ps(mp), vn = _mm256_set1_ps(mn);
  const __m256i sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i m = _mm256_and_si256(_mm256_set1_epi32(bits[i / 8]), sel);
    __m256 pos = _mm256_castsi256_ps(_mm256_cmpeq_epi32(m, sel));
    __m256 v = _mm256_blendv_ps(vn, vp, pos);
    if (add)
      v = _mm256_add_ps(_mm256_loadu_ps(out + i), v);
    _mm256_storeu_ps(out + i, v);
  }
  return i;
}
#endif

static ptrdiff_t ob_encode(codec_state_t *s, const float *in,
                           unsigned char *out) {
  size_t n = s->n;
  bool avx2 = codec_use_avx2(s->codec);
  struct moments m = {{0}, {0}, 0};
#if CODEC_X86
  if (avx2)
    moments_avx2(s->residual, in, n, &m);
  else
#endif
    moments_portable(s->residual, in, n, &m);
  double sp = 0, sn = 0;
  for (int j = 0; j < LANES; j++) {
    sp += m.lp[j];
    sn += m.ln[j];
  }
  if (!isfinite(sp) || !isfinite(sn))
    return -EDOM;
  size_t cp = m.cp, cn = n - cp;
  float mp = cp ? (float)(sp / (double)cp) : 0.0f;
  float mn = cn ? (float)(sn / (double)cn) : 0.0f;
  kern_storef(out, mp);
  kern_storef(out + 4, mn);
  size_t done = 0;
#if CODEC_X86
  if (avx2)
    done = quantize_avx2(s->residual, in, n, mp, mn, out + 8);
#endif
  quantize_portable(s->residual + done, in + done, n - done, mp, mn,
                    out + 8 + done / 8);
  return (ptrdiff_t)(8 + bitmap_bytes(n));
}

static void expand(const unsigned char *bits, float *out, size_t n, float mp,
                   float mn, bool add) {
  for (size_t i = 0; i < n; i++) {
    float v = (bits[i / 8] >> (i % 8)) & 1u ? mp : mn;
    if (add)
      out[i] += v;
    else
      out[i] = v;
  }
}

static int ob_decode(const codec_t *c, const unsigned char *in, size_t len,
                     float *out, size_t n, bool add) {
  size_t nb = bitmap_bytes(n);
  if (len != nb + 8)
    return -EBADMSG;
  if (n % 8 && (in[len - 1] >> (n % 8)) != 0)
    return -EBADMSG; /* unused bits must be zero */
  float mp = kern_loadf(in), mn = kern_loadf(in + 4);
  size_t done = 0;
#if CODEC_X86
  if (codec_use_avx2(c))
    done = expand_avx2(in + 8, out, n, mp, mn, add);
#else
  (void)c;
#endif
  expand(in + 8 + done / 8, out + done, n - done, mp, mn, add);
  return 0;
}

const struct codec_ops codec_onebit_ops = {
    .info = {.name = "onebit",
             .params = "",
             .description = "1-bit quantization to the two sign means, with "
                            "error feedback (Seide; 3LC's MQE 1-bit int)"},
    .init = ob_init,
    .configure = ob_configure,
    .describe = ob_describe,
    .bound = ob_bound,
    .encode_passes = 2, /* the means of b + x, then the bits and b -= out */
    .has_residual = true,
    .error_bounds = kern_feedback_bounds,
    .encode = ob_encode,
    .decode = ob_decode,
};
