/* tests/test_formula_input.c: formula inputs from text
 * (models/formula_input.h): parameters in their units, rates, the p list
 * grammar and its limits, and evaluation over a list. */
#include <criterion/criterion.h>

#include "formula_input.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

/* TEXT as a p list; its values into WANT order, or NULL for an error. */
static void p_list(const char *text, const double *want, size_t nwant) {
  double *ps = NULL;
  size_t n = 0;
  char err[256] = "";
  int rc = formula_p_list_parse(text, &ps, &n, err, sizeof err);
  if (!want) {
    cr_assert_eq(rc, -EINVAL, "'%s' accepted", text);
    cr_assert(strstr(err, "geometric range"), "message: %s", err);
    return;
  }
  cr_assert_eq(rc, 0, "'%s' refused: %s", text, err);
  cr_assert_eq(n, nwant, "'%s': %zu values, want %zu", text, n, nwant);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(ps[i], want[i], "'%s'[%zu] = %g, want %g", text, i, ps[i],
                 want[i]);
  g_free(ps);
}

Test(formula_input, p_lists) {
  p_list("4", (double[]){4}, 1);
  p_list("2,4,8", (double[]){2, 4, 8}, 3);
  p_list("2..5", (double[]){2, 3, 4, 5}, 4);
  p_list("2..64x2", (double[]){2, 4, 8, 16, 32, 64}, 6);
  p_list("2..8x1.5", (double[]){2, 3, 5, 8}, 4); /* rounded up */
  p_list("1,3..4,9..20x2", (double[]){1, 3, 4, 9, 18}, 5);
  p_list("1000000000", (double[]){1e9}, 1);
  const char *bad[] = {"",      "0",    "2.5",  "abc",     "5..2",
                       "2..8x1", "-3",   "2,",   ",4",      "2..x2",
                       "2..8x",  "+4",   " 4",   "2..8xinf", "1000000001",
                       "1..100001", "2..8x0.5", "1..1000000000x1.0000001"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    p_list(bad[i], NULL, 0);
}

Test(formula_input, p_list_limit) {
  double *ps;
  size_t n;
  char err[256];
  cr_assert_eq(formula_p_list_parse("1..100000", &ps, &n, err, sizeof err), 0);
  cr_assert_eq(n, FORMULA_P_LIST_MAX);
  cr_assert_eq(ps[n - 1], 100000);
  g_free(ps);
  cr_assert_eq(formula_p_list_parse("1..99999,5..6", &ps, &n, err, sizeof err),
               -EINVAL);
}

Test(formula_input, parameters_in_their_units) {
  double v;
  char err[256];
  cr_assert_eq(formula_param_parse(FP_ALPHA, "5us", &v, err, sizeof err), 0);
  cr_assert_float_eq(v, 5e-6, 1e-18);
  cr_assert_eq(formula_param_parse(FP_N, "64MiB", &v, err, sizeof err), 0);
  cr_assert_eq(v, 67108864.0);
  cr_assert_eq(formula_param_parse(FP_GAMMA, "2.5e-10", &v, err, sizeof err),
               0);
  cr_assert_float_eq(v, 2.5e-10, 1e-22);
  cr_assert_eq(formula_param_parse(FP_AGGR, "3", &v, err, sizeof err), 0);
  cr_assert_eq(v, 3.0);
  cr_assert_eq(formula_param_parse(FP_AGGR, "abc", &v, err, sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "'abc' is not a number"), "message: %s", err);
  cr_assert_eq(formula_param_parse(FP_AGGR, "", &v, err, sizeof err), -EINVAL);
  cr_assert_eq(formula_param_parse(FP_AGGR, "inf", &v, err, sizeof err),
               -EINVAL);
  cr_assert_eq(formula_param_parse(FP_ALPHA, "5xs", &v, err, sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "5xs"), "message: %s", err);
  cr_assert_eq(formula_rate_parse("10Gbps", &v, err, sizeof err), 0);
  cr_assert_float_eq(v, 8e-10, 1e-22);
  cr_assert_eq(formula_rate_parse("0", &v, err, sizeof err), -EINVAL);
  cr_assert_eq(formula_rate_parse("1250000000", &v, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "names no unit"), "%s", err);
}

Test(formula_input, evaluation_over_p) {
  const struct formula *f = formula_find("ring");
  cr_assert_not_null(f);
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_N] = 64e6;
  in.v[FP_ALPHA] = 5e-6;
  in.v[FP_BETA] = 8e-10;
  in.v[FP_GAMMA] = 0;
  double ps[] = {2, 4, 16};
  struct formula_out outs[3];
  char err[256];
  cr_assert_eq(formula_eval_each(f, &in, ps, 3, outs, err, sizeof err), 0,
               "%s", err);
  for (size_t i = 0; i < 3; i++) {
    double p = ps[i];
    double want = 2 * (p - 1) * 5e-6 + 2 * ((p - 1) / p) * 64e6 * 8e-10;
    cr_assert_float_eq(outs[i].total, want, 1e-12 * want, "p = %g", p);
  }
  cr_assert(isnan(in.v[FP_P]), "the caller's input was changed");

  const struct formula *rdb = formula_find("allgather-rdb");
  double bad[] = {2, 4, 6};
  cr_assert_eq(formula_eval_each(rdb, &in, bad, 3, outs, err, sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "power of two"), "message: %s", err);
}
