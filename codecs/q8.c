/* codecs/q8.c: 8-bit scalar quantization by the vector maximum.
 * Pipe-SGD (seeds/001) quantizes to 8 bits inside allreduce ("+Q"); 3LC
 * (seeds/004, Section 5.1) compares with "8-bit int", 255 levels in
 * [-127, 127] with -128 unused.
 *
 * scale = max|x| / 127 (float), q = round-half-away-from-zero(x / scale).
 * Payload: scale (f32 LE), then the n codes as int8: n + 4 bytes. */
#include "codec_impl.h"

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

static ptrdiff_t q8_encode(codec_state_t *s, const float *in,
                           unsigned char *out) {
  uint32_t mbits = kern_absmax_bits(in, s->n);
  if (mbits >= 0x7f800000u)
    return -EDOM;
  float scale = kern_bits_to_float(mbits) / 127.0f;
  kern_storef(out, scale);
  if (scale > 0.0f)
    quantize(in, (signed char *)(out + 4), s->n, scale);
  else
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

const struct codec_ops codec_q8_ops = {
    .info = {.name = "q8",
             .params = "",
             .description = "8-bit quantization by the vector max, codes "
                            "-127..127 (Pipe-SGD Q, 3LC 8-bit int)"},
    .init = q8_init,
    .configure = q8_configure,
    .describe = q8_describe,
    .bound = q8_bound,
    .encode = q8_encode,
    .decode = q8_decode,
};
