/* repro/evaluate.c: judging claims against the paper, and derived
 * columns (repro.h). */
#include "repro.h"

#include <math.h>
#include <string.h>

void claim_results_free(GArray *res) {
  if (!res)
    return;
  for (guint i = 0; i < res->len; i++)
    g_free(g_array_index(res, struct claim_result, i).error);
  g_array_free(res, TRUE);
}

static void judge(struct claim_result *cr) {
  const struct repro_claim *c = cr->claim;
  const struct paper_value *pv = cr->paper;
  double v = cr->value;
  cr->ratio = NAN;
  if (isnan(v)) {
    cr->within = -1;
    return;
  }
  switch (pv->kind) {
  case PAPER_GT:
    cr->within = v > pv->lo;
    return;
  case PAPER_LT:
    cr->within = v < pv->lo;
    return;
  case PAPER_VALUE:
  case PAPER_RANGE: {
    double near = v < pv->lo ? pv->lo : v > pv->hi ? pv->hi : v;
    cr->ratio = near != 0 ? v / near : NAN;
    double lo = pv->lo, hi = pv->hi;
    if (c->tol_abs) {
      lo -= c->tol;
      hi += c->tol;
    } else {
      lo -= c->tol * fabs(lo);
      hi += c->tol * fabs(hi);
    }
    cr->within = v >= lo && v <= hi;
    return;
  }
  }
}

GArray *repro_evaluate(const struct repro *r, const struct table *t) {
  GArray *res = g_array_new(FALSE, TRUE, sizeof(struct claim_result));
  for (guint i = 0; i < r->claims->len; i++) {
    const struct repro_claim *c = g_ptr_array_index(r->claims, i);
    for (guint g = 0; g < c->groups->len; g++) {
      struct claim_result cr = {0};
      cr.claim = c;
      cr.group = g_ptr_array_index(c->groups, g);
      cr.paper = &g_array_index(c->paper, struct paper_value, g);
      cr.value = NAN;
      double v;
      if (expr_eval(c->expr, t, c->by, c->by ? cr.group : NULL, -1, &v,
                    &cr.error) == 0)
        cr.value = v;
      judge(&cr);
      if (c->not_evaluable) {
        /* Shown with its figure, never judged. */
        cr.within = -1;
        g_free(cr.error);
        cr.error = g_strdup_printf("not evaluable: %s", c->not_evaluable);
      }
      g_array_append_val(res, cr);
    }
  }
  return res;
}

char *repro_format_value(double v) {
  if (isnan(v))
    return g_strdup("-");
  double a = fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6))
    return g_strdup_printf("%.3g", v);
  if (a >= 100)
    return g_strdup_printf("%.1f", v);
  return g_strdup_printf("%.3g", v);
}

int repro_derive(const struct repro *r, struct table *t, char **err) {
  for (guint d = 0; d < r->derive_names->len; d++) {
    const char *name = g_ptr_array_index(r->derive_names, d);
    const struct expr *e = g_ptr_array_index(r->derive_exprs, d);
    char **vals = g_new0(char *, t->rows->len + 1);
    for (guint row = 0; row < t->rows->len; row++) {
      double v;
      char *e2 = NULL;
      if (expr_eval(e, t, NULL, NULL, (int)row, &v, &e2) != 0) {
        *err =
            g_strdup_printf("derived column %s, row %u: %s", name, row + 1, e2);
        g_free(e2);
        g_strfreev(vals);
        return -1;
      }
      vals[row] = isfinite(v) ? g_strdup_printf("%.9g", v) : g_strdup("");
    }
    table_add_col(t, name);
    guint col = t->cols->len - 1;
    for (guint row = 0; row < t->rows->len; row++) {
      GPtrArray *f = g_ptr_array_index(t->rows, row);
      g_free(f->pdata[col]);
      f->pdata[col] = vals[row];
      vals[row] = NULL;
    }
    g_strfreev(vals);
  }
  return 0;
}

struct claim_score claim_score(const GArray *res, enum claim_kind kind) {
  struct claim_score sc = {0, 0, 0};
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    if (cr->claim->kind != kind)
      continue;
    sc.total++;
    sc.within += cr->within == 1;
    sc.not_judged += cr->within == -1;
  }
  return sc;
}
