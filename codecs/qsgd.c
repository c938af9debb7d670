/* codecs/qsgd.c: QSGD stochastic quantization (Alistarh, Grubic, Li,
 * Tomioka, Vojnovic, "QSGD: Communication-Efficient SGD via Gradient
 * Quantization and Encoding", NeurIPS 2017).
 *
 * The vector is cut into buckets of D consecutive values (the last one
 * may be shorter), each quantized on its own, as the paper's experiments
 * do. With M the bucket's 2-norm and S the number of levels, value v
 * becomes (Section 3.1, Lemma 3.1)
 *
 *     Q(v) = M sgn(v) xi / S,  l = floor(|v| S / M),
 *     xi = l + 1 with probability |v| S / M - l, else l,
 *
 * which is unbiased, E Q(v) = v. This is the 2-norm quantizer the paper
 * analyses; the heuristic variant it proposes for practice scales by
 * max|v| instead (Ramezani-Kebrya et al. later named it QSGDinf), not
 * implemented here.
 *
 * Encoding: fixed width, as practical implementations do, not the paper's
 * Elias recursive coding. With w = ceil(log2(S + 1)) bits a
 * level and W = w + 1 bits a value, each bucket of m values is
 *
 *     M (f32 LE), then m fields of W bits packed LSB-first (value j at
 *     bits [jW, jW + W) of the bucket's stream; in a field the sign is
 *     bit 0, set only for a negative value with a level above 0, and the
 *     level the w bits above it), padded with zero bits to a byte:
 *     4 + ceil(mW / 8) bytes.
 *
 * The payload is the buckets in order: with n = qD + r,
 * q (4 + ceil(DW/8)) + (r ? 4 + ceil(rW/8) : 0) bytes; 0 for n = 0.
 * "b-bit QSGD" is W = b: S = 2^(b-1) - 1 uses every code of its level
 * field (2 bits: S = 1, 4 bits: S = 7, 8 bits: S = 127).
 *
 * Numerics. M is summed in double (16 partial sums in a fixed order, so
 * every build and kernel gets the same bits; squares of floats neither
 * underflow nor overflow there), rounded to float, and capped at FLT_MAX
 * where the norm of finite values exceeds it: any scale >= max|v| keeps
 * the quantizer unbiased and the levels within [0, S] (rounding is
 * monotonic, so the float M is never below max|v|). The level uses
 * r = fl(fl(|v| / M) S) <= S, the draw a uniform u = k 2^-24 from a hash
 * of (seed, step, index) as terngrad's, xi = l + (u < r - l) capped at S.
 * Decoding computes M fl(xi fl(1/S)): fl(xi fl(1/S)) <= 1, so no value
 * overflows. Input with NaN or infinity: -EDOM. */
#include "codec_impl.h"

#include <float.h>
#include <stdio.h>

struct qsgd_params {
  uint32_t levels; /* S */
  uint32_t bucket; /* D */
};
_Static_assert(sizeof(struct qsgd_params) <= CODEC_PARAMS_MAX, "params");

enum {
  LEVELS_MAX = 1 << 15,
  BUCKET_MAX = 1 << 20,
  /* Values quantized or unpacked at a time: 256 fields of W bits are 32W
   * bytes, so a chunk starts on a byte. */
  CHUNK = 256,
};

static void qsgd_init(codec_t *c) {
  struct qsgd_params *p = CODEC_PARAMS(c, struct qsgd_params);
  p->levels = 7;
  p->bucket = 512;
}

static int qsgd_configure(codec_t *c, const char *key, const char *value,
                          char *err, size_t errlen) {
  struct qsgd_params *p = CODEC_PARAMS(c, struct qsgd_params);
  long v;
  int rc;
  if (strcmp(key, "levels") == 0) {
    rc = codec_parse_int("qsgd", key, value, 1, LEVELS_MAX, &v, err, errlen);
    if (rc == 0)
      p->levels = (uint32_t)v;
    return rc;
  }
  if (strcmp(key, "bucket") == 0) {
    rc = codec_parse_int("qsgd", key, value, 1, BUCKET_MAX, &v, err, errlen);
    if (rc == 0)
      p->bucket = (uint32_t)v;
    return rc;
  }
  return codec_unknown_key("qsgd", key, "levels, bucket", err, errlen);
}

static void qsgd_describe(const codec_t *c, char *buf, size_t len) {
  const struct qsgd_params *p = CODEC_CPARAMS(c, struct qsgd_params);
  snprintf(buf, len, "levels=%u,bucket=%u", (unsigned)p->levels,
           (unsigned)p->bucket);
}

/* W: the sign bit and ceil(log2(S + 1)) level bits; 2..17. */
static unsigned field_bits(const codec_t *c) {
  uint32_t s = CODEC_CPARAMS(c, struct qsgd_params)->levels;
  unsigned w = 1;
  while ((UINT32_C(1) << w) < s + 1)
    w++;
  return 1 + w;
}

static size_t bucket_bytes(size_t m, unsigned w) {
  return 4 + (m * w + 7) / 8; /* m <= 2^20, w <= 17: no overflow */
}

static size_t payload_bytes(size_t n, size_t d, unsigned w) {
  return n / d * bucket_bytes(d, w) + (n % d ? bucket_bytes(n % d, w) : 0);
}

static size_t qsgd_bound(const codec_t *c, size_t n) {
  return payload_bytes(n, CODEC_CPARAMS(c, struct qsgd_params)->bucket,
                       field_bits(c));
}

/* Each bucket is read for its norm, then again to quantize it. A bucket
 * of up to 32 KB (8192 values; D = 512 is 2 KB) is still in the caches the
 * second time, so the vector is read from memory once; a larger one may
 * not be, and counts as read twice. */
static unsigned qsgd_encode_passes(const codec_t *c) {
  return CODEC_CPARAMS(c, struct qsgd_params)->bucket <= 8192 ? 1u : 2u;
}

/* ---- the bucket's scale ---------------------------------------------- */

/* The sum of the squares of X[0, M) in double: 16 partial sums, value i
 * into sum i % 16, then added pairwise in a fixed order. Every operation
 * is one IEEE double operation in an order the compiler may not change,
 * so each function clone gives the same bits. Not finite if and only if
 * some value is not (2^20 squares of floats stay below 2^277). */
static inline double sum_squares(const float *x, size_t m) {
  double acc[16] = {0};
  size_t i = 0;
  for (; i + 16 <= m; i += 16)
    for (size_t j = 0; j < 16; j++)
      acc[j] += (double)x[i + j] * (double)x[i + j];
  for (size_t j = 0; i + j < m; j++)
    acc[j] += (double)x[i + j] * (double)x[i + j];
  for (size_t j = 0; j < 8; j++)
    acc[j] += acc[j + 8];
  for (size_t j = 0; j < 4; j++)
    acc[j] += acc[j + 4];
  return (acc[0] + acc[2]) + (acc[1] + acc[3]);
}

/* M: the 2-norm rounded to float, capped at FLT_MAX (see the top). */
static inline float scale_of(double sum) {
  double r = sqrt(sum);
  return r >= (double)FLT_MAX ? FLT_MAX : (float)r;
}

/* ---- encoding ----------------------------------------------------------- */

/* The field of V in a bucket of scale SCALE > 0 (FS = S levels), with
 * the draw of hash input IN. */
static inline uint32_t field_of(float v, float scale, float fs, uint32_t s,
                                uint32_t in) {
  uint32_t bits = kern_float_to_bits(v);
  float a = kern_bits_to_float(bits & 0x7fffffffu);
  /* A division, not |v| fl(S / M): |v| / M <= 1 exactly, so r <= S, and
   * a value on a level (|v| = M, or dyadic fractions of it) gets r
   * exactly. */
  float r = a / scale * fs;
  int32_t l = (int32_t)r;
  float p = r - (float)l; /* exact */
  uint32_t h = kern_hash32(in);
  float u = (float)(int32_t)(h >> 8) * 0x1p-24f; /* [0, 1) */
  uint32_t q = (uint32_t)l + (u < p);
  q = q > s ? s : q; /* a guard: r <= S never asks for S + 1 */
  uint32_t neg = (bits >> 31) & (q != 0);
  return neg | q << 1;
}

/* The fields of X[0, M), values I0.. of the vector. */
static inline void quantize(const float *x, size_t m, size_t i0, float scale,
                            uint32_t s, uint32_t key, uint32_t *codes) {
  const float fs = (float)s;
  uint32_t lo = (uint32_t)i0;
  if ((uint64_t)lo + m <= UINT64_C(1) << 32) {
    /* The index's high half is the same for all: 32-bit lanes. */
    uint32_t hk = key ^ (uint32_t)((uint64_t)i0 >> 32) * 0x9e3779b9u;
    /* M <= CHUNK: a 32-bit counter, which vectorises without widening. */
    for (uint32_t j = 0; j < (uint32_t)m; j++)
      codes[j] = field_of(x[j], scale, fs, s, (lo + j) ^ hk);
  } else {
    for (size_t j = 0; j < m; j++)
      codes[j] = field_of(x[j], scale, fs, s, kern_draw_input(i0 + j, key));
  }
}

/* Fields of a width W that divides 8 (2, 4, 8), 8 / W to a byte, whole
 * bytes: with W constant, plain loops over the bytes that vectorise. */
static inline void pack_bytes(const uint32_t *codes, size_t bytes,
                              unsigned char *out, unsigned w) {
  unsigned per = 8 / w;
  for (size_t b = 0; b < bytes; b++) {
    uint32_t v = 0;
    for (unsigned j = 0; j < per; j++)
      v |= codes[per * b + j] << (j * w);
    out[b] = (unsigned char)v;
  }
}

/* Any width, any count: a 64-bit bit buffer flushed 32 bits at a time;
 * writes exactly ceil(mW/8) bytes, the padding bits zero. */
static inline void pack_any(const uint32_t *codes, size_t m, unsigned w,
                            unsigned char *out) {
  uint64_t buf = 0;
  unsigned nb = 0;
  for (size_t j = 0; j < m; j++) {
    buf |= (uint64_t)codes[j] << nb;
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

/* M fields into ceil(MW/8) bytes. */
static inline void pack(const uint32_t *codes, size_t m, unsigned w,
                        unsigned char *out) {
  size_t whole = m * w / 8; /* full bytes, when W divides 8 */
  switch (w) {
  case 2:
    pack_bytes(codes, whole, out, 2);
    break;
  case 4:
    pack_bytes(codes, whole, out, 4);
    break;
  case 8:
    pack_bytes(codes, whole, out, 8);
    break;
  default:
    whole = 0;
    break;
  }
  size_t j = whole * 8 / w; /* fields packed */
  pack_any(codes + j, m - j, w, out + whole);
}

/* One bucket, X[0, M), values I0.. of the vector, into OUT: returns its
 * 4 + ceil(MW/8) bytes, or 0 when a value is not finite. The bucket (2 KB
 * at D = 512) is read from memory for its norm, then from the cache. */
static CODEC_HOT size_t encode_bucket(const float *x, size_t m, size_t i0,
                                      uint32_t s, unsigned w, uint32_t key,
                                      unsigned char *out) {
  double sum = sum_squares(x, m);
  if (!isfinite(sum))
    return 0;
  float scale = scale_of(sum);
  kern_storef(out, scale);
  size_t len = 4 + (m * w + 7) / 8;
  unsigned char *o = out + 4;
  if (scale == 0.0f) { /* all zeros: every field 0 */
    memset(o, 0, len - 4);
    return len;
  }
  uint32_t codes[CHUNK];
  for (size_t j = 0; j < m; j += CHUNK) {
    size_t len_j = m - j < CHUNK ? m - j : CHUNK;
    quantize(x + j, len_j, i0 + j, scale, s, key, codes);
    pack(codes, len_j, w, o);
    o += (len_j * w + 7) / 8;
  }
  return len;
}

static ptrdiff_t qsgd_encode(codec_state_t *s, const float *in,
                             unsigned char *out) {
  const struct qsgd_params *p = CODEC_CPARAMS(s->codec, struct qsgd_params);
  unsigned w = field_bits(s->codec);
  uint32_t key = kern_stream_key(s->seed, s->step);
  size_t n = s->n, len = 0;
  for (size_t b = 0; b < n; b += p->bucket) {
    size_t m = n - b < p->bucket ? n - b : p->bucket;
    size_t bytes = encode_bucket(in + b, m, b, p->levels, w, key, out + len);
    /* The state holds nothing that changes (the key is a function of
     * seed and step): an error part way leaves it as it was. */
    if (!bytes)
      return -EDOM;
    len += bytes;
  }
  return (ptrdiff_t)len;
}

/* ---- decoding ----------------------------------------------------------- */

/* The inverse of pack_bytes. */
static inline void unpack_bytes(const unsigned char *in, size_t bytes,
                                uint32_t *codes, unsigned w) {
  unsigned per = 8 / w;
  uint32_t mask = (UINT32_C(1) << w) - 1;
  for (size_t b = 0; b < bytes; b++)
    for (unsigned j = 0; j < per; j++)
      codes[per * b + j] = (uint32_t)in[b] >> (j * w) & mask;
}

/* Reads exactly ceil(mW/8) bytes; returns the bits left over in the last
 * byte, which a valid payload keeps zero. */
static inline uint32_t unpack_any(const unsigned char *in, size_t m, unsigned w,
                                  uint32_t *codes) {
  uint64_t mask = (UINT64_C(1) << w) - 1;
  size_t avail = (m * w + 7) / 8;
  uint64_t buf = 0;
  unsigned nb = 0;
  for (size_t j = 0; j < m; j++) {
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
    codes[j] = (uint32_t)(buf & mask);
    buf >>= w;
    nb -= w;
  }
  return (uint32_t)buf;
}

/* M fields from ceil(MW/8) bytes; nonzero when a padding bit is set. */
static inline uint32_t unpack(const unsigned char *in, size_t m, unsigned w,
                              uint32_t *codes) {
  size_t whole = m * w / 8; /* full bytes, when W divides 8 */
  switch (w) {
  case 2:
    unpack_bytes(in, whole, codes, 2);
    break;
  case 4:
    unpack_bytes(in, whole, codes, 4);
    break;
  case 8:
    unpack_bytes(in, whole, codes, 8);
    break;
  default:
    whole = 0;
    break;
  }
  size_t j = whole * 8 / w; /* fields unpacked */
  return unpack_any(in + whole, m - j, w, codes + j);
}

/* OUT[j] (= or +=) the value of field CODES[j]; returns nonzero for a
 * field no encoder writes: a level above S, a negative zero, or any
 * nonzero field under a zero scale (every value of its bucket is 0). */
static inline uint32_t dequantize(const uint32_t *codes, size_t m, float scale,
                                  uint32_t s, float *out, bool add) {
  const float inv = 1.0f / (float)s;
  uint32_t bad = 0, any = 0;
  if (add)
    for (size_t j = 0; j < m; j++) {
      uint32_t q = codes[j] >> 1, neg = codes[j] & 1u;
      bad |= (uint32_t)(q > s) | (neg & (q == 0));
      any |= codes[j];
      float v = scale * ((float)(int32_t)q * inv);
      out[j] += kern_bits_to_float(kern_float_to_bits(v) | neg << 31);
    }
  else
    for (size_t j = 0; j < m; j++) {
      uint32_t q = codes[j] >> 1, neg = codes[j] & 1u;
      bad |= (uint32_t)(q > s) | (neg & (q == 0));
      any |= codes[j];
      float v = scale * ((float)(int32_t)q * inv);
      out[j] = kern_bits_to_float(kern_float_to_bits(v) | neg << 31);
    }
  return bad | (scale == 0.0f && any);
}

/* One bucket of M values from IN (4 + ceil(MW/8) bytes, present):
 * nonzero when it is not one an encoder writes. */
static CODEC_HOT uint32_t decode_bucket(const unsigned char *in, size_t m,
                                        uint32_t s, unsigned w, float *out,
                                        bool add) {
  uint32_t bits = kern_load32(in);
  /* A scale is a norm: finite, and not negative (nor -0). */
  if (bits >= 0x7f800000u)
    return 1;
  float scale = kern_bits_to_float(bits);
  in += 4;
  uint32_t bad = 0, codes[CHUNK];
  for (size_t j = 0; j < m; j += CHUNK) {
    size_t k = m - j < CHUNK ? m - j : CHUNK;
    bad |= unpack(in, k, w, codes);
    in += (k * w + 7) / 8;
    bad |= dequantize(codes, k, scale, s, out + j, add);
  }
  return bad;
}

static int qsgd_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  const struct qsgd_params *p = CODEC_CPARAMS(c, struct qsgd_params);
  unsigned w = field_bits(c);
  if (len != payload_bytes(n, p->bucket, w))
    return -EBADMSG;
  for (size_t b = 0; b < n; b += p->bucket) {
    size_t m = n - b < p->bucket ? n - b : p->bucket;
    if (decode_bucket(in, m, p->levels, w, out + b, add))
      return -EBADMSG;
    in += bucket_bytes(m, w);
  }
  return 0;
}

/* ---- error bounds ------------------------------------------------------- */

/* With M the bucket's scale and r = |v| S / M <= S exactly, l = floor(r),
 * the quantizer sends l or l + 1 levels of M / S: it moves v by
 * (r - l) M / S or (l + 1 - r) M / S, at most the larger, which is below
 * one level, M / S (the bound of the paper's quantizer, tighter value by
 * value). Float arithmetic adds: the encoder's r = fl(fl(|v|/M) S) is
 * within r 2^-23 + 2^-149 S of the exact r, which moves the candidate
 * levels and so the error by at most twice that, M 2^-22 + M 2^-148 in
 * value (r <= S); decoding's three roundings, M fl(xi fl(1/S)), add at
 * most M 3 2^-24 + 2^-150 (xi <= S). In all below M (2^-21 + 2^-147) +
 * 2^-150: the margin M 2^-20 + 2^-140 holds it about twice over. A bucket
 * holding NaN or infinity (which encode refuses) has no bound. */
static void qsgd_error_bounds(const codec_t *c, const float *in,
                              const float *rb, const float *ra, size_t n,
                              double *out) {
  (void)rb;
  (void)ra;
  const struct qsgd_params *p = CODEC_CPARAMS(c, struct qsgd_params);
  double s = (double)p->levels;
  for (size_t b = 0; b < n; b += p->bucket) {
    size_t m = n - b < p->bucket ? n - b : p->bucket;
    double sum = sum_squares(in + b, m);
    double scale = isfinite(sum) ? (double)scale_of(sum) : INFINITY;
    for (size_t i = b; i < b + m; i++) {
      if (!isfinite(scale)) {
        out[i] = INFINITY;
        continue;
      }
      double r = scale > 0 ? fabs((double)in[i]) * s / scale : 0;
      double l = floor(r);
      double far = r - l > l + 1 - r ? r - l : l + 1 - r;
      out[i] = (scale > 0 ? far * scale / s : 0) + scale * 0x1p-20 + 0x1p-140;
    }
  }
}

/* The paper's 2-, 4- and 8-bit QSGD (W = b above: S = 1, 7, 127), each in
 * buckets of 512 values, a bucket size its experiments use. */
static const char *const qsgd_settings[] = {"qsgd:levels=1,bucket=512",
                                            "qsgd:levels=7,bucket=512",
                                            "qsgd:levels=127,bucket=512", NULL};

const struct codec_ops codec_qsgd_ops = {
    .info = {.name = "qsgd",
             .params = "levels=S  quantization levels, integer 1..32768 "
                       "(default 7: 4 bits a value), bucket=D  values per "
                       "norm, integer 1..1048576 (default 512)",
             .description = "QSGD stochastic quantization by bucket 2-norms, "
                            "fixed-width sign + level fields (Alistarh et "
                            "al. 2017)",
             .settings = qsgd_settings},
    .init = qsgd_init,
    .configure = qsgd_configure,
    .describe = qsgd_describe,
    .bound = qsgd_bound,
    .encode_passes_of = qsgd_encode_passes,
    .error_bounds = qsgd_error_bounds,
    .encode = qsgd_encode,
    .decode = qsgd_decode,
};
