/* models/codec_eval.c: payload size and error of a codec on gradients
 * (codec_eval.h). */
#include "codec_eval.h"

#include <math.h>
#include <string.h>

void codec_eval_error(const float *x, const float *y, size_t n,
                      double *max_abs, double *rmse) {
  double m = 0, sq = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)x[i] - (double)y[i]);
    if (!(d <= m)) /* NaN propagates: an error that cannot be measured */
      m = d;
    sq += d * d;
  }
  *max_abs = m;
  *rmse = n ? sqrt(sq / (double)n) : 0;
}

static int fail(enum codec_eval_stage *failed, enum codec_eval_stage stage,
                int rc) {
  if (failed)
    *failed = stage;
  return rc;
}

int codec_eval_step(codec_state_t *s, const float *x, size_t n, void *payload,
                    size_t cap, float *y, struct codec_step_stats *out,
                    enum codec_eval_stage *failed) {
  const codec_t *c = codec_state_codec(s);
  ptrdiff_t len = codec_encode(s, x, n, payload, cap);
  if (len < 0)
    return fail(failed, CODEC_EVAL_ENCODE, (int)len);
  int rc = codec_decode(c, payload, (size_t)len, y, n);
  if (rc != 0)
    return fail(failed, CODEC_EVAL_DECODE, rc);
  memset(out, 0, sizeof *out);
  out->bytes = (size_t)len;
  out->bits_per_value = 8.0 * (double)out->bytes / (double)n;
  out->ratio = out->bytes ? 4.0 * (double)n / (double)out->bytes : NAN;
  codec_eval_error(x, y, n, &out->max_abs_err, &out->rmse);
  /* The payload was just decoded: the scan cannot fail. */
  out->nclasses = codec_class_count(c);
  if (out->nclasses)
    codec_classes(c, payload, out->bytes, n, NULL, out->classes);
  return 0;
}

/* ||SY - SX|| / ||SX|| over N values, 0 when SX is all zeros. */
static double relative_error(const double *sx, const double *sy, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num += (sy[i] - sx[i]) * (sy[i] - sx[i]);
    den += sx[i] * sx[i];
  }
  return den > 0 ? sqrt(num / den) : 0;
}

int codec_eval_compare(codec_state_t *s, const struct gradgen_params *gp,
                       size_t n, size_t steps, void *payload, size_t cap,
                       const struct codec_eval_scratch *w,
                       struct codec_compare_row *out,
                       enum codec_eval_stage *failed) {
  const codec_t *c = codec_state_codec(s);
  memset(w->sum_x, 0, 8 * n);
  memset(w->sum_y, 0, 8 * n);
  double bytes = 0, rmse = 0, maxerr = 0;
  for (size_t t = 0; t < steps; t++) {
    int rc = gradgen_fill(gp, 0, 0, t, 1.0, 0, w->x, n);
    if (rc != 0)
      return fail(failed, CODEC_EVAL_GENERATE, rc);
    ptrdiff_t len = codec_encode(s, w->x, n, payload, cap);
    if (len < 0)
      return fail(failed, CODEC_EVAL_ENCODE, (int)len);
    rc = codec_decode(c, payload, (size_t)len, w->y, n);
    if (rc != 0)
      return fail(failed, CODEC_EVAL_DECODE, rc);
    double m, r;
    codec_eval_error(w->x, w->y, n, &m, &r);
    bytes += (double)len;
    rmse += r / (double)steps;
    maxerr = m > maxerr ? m : maxerr;
    for (size_t i = 0; i < n; i++) {
      w->sum_x[i] += w->x[i];
      w->sum_y[i] += w->y[i];
    }
  }
  out->bits_per_value = 8.0 * bytes / (double)steps / (double)n;
  out->ratio = 32.0 / out->bits_per_value;
  out->rmse = rmse;
  out->max_abs_err = maxerr;
  out->sum_rel_err = relative_error(w->sum_x, w->sum_y, n);
  double xy = 0, xx = 0, yy = 0;
  for (size_t i = 0; i < n; i++) {
    xy += w->sum_x[i] * w->sum_y[i];
    xx += w->sum_x[i] * w->sum_x[i];
    yy += w->sum_y[i] * w->sum_y[i];
  }
  out->sum_cosine = xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : xx == yy;
  return 0;
}
