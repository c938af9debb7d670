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

size_t zre_encode_inplace(unsigned char *buf, size_t len) {
  size_t r = 0, w = 0;
  while (r < len) {
    /* Literal bytes move down (W <= R, memmove), then a run of 121. */
    size_t lit = zre_span(buf, r, len, false);
    memmove(buf + w, buf + r, lit);
    w += lit;
    r += lit;
    size_t k = zre_span(buf, r, len, true);
    r += k;
    /* Greedy runs of 14, the rest as one shorter run or a single 121.
     * Every byte written stands for at least one read, so W stays <= R. */
    size_t full = k / RUN_MAX_LEN, rest = k % RUN_MAX_LEN;
    memset(buf + w, RUN_MIN + RUN_MAX_LEN - 2, full);
    w += full;
    if (rest >= 2)
      buf[w++] = (unsigned char)(RUN_MIN + rest - 2);
    else if (rest == 1)
      buf[w++] = ZERO5;
  }
  return w;
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
