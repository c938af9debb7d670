/* codecs/topk.c: magnitude top-k sparsification with error accumulation,
 * 3LC's "25% / 5% sparsification" baselines (seeds/004, Section 5.1):
 * b += x; the k = max(1, ceil(R n)) largest |b| are sent and zeroed in b.
 * 3LC sends a bitmap of the chosen positions, one bit per value, and the
 * chosen values. (3LC finds its threshold from a sample; this codec selects
 * exactly, ties to the lower index, by radix selection.)
 *
 * Payload: a bitmap of ceil(n/8) bytes (bit i%8 of byte i/8 set when value
 * i is sent; unused bits zero), then the k sent values as f32 LE in index
 * order: ceil(n/8) + 4k bytes. */
#include "codec_impl.h"
#include "select.h"

#include <stdio.h>

struct topk_params {
  double ratio;
};
_Static_assert(sizeof(struct topk_params) <= CODEC_PARAMS_MAX, "params");

static void topk_init(codec_t *c) {
  CODEC_PARAMS(c, struct topk_params)->ratio = 0.05;
}

static int topk_configure(codec_t *c, const char *key, const char *value,
                          char *err, size_t errlen) {
  if (strcmp(key, "ratio") != 0)
    return codec_unknown_key("topk", key, "ratio", err, errlen);
  double r;
  if (codec_parse_double("topk", "ratio", value, 0.0, 1.0, false, &r, NULL,
                         0) != 0 ||
      r <= 0.0) {
    codec_errf(err, errlen,
               "codec topk: ratio=%s is not valid, expected a number in "
               "(0, 1]",
               value);
    return -EINVAL;
  }
  CODEC_PARAMS(c, struct topk_params)->ratio = r;
  return 0;
}

static void topk_describe(const codec_t *c, char *buf, size_t len) {
  char r[32];
  codec_fmt_double(r, sizeof r, CODEC_CPARAMS(c, struct topk_params)->ratio);
  snprintf(buf, len, "ratio=%s", r);
}

static size_t bitmap_bytes(size_t n) { return n / 8 + (n % 8 != 0); }

static size_t topk_bound(const codec_t *c, size_t n) {
  return bitmap_bytes(n) +
         4 * sel_k(CODEC_CPARAMS(c, struct topk_params)->ratio, n);
}

static ptrdiff_t topk_encode(codec_state_t *s, const float *in,
                             unsigned char *out) {
  size_t n = s->n;
  size_t k = sel_k(CODEC_CPARAMS(s->codec, struct topk_params)->ratio, n);
  float *b = s->residual;
  bool simd = codec_use_avx2(s->codec);
  uint32_t hist[2048];
  if (sel_scan(simd, b, in, n, KEY_ABS, NULL, NULL, hist) >= 0x7f800000u)
    return -EDOM;
  size_t nb = bitmap_bytes(n);
  memset(out, 0, nb);
  if (k == 0)
    return 0;
  uint32_t bucket = sel_bucket(hist, k);
  size_t ncand = 0;
  for (uint32_t i = bucket; i < 2048; i++)
    ncand += hist[i];
  /* Candidates, then the workspace for their keys. */
  uint32_t *cand = codec_scratch(s, 2 * ncand * sizeof *cand);
  if (!cand)
    return -ENOMEM;
  size_t m = sel_update_collect(simd, b, in, n, KEY_ABS, bucket, cand);
  k = sel_exact(b, KEY_ABS, cand, m, k, cand + ncand, cand);
  unsigned char *vals = out + nb;
  for (size_t j = 0; j < k; j++) {
    uint32_t i = cand[j];
    out[i / 8] |= (unsigned char)(1u << (i % 8));
    kern_storef(vals + 4 * j, b[i]);
    b[i] = 0.0f;
  }
  return (ptrdiff_t)(nb + 4 * k);
}

static int topk_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  (void)c;
  size_t nb = bitmap_bytes(n);
  if (len < nb)
    return -EBADMSG;
  if (n % 8 && (in[nb - 1] >> (n % 8)) != 0)
    return -EBADMSG; /* unused bitmap bits must be zero */
  size_t k = 0;
  for (size_t i = 0; i < nb; i++)
    k += (size_t)__builtin_popcount(in[i]);
  if ((len - nb) / 4 != k || (len - nb) % 4 != 0)
    return -EBADMSG;
  if (!add && n)
    memset(out, 0, n * sizeof *out);
  const unsigned char *vals = in + nb;
  for (size_t byte = 0; byte < nb; byte++) {
    for (unsigned bits = in[byte]; bits; bits &= bits - 1) {
      size_t i = byte * 8 + (size_t)__builtin_ctz(bits);
      if (add)
        out[i] += kern_loadf(vals);
      else
        out[i] = kern_loadf(vals);
      vals += 4;
    }
  }
  return 0;
}

/* The values sent: the bitmap's set bits, once the payload is valid. */
static ptrdiff_t topk_payload_values(const codec_t *c, const unsigned char *in,
                                     size_t len, size_t n) {
  size_t nb = bitmap_bytes(n);
  if (len < nb)
    return -EBADMSG;
  (void)c;
  size_t k = 0;
  for (size_t i = 0; i < nb; i++)
    k += (size_t)__builtin_popcount(in[i]);
  if (len != nb + 4 * k || (n % 8 && (in[nb - 1] >> (n % 8)) != 0))
    return -EBADMSG;
  return (ptrdiff_t)k;
}

static const char *const topk_settings[] = {"topk:ratio=0.25",
                                            "topk:ratio=0.05", NULL};

const struct codec_ops codec_topk_ops = {
    .info = {.name = "topk",
             .params = "ratio=R  fraction sent, in (0, 1] (default 0.05; "
                       "3LC uses 0.25 and 0.05)",
             .description = "magnitude top-k with error accumulation, bitmap + "
                            "values (3LC's sparsification baselines)",
             .settings = topk_settings},
    .init = topk_init,
    .configure = topk_configure,
    .describe = topk_describe,
    .bound = topk_bound,
    .encode_passes = 0, /* a selection: passes depend on its algorithm */
    .has_residual = true,
    .sparse = true,
    .error_bounds = kern_feedback_bounds,
    .payload_values = topk_payload_values,
    .encode = topk_encode,
    .decode = topk_decode,
};
