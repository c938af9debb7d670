/* repro/report.c: what a reproduction writes about its claims
 * (repro.h): claims.csv, NAME.md and REPORT.md. */
#include "repro.h"

#include <math.h>
#include <string.h>

char *repro_claims_csv(const GArray *res) {
  struct table *t = table_new();
  static const char *const cols[] = {"claim",    "group",    "text",    "paper",
                                     "paper_lo", "paper_hi", "gradsim", "ratio",
                                     "within",   "kind"};
  for (size_t i = 0; i < G_N_ELEMENTS(cols); i++)
    table_add_col(t, cols[i]);
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    GPtrArray *f = g_ptr_array_new();
    g_ptr_array_add(f, g_strdup(cr->claim->id));
    g_ptr_array_add(f, g_strdup(cr->group));
    g_ptr_array_add(f, g_strdup(cr->claim->text));
    g_ptr_array_add(f, g_strdup(cr->paper->text));
    g_ptr_array_add(f, g_strdup_printf("%.9g", cr->paper->lo));
    g_ptr_array_add(f, g_strdup_printf("%.9g", cr->paper->hi));
    g_ptr_array_add(f, isnan(cr->value) ? g_strdup("")
                                        : g_strdup_printf("%.9g", cr->value));
    g_ptr_array_add(f, isnan(cr->ratio) ? g_strdup("")
                                        : g_strdup_printf("%.9g", cr->ratio));
    g_ptr_array_add(f, g_strdup(cr->within == 1   ? "yes"
                                : cr->within == 0 ? "no"
                                                  : ""));
    g_ptr_array_add(f, g_strdup(claim_kind_name(cr->claim->kind)));
    table_add_row(t, f);
  }
  char *csv = table_to_csv(t);
  table_free(t);
  return csv;
}

/* Markdown table cells hold no '|' or newline. */
static void md_cell(GString *s, const char *v) {
  for (; *v; v++) {
    if (*v == '|')
      g_string_append(s, "\\|");
    else if (*v == '\n')
      g_string_append_c(s, ' ');
    else
      g_string_append_c(s, *v);
  }
}

static char *tol_text(const struct repro_claim *c,
                      const struct paper_value *pv) {
  if (pv->kind == PAPER_GT || pv->kind == PAPER_LT)
    return g_strdup("bound");
  if (c->tol_abs)
    return g_strdup_printf("abs %g", c->tol);
  return g_strdup_printf("rel %g", c->tol);
}

/* Title, source, setup, how to reproduce, the plots. */
static void md_head(GString *s, const struct repro *r, const GPtrArray *plots,
                    bool quick, const char *command) {
  g_string_append_printf(s, "# %s: %s\n\n", r->name, r->title);
  g_string_append_printf(s, "Paper: %s.\n\n", r->source);
  if (quick)
    g_string_append(s, "**Quick run** (`--quick`: fewer iterations and "
                       "smaller sizes, a smoke test): the figures below are "
                       "not the ones docs/reproductions.md reports.\n\n");
  if (*r->setup)
    g_string_append_printf(s, "%s\n\n", r->setup);
  g_string_append_printf(s,
                         "Reproduce: `%s`. Experiment file: "
                         "`experiments/%s.ini`; data: `runs.csv`.\n\n",
                         command, r->name);
  for (guint i = 0; plots && i < plots->len; i++)
    g_string_append_printf(s, "![%s](%s)\n\n", r->name,
                           (char *)g_ptr_array_index(plots, i));
}

/* CR's figure as printed: beside a bound (>X, <X), with the digits that
 * tell it from X (1.898 against >1.9, not "1.9"). */
static char *claim_value_text(const struct claim_result *cr) {
  char *v = repro_format_value(cr->value);
  const struct paper_value *pv = cr->paper;
  if (pv->kind != PAPER_GT && pv->kind != PAPER_LT)
    return v;
  for (int digits = 4;
       digits <= 9 && g_ascii_strtod(v, NULL) == pv->lo && cr->value != pv->lo;
       digits++) {
    g_free(v);
    v = g_strdup_printf("%.*g", digits, cr->value);
  }
  return v;
}

static void md_claim_row(GString *s, const struct claim_result *cr) {
  const struct repro_claim *c = cr->claim;
  g_string_append(s, "| ");
  md_cell(s, c->text);
  if (*cr->group)
    g_string_append_printf(s, " (%s)", cr->group);
  g_string_append_printf(s, " | %s | ", claim_kind_name(c->kind));
  md_cell(s, cr->paper->text);
  g_string_append(s, " (");
  md_cell(s, c->source);
  char *v = claim_value_text(cr);
  char *ra =
      isnan(cr->ratio) ? g_strdup("-") : g_strdup_printf("%.2f", cr->ratio);
  char *tt = tol_text(c, cr->paper);
  const char *w = cr->within == 1 ? "yes"
                  : cr->within == 0
                      ? (c->kind == CLAIM_VALIDATION ? "**no**" : "no")
                  : c->not_evaluable ? "not evaluable"
                                     : "not evaluated";
  g_string_append_printf(s, ") | %s | %s | %s (%s) |\n", v, ra, w, tt);
  g_free(v);
  g_free(ra);
  g_free(tt);
}

/* "V of W validation claims within tolerance (N not evaluated); checks:
 * a of b hold; c calibration numbers (not scored)". */
static void score_text(GString *s, const GArray *res) {
  struct claim_score v = claim_score(res, CLAIM_VALIDATION),
                     k = claim_score(res, CLAIM_CHECK),
                     c = claim_score(res, CLAIM_CALIBRATION),
                     x = claim_score(res, CLAIM_CONTRADICTED);
  g_string_append_printf(s, "%u of %u validation claims within tolerance",
                         v.within, v.total - v.not_judged);
  if (v.not_judged)
    g_string_append_printf(s, " (%u more not evaluable or not evaluated)",
                           v.not_judged);
  g_string_append_printf(s,
                         "; checks: %u of %u hold; %u calibration "
                         "number%s",
                         k.within, k.total, c.total, c.total == 1 ? "" : "s");
  if (x.total)
    g_string_append_printf(s, "; %u paper number%s contradicted by the paper",
                           x.total, x.total == 1 ? "" : "s");
  g_string_append(s, " (not scored)");
}

/* The score and the claims table. */
static void md_claims(GString *s, const GArray *res) {
  g_string_append(s, "## Claims\n\n");
  score_text(s, res);
  g_string_append(s, ". Validation: a paper measurement gradsim predicts "
                     "(scored); calibration: a paper number a parameter was "
                     "set to; check: arithmetic or a property true by "
                     "construction; contradicted: a paper number the "
                     "paper's own figures or settings contradict (the "
                     "discussion quotes them).\n\n| claim | kind | paper | "
                     "gradsim | ratio | within tolerance? |\n|---|---|---|"
                     "---|---|---|\n");
  for (guint i = 0; i < res->len; i++)
    md_claim_row(s, &g_array_index(res, struct claim_result, i));
  g_string_append(s, "\n");
}

/* The calibrated parameters: fitted value, target, residual. */
static void md_fits(GString *s, const GArray *fits) {
  if (!fits || !fits->len)
    return;
  g_string_append(s, "## Calibrated parameters\n\nFitted by gradsim "
                     "before the run (bisection on the simulation) and used "
                     "for every variant of this experiment only; the paper "
                     "numbers they were fitted to are the calibration "
                     "claims, never scored.\n\n| parameter | fitted value "
                     "| fitted to | paper | gradsim | residual | "
                     "simulations |\n|---|---|---|---|---|---|---|\n");
  for (guint i = 0; i < fits->len; i++) {
    const struct repro_fit *f = &g_array_index(fits, struct repro_fit, i);
    char *v = repro_format_value(f->target);
    g_string_append_printf(s, "| %s = %.6g%s | %.6g%s | %s", f->cal->fit,
                           f->value, f->cal->unit, f->value, f->cal->unit,
                           f->cal->claim_id);
    if (*f->cal->group)
      g_string_append_printf(s, " (%s)", f->cal->group);
    g_string_append(s, ": ");
    md_cell(s, f->cal->claim->source);
    g_string_append_printf(s, " | %.6g | %s | %+.2g%% | %u |\n", f->paper, v,
                           100 * (f->target / f->paper - 1), f->runs);
    g_free(v);
  }
  g_string_append(s, "\n");
}

/* Why claims were not evaluated, and how each figure is computed. */
static void md_how(GString *s, const struct repro *r, const GArray *res) {
  /* Claims that share a reason are listed together. */
  GPtrArray *seen = g_ptr_array_new();
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    bool dup = false;
    for (guint k = 0; cr->error && k < seen->len; k++)
      dup |= !strcmp(g_ptr_array_index(seen, k), cr->error);
    if (!cr->error || dup)
      continue;
    if (!seen->len)
      g_string_append(s, "Not evaluated:\n\n- ");
    else
      g_string_append(s, "- ");
    g_ptr_array_add(seen, cr->error);
    for (guint k = i, n = 0; k < res->len; k++) {
      const struct claim_result *o =
          &g_array_index(res, struct claim_result, k);
      if (!o->error || strcmp(o->error, cr->error) != 0)
        continue;
      g_string_append_printf(s, "%s%s%s%s%s", n++ ? ", " : "", o->claim->id,
                             *o->group ? " (" : "", o->group,
                             *o->group ? ")" : "");
    }
    g_string_append_printf(s, ": %s\n", cr->error);
  }
  if (seen->len)
    g_string_append(s, "\n");
  g_ptr_array_free(seen, TRUE);
  g_string_append(s, "How each gradsim figure is computed (columns of "
                     "`runs.csv`):\n\n");
  for (guint i = 0; i < r->claims->len; i++) {
    const struct repro_claim *c = g_ptr_array_index(r->claims, i);
    g_string_append_printf(s, "- %s: `%s`%s%s\n", c->id, c->value,
                           c->by ? " for each " : "", c->by ? c->by : "");
  }
}

static void md_discussion(GString *s, const struct repro *r) {
  g_string_append(s, "\n## Discussion\n\n");
  if (*r->discussion)
    g_string_append_printf(s, "%s\n\n", r->discussion);
  for (guint i = 0; i < r->claims->len; i++) {
    const struct repro_claim *c = g_ptr_array_index(r->claims, i);
    if (c->note && *c->note)
      g_string_append_printf(s, "- **%s**: %s\n", c->text, c->note);
  }
  if (s->str[s->len - 1] != '\n')
    g_string_append_c(s, '\n');
}

/* "WITHIN of JUDGED" of a score: the claims within tolerance of those
 * evaluated. */
static void append_judged(GString *s, struct claim_score v) {
  g_string_append_printf(s, "%u of %u", v.within, v.total - v.not_judged);
}

/* The mechanisms: what each is, whether this run has it, and with
 * ABLATION the validation score without each. */
static void md_mechanisms(GString *s, const struct repro *r, const GArray *res,
                          const GArray *ablation) {
  if (!r->mechanisms->len)
    return;
  g_string_append(s, "## Mechanisms\n\nWhat the paper implies and gradsim "
                     "models in this reproduction. `gradsim reproduce NAME "
                     "--off MECHANISM` runs it without one (its "
                     "calibrations are then not fitted, and the paper "
                     "numbers they were fitted to are scored); "
                     "`--ablation` runs every configuration below.\n\n| "
                     "mechanism | what | source | in this run |\n|---|---|"
                     "---|---|\n");
  for (guint i = 0; i < r->mechanisms->len; i++) {
    const struct repro_mechanism *m = g_ptr_array_index(r->mechanisms, i);
    g_string_append_printf(s, "| `%s` | ", m->name);
    md_cell(s, m->text);
    g_string_append(s, " | ");
    md_cell(s, m->source);
    g_string_append_printf(s, " | %s |\n", m->off ? "off" : "on");
  }
  g_string_append(s, "\n");
  if (!ablation)
    return;
  g_string_append(s, "Ablation: validation claims within tolerance, each "
                     "configuration calibrated afresh (`ablation/` holds "
                     "their files).\n\n| mechanisms | validation |\n|---"
                     "|---|\n| all on | ");
  append_judged(s, claim_score(res, CLAIM_VALIDATION));
  g_string_append(s, " |\n");
  for (guint i = 0; i < ablation->len; i++) {
    const struct repro_ablation *a =
        &g_array_index(ablation, struct repro_ablation, i);
    bool all = !strcmp(a->off, "all");
    g_string_append_printf(s, "| %s%s%s off | ", all ? "" : "`", a->off,
                           all ? "" : "`");
    append_judged(s, a->validation);
    g_string_append(s, " |\n");
  }
  g_string_append(s, "\n");
}

char *repro_markdown(const struct repro *r, const GArray *res,
                     const GArray *fits, const GArray *ablation,
                     const GPtrArray *plots, bool quick, const char *command) {
  GString *s = g_string_new(NULL);
  md_head(s, r, plots, quick, command);
  md_fits(s, fits);
  md_mechanisms(s, r, res, ablation);
  md_claims(s, res);
  md_how(s, r, res);
  md_discussion(s, r);
  return g_string_free(s, FALSE);
}

/* The ablations (--ablation): per reproduction with mechanisms, its
 * validation score with all on, each off and all off. */
static void report_ablation(GString *rep, const GArray *done) {
  bool any = false;
  for (guint i = 0; i < done->len; i++) {
    const struct repro_done *d = &g_array_index(done, struct repro_done, i);
    if (!d->ablation)
      continue;
    if (!any)
      g_string_append(rep, "## Ablation\n\nValidation claims within "
                           "tolerance with every mechanism on, each off, "
                           "and all off (each configuration calibrated "
                           "afresh; NAME.md says what each mechanism "
                           "is).\n\n| experiment | all on | without |\n"
                           "|---|---|---|\n");
    any = true;
    g_string_append_printf(rep, "| %s | ", d->name);
    append_judged(rep, d->validation);
    g_string_append(rep, " | ");
    for (guint k = 0; k < d->ablation->len; k++) {
      const struct repro_ablation *a =
          &g_array_index(d->ablation, struct repro_ablation, k);
      g_string_append_printf(rep, "%s%s: ", k ? "; " : "", a->off);
      append_judged(rep, a->validation);
    }
    g_string_append(rep, " |\n");
  }
  if (any)
    g_string_append(rep, "\n");
}

char *repro_report(const GArray *done, bool quick) {
  GString *rep =
      g_string_new("# gradsim: reproductions of the seed papers\n\n");
  if (quick)
    g_string_append(rep, "**Quick run** (`gradsim reproduce --quick`): a "
                         "smoke test with fewer iterations and smaller "
                         "sizes; docs/reproductions.md quotes the full "
                         "run.\n\n");
  g_string_append(rep, "The score counts validation claims only: paper "
                       "measurements gradsim predicts. Checks (arithmetic, "
                       "or true by construction) and calibration numbers "
                       "(what a parameter was fitted to) and paper numbers "
                       "their own paper contradicts are reported, not "
                       "scored.\n\n| experiment | what | validation within "
                       "tolerance | not evaluable or not evaluated | checks "
                       "holding | calibration | contradicted "
                       "|\n|---|---|---|---|---|---|---|\n");
  struct claim_score tv = {0, 0, 0}, tk = {0, 0, 0};
  guint tc = 0, tx = 0;
  for (guint i = 0; i < done->len; i++) {
    const struct repro_done *d = &g_array_index(done, struct repro_done, i);
    struct claim_score v = d->validation, k = d->checks, c = d->calibration;
    tv.total += v.total, tv.within += v.within, tv.not_judged += v.not_judged;
    tk.total += k.total, tk.within += k.within, tc += c.total;
    tx += d->contradicted.total;
    g_string_append_printf(rep,
                           "| [%s](%s/%s.md) | %s | %u of %u | %u | %u "
                           "of %u | %u | %u |\n",
                           d->name, d->name, d->name, d->title, v.within,
                           v.total - v.not_judged, v.not_judged, k.within,
                           k.total, c.total, d->contradicted.total);
  }
  guint judged = tv.total - tv.not_judged;
  g_string_append_printf(rep,
                         "\n%u of %u validation claims within "
                         "tolerance (%.0f%%), %u more not evaluable or "
                         "not evaluated; checks: %u of %u hold; %u "
                         "calibration number%s; %u paper number%s "
                         "contradicted by the same paper.\n\n",
                         tv.within, judged,
                         judged ? 100.0 * tv.within / judged : 0.0,
                         tv.not_judged, tk.within, tk.total, tc,
                         tc == 1 ? "" : "s", tx, tx == 1 ? "" : "s");
  report_ablation(rep, done);
  for (guint i = 0; i < done->len; i++) {
    const struct repro_done *d = &g_array_index(done, struct repro_done, i);
    /* The claims table of NAME.md, under the experiment's name. */
    const char *start = strstr(d->md, "| claim |");
    const char *end = start ? strstr(start, "\n\n") : NULL;
    g_string_append_printf(rep, "## [%s](%s/%s.md): %s\n\n", d->name, d->name,
                           d->name, d->title);
    if (start && end)
      g_string_append_len(rep, start, end - start + 2);
  }
  return g_string_free(rep, FALSE);
}

char *repro_fits_csv(const GArray *fits) {
  struct table *t = table_new();
  static const char *const cols[] = {"name",    "fit",      "value",
                                     "claim",   "group",    "paper",
                                     "gradsim", "residual", "runs"};
  for (size_t i = 0; i < G_N_ELEMENTS(cols); i++)
    table_add_col(t, cols[i]);
  for (guint i = 0; fits && i < fits->len; i++) {
    const struct repro_fit *f = &g_array_index(fits, struct repro_fit, i);
    GPtrArray *r = g_ptr_array_new();
    g_ptr_array_add(r, g_strdup(f->cal->name));
    g_ptr_array_add(r, g_strdup(f->cal->fit));
    g_ptr_array_add(r, g_strdup_printf("%.9g%s", f->value, f->cal->unit));
    g_ptr_array_add(r, g_strdup(f->cal->claim_id));
    g_ptr_array_add(r, g_strdup(f->cal->group));
    g_ptr_array_add(r, g_strdup_printf("%.9g", f->paper));
    g_ptr_array_add(r, g_strdup_printf("%.9g", f->target));
    g_ptr_array_add(r, g_strdup_printf("%.9g", f->target / f->paper - 1));
    g_ptr_array_add(r, g_strdup_printf("%u", f->runs));
    table_add_row(t, r);
  }
  char *csv = table_to_csv(t);
  table_free(t);
  return csv;
}
