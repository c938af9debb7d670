/* tests/test_claim.c: the claim language (repro/claim.h): its grammar,
 * every operator and function, selectors, and its errors. */
#include "claim.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* variant, model, nodes, time: a small runs.csv. */
static struct table *runs(void) {
  char *err = NULL;
  struct table *t = table_parse_csv("variant,model,nodes,time,note\n"
                                    "WA,alexnet,4,2.0,\n"
                                    "WA,vgg16,4,8.0,x\n"
                                    "INC,alexnet,4,0.5,\n"
                                    "INC,vgg16,4,4.0,\n"
                                    "WA,alexnet,8,3.0,\n"
                                    "INC,alexnet,8,,\n",
                                    &err);
  cr_assert_not_null(t, "%s", err);
  return t;
}

/* TEXT evaluated over the runs (BIND: "col=val" or NULL; ROW or -1). */
static int eval(const char *text, const char *bind, int row, double *v,
                char **err) {
  struct table *t = runs();
  struct expr *e = expr_parse(text, err);
  cr_assert_not_null(e, "parse %s: %s", text, *err ? *err : "");
  char *col = NULL;
  const char *val = NULL;
  if (bind) {
    col = g_strndup(bind, strcspn(bind, "="));
    val = strchr(bind, '=') + 1;
  }
  int rc = expr_eval(e, t, col, val, row, v, err);
  g_free(col);
  expr_free(e);
  table_free(t);
  return rc;
}

static double value(const char *text, const char *bind, int row) {
  double v = NAN;
  char *err = NULL;
  int rc = eval(text, bind, row, &v, &err);
  cr_assert_eq(rc, 0, "%s: %s", text, err ? err : "");
  return v;
}

/* ERR (taken) names what went wrong with TEXT: it holds WANT. */
static void message_holds(const char *text, char *err, const char *want) {
  cr_assert_not_null(err, "%s: no message", text);
  bool ok = strstr(err, want) != NULL;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", err);
  g_free(err);
  cr_assert(ok, "%s: '%s' lacks '%s'", text, msg, want);
}

/* TEXT fails to evaluate with a message holding WANT. */
static void eval_fails(const char *text, const char *bind, int row,
                       const char *want) {
  double v;
  char *err = NULL;
  cr_assert_neq(eval(text, bind, row, &v, &err), 0, "%s evaluated", text);
  message_holds(text, err, want);
}

/* TEXT fails to parse with a message holding WANT. */
static void parse_fails(const char *text, const char *want) {
  char *err = NULL;
  struct expr *e = expr_parse(text, &err);
  cr_assert_null(e, "'%s' parsed", text);
  message_holds(text, err, want);
}

Test(claim, numbers_and_precedence) {
  cr_assert_float_eq(value("1 + 2 * 3", NULL, -1), 7, 1e-12);
  cr_assert_float_eq(value("(1 + 2) * 3", NULL, -1), 9, 1e-12);
  cr_assert_float_eq(value("8 / 4 / 2", NULL, -1), 1, 1e-12);
  cr_assert_float_eq(value("10 - 4 - 3", NULL, -1), 3, 1e-12);
  cr_assert_float_eq(value("-2 * -3", NULL, -1), 6, 1e-12);
  cr_assert_float_eq(value("--4", NULL, -1), 4, 1e-12);
  cr_assert_float_eq(value(".5 + 2e-1", NULL, -1), 0.7, 1e-12);
  cr_assert_float_eq(value("1 +\n\t2", NULL, -1), 3, 1e-12);
}

Test(claim, division_by_zero_is_nan) {
  double v;
  char *err = NULL;
  cr_assert_eq(eval("1 / 0", NULL, -1, &v, &err), 0);
  cr_assert(isnan(v));
}

Test(claim, functions) {
  cr_assert_float_eq(value("max(time{variant=WA})", NULL, -1), 8, 1e-12);
  cr_assert_float_eq(value("min(time{variant=WA})", NULL, -1), 2, 1e-12);
  cr_assert_float_eq(value("mean(time{variant=WA})", NULL, -1), 13.0 / 3,
                     1e-12);
  cr_assert_float_eq(value("sum(time{variant=WA}, 1)", NULL, -1), 14, 1e-12);
  /* Empty fields are skipped by aggregates and by count. */
  cr_assert_float_eq(value("count(time{variant=INC})", NULL, -1), 2, 1e-12);
  cr_assert_float_eq(value("sum(time{variant=INC})", NULL, -1), 4.5, 1e-12);
  cr_assert_float_eq(value("abs(1 - 3)", NULL, -1), 2, 1e-12);
  cr_assert_float_eq(value("lg(1024)", NULL, -1), 10, 1e-12);
  cr_assert_float_eq(value("max(1, 5, 3)", NULL, -1), 5, 1e-12);
  cr_assert_float_eq(value("count(time{variant=none})", NULL, -1), 0, 1e-12);
}

Test(claim, selectors) {
  cr_assert_float_eq(value("time{variant=WA, model=vgg16}", NULL, -1), 8,
                     1e-12);
  /* Numbers match numerically: 4.0 = 4 = 4e0. */
  cr_assert_float_eq(
      value("time{variant=WA, model=alexnet, nodes=8.0}", NULL, -1), 3, 1e-12);
  /* max/min: the extreme among the rows the other filters select. */
  cr_assert_float_eq(
      value("time{variant=WA, model=alexnet, nodes=max}", NULL, -1), 3, 1e-12);
  cr_assert_float_eq(
      value("time{variant=WA, model=alexnet, nodes=min}", NULL, -1), 2, 1e-12);
  /* A binding filters every term. */
  cr_assert_float_eq(value("time{variant=WA, nodes=4} / time{variant=INC, "
                           "nodes=4}",
                           "model=alexnet", -1),
                     4, 1e-12);
  cr_assert_float_eq(value("time{variant=WA, nodes=4} / time{variant=INC, "
                           "nodes=4}",
                           "model=vgg16", -1),
                     2, 1e-12);
}

Test(claim, current_row) {
  /* Row 2 is INC, alexnet, 4: `$` takes its fields, a bare column its
   * value. */
  cr_assert_float_eq(
      value("time{variant=WA, model=$, nodes=$} / time", NULL, 2), 4, 1e-12);
  cr_assert_float_eq(value("time", NULL, 3), 4, 1e-12);
  /* An empty field reads as NaN. */
  cr_assert(isnan(value("time", NULL, 5)));
}

Test(claim, parse_errors_name_the_position) {
  parse_fails("", "expected a number");
  parse_fails("1 +", "at character 4");
  parse_fails("(1 + 2", "expected ')'");
  parse_fails("1 2", "unexpected text at character 3");
  parse_fails("median(time)", "unknown function");
  parse_fails("max(1; 2)", "expected ',' or ')'");
  parse_fails("abs(1, 2)", "abs and lg take one argument");
  parse_fails("time{variant}", "expected '='");
  parse_fails("time{=WA}", "expected a column name");
  parse_fails("time{variant=WA", "missing '}'");
  parse_fails("1 + *", "expected a number, a column");
}

Test(claim, evaluation_errors_name_the_term) {
  eval_fails("speed", NULL, -1, "no column 'speed'");
  eval_fails("time{size=1}", NULL, -1, "no column 'size' to filter on");
  eval_fails("time{variant=WA}", NULL, -1,
             "matches 3 rows where one is needed");
  eval_fails("time{variant=XX}", NULL, -1, "time{variant=XX} matches no row");
  eval_fails("note{variant=WA, model=vgg16}", NULL, -1, "'x' is not a number");
  eval_fails("time{model=$}", NULL, -1, "'$' in a filter needs a current row");
  eval_fails("time{nodes=4}", "depth=1", -1, "no column 'depth' to group by");
  eval_fails("max(time{variant=XX})", NULL, -1, "max() has no values");
  eval_fails("time{variant=WA, nodes=4}", "model=resnet", -1,
             "with model=resnet matches no row");
}
