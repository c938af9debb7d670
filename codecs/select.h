/* codecs/select.h: top-k selection over a residual vector, shared by the
 * topk and rgc codecs (RedSync, seeds/002, Section 2.1).
 *
 * Elements are ranked by a key: |v| (KEY_ABS), v (KEY_POS: the largest
 * values, for ASQ's even steps) or -v (KEY_NEG: the most negative). Every
 * function returns indices in increasing order; among elements of equal
 * key the lower indices are taken first, so results are deterministic. */
#ifndef GRADSIM_CODECS_SELECT_H
#define GRADSIM_CODECS_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sel_key { KEY_ABS, KEY_POS, KEY_NEG };

/* k = max(1, ceil(ratio n)), at most n. The product is rounded down by a
 * relative 1e-9 first, so that a ratio written in decimal (0.05 * 100)
 * does not step over a whole number. */
size_t sel_k(double ratio, size_t n);

/* SIMD: use the AVX2 kernels (codec_use_avx2()); both kinds give the
 * same results. */

/* The residual update every residual codec starts with, done in a
 * read-only pass first so that a NaN or infinity is found before the state
 * changes: returns the largest |v + x| as a bit pattern (>= 0x7f800000:
 * not finite). Optionally (SUM, MAX non-NULL) the mean and max of the key
 * value of v + x (|v+x|, v+x or -(v+x)), as Algorithm 2 line 1 needs, or
 * (HIST non-NULL) a histogram of the top 11 bits of the keys. */
uint32_t sel_scan(bool simd, const float *v, const float *x, size_t n,
                  enum sel_key key, double *sum, float *max,
                  uint32_t hist[2048]);

/* v += x. With THR and CNT non-NULL also counts the updated keys above
 * each of the NT thresholds (Algorithm 2's count_nonzero for several
 * ratios in one pass). */
void sel_update(bool simd, float *v, const float *x, size_t n, enum sel_key key,
                const float *thr, size_t *cnt, size_t nt);

/* v += x, and the indices whose key's top 11 bits are at least BUCKET into
 * IDX; returns their number. */
size_t sel_update_collect(bool simd, float *v, const float *x, size_t n,
                          enum sel_key key, uint32_t bucket, uint32_t *idx);

/* Number of elements whose key value is above THR. */
size_t sel_count(bool simd, const float *v, size_t n, enum sel_key key,
                 float thr);
/* Their indices, into IDX; returns the number. */
size_t sel_collect(bool simd, const float *v, size_t n, enum sel_key key,
                   float thr, uint32_t *idx);

/* The bucket (top 11 key bits) holding the k-th largest key, from a
 * histogram: keys in higher buckets are fewer than k. K >= 1. */
uint32_t sel_bucket(const uint32_t hist[2048], size_t k);

/* Exact top K of the M candidates CAND (increasing indices, M >= K) into
 * OUT (may alias CAND); returns K. Radix selection on the key bits, 11 at
 * a time, over the candidates only; KEYS (M entries) is workspace that
 * holds the candidates' keys, so that V is read at random only once. */
size_t sel_exact(const float *v, enum sel_key key, const uint32_t *cand,
                 size_t m, size_t k, uint32_t *keys, uint32_t *out);

#endif
