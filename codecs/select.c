/* codecs/select.c: top-k selection kernels (see select.h). */
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

/* The value a key ranks by, and an unsigned bit pattern in the same
 * order (for radix selection). */
static ALWAYS_INLINE float keyval(float v, enum sel_key key) {
  return key == KEY_ABS ? fabsf(v) : key == KEY_POS ? v : -v;
}
static ALWAYS_INLINE uint32_t keybits(float v, enum sel_key key) {
  uint32_t u = kern_float_to_bits(v);
  if (key == KEY_ABS)
    return u & 0x7fffffffu;
  uint32_t ordered = u ^ ((uint32_t)-(int32_t)(u >> 31) | 0x80000000u);
  return key == KEY_POS ? ordered : ~ordered;
}

/* Each kernel is written once as an always-inline body with the key as a
 * parameter, and instantiated per key by a switch in a multi-versioned
 * function, so that every (key, ISA) pair is compiled with the key
 * constant. */
#define DISPATCH(call_abs, call_pos, call_neg)                                 \
  switch (key) {                                                               \
  case KEY_ABS:                                                                \
    return call_abs;                                                           \
  case KEY_POS:                                                                \
    return call_pos;                                                           \
  case KEY_NEG:                                                                \
    return call_neg;                                                           \
  }                                                                            \
  return 0

enum { LANES = 8 };

static ALWAYS_INLINE uint32_t scan_stats(const float *v, const float *x,
                                         size_t n, enum sel_key key,
                                         double *sum, float *max) {
  /* Fixed lanes, summed in a fixed order: the same result from every
   * clone and every vector width. */
  double s[LANES] = {0};
  float mx[LANES];
  uint32_t ab[LANES] = {0};
  for (int j = 0; j < LANES; j++)
    mx[j] = -INFINITY;
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int j = 0; j < LANES; j++) {
      float f = x ? v[i + j] + x[i + j] : v[i + j];
      float kv = keyval(f, key);
      s[j] += (double)kv;
      mx[j] = kv > mx[j] ? kv : mx[j];
      uint32_t a = kern_float_to_bits(f) & 0x7fffffffu;
      ab[j] = a > ab[j] ? a : ab[j];
    }
  for (; i < n; i++) {
    float f = x ? v[i] + x[i] : v[i];
    float kv = keyval(f, key);
    s[0] += (double)kv;
    mx[0] = kv > mx[0] ? kv : mx[0];
    uint32_t a = kern_float_to_bits(f) & 0x7fffffffu;
    ab[0] = a > ab[0] ? a : ab[0];
  }
  double total = 0;
  float m = -INFINITY;
  uint32_t a = 0;
  for (int j = 0; j < LANES; j++) {
    total += s[j];
    m = mx[j] > m ? mx[j] : m;
    a = ab[j] > a ? ab[j] : a;
  }
  *sum = total;
  *max = m;
  return a;
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

static CODEC_HOT uint32_t scan_stats_k(const float *v, const float *x, size_t n,
                                       enum sel_key key, double *sum,
                                       float *max) {
  DISPATCH(scan_stats(v, x, n, KEY_ABS, sum, max),
           scan_stats(v, x, n, KEY_POS, sum, max),
           scan_stats(v, x, n, KEY_NEG, sum, max));
}

static CODEC_HOT uint32_t scan_hist_k(const float *v, const float *x, size_t n,
                                      enum sel_key key, uint32_t hist[2048]) {
  DISPATCH(scan_hist(v, x, n, KEY_ABS, hist), scan_hist(v, x, n, KEY_POS, hist),
           scan_hist(v, x, n, KEY_NEG, hist));
}

static CODEC_HOT uint32_t scan_max_k(const float *v, const float *x,
                                     size_t n) {
  return x ? scan_max(v, x, n) : scan_max(v, NULL, n);
}

uint32_t sel_scan(const float *v, const float *x, size_t n, enum sel_key key,
                  double *sum, float *max, uint32_t hist[2048]) {
  if (hist) {
    memset(hist, 0, 2048 * sizeof hist[0]);
    return scan_hist_k(v, x, n, key, hist);
  }
  if (sum && max)
    return scan_stats_k(v, x, n, key, sum, max);
  return scan_max_k(v, x, n);
}

/* ---- update and count ---------------------------------------------- */

enum { MAXT = 5 };

/* Reads V (plus X when given) and writes the sum to DST when given: DST
 * is V itself for the update, NULL for a read-only count. */
static ALWAYS_INLINE void update_count(const float *v, float *dst,
                                       const float *x, size_t n,
                                       enum sel_key key, const float *thr,
                                       size_t *cnt) {
  float t[MAXT];
  for (int j = 0; j < MAXT; j++)
    t[j] = thr[j];
  size_t c[MAXT] = {0};
  for (size_t i = 0; i < n; i++) {
    float f = x ? v[i] + x[i] : v[i];
    if (dst)
      dst[i] = f;
    float kv = keyval(f, key);
    for (int j = 0; j < MAXT; j++)
      c[j] += kv > t[j];
  }
  for (int j = 0; j < MAXT; j++)
    cnt[j] = c[j];
}

static CODEC_HOT void update_count_k(const float *v, float *dst,
                                     const float *x, size_t n,
                                     enum sel_key key, const float *thr,
                                     size_t *cnt) {
  switch (key) {
  case KEY_ABS:
    update_count(v, dst, x, n, KEY_ABS, thr, cnt);
    return;
  case KEY_POS:
    update_count(v, dst, x, n, KEY_POS, thr, cnt);
    return;
  case KEY_NEG:
    update_count(v, dst, x, n, KEY_NEG, thr, cnt);
    return;
  }
}

static CODEC_HOT void update_only(float *v, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    v[i] += x[i];
}

void sel_update(float *v, const float *x, size_t n, enum sel_key key,
                const float *thr, size_t *cnt, size_t nt) {
  if (!thr || nt == 0) {
    update_only(v, x, n);
    return;
  }
  /* Unused threshold slots count nothing (NaN compares false). */
  float t[MAXT];
  size_t c[MAXT];
  for (size_t j = 0; j < MAXT; j++)
    t[j] = j < nt ? thr[j] : NAN;
  update_count_k(v, v, x, n, key, t, c);
  for (size_t j = 0; j < nt && j < MAXT; j++)
    cnt[j] = c[j];
}

size_t sel_count(const float *v, size_t n, enum sel_key key, float thr) {
  float t[MAXT] = {thr, NAN, NAN, NAN, NAN};
  size_t c[MAXT];
  update_count_k(v, NULL, NULL, n, key, t, c);
  return c[0];
}

/* ---- collect -------------------------------------------------------- */

/* Blocks of 16: a vectorised test of the whole block, and the scalar
 * compaction only for the rare blocks that hold a selected element. */
enum { CBLK = 16 };

#define COLLECT_BODY(PRED)                                                     \
  size_t m = 0, i = 0;                                                         \
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

/* As update_count: DST is V for the update, NULL for a read-only pass. */
static ALWAYS_INLINE size_t collect_bucket(const float *v, float *dst,
                                           const float *x, size_t n,
                                           enum sel_key key, uint32_t bucket,
                                           uint32_t *idx) {
#define IN_BUCKET(f) ((keybits((f), key) >> 21) >= bucket)
  COLLECT_BODY(IN_BUCKET);
#undef IN_BUCKET
}

static ALWAYS_INLINE size_t collect_thr(const float *v, float *dst,
                                        const float *x, size_t n,
                                        enum sel_key key, float thr,
                                        uint32_t *idx) {
#define ABOVE(f) (keyval((f), key) > thr)
  COLLECT_BODY(ABOVE);
#undef ABOVE
}

static CODEC_HOT size_t collect_bucket_k(const float *v, float *dst,
                                         const float *x, size_t n,
                                         enum sel_key key, uint32_t bucket,
                                         uint32_t *idx) {
  DISPATCH(collect_bucket(v, dst, x, n, KEY_ABS, bucket, idx),
           collect_bucket(v, dst, x, n, KEY_POS, bucket, idx),
           collect_bucket(v, dst, x, n, KEY_NEG, bucket, idx));
}

static CODEC_HOT size_t collect_thr_k(const float *v, size_t n,
                                      enum sel_key key, float thr,
                                      uint32_t *idx) {
  DISPATCH(collect_thr(v, NULL, NULL, n, KEY_ABS, thr, idx),
           collect_thr(v, NULL, NULL, n, KEY_POS, thr, idx),
           collect_thr(v, NULL, NULL, n, KEY_NEG, thr, idx));
}

size_t sel_update_collect(float *v, const float *x, size_t n, enum sel_key key,
                          uint32_t bucket, uint32_t *idx) {
  return x ? collect_bucket_k(v, v, x, n, key, bucket, idx)
           : collect_bucket_k(v, NULL, NULL, n, key, bucket, idx);
}

size_t sel_collect(const float *v, size_t n, enum sel_key key, float thr,
                   uint32_t *idx) {
  return collect_thr_k(v, n, key, thr, idx);
}

/* ---- radix selection ------------------------------------------------ */

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
                 size_t m, size_t k, uint32_t *out) {
  if (k == 0)
    return 0;
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
      uint32_t kb = keybits(v[cand[c]], key);
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
    uint32_t i = cand[c];
    uint32_t kb = keybits(v[i], key);
    if (kb > prefix || (kb == prefix && need > 0)) {
      need -= kb == prefix;
      out[j++] = i;
    }
  }
  return j;
}
