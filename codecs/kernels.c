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

void kern_feedback_bounds(const codec_t *c, const float *in, const float *rb,
                          const float *ra, size_t n, double *out) {
  (void)c;
  /* Each rounding is at most half an ulp, 2^-24 of the result's magnitude
   * (a little above, for safety: 2^-20 of it), or 2^-150 below the normal
   * range; not finite: no bound. */
  const double u = 0x1p-24 * (1 + 0x1p-20), tiny = 0x1p-148;
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)in[i]), b = rb ? fabs((double)rb[i]) : 0,
           a = ra ? fabs((double)ra[i]) : 0;
    double s = x + b + a;
    out[i] = isfinite(s) ? u * s + tiny : INFINITY;
  }
}
