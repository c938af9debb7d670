/* codecs/select.c: top-k selection kernels (see select.h).
 *
 * Each pass has a portable loop and, on x86, an AVX2 loop that does the
 * leading multiple of eight elements and hands over its state; the two
 * compute the same results (element i feeds lane i % 8 of every
 * accumulator, the tail lane 0, and lanes are combined in order). */
#include "select.h"

#include "codec_impl.h"

#include <math.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

size_t sel_k(double ratio, size_t n) {
  if (n == 0)
    return 0;
  double k = ceil(ratio * (double)n * (1.0 - 1e-9));
  if (k < 1.0)
    return 1;
  return k >= (double)n ? n : (size_t)k;
}

/* The value a key ranks by, and an unsigned bit pattern in the same order
 * (for radix selection). */
static ALWAYS_INLINE float keyval(float v, enum sel_key key) {
  return key == KEY_ABS ? fabsf(v) : key == KEY_POS ? v : -v;
}
static ALWAYS_INLINE uint32_t keybits(float v, enum sel_key key) {
  uint32_t u = kern_float_to_bits(v);
  if (key == KEY_ABS)
    return u & 0x7fffffffu;
  uint32_t ordered = u ^ ((uint32_t) - (int32_t)(u >> 31) | 0x80000000u);
  return key == KEY_POS ? ordered : ~ordered;
}

enum { LANES = 8, MAXT = 5 };

#if CODEC_X86
#include <immintrin.h>

/* keyval as bit operations: (f & KV_AND) ^ KV_XOR. */
static uint32_t kv_and(enum sel_key key) {
  return key == KEY_ABS ? 0x7fffffffu : 0xffffffffu;
}
static uint32_t kv_xor(enum sel_key key) {
  return key == KEY_NEG ? 0x80000000u : 0u;
}

/* keybits as bit operations: t = f ^ ((f >>s 31) & SM | FM);
 * key = (t & AM) ^ NM. */
struct kb_masks {
  __m256i sm, fm, am, nm;
};

CODEC_AVX2 static struct kb_masks kb_masks_of(enum sel_key key) {
  bool abs = key == KEY_ABS;
  struct kb_masks k = {
      _mm256_set1_epi32(abs ? 0 : -1),
      _mm256_set1_epi32(abs ? 0 : (int)0x80000000u),
      _mm256_set1_epi32(abs ? 0x7fffffff : -1),
      _mm256_set1_epi32(key == KEY_NEG ? -1 : 0),
  };
  return k;
}

CODEC_AVX2 static inline __m256i keybits8(__m256 f, const struct kb_masks *k) {
  __m256i u = _mm256_castps_si256(f);
  __m256i t = _mm256_xor_si256(
      u, _mm256_or_si256(_mm256_and_si256(_mm256_srai_epi32(u, 31), k->sm),
                         k->fm));
  return _mm256_xor_si256(_mm256_and_si256(t, k->am), k->nm);
}

CODEC_AVX2 static inline __m256 load_sum(const float *v, const float *x,
                                         size_t i) {
  __m256 f = _mm256_loadu_ps(v + i);
  return x ? _mm256_add_ps(f, _mm256_loadu_ps(x + i)) : f;
}
#endif

/* ---- statistics ------------------------------------------------------ */

struct stats_lanes {
  double s[LANES];
  float mx[LANES];
  uint32_t ab[LANES];
};

#if CODEC_X86
CODEC_AVX2 static size_t scan_stats_avx2(const float *v, const float *x,
                                         size_t n, enum sel_key key,
                                         struct stats_lanes *l) {
  const __m256 ka = _mm256_castsi256_ps(_mm256_set1_epi32((int)kv_and(key)));
  const __m256 kx = _mm256_castsi256_ps(_mm256_set1_epi32((int)kv_xor(key)));
  const __m256i abs = _mm256_set1_epi32(0x7fffffff);
  __m256d s0 = _mm256_loadu_pd(l->s), s1 = _mm256_loadu_pd(l->s + 4);
  __m256 mx = _mm256_loadu_ps(l->mx);
  __m256i ab = _mm256_loadu_si256((const __m256i *)(const void *)l->ab);
  size_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    __m256 f = load_sum(v, x, i);
    __m256 kv = _mm256_xor_ps(_mm256_and_ps(f, ka), kx);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(kv)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(kv, 1)));
    mx = _mm256_max_ps(kv, mx); /* kv > mx ? kv : mx, as the C loop */
    ab = _mm256_max_epu32(ab, _mm256_and_si256(_mm256_castps_si256(f), abs));
  }
  _mm256_storeu_pd(l->s, s0);
  _mm256_storeu_pd(l->s + 4, s1);
  _mm256_storeu_ps(l->mx, mx);
  _mm256_storeu_si256((__m256i *)(void *)l->ab, ab);
  return i;
}
#endif

static ALWAYS_INLINE void scan_stats(const float *v, const float *x, size_t i,
                                     size_t n, enum sel_key key,
                                     struct stats_lanes *l) {
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) {
      float f = x ? v[i + j] + x[i + j] : v[i + j];
      float kv = keyval(f, key);
      l->s[j] += (double)kv;
      l->mx[j] = kv > l->mx[j] ? kv : l->mx[j];
      uint32_t a = kern_float_to_bits(f) & 0x7fffffffu;
      l->ab[j] = a > l->ab[j] ? a : l->ab[j];
    }
  for (; i < n; i++) {
    float f = x ? v[i] + x[i] : v[i];
    float kv = keyval(f, key);
    l->s[0] += (double)kv;
    l->mx[0] = kv > l->mx[0] ? kv : l->mx[0];
    uint32_t a = kern_float_to_bits(f) & 0x7fffffffu;
    l->ab[0] = a > l->ab[0] ? a : l->ab[0];
  }
}

static ALWAYS_INLINE uint32_t scan_hist(const float *v, const float *x,
                                        size_t n, enum sel_key key,
                                        uint32_t hist[2048]) {
  /* Two interleaved histograms halve the store-to-load stalls of runs of
   * equal buckets. */
  uint32_t h2[2048] = {0};
  uint32_t a = 0;
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    float f0 = x ? v[i] + x[i] : v[i];
    float f1 = x ? v[i + 1] + x[i + 1] : v[i + 1];
    hist[keybits(f0, key) >> 21]++;
    h2[keybits(f1, key) >> 21]++;
    uint32_t a0 = kern_float_to_bits(f0) & 0x7fffffffu;
    uint32_t a1 = kern_float_to_bits(f1) & 0x7fffffffu;
    a = a0 > a ? a0 : a;
    a = a1 > a ? a1 : a;
  }
  for (; i < n; i++) {
    float f = x ? v[i] + x[i] : v[i];
    hist[keybits(f, key) >> 21]++;
    uint32_t a0 = kern_float_to_bits(f) & 0x7fffffffu;
    a = a0 > a ? a0 : a;
  }
  for (int b = 0; b < 2048; b++)
    hist[b] += h2[b];
  return a;
}

static ALWAYS_INLINE uint32_t scan_max(const float *v, const float *x,
                                       size_t n) {
  uint32_t a = 0;
  for (size_t i = 0; i < n; i++) {
    float f = x ? v[i] + x[i] : v[i];
    uint32_t u = kern_float_to_bits(f) & 0x7fffffffu;
    a = u > a ? u : a;
  }
  return a;
}

/* Each portable kernel is written once as an always-inline body with the
 * key as a parameter, and instantiated per key by a switch in a
 * multi-versioned function, so that every (key, ISA) pair is compiled with
 * the key constant. */
#define DISPATCH(call_abs, call_pos, call_neg)                                 \
  switch (key) {                                                               \
  case KEY_ABS:                                                                \
    call_abs;                                                                  \
    break;                                                                     \
  case KEY_POS:                                                                \
    call_pos;                                                                  \
    break;                                                                     \
  case KEY_NEG:                                                                \
    call_neg;                                                                  \
    break;                                                                     \
  }

static CODEC_HOT void scan_stats_k(const float *v, const float *x, size_t i,
                                   size_t n, enum sel_key key,
                                   struct stats_lanes *l) {
  DISPATCH(scan_stats(v, x, i, n, KEY_ABS, l),
           scan_stats(v, x, i, n, KEY_POS, l),
           scan_stats(v, x, i, n, KEY_NEG, l));
}

static CODEC_HOT uint32_t scan_hist_k(const float *v, const float *x, size_t n,
                                      enum sel_key key, uint32_t hist[2048]) {
  uint32_t a = 0;
  DISPATCH(a = scan_hist(v, x, n, KEY_ABS, hist),
           a = scan_hist(v, x, n, KEY_POS, hist),
           a = scan_hist(v, x, n, KEY_NEG, hist));
  return a;
}

static CODEC_HOT uint32_t scan_max_k(const float *v, const float *x, size_t n) {
  return x ? scan_max(v, x, n) : scan_max(v, NULL, n);
}

uint32_t sel_scan(bool simd, const float *v, const float *x, size_t n,
                  enum sel_key key, double *sum, float *max,
                  uint32_t hist[2048]) {
  if (hist) {
    memset(hist, 0, 2048 * sizeof hist[0]);
    return scan_hist_k(v, x, n, key, hist);
  }
  if (!sum || !max)
    return scan_max_k(v, x, n);
  struct stats_lanes l = {{0}, {0}, {0}};
  for (int j = 0; j < LANES; j++)
    l.mx[j] = -INFINITY;
  size_t i = 0;
#if CODEC_X86
  if (simd)
    i = scan_stats_avx2(v, x, n, key, &l);
#else
  (void)simd;
#endif
  scan_stats_k(v, x, i, n, key, &l);
  double total = 0;
  float m = -INFINITY;
  uint32_t a = 0;
  for (int j = 0; j < LANES; j++) {
    total += l.s[j];
    m = l.mx[j] > m ? l.mx[j] : m;
    a = l.ab[j] > a ? l.ab[j] : a;
  }
  *sum = total;
  *max = m;
  return a;
}

/* ---- update and count ------------------------------------------------ */

#if CODEC_X86
CODEC_AVX2 static size_t update_count_avx2(const float *v, float *dst,
                                           const float *x, size_t n,
                                           enum sel_key key, const float *thr,
                                           size_t *cnt) {
  const __m256 ka = _mm256_castsi256_ps(_mm256_set1_epi32((int)kv_and(key)));
  const __m256 kx = _mm256_castsi256_ps(_mm256_set1_epi32((int)kv_xor(key)));
  __m256 t[MAXT];
  __m256i c[MAXT];
  for (int j = 0; j < MAXT; j++) {
    t[j] = _mm256_set1_ps(thr[j]);
    c[j] = _mm256_setzero_si256();
  }
  /* 32-bit lane counters hold n / 8 < 2^31 for any n the codecs take. */
  size_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    __m256 f = load_sum(v, x, i);
    if (dst)
      _mm256_storeu_ps(dst + i, f);
    __m256 kv = _mm256_xor_ps(_mm256_and_ps(f, ka), kx);
    for (int j = 0; j < MAXT; j++)
      c[j] = _mm256_sub_epi32(
          c[j], _mm256_castps_si256(_mm256_cmp_ps(kv, t[j], _CMP_GT_OQ)));
  }
  for (int j = 0; j < MAXT; j++) {
    uint32_t lane[LANES];
    _mm256_storeu_si256((__m256i *)(void *)lane, c[j]);
    for (int l = 0; l < LANES; l++)
      cnt[j] += lane[l];
  }
  return i;
}
#endif

/* Reads V (plus X when given) from I on and writes the sum to DST when
 * given: DST is V itself for the update, NULL for a read-only count. */
static ALWAYS_INLINE void update_count(const float *v, float *dst,
                                       const float *x, size_t i, size_t n,
                                       enum sel_key key, const float *thr,
                                       size_t *cnt) {
  float t[MAXT];
  for (int j = 0; j < MAXT; j++)
    t[j] = thr[j];
  size_t c[MAXT] = {0};
  for (; i < n; i++) {
    float f = x ? v[i] + x[i] : v[i];
    if (dst)
      dst[i] = f;
    float kv = keyval(f, key);
    for (int j = 0; j < MAXT; j++)
      c[j] += kv > t[j];
  }
  for (int j = 0; j < MAXT; j++)
    cnt[j] += c[j];
}

static CODEC_HOT void update_count_k(const float *v, float *dst, const float *x,
                                     size_t i, size_t n, enum sel_key key,
                                     const float *thr, size_t *cnt) {
  DISPATCH(update_count(v, dst, x, i, n, KEY_ABS, thr, cnt),
           update_count(v, dst, x, i, n, KEY_POS, thr, cnt),
           update_count(v, dst, x, i, n, KEY_NEG, thr, cnt));
}

static CODEC_HOT void update_only(float *v, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    v[i] += x[i];
}

/* Counts above up to MAXT thresholds; unused slots are NaN, which count
 * nothing. */
static void count_pass(bool simd, const float *v, float *dst, const float *x,
                       size_t n, enum sel_key key, const float *thr, size_t nt,
                       size_t *cnt) {
  float t[MAXT];
  size_t c[MAXT] = {0};
  for (size_t j = 0; j < MAXT; j++)
    t[j] = j < nt ? thr[j] : NAN;
  size_t i = 0;
#if CODEC_X86
  if (simd)
    i = update_count_avx2(v, dst, x, n, key, t, c);
#else
  (void)simd;
#endif
  update_count_k(v, dst, x, i, n, key, t, c);
  for (size_t j = 0; j < nt && j < MAXT; j++)
    cnt[j] = c[j];
}

void sel_update(bool simd, float *v, const float *x, size_t n, enum sel_key key,
                const float *thr, size_t *cnt, size_t nt) {
  if (!thr || nt == 0)
    update_only(v, x, n);
  else
    count_pass(simd, v, v, x, n, key, thr, nt, cnt);
}

size_t sel_count(bool simd, const float *v, size_t n, enum sel_key key,
                 float thr) {
  size_t c;
  count_pass(simd, v, NULL, NULL, n, key, &thr, 1, &c);
  return c;
}

/* ---- collect --------------------------------------------------------- */

/* Blocks of 16: a test of the whole block, and the compaction only for
 * the rare blocks that hold a selected element. As update_count: DST is V
 * for the update, NULL for a read-only pass. */
enum { CBLK = 16 };

#define COLLECT_BODY(PRED)                                                     \
  for (; i + CBLK <= n; i += CBLK) {                                           \
    unsigned any = 0;                                                          \
    for (size_t j = 0; j < CBLK; j++) {                                        \
      float f = x ? v[i + j] + x[i + j] : v[i + j];                            \
      if (dst)                                                                 \
        dst[i + j] = f;                                                        \
      any |= (PRED(f));                                                        \
    }                                                                          \
    if (any)                                                                   \
      for (size_t j = 0; j < CBLK; j++)                                        \
        if (PRED(x ? dst[i + j] : v[i + j]))                                   \
          idx[m++] = (uint32_t)(i + j);                                        \
  }                                                                            \
  for (; i < n; i++) {                                                         \
    float f = x ? v[i] + x[i] : v[i];                                          \
    if (dst)                                                                   \
      dst[i] = f;                                                              \
    if (PRED(f))                                                               \
      idx[m++] = (uint32_t)i;                                                  \
  }                                                                            \
  return m

static ALWAYS_INLINE size_t collect_bucket(const float *v, float *dst,
                                           const float *x, size_t i, size_t n,
                                           enum sel_key key, uint32_t bucket,
                                           uint32_t *idx, size_t m) {
#define IN_BUCKET(f) ((keybits((f), key) >> 21) >= bucket)
  COLLECT_BODY(IN_BUCKET);
#undef IN_BUCKET
}

static ALWAYS_INLINE size_t collect_thr(const float *v, float *dst,
                                        const float *x, size_t i, size_t n,
                                        enum sel_key key, float thr,
                                        uint32_t *idx, size_t m) {
#define ABOVE(f) (keyval((f), key) > thr)
  COLLECT_BODY(ABOVE);
#undef ABOVE
}

static CODEC_HOT size_t collect_bucket_k(const float *v, float *dst,
                                         const float *x, size_t i, size_t n,
                                         enum sel_key key, uint32_t bucket,
                                         uint32_t *idx, size_t m) {
  size_t r = 0;
  DISPATCH(r = collect_bucket(v, dst, x, i, n, KEY_ABS, bucket, idx, m),
           r = collect_bucket(v, dst, x, i, n, KEY_POS, bucket, idx, m),
           r = collect_bucket(v, dst, x, i, n, KEY_NEG, bucket, idx, m));
  return r;
}

static CODEC_HOT size_t collect_thr_k(const float *v, size_t i, size_t n,
                                      enum sel_key key, float thr,
                                      uint32_t *idx, size_t m) {
  size_t r = 0;
  DISPATCH(r = collect_thr(v, NULL, NULL, i, n, KEY_ABS, thr, idx, m),
           r = collect_thr(v, NULL, NULL, i, n, KEY_POS, thr, idx, m),
           r = collect_thr(v, NULL, NULL, i, n, KEY_NEG, thr, idx, m));
  return r;
}

#if CODEC_X86
/* Append the indices of the set bits of MASK, from BASE, in order. */
static inline size_t append_bits(unsigned mask, size_t base, uint32_t *idx,
                                 size_t m) {
  for (; mask; mask &= mask - 1)
    idx[m++] = (uint32_t)(base + (unsigned)__builtin_ctz(mask));
  return m;
}

CODEC_AVX2 static size_t collect_thr_avx2(const float *v, size_t n,
                                          enum sel_key key, float thr,
                                          uint32_t *idx, size_t *mp) {
  const __m256 ka = _mm256_castsi256_ps(_mm256_set1_epi32((int)kv_and(key)));
  const __m256 kx = _mm256_castsi256_ps(_mm256_set1_epi32((int)kv_xor(key)));
  const __m256 t = _mm256_set1_ps(thr);
  size_t i = 0, m = *mp;
  for (; i + 2 * LANES <= n; i += 2 * LANES) {
    __m256 k0 = _mm256_xor_ps(_mm256_and_ps(_mm256_loadu_ps(v + i), ka), kx);
    __m256 k1 =
        _mm256_xor_ps(_mm256_and_ps(_mm256_loadu_ps(v + i + LANES), ka), kx);
    unsigned b0 =
        (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(k0, t, _CMP_GT_OQ));
    unsigned b1 =
        (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(k1, t, _CMP_GT_OQ));
    if (b0 | b1)
      m = append_bits(b0 | b1 << LANES, i, idx, m);
  }
  *mp = m;
  return i;
}

CODEC_AVX2 static size_t collect_bucket_avx2(const float *v, float *dst,
                                             const float *x, size_t n,
                                             enum sel_key key, uint32_t bucket,
                                             uint32_t *idx, size_t *mp) {
  const struct kb_masks k = kb_masks_of(key);
  /* key >> 21 >= bucket  <=>  key >= bucket << 21 (unsigned). */
  const __m256i lo = _mm256_set1_epi32((int)(bucket << 21));
  size_t i = 0, m = *mp;
  for (; i + 2 * LANES <= n; i += 2 * LANES) {
    __m256 f0 = load_sum(v, x, i), f1 = load_sum(v, x, i + LANES);
    if (dst) {
      _mm256_storeu_ps(dst + i, f0);
      _mm256_storeu_ps(dst + i + LANES, f1);
    }
    __m256i k0 = keybits8(f0, &k), k1 = keybits8(f1, &k);
    __m256i g0 = _mm256_cmpeq_epi32(_mm256_max_epu32(k0, lo), k0);
    __m256i g1 = _mm256_cmpeq_epi32(_mm256_max_epu32(k1, lo), k1);
    unsigned b0 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(g0));
    unsigned b1 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(g1));
    if (b0 | b1)
      m = append_bits(b0 | b1 << LANES, i, idx, m);
  }
  *mp = m;
  return i;
}
#endif

size_t sel_update_collect(bool simd, float *v, const float *x, size_t n,
                          enum sel_key key, uint32_t bucket, uint32_t *idx) {
  size_t i = 0, m = 0;
  float *dst = x ? v : NULL;
#if CODEC_X86
  if (simd)
    i = collect_bucket_avx2(v, dst, x, n, key, bucket, idx, &m);
#else
  (void)simd;
#endif
  return collect_bucket_k(v, dst, x, i, n, key, bucket, idx, m);
}

size_t sel_collect(bool simd, const float *v, size_t n, enum sel_key key,
                   float thr, uint32_t *idx) {
  size_t i = 0, m = 0;
#if CODEC_X86
  if (simd)
    i = collect_thr_avx2(v, n, key, thr, idx, &m);
#else
  (void)simd;
#endif
  return collect_thr_k(v, i, n, key, thr, idx, m);
}

/* ---- radix selection ------------------------------------------------- */

uint32_t sel_bucket(const uint32_t hist[2048], size_t k) {
  size_t above = 0;
  for (uint32_t b = 2048; b-- > 0;) {
    if (above + hist[b] >= k)
      return b;
    above += hist[b];
  }
  return 0;
}

size_t sel_exact(const float *v, enum sel_key key, const uint32_t *cand,
                 size_t m, size_t k, uint32_t *keys, uint32_t *out) {
  if (k == 0)
    return 0;
  for (size_t c = 0; c < m; c++)
    keys[c] = keybits(v[cand[c]], key);
  /* Narrow the k-th largest key digit by digit (11, 11, 10 bits), counting
   * only the candidates that share the prefix found so far. */
  uint32_t prefix = 0;
  unsigned done = 0; /* key bits fixed so far, from the top */
  size_t need = k;   /* how many to take among keys with that prefix */
  uint32_t hist[2048];
  while (done < 32) {
    unsigned d = 32 - done >= 11 ? 11 : 32 - done;
    unsigned shift = 32 - done - d;
    memset(hist, 0, sizeof hist);
    for (size_t c = 0; c < m; c++) {
      uint32_t kb = keys[c];
      if (done == 0 || (kb >> (32 - done)) == prefix)
        hist[(kb >> shift) & ((1u << d) - 1)]++;
    }
    size_t above = 0;
    uint32_t digit = 0;
    for (uint32_t b = 1u << d; b-- > 0;) {
      if (above + hist[b] >= need) {
        digit = b;
        break;
      }
      above += hist[b];
    }
    need -= above;
    prefix = prefix << d | digit;
    done += d;
  }
  /* prefix is now the k-th largest key; take every larger key and the
   * first NEED equal ones, in index order. */
  size_t j = 0;
  for (size_t c = 0; c < m; c++) {
    uint32_t kb = keys[c];
    if (kb > prefix || (kb == prefix && need > 0)) {
      need -= kb == prefix;
      out[j++] = cand[c];
    }
  }
  return j;
}
