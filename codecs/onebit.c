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

/* Sums and counts of the non-negative and negative parts of b + x, in
 * fixed lanes summed in a fixed order (identical in every clone), and the
 * largest magnitude as bits (for the NaN/infinity check). */
static CODEC_HOT uint32_t moments(const float *b, const float *x, size_t n,
                                  double *sp, double *sn, size_t *cp) {
  double p[LANES] = {0}, q[LANES] = {0};
  size_t c[LANES] = {0};
  uint32_t a[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) {
      float v = b[i + j] + x[i + j];
      int pos = v >= 0.0f;
      p[j] += pos ? (double)v : 0.0;
      q[j] += pos ? 0.0 : (double)v;
      c[j] += (size_t)pos;
      uint32_t u = kern_float_to_bits(v) & 0x7fffffffu;
      a[j] = u > a[j] ? u : a[j];
    }
  for (; i < n; i++) {
    float v = b[i] + x[i];
    int pos = v >= 0.0f;
    p[0] += pos ? (double)v : 0.0;
    q[0] += pos ? 0.0 : (double)v;
    c[0] += (size_t)pos;
    uint32_t u = kern_float_to_bits(v) & 0x7fffffffu;
    a[0] = u > a[0] ? u : a[0];
  }
  double tp = 0, tq = 0;
  size_t tc = 0;
  uint32_t ta = 0;
  for (int j = 0; j < LANES; j++) {
    tp += p[j];
    tq += q[j];
    tc += c[j];
    ta = a[j] > ta ? a[j] : ta;
  }
  *sp = tp;
  *sn = tq;
  *cp = tc;
  return ta;
}

static CODEC_HOT void quantize(float *b, const float *x, size_t n, float mp,
                               float mn, unsigned char *bits) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    unsigned byte = 0;
    for (unsigned j = 0; j < 8; j++) {
      float v = b[i + j] + x[i + j];
      unsigned pos = v >= 0.0f;
      b[i + j] = v - (pos ? mp : mn);
      byte |= pos << j;
    }
    bits[i / 8] = (unsigned char)byte;
  }
  if (i < n) {
    unsigned byte = 0;
    for (unsigned j = 0; i + j < n; j++) {
      float v = b[i + j] + x[i + j];
      unsigned pos = v >= 0.0f;
      b[i + j] = v - (pos ? mp : mn);
      byte |= pos << j;
    }
    bits[i / 8] = (unsigned char)byte;
  }
}

static ptrdiff_t ob_encode(codec_state_t *s, const float *in,
                           unsigned char *out) {
  size_t n = s->n;
  double sp, sn;
  size_t cp;
  if (moments(s->residual, in, n, &sp, &sn, &cp) >= 0x7f800000u)
    return -EDOM;
  size_t cn = n - cp;
  float mp = cp ? (float)(sp / (double)cp) : 0.0f;
  float mn = cn ? (float)(sn / (double)cn) : 0.0f;
  kern_storef(out, mp);
  kern_storef(out + 4, mn);
  quantize(s->residual, in, n, mp, mn, out + 8);
  return (ptrdiff_t)(8 + bitmap_bytes(n));
}

static CODEC_HOT void expand(const unsigned char *bits, float *out, size_t n,
                             float mp, float mn, bool add) {
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
  (void)c;
  size_t nb = bitmap_bytes(n);
  if (len != nb + 8)
    return -EBADMSG;
  if (n % 8 && (in[len - 1] >> (n % 8)) != 0)
    return -EBADMSG; /* unused bits must be zero */
  expand(in + 8, out, n, kern_loadf(in), kern_loadf(in + 4), add);
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
    .has_residual = true,
    .encode = ob_encode,
    .decode = ob_decode,
};
