/* codecs/kernels.c: reductions shared by several codecs. */
#include "codec_impl.h"

/* Comparing magnitudes as unsigned bit patterns orders every finite value
 * correctly, puts infinity above them and NaN above infinity, and
 * vectorises to integer max instructions (no NaN rules to respect). */
CODEC_HOT uint32_t kern_absmax_bits(const float *x, size_t n) {
  uint32_t m = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, x + i, sizeof u);
    u &= 0x7fffffffu;
    m = u > m ? u : m;
  }
  return m;
}

CODEC_HOT uint32_t kern_absmax_sum_bits(const float *a, const float *b,
                                        size_t n) {
  uint32_t m = 0;
  for (size_t i = 0; i < n; i++) {
    float f = a[i] + b[i];
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u &= 0x7fffffffu;
    m = u > m ? u : m;
  }
  return m;
}
