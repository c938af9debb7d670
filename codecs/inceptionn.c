/* codecs/inceptionn.c: INCEPTIONN's lossy float compression (seeds/000,
 * Algorithm 2 compresses, Algorithm 3 decompresses).
 *
 * Reading of Algorithm 2 (its rounding brackets are lost in the text):
 * with error bound 2^E and b = 127 + E, a value with exponent e keeps
 *   32 bits   if e >= 127               (|x| >= 1, inf, NaN)
 *    0 bits   if e <  b                 (|x| < 2^E)
 *   16 bits   if e >= b + (-E)/2        (integer division)
 *    8 bits   otherwise.
 * The 8 and 16-bit fields are the sign and the top 7 or 15 bits of
 * concat(1, m) >> (127 - e), that is floor(|x| 2^7) or floor(|x| 2^15);
 * Algorithm 3 renormalises them, which is the same as multiplying back by
 * 2^-7 or 2^-15. A field with no bit set after the sign decodes to zero
 * (with the sign kept, so -0.0 for a negative value).
 *
 * Layout in inceptionn.h. Encoding and decoding run in blocks: a
 * vectorisable pass classifies (or converts) a block of values, and a
 * short serial pass packs (or unpacks) the variable-length fields with
 * unconditional 4-byte stores (loads) that advance by the field length. */
#include "inceptionn.h"

#include "codec_impl.h"

#include <stdio.h>

struct inc_params {
  int eb; /* E: the error bound is 2^E */
};
_Static_assert(sizeof(struct inc_params) <= CODEC_PARAMS_MAX, "params");

enum { BLOCK = 2048 }; /* values per block; a multiple of 8 */

static void inc_init(codec_t *c) {
  CODEC_PARAMS(c, struct inc_params)->eb = -10;
}

static int inc_configure(codec_t *c, const char *key, const char *value,
                         char *err, size_t errlen) {
  if (strcmp(key, "eb") != 0)
    return codec_unknown_key("inceptionn", key, "eb", err, errlen);
  /* Accept the exponent ("-10") or the bound written as a power of two
   * ("2^-10"). */
  const char *num = strncmp(value, "2^", 2) == 0 ? value + 2 : value;
  long v;
  if (codec_parse_int("inceptionn", "eb", num, -126, -1, &v, NULL, 0) != 0) {
    codec_errf(err, errlen,
               "codec inceptionn: eb=%s is not valid, expected the error "
               "bound's exponent E in [-126, -1], written E or 2^E "
               "(e.g. eb=-10 or eb=2^-10)",
               value);
    return -EINVAL;
  }
  CODEC_PARAMS(c, struct inc_params)->eb = (int)v;
  return 0;
}

static void inc_describe(const codec_t *c, char *buf, size_t len) {
  snprintf(buf, len, "eb=%d", CODEC_CPARAMS(c, struct inc_params)->eb);
}

static size_t tag_bytes(size_t r) { return (2 * r + 7) / 8; }

static size_t inc_bound(const codec_t *c, size_t n) {
  (void)c;
  size_t r = n % 8;
  return n / 8 * 34 + (r ? tag_bytes(r) + 4 * r : 0);
}

unsigned inceptionn_classify(uint32_t bits, int eb) {
  int e = (int)((bits >> 23) & 0xffu);
  int lo = 127 + eb;
  if (e >= 127)
    return INCEPTIONN_32BIT;
  if (e < lo)
    return INCEPTIONN_0BIT;
  return e >= lo + (-eb) / 2 ? INCEPTIONN_16BIT : INCEPTIONN_8BIT;
}

/* Tag and field (in the low bytes of a 32-bit word) of every value. */
static CODEC_HOT void classify(const float *in, size_t m, int lo, int hi16,
                               unsigned char *tag, uint32_t *field) {
  for (size_t i = 0; i < m; i++) {
    uint32_t u = kern_float_to_bits(in[i]);
    int e = (int)((u >> 23) & 0xffu);
    uint32_t sign = u >> 31;
    /* concat(1, m) >> (127 - e); a shift of 24 or more leaves 0. */
    int sh = 127 - e;
    sh = sh < 0 ? 0 : sh > 31 ? 31 : sh;
    uint32_t shifted = ((u & 0x7fffffu) | 0x800000u) >> sh;
    uint32_t f16 = sign << 15 | ((shifted >> 8) & 0x7fffu);
    uint32_t f8 = sign << 7 | ((shifted >> 16) & 0x7fu);
    unsigned t = e >= 127 ? 3u : e < lo ? 0u : e >= hi16 ? 2u : 1u;
    tag[i] = (unsigned char)t;
    field[i] = t == 3 ? u : t == 2 ? f16 : t == 1 ? f8 : 0u;
  }
}

static inline unsigned tagword(const unsigned char *t, size_t r) {
  unsigned w = 0;
  for (size_t j = 0; j < r; j++)
    w |= (unsigned)t[j] << (2 * j);
  return w;
}

/* Portable packing of M values, M a multiple of 8: classify a block, then
 * store each field with a 4-byte store advanced by its length. Every full
 * group needs at most 34 bytes and the payload so far is at most the worst
 * case of the groups so far, so the over-long stores stay inside a buffer
 * of bound(n) bytes. */
static unsigned char *pack_portable(const float *in, size_t m, int lo, int hi16,
                                    unsigned char *p) {
  unsigned char tag[BLOCK];
  uint32_t field[BLOCK];
  for (size_t base = 0; base < m; base += BLOCK) {
    size_t b = m - base < BLOCK ? m - base : BLOCK;
    classify(in + base, b, lo, hi16, tag, field);
    for (size_t g = 0; g < b; g += 8) {
      unsigned w = tagword(tag + g, 8);
      p[0] = (unsigned char)w;
      p[1] = (unsigned char)(w >> 8);
      p += 2;
      for (size_t j = g; j < g + 8; j++) {
        kern_store32(p, field[j]);
        p += inceptionn_field_bytes(tag[j]);
      }
    }
  }
  return p;
}

#if CODEC_X86
#include "inceptionn_tables.h"

#include <immintrin.h>

/* The same as pack_portable, eight values at a time: Algorithm 2 on eight
 * lanes, the tag bytes from the tests' masks, and each half's kept bytes
 * gathered by one byte shuffle (tables from tools/gen_inceptionn_tables.py)
 * and written with one 16-byte store; the same worst-case argument bounds
 * the stores.
 *
 * A lane holds its 16-bit field, sign in bit 15 and floor(|x| 2^15) below
 * it, or for tag 3 the whole pattern: the 8-bit field is the 16-bit one's
 * high byte (floor(|x| 2^7) = floor(|x| 2^15) >> 8, the sign moving from
 * bit 15 to bit 7), which the tables take for tag 1. */
CODEC_AVX2 static unsigned char *pack_avx2(const float *in, size_t m, int lo,
                                           int hi16, unsigned char *p) {
  const __m256i absm = _mm256_set1_epi32(0x7fffffff);
  const __m256i k8000 = _mm256_set1_epi32(0x8000);
  const __m256 s15 = _mm256_set1_ps(0x1p15f);
  /* e >= E is |x| >= E << 23 on the bit patterns. */
  const __m256i ge127 = _mm256_set1_epi32((127 << 23) - 1);
  const __m256i gelo = _mm256_set1_epi32((lo << 23) - 1);
  const __m256i ge16 = _mm256_set1_epi32((hi16 << 23) - 1);
  /* Bytes 0 and 2 of each lane, in lane order, in each 128-bit half. */
  const __m256i pick = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1,
                                        -1, -1, -1, -1, -1, 0, 2, 4, 6, 8, 10,
                                        12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
  for (size_t i = 0; i < m; i += 8) {
    __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(in + i));
    __m256i a = _mm256_and_si256(u, absm);
    /* floor(|x| 2^15): scaling by a power of two is exact and truncation
     * floors, so for every |x| < 1 (the only values whose 8 or 16-bit
     * field is kept) this is Algorithm 2's shifted mantissa. */
    __m256i f16 = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi32(u, 16), k8000),
        _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), s15)));
    /* 127 >= hi16 >= lo, so the three tests nest and the tag is the
     * number that hold. */
    __m256i c127 = _mm256_cmpgt_epi32(a, ge127);
    __m256i clo = _mm256_cmpgt_epi32(a, gelo);
    __m256i c16 = _mm256_cmpgt_epi32(a, ge16);
    __m256i field = _mm256_blendv_epi8(f16, u, c127);
    /* The tag's low bit is the parity of the tests that hold, its high
     * bit the 16-bit test: the parity in each lane's low word, the test
     * in its high word, bytes 0 and 2 of every lane picked in order, and
     * the byte mask of each 128-bit half is the tag byte of its values. */
    __m256i bits = _mm256_shuffle_epi8(
        _mm256_blend_epi16(_mm256_xor_si256(_mm256_xor_si256(clo, c16), c127),
                           c16, 0xaa),
        pick);
    unsigned w = (unsigned)_mm256_movemask_epi8(bits);
    unsigned h0 = w & 0xffu, h1 = (w >> 16) & 0xffu;
    p[0] = (unsigned char)h0;
    p[1] = (unsigned char)h1;
    _mm_storeu_si128(
        (__m128i *)(void *)(p + 2),
        _mm_shuffle_epi8(
            _mm256_castsi256_si128(field),
            _mm_loadu_si128((const __m128i *)(const void *)inc_pack_shuf[h0])));
    unsigned char *q = p + 2 + inc_half_len[h0];
    _mm_storeu_si128(
        (__m128i *)(void *)q,
        _mm_shuffle_epi8(
            _mm256_extracti128_si256(field, 1),
            _mm_loadu_si128((const __m128i *)(const void *)inc_pack_shuf[h1])));
    p = q + inc_half_len[h1];
  }
  return p;
}
#endif

static ptrdiff_t inc_encode(codec_state_t *s, const float *in,
                            unsigned char *out) {
  int eb = CODEC_CPARAMS(s->codec, struct inc_params)->eb;
  int lo = 127 + eb, hi16 = lo + (-eb) / 2;
  size_t n = s->n, full = n / 8 * 8;
  unsigned char *p;
#if CODEC_X86
  if (codec_use_avx2(s->codec))
    p = pack_avx2(in, full, lo, hi16, out);
  else
#endif
    p = pack_portable(in, full, lo, hi16, out);
  if (full < n) { /* the last, partial group: byte-exact stores */
    unsigned char tag[8];
    uint32_t field[8];
    size_t r = n - full;
    classify(in + full, r, lo, hi16, tag, field);
    unsigned w = tagword(tag, r);
    for (size_t b = 0; b < tag_bytes(r); b++)
      *p++ = (unsigned char)(w >> (8 * b));
    for (size_t j = 0; j < r; j++)
      for (unsigned b = 0; b < inceptionn_field_bytes(tag[j]); b++)
        *p++ = (unsigned char)(field[j] >> (8 * b));
  }
  return p - out;
}

/* Values from raw fields: the vectorisable half of decoding. */
static CODEC_HOT void expand(const unsigned char *tag, const uint32_t *raw,
                             float *out, size_t m, bool add) {
  for (size_t i = 0; i < m; i++) {
    unsigned t = tag[i];
    uint32_t r = raw[i];
    uint32_t mag = t == 2 ? (r & 0x7fffu) : (r & 0x7fu);
    uint32_t sign = t == 2 ? (r >> 15) & 1u : (r >> 7) & 1u;
    float scale = t == 2 ? 0x1p-15f : 0x1p-7f;
    uint32_t v = kern_float_to_bits((float)mag * scale) | sign << 31;
    uint32_t bits = t == 3 ? r : t == 0 ? 0u : v;
    if (add)
      out[i] += kern_bits_to_float(bits);
    else
      out[i] = kern_bits_to_float(bits);
  }
}

/* Unpack the groups of M values starting at *P (LEN bytes left) into TAG
 * and RAW. Returns 0 or -EBADMSG; advances *P and *LEN. */
static int unpack(const unsigned char **pp, size_t *lenp, size_t m,
                  unsigned char *tag, uint32_t *raw, uint16_t *tags_out) {
  const unsigned char *p = *pp;
  size_t left = *lenp;
  size_t g = 0;
  /* Fast path: a whole group is at most 34 bytes, so while 34 bytes
   * remain every 4-byte load stays inside the payload. */
  for (; g + 8 <= m && left >= 34; g += 8) {
    unsigned w = (unsigned)p[0] | (unsigned)p[1] << 8;
    const unsigned char *q = p + 2;
    for (size_t j = 0; j < 8; j++) {
      unsigned t = (w >> (2 * j)) & 3u;
      tag[g + j] = (unsigned char)t;
      raw[g + j] = kern_load32(q);
      q += inceptionn_field_bytes(t);
    }
    if (tags_out)
      *tags_out++ = (uint16_t)w;
    left -= (size_t)(q - p);
    p = q;
  }
  /* Careful path: near the end of the payload, and the last partial
   * group. */
  for (; g < m; g += 8) {
    size_t r = m - g < 8 ? m - g : 8;
    size_t tb = tag_bytes(r);
    if (left < tb)
      return -EBADMSG;
    unsigned w = 0;
    for (size_t b = 0; b < tb; b++)
      w |= (unsigned)p[b] << (8 * b);
    if (r < 8 && (w >> (2 * r)) != 0)
      return -EBADMSG; /* unused tag bits must be zero */
    p += tb;
    left -= tb;
    for (size_t j = 0; j < r; j++) {
      unsigned t = (w >> (2 * j)) & 3u;
      unsigned fb = inceptionn_field_bytes(t);
      if (left < fb)
        return -EBADMSG;
      uint32_t v = 0;
      for (unsigned b = 0; b < fb; b++)
        v |= (uint32_t)p[b] << (8 * b);
      tag[g + j] = (unsigned char)t;
      raw[g + j] = v;
      p += fb;
      left -= fb;
    }
    if (tags_out)
      *tags_out++ = (uint16_t)w;
  }
  *pp = p;
  *lenp = left;
  return 0;
}

#if CODEC_X86
/* Whole groups while 34 bytes remain (so the 16-byte loads stay inside the
 * payload): unpack with two byte shuffles and expand on eight lanes, as
 * expand() does. The shuffles put an 8-bit field in its lane's byte 1,
 * which makes it the 16-bit field of the same value (pack_avx2), so tags
 * 1 and 2 decode alike, sign(bit 15) (bits 0..14) 2^-15, and tag 0's zero
 * lane decodes to +0; tag 3 lanes keep their pattern. Returns the number
 * of values done. */
CODEC_AVX2 static size_t unpack_expand_avx2(const unsigned char **pp,
                                            size_t *lenp, size_t m, float *out,
                                            bool add) {
  const unsigned char *p = *pp;
  size_t left = *lenp, i = 0;
  const __m256i m15 = _mm256_set1_epi32(0x7fff);
  const __m256i sgn = _mm256_set1_epi32((int)0x80000000u);
  const __m256 s15 = _mm256_set1_ps(0x1p-15f);
  for (; i + 8 <= m && left >= 34; i += 8) {
    /* The next group's position depends on this one's tags: the loop's
     * critical path is this load and the group's length, computed from
     * the tag word by counting bits (tag t keeps t bytes, 4 for t = 3)
     * rather than by a dependent load from a table. */
    unsigned w = (unsigned)p[0] | (unsigned)p[1] << 8;
    unsigned h0 = w & 0xffu, h1 = w >> 8;
    unsigned hi = w & 0xaaaau; /* the tags' high bits */
    size_t used = 2 + (size_t)__builtin_popcount(w) +
                  (size_t)__builtin_popcount(hi) +
                  (size_t)__builtin_popcount(hi & (w << 1));
    __m128i a = _mm_shuffle_epi8(
        _mm_loadu_si128((const __m128i *)(const void *)(p + 2)),
        _mm_loadu_si128((const __m128i *)(const void *)inc_unpack_shuf[h0]));
    const unsigned char *q = p + 2 + inc_half_len[h0];
    __m128i b = _mm_shuffle_epi8(
        _mm_loadu_si128((const __m128i *)(const void *)q),
        _mm_loadu_si128((const __m128i *)(const void *)inc_unpack_shuf[h1]));
    p += used;
    left -= used;
    __m256i raw = _mm256_set_m128i(b, a);
    __m256 is3 = _mm256_castsi256_ps(
        _mm256_loadu2_m128i((const __m128i *)(const void *)inc_unpack_is3[h1],
                            (const __m128i *)(const void *)inc_unpack_is3[h0]));
    __m256 v =
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(raw, m15)), s15);
    v = _mm256_or_ps(v, _mm256_castsi256_ps(
                            _mm256_and_si256(_mm256_slli_epi32(raw, 16), sgn)));
    __m256 f = _mm256_blendv_ps(v, _mm256_castsi256_ps(raw), is3);
    if (add)
      f = _mm256_add_ps(_mm256_loadu_ps(out + i), f);
    _mm256_storeu_ps(out + i, f);
  }
  *pp = p;
  *lenp = left;
  return i;
}
#endif

static int inc_decode(const codec_t *c, const unsigned char *in, size_t len,
                      float *out, size_t n, bool add) {
  size_t done = 0;
#if CODEC_X86
  if (codec_use_avx2(c))
    done = unpack_expand_avx2(&in, &len, n, out, add);
#else
  (void)c;
#endif
  unsigned char tag[BLOCK];
  uint32_t raw[BLOCK];
  for (size_t base = done; base < n; base += BLOCK) {
    size_t m = n - base < BLOCK ? n - base : BLOCK;
    if (unpack(&in, &len, m, tag, raw, NULL) != 0)
      return -EBADMSG;
    expand(tag, raw, out + base, m, add);
  }
  return len == 0 ? 0 : -EBADMSG; /* trailing bytes */
}

int inceptionn_scan(const void *payload, size_t len, size_t n, uint16_t *tags,
                    uint64_t counts[4]) {
  if (!payload && len)
    return -EINVAL;
  const unsigned char *p = payload;
  unsigned char tag[BLOCK];
  uint32_t raw[BLOCK];
  if (counts)
    memset(counts, 0, 4 * sizeof counts[0]);
  for (size_t base = 0; base < n; base += BLOCK) {
    size_t m = n - base < BLOCK ? n - base : BLOCK;
    if (unpack(&p, &len, m, tag, raw, tags ? tags + base / 8 : NULL) != 0)
      return -EBADMSG;
    if (counts)
      for (size_t i = 0; i < m; i++)
        counts[tag[i]]++;
  }
  return len == 0 ? 0 : -EBADMSG;
}

/* The classes of a payload's values: the tags, block by block. */
static int inc_classes(const codec_t *c, const unsigned char *p, size_t len,
                       size_t n, uint8_t *cls, uint64_t *counts) {
  (void)c;
  unsigned char tag[BLOCK];
  uint32_t raw[BLOCK];
  if (counts)
    memset(counts, 0, 4 * sizeof counts[0]);
  for (size_t base = 0; base < n; base += BLOCK) {
    size_t m = n - base < BLOCK ? n - base : BLOCK;
    if (unpack(&p, &len, m, tag, raw, NULL) != 0)
      return -EBADMSG;
    for (size_t i = 0; i < m; i++) {
      if (cls)
        cls[base + i] = tag[i];
      if (counts)
        counts[tag[i]]++;
    }
  }
  return len == 0 ? 0 : -EBADMSG;
}

/* Field bits kept per class (Table III's 0/8/16/32-bit classes). */
static const unsigned inc_class_bits[4] = {0, 8, 16, 32};

/* Each class's truncation: a 0-bit value decodes to zero (|x| < 2^E), an
 * 8 or 16-bit one to floor(|x| 2^7) 2^-7 or floor(|x| 2^15) 2^-15 (so by
 * less than 2^-7 or 2^-15, and never past zero), a 32-bit one exactly. */
static void inc_error_bounds(const codec_t *c, const float *in,
                             const float *rb, const float *ra, size_t n,
                             double *out) {
  (void)rb;
  (void)ra;
  int eb = CODEC_CPARAMS(c, struct inc_params)->eb;
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)in[i]);
    switch (inceptionn_classify(kern_float_to_bits(in[i]), eb)) {
    case INCEPTIONN_0BIT:
      out[i] = x;
      break;
    case INCEPTIONN_8BIT:
      out[i] = x < 0x1p-7 ? x : 0x1p-7;
      break;
    case INCEPTIONN_16BIT:
      out[i] = x < 0x1p-15 ? x : 0x1p-15;
      break;
    default:
      out[i] = 0;
      break;
    }
  }
}

static const char *const inc_settings[] = {
    "inceptionn:eb=-10", "inceptionn:eb=-8", "inceptionn:eb=-6", NULL};

const struct codec_ops codec_inceptionn_ops = {
    .info = {.name = "inceptionn",
             .params = "eb=E  error bound 2^E, integer -126..-1 or 2^E "
                       "(default -10; the paper uses -10, -8, -6)",
             .description = "INCEPTIONN lossy float compression, 0/8/16/32-bit "
                            "fields + 2-bit tags (Algorithms 2, 3)",
             .settings = inc_settings},
    .init = inc_init,
    .configure = inc_configure,
    .describe = inc_describe,
    .bound = inc_bound,
    .encode_passes = 1,
    .size_varies = true,
    .error_bounds = inc_error_bounds,
    .nclasses = 4,
    .class_bits = inc_class_bits,
    .classes = inc_classes,
    .encode = inc_encode,
    .decode = inc_decode,
};
