/* tests/test_codec_eval.c: what codec roundtrip and compare measure
 * (models/codec_eval.h): error statistics, a step's size and classes,
 * failures by stage, and compare's rows. */
#include <criterion/criterion.h>

#include "codec_eval.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

static codec_t *make(const char *spec) {
  codec_t *c;
  char err[CODEC_ERR_MAX];
  int rc = codec_create(spec, &c, err, sizeof err);
  cr_assert_eq(rc, 0, "codec_create(%s): %s", spec, err);
  return c;
}

/* N values of the default synthetic gradient, step T. */
static float *gradient(size_t n, uint64_t t) {
  struct gradgen_params gp;
  gradgen_defaults(&gp);
  float *x = g_new(float, n);
  cr_assert_eq(gradgen_fill(&gp, 0, 0, t, 1.0, 0, x, n), 0);
  return x;
}

Test(codec_eval, error_statistics) {
  float x[] = {1, 2, 3, 4}, y[] = {1, 2.5f, 3, 2};
  double m, r;
  codec_eval_error(x, y, 4, &m, &r);
  cr_assert_float_eq(m, 2.0, 1e-12);
  cr_assert_float_eq(r, sqrt((0.25 + 4.0) / 4), 1e-12);
  codec_eval_error(x, y, 0, &m, &r);
  cr_assert(m == 0 && r == 0, "n = 0 gives %g %g", m, r);
  y[3] = NAN;
  codec_eval_error(x, y, 4, &m, &r);
  cr_assert(isnan(m), "a NaN difference is hidden: max %g", m);
}

/* A codec, a fresh stream of N values, a step of the synthetic gradient
 * in X, room for the decoded step in Y and a payload of the bound. */
struct rig {
  codec_t *c;
  codec_state_t *s;
  float *x, *y;
  void *payload;
  size_t n, cap;
};

static struct rig rig_make(const char *spec, size_t n) {
  struct rig r = {make(spec), NULL, gradient(n, 0), g_new(float, n), NULL, n,
                  0};
  cr_assert_eq(codec_state_create(r.c, n, 1, &r.s), 0);
  r.cap = codec_bound(r.c, n);
  r.payload = g_malloc(r.cap);
  return r;
}

static void rig_free(struct rig *r) {
  g_free(r->payload);
  g_free(r->x);
  g_free(r->y);
  codec_state_free(r->s);
  codec_free(r->c);
}

Test(codec_eval, fp32_step_is_exact) {
  struct rig r = rig_make("fp32", 1001);
  struct codec_step_stats st;
  cr_assert_eq(
      codec_eval_step(r.s, r.x, r.n, r.payload, r.cap, r.y, &st, NULL), 0);
  cr_assert_eq(st.bytes, 4 * r.n);
  cr_assert_float_eq(st.bits_per_value, 32.0, 1e-12);
  cr_assert_float_eq(st.ratio, 1.0, 1e-12);
  cr_assert(st.max_abs_err == 0 && st.rmse == 0 && st.nclasses == 0);
  cr_assert_eq(memcmp(r.x, r.y, 4 * r.n), 0);
  rig_free(&r);
}

Test(codec_eval, inceptionn_classes_count_every_value) {
  struct rig r = rig_make("inceptionn:eb=-10", 4099);
  r.x[5] = 3.0f; /* |x| >= 1: all 32 bits kept */
  struct codec_step_stats st;
  cr_assert_eq(
      codec_eval_step(r.s, r.x, r.n, r.payload, r.cap, r.y, &st, NULL), 0);
  cr_assert_eq(st.nclasses, 4);
  uint64_t sum = st.classes[0] + st.classes[1] + st.classes[2] + st.classes[3];
  cr_assert_eq(sum, r.n, "classes sum to %llu", (unsigned long long)sum);
  cr_assert_geq(st.classes[3], 1);
  /* 2 tag bits per value plus the kept fields, in whole bytes. */
  uint64_t bits = 2 * (uint64_t)r.n + 8 * st.classes[1] + 16 * st.classes[2] +
                  32 * st.classes[3];
  cr_assert_eq(st.bytes, (bits + 7) / 8);
  /* Values kept in 8 bits are truncated to multiples of 2^-7. */
  cr_assert_leq(st.max_abs_err, ldexp(1, -7));
  rig_free(&r);
}

Test(codec_eval, non_finite_input_fails_at_encode) {
  struct rig r = rig_make("q8", 64);
  r.x[3] = NAN;
  struct codec_step_stats st;
  enum codec_eval_stage failed = CODEC_EVAL_DECODE;
  cr_assert_eq(
      codec_eval_step(r.s, r.x, r.n, r.payload, r.cap, r.y, &st, &failed),
      -EDOM);
  cr_assert_eq(failed, CODEC_EVAL_ENCODE);
  cr_assert_eq(codec_state_step(r.s), 0, "a failed encode moved the state");
  rig_free(&r);
}

/* compare's row of SPEC over STEPS steps of N values. */
static struct codec_compare_row compare(const char *spec, size_t n,
                                        size_t steps) {
  struct rig r = rig_make(spec, n);
  struct gradgen_params gp;
  gradgen_defaults(&gp);
  struct codec_eval_scratch w = {r.x, r.y, g_new(double, n), g_new(double, n)};
  struct codec_compare_row row;
  cr_assert_eq(
      codec_eval_compare(r.s, &gp, n, steps, r.payload, r.cap, &w, &row, NULL),
      0);
  g_free(w.sum_x);
  g_free(w.sum_y);
  rig_free(&r);
  return row;
}

Test(codec_eval, compare_rows) {
  struct codec_compare_row r = compare("fp32", 5000, 3);
  cr_assert_float_eq(r.bits_per_value, 32.0, 1e-12);
  cr_assert_float_eq(r.ratio, 1.0, 1e-12);
  cr_assert(r.rmse == 0 && r.max_abs_err == 0 && r.sum_rel_err == 0);

  r = compare("fp16", 5000, 3);
  cr_assert_float_eq(r.bits_per_value, 16.0, 1e-12);
  cr_assert(r.rmse > 0 && r.max_abs_err >= r.rmse);

  /* Error feedback: onebit's steps are coarse, but the sum of ten decoded
   * steps stays close to the sum of the inputs, much closer than one
   * step's error relative to one step. */
  r = compare("onebit", 20000, 10);
  struct codec_compare_row once = compare("onebit", 20000, 1);
  cr_assert_lt(r.sum_rel_err, 0.5 * once.sum_rel_err,
               "sum error %g after 10 steps, %g after 1", r.sum_rel_err,
               once.sum_rel_err);

  struct codec_compare_row again = compare("onebit", 20000, 10);
  cr_assert_eq(memcmp(&r, &again, sizeof r), 0, "not deterministic");
}
