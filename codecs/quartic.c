/* codecs/quartic.c: quartic and zero-run decoding, zero-run encoding. */
#include "quartic.h"

#include "codec_impl.h"

enum { ZERO5 = 121, RUN_MIN = 243, RUN_MAX_LEN = 14 };

/* Bytes of BUF[R, LEN) before the first that is (ZERO: true) or is not
 * (false) byte 121, looked at eight at a time: in the 3lc payloads most
 * bytes are 121 and the runs are long, and a byte-at-a-time scan with a
 * branch per byte cost a quarter of the encode. */
static size_t zre_span(const unsigned char *buf, size_t r, size_t len,
                       bool zero) {
  const uint64_t ones = 0x0101010101010101u, z5 = ones * ZERO5;
  const uint64_t high = ones * 0x80, low7 = ones * 0x7f;
  size_t k = 0;
  for (; r + k + 8 <= len; k += 8) {
    uint64_t v;
    memcpy(&v, buf + r + k, 8);
    v ^= z5; /* bytes 121 are now 0 */
    /* Bytes that differ from 121 (ZERO) or that are 121 (!ZERO), as high
     * bits; the lowest is exact (the zero-byte trick's false positives lie
     * only above a true zero byte). */
    uint64_t hit =
        zero ? (v | ((v & low7) + low7)) & high : (v - ones) & ~v & high;
    if (hit)
      return k + (size_t)__builtin_ctzll(hit) / 8;
  }
  while (r + k < len && (buf[r + k] == ZERO5) == zero)
    k++;
  return k;
}

/* A run of K bytes 121 at BUF + W, K bytes or more below the bytes not yet
 * read: greedy runs of 14, the rest as one shorter run or a single 121.
 * Returns the bytes written, at most K. */
static size_t zre_put_run(unsigned char *buf, size_t w, size_t k) {
  size_t full = k / RUN_MAX_LEN, rest = k % RUN_MAX_LEN, w0 = w;
  if (full > 8) {
    memset(buf + w, RUN_MIN + RUN_MAX_LEN - 2, full);
  } else if (full) { /* K >= 14: eight bytes from W are free to write */
    uint64_t runs = 0x0101010101010101u * (RUN_MIN + RUN_MAX_LEN - 2);
    memcpy(buf + w, &runs, 8);
  }
  w += full;
  if (rest >= 2)
    buf[w++] = (unsigned char)(RUN_MIN + rest - 2);
  else if (rest == 1)
    buf[w++] = ZERO5;
  return w - w0;
}

void zre_begin(struct zre_stream *z, bool simd) {
  z->w = 0;
  z->run = 0;
  z->simd = simd;
}

#if CODEC_X86
#include "quartic_tables.h"

#include <immintrin.h>

/* zre_feed on 32 bytes at a time, while the byte after them (which says
 * whether the 32nd ends its run) is below R1; returns where it stopped,
 * with *WP and *RUNP as zre_feed keeps them. The same bytes, computed
 * without a branch per run: a run's greedy cuts are its 14th, 28th, ...
 * bytes 121, each written as one byte 255 when it is reached, and its last
 * byte, which writes the rest: with r the byte's position in its run
 * counted from 1, modulo 14 in 1..14, a byte 121 writes 255 when r = 14,
 * else, when it is the last, 121 for r = 1 and 241 + r for the others; a
 * literal writes itself. The bytes written are packed to the front of
 * each group of eight by a byte shuffle (tables from
 * tools/gen_quartic_tables.py) and stored eight at a time: they stand for
 * at least as many bytes read, so no store reaches a byte not yet read. A
 * run is counted across chunks of 121 only and its full cuts written when
 * it meets a chunk with another byte (the same bytes as at its end); one
 * still open at the end is left in *RUNP, whole, as zre_feed keeps it. */
CODEC_AVX2 static size_t zre_feed_avx2(unsigned char *buf, size_t r, size_t r1,
                                       size_t *wp, size_t *runp) {
  size_t w = *wp, run = *runp;
  if (r + 32 >= r1)
    return r;
  if (run && buf[r] != ZERO5) { /* the open run ended before R */
    w += zre_put_run(buf, w, run);
    run = 0;
  }
  const __m256i z5 = _mm256_set1_epi8((char)ZERO5);
  const __m256i iota = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                        12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                        22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
  const __m256i low = _mm256_set1_epi8(-128), k15 = _mm256_set1_epi8(15);
  const __m256i k14 = _mm256_set1_epi8(14), k1 = _mm256_set1_epi8(1);
  const __m256i k13 = _mm256_set1_epi8(13), k8 = _mm256_set1_epi8(8);
  const __m256i k242 = _mm256_set1_epi8((char)242);
  const __m256i zero = _mm256_setzero_si256();
  for (; r + 32 < r1; r += 32) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(buf + r));
    __m256i zv = _mm256_cmpeq_epi8(v, z5);
    uint32_t zm = (uint32_t)_mm256_movemask_epi8(zv);
    uint32_t nextz = buf[r + 32] == ZERO5;
    if (zm == 0xffffffffu && nextz) { /* the run goes on */
      run += 32;
      continue;
    }
    /* The open run's full cuts, then its count modulo 14. */
    if (run >= RUN_MAX_LEN) {
      size_t full = run / RUN_MAX_LEN;
      memset(buf + w, RUN_MIN + RUN_MAX_LEN - 2, full);
      w += full;
      run -= full * RUN_MAX_LEN;
    }
    /* The position of the last literal at or before each byte, -1 - RUN
     * for none (the open run's bytes before the 32): a prefix maximum,
     * within each 128-bit half, then the low half's last into the high
     * half. */
    __m256i last =
        _mm256_blendv_epi8(iota, _mm256_set1_epi8((char)(-1 - (int)run)), zv);
    last = _mm256_max_epi8(last, _mm256_alignr_epi8(last, low, 15));
    last = _mm256_max_epi8(last, _mm256_alignr_epi8(last, low, 14));
    last = _mm256_max_epi8(last, _mm256_alignr_epi8(last, low, 12));
    last = _mm256_max_epi8(last, _mm256_alignr_epi8(last, low, 8));
    __m256i carry =
        _mm256_shuffle_epi8(_mm256_permute2x128_si256(last, last, 0x00), k15);
    last = _mm256_max_epi8(last, _mm256_blend_epi32(low, carry, 0xf0));
    /* t = r - 1 = (position in the run - 1) modulo 14, from 0..44. */
    __m256i t = _mm256_sub_epi8(_mm256_sub_epi8(iota, last), k1);
    t = _mm256_min_epu8(t, _mm256_sub_epi8(t, k14));
    t = _mm256_min_epu8(t, _mm256_sub_epi8(t, k14));
    t = _mm256_min_epu8(t, _mm256_sub_epi8(t, k14));
    uint32_t cut = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(t, k13));
    uint32_t ends = zm & ~((zm >> 1) | nextz << 31);
    uint32_t keep = ~zm | (zm & (cut | ends));
    __m256i code = _mm256_blendv_epi8(_mm256_add_epi8(t, k242), z5,
                                      _mm256_cmpeq_epi8(t, zero));
    __m256i out = _mm256_blendv_epi8(v, code, zv);
    __m128i half[2] = {_mm256_castsi256_si128(out),
                       _mm256_extracti128_si256(out, 1)};
    for (int g = 0; g < 4; g++) {
      unsigned m = (keep >> (8 * g)) & 0xffu;
      __m128i idx =
          _mm_loadl_epi64((const __m128i *)(const void *)zre_pack_shuf[m]);
      if (g & 1)
        idx = _mm_add_epi8(idx, _mm256_castsi256_si128(k8));
      _mm_storel_epi64((__m128i *)(void *)(buf + w),
                       _mm_shuffle_epi8(half[g / 2], idx));
      w += (size_t)__builtin_popcount(m);
    }
    /* An open run's count modulo 14 (0 after a cut). */
    unsigned t31 = (unsigned)_mm256_extract_epi8(t, 31);
    run = (zm >> 31) && nextz ? (t31 + 1) % RUN_MAX_LEN : 0;
  }
  *wp = w;
  *runp = run; /* zre_feed writes its full cuts with the rest */
  return r;
}
#endif

void zre_feed(unsigned char *buf, size_t r0, size_t r1, struct zre_stream *z) {
  size_t r = r0, w = z->w;
#if CODEC_X86
  if (z->simd)
    r = zre_feed_avx2(buf, r0, r1, &w, &z->run);
#endif
  /* Every byte written stands for at least one read, so W stays at or
   * below the start of the carried run, itself at or below R. */
  if (z->run) {
    size_t k = zre_span(buf, r, r1, true);
    r += k;
    z->run += k;
    if (r == r1) {
      z->w = w;
      return;
    }
    w += zre_put_run(buf, w, z->run);
    z->run = 0;
  }
  while (r < r1) {
    /* Literal bytes move down (W <= R), then a run of 121. A short
     * literal eight bytes below R or more moves as one eight-byte copy
     * (what lies past it in those eight bytes is rewritten later or was
     * never read: below R); the others with memmove. */
    size_t lit = zre_span(buf, r, r1, false);
    if (lit <= 8 && r - w >= 8 && r1 - r >= 8) {
      uint64_t v;
      memcpy(&v, buf + r, 8);
      memcpy(buf + w, &v, 8);
    } else if (w != r) {
      memmove(buf + w, buf + r, lit);
    }
    w += lit;
    r += lit;
    size_t k = zre_span(buf, r, r1, true);
    r += k;
    if (r == r1) { /* the run may go on in the next block */
      z->run = k;
      break;
    }
    w += zre_put_run(buf, w, k);
  }
  z->w = w;
}

size_t zre_end(unsigned char *buf, struct zre_stream *z) {
  z->w += zre_put_run(buf, z->w, z->run);
  z->run = 0;
  return z->w;
}

size_t zre_encode_inplace(unsigned char *buf, size_t len) {
  struct zre_stream z;
  zre_begin(&z, false);
  zre_feed(buf, 0, len, &z);
  return zre_end(buf, &z);
}

/* Column J near the end, where some of the five digits are padding
 * (positions >= N), which must be zero. */
static bool put5_tail(float *out, size_t stride, size_t n, size_t j, unsigned b,
                      const float val[3], bool add) {
  unsigned d[5] = {b / 81, b / 27 % 3, b / 9 % 3, b / 3 % 3, b % 3};
  for (size_t k = 0; k < 5; k++) {
    size_t i = k * stride + j;
    if (i >= n) {
      if (d[k] != 0)
        return false;
    } else if (add) {
      out[i] += val[d[k]];
    } else {
      out[i] = val[d[k]];
    }
  }
  return true;
}

#if CODEC_X86
#include <immintrin.h>

/* Columns [0, 16 floor(full / 16)) of a plain (not zero-run encoded)
 * stream, sixteen at a time: the five base-3 digits of each byte by
 * multiply-high with rounded-up reciprocals (exact for the byte ranges
 * involved: b <= 242, then remainders <= 80, 26, 8), then a select of -M,
 * zero or M. *BAD is set when a byte exceeds 242. Returns the columns
 * done. */
CODEC_AVX2 static size_t plain_avx2(const unsigned char *in, size_t full,
                                    float m, float *out, size_t L, bool add,
                                    bool *bad) {
  const __m256i k810 = _mm256_set1_epi16(810), k81 = _mm256_set1_epi16(81);
  const __m256i k2428 = _mm256_set1_epi16(2428), k27 = _mm256_set1_epi16(27);
  const __m256i k7282 = _mm256_set1_epi16(7282), k9 = _mm256_set1_epi16(9);
  const __m256i k21846 = _mm256_set1_epi16(21846), k3 = _mm256_set1_epi16(3);
  const __m256i two = _mm256_set1_epi32(2), zero = _mm256_setzero_si256();
  const __m256 vneg = _mm256_set1_ps(-m), vpos = _mm256_set1_ps(m);
  const __m256 vzero = _mm256_set1_ps(add ? -0.0f : 0.0f);
  __m128i maxb = _mm_setzero_si128();
  size_t j = 0;
  for (; j + 16 <= full; j += 16) {
    __m128i raw = _mm_loadu_si128((const __m128i *)(const void *)(in + j));
    maxb = _mm_max_epu8(maxb, raw);
    __m256i b = _mm256_cvtepu8_epi16(raw), d[5];
    d[0] = _mm256_mulhi_epu16(b, k810);
    __m256i r = _mm256_sub_epi16(b, _mm256_mullo_epi16(d[0], k81));
    d[1] = _mm256_mulhi_epu16(r, k2428);
    r = _mm256_sub_epi16(r, _mm256_mullo_epi16(d[1], k27));
    d[2] = _mm256_mulhi_epu16(r, k7282);
    r = _mm256_sub_epi16(r, _mm256_mullo_epi16(d[2], k9));
    d[3] = _mm256_mulhi_epu16(r, k21846);
    d[4] = _mm256_sub_epi16(r, _mm256_mullo_epi16(d[3], k3));
    for (size_t k = 0; k < 5; k++)
      for (int h = 0; h < 2; h++) {
        __m256i dk = _mm256_cvtepu16_epi32(h ? _mm256_extracti128_si256(d[k], 1)
                                             : _mm256_castsi256_si128(d[k]));
        __m256 v = _mm256_blendv_ps(
            vzero, vneg, _mm256_castsi256_ps(_mm256_cmpeq_epi32(dk, zero)));
        v = _mm256_blendv_ps(v, vpos,
                             _mm256_castsi256_ps(_mm256_cmpeq_epi32(dk, two)));
        float *dst = out + k * L + j + 8 * (size_t)h;
        if (add)
          v = _mm256_add_ps(_mm256_loadu_ps(dst), v);
        _mm256_storeu_ps(dst, v);
      }
  }
  const __m128i top = _mm_set1_epi8((char)242);
  *bad =
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(maxb, top), top)) != 0xffff;
  return j;
}
#endif

/* TAB[b]: the five values byte B decodes to, digits to VAL. */
static void byte_table(const float val[3], float tab[243][5]) {
  for (unsigned b = 0; b < 243; b++) {
    unsigned d[5] = {b / 81, b / 27 % 3, b / 9 % 3, b / 3 % 3, b % 3};
    for (int k = 0; k < 5; k++)
      tab[b][k] = val[d[k]];
  }
}

/* A run of RUN zero bytes (121) from column J: nothing to add, and zero
 * bits to store in the columns below FULL; the columns from FULL on go
 * through put5_tail (false: a padding digit is not zero). */
static bool put_run(float *out, size_t L, size_t n, size_t full, size_t j,
                    size_t run, const float val[3], bool add) {
  size_t e = j + run, body = e < full ? e : full;
  if (!add && j < body)
    for (size_t k = 0; k < 5; k++)
      memset(out + k * L + j, 0, (body - j) * sizeof(float));
  for (j = j < body ? body : j; j < e; j++)
    if (!put5_tail(out, L, n, j, ZERO5, val, add))
      return false;
  return true;
}

int quartic_decode(bool simd, const unsigned char *in, size_t len, bool zre,
                   float m, float *out, size_t n, bool add) {
  size_t L = quartic_len(n);
  /* Columns j < full have all five digits inside the vector. */
  size_t full = n > 4 * L ? n - 4 * L : 0;
  /* Adding -0.0 leaves every float unchanged (-0.0 + -0.0 is -0.0), so
   * in ADD mode a zero value is an exact no-op, the same whether it is
   * added or skipped as part of a run. */
  const float val[3] = {-m, add ? -0.0f : 0.0f, m};
  /* The five values of every byte, built once per call (243 x 5 floats):
   * decoding a byte is then five loads and five stores. */
  float tab[243][5];
  byte_table(val, tab);
  float *o[5];
  for (size_t k = 0; k < 5; k++)
    o[k] = out + k * L;
  size_t j = 0, r = 0;
#if CODEC_X86
  if (simd && !zre) {
    bool bad;
    j = r = plain_avx2(in, full < len ? full : len, m, out, L, add, &bad);
    if (bad)
      return -EBADMSG;
  }
#else
  (void)simd;
#endif
  for (; r < len; r++) {
    unsigned b = in[r];
    if (b < RUN_MIN) {
      if (j >= L)
        return -EBADMSG;
      if (j < full) {
        const float *t = tab[b];
        for (int k = 0; k < 5; k++) {
          if (add)
            o[k][j] += t[k];
          else
            o[k][j] = t[k];
        }
      } else if (!put5_tail(out, L, n, j, b, val, add)) {
        return -EBADMSG;
      }
      j++;
      continue;
    }
    if (!zre)
      return -EBADMSG;
    size_t run = b - RUN_MIN + 2;
    if (run > L - j || !put_run(out, L, n, full, j, run, val, add))
      return -EBADMSG; /* expands past L bytes, or nonzero padding */
    j += run;
  }
  return j == L ? 0 : -EBADMSG;
}
