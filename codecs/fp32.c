/* codecs/fp32.c: the identity, the uncompressed baseline. */
#include "codec_impl.h"

static void fp32_init(codec_t *c) { (void)c; }

static int fp32_configure(codec_t *c, const char *key, const char *value,
                          char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("fp32", key, "", err, errlen);
}

static void fp32_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}

static size_t fp32_bound(const codec_t *c, size_t n) {
  (void)c;
  return 4 * n;
}

static ptrdiff_t fp32_encode(codec_state_t *s, const float *in,
                             unsigned char *out) {
  /* An empty vector may come with NULL pointers; memcpy must not see them. */
  if (s->n)
    memcpy(out, in, 4 * s->n);
  return (ptrdiff_t)(4 * s->n);
}

static CODEC_HOT void add_floats(float *acc, const unsigned char *in,
                                 size_t n) {
  for (size_t i = 0; i < n; i++) {
    float v;
    memcpy(&v, in + 4 * i, sizeof v);
    acc[i] += v;
  }
}

static int fp32_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  (void)c;
  if (len != 4 * n)
    return -EBADMSG;
  if (add)
    add_floats(out, in, n);
  else if (n)
    memcpy(out, in, 4 * n);
  return 0;
}

const struct codec_ops codec_fp32_ops = {
    .info = {.name = "fp32",
             .params = "",
             .description = "32-bit float, uncompressed (the baseline of "
                            "every seed paper)"},
    .init = fp32_init,
    .configure = fp32_configure,
    .describe = fp32_describe,
    .bound = fp32_bound,
    .sum_bytes = 4,
    .encode_passes = 1,
    .lossless = true,
    .encode = fp32_encode,
    .decode = fp32_decode,
};
