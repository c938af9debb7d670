/* repro/report.c: what a reproduction writes about its claims
 * (repro.h): claims.csv, NAME.md and REPORT.md. */
#include "repro.h"

#include <math.h>
#include <string.h>

char *repro_claims_csv(const GArray *res) {
  struct table *t = table_new();
  static const char *const cols[] = {"claim",    "group",    "text",
                                     "paper",    "paper_lo", "paper_hi",
                                     "gradsim",  "ratio",    "within"};
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

static char *tol_text(const struct repro_claim *c, const struct paper_value *pv) {
  if (pv->kind == PAPER_GT || pv->kind == PAPER_LT)
    return g_strdup("bound");
  if (c->tol_abs)
    return g_strdup_printf("abs %g", c->tol);
  return g_strdup_printf("rel %g", c->tol);
}

/* Title, source, setup, how to reproduce, the plots. */
static void md_head(GString *s, const struct repro *r,
                    const GPtrArray *plots, bool quick, const char *command) {
  g_string_append_printf(s, "# %s: %s\n\n", r->name, r->title);
  g_string_append_printf(s, "Paper: %s.\n\n", r->source);
  if (quick)
    g_string_append(s, "**Quick run** (`--quick`: fewer iterations and "
                       "smaller sizes, a smoke test): the figures below are "
                       "not the ones the README reports.\n\n");
  if (*r->setup)
    g_string_append_printf(s, "%s\n\n", r->setup);
  g_string_append_printf(s, "Reproduce: `%s`. Experiment file: "
                            "`experiments/%s.ini`; data: `runs.csv`.\n\n",
                         command, r->name);
  for (guint i = 0; plots && i < plots->len; i++)
    g_string_append_printf(s, "![%s](%s)\n\n", r->name,
                           (char *)g_ptr_array_index(plots, i));
}

static void md_claim_row(GString *s, const struct claim_result *cr) {
  const struct repro_claim *c = cr->claim;
  g_string_append(s, "| ");
  md_cell(s, c->text);
  if (*cr->group)
    g_string_append_printf(s, " (%s)", cr->group);
  g_string_append(s, " | ");
  md_cell(s, cr->paper->text);
  g_string_append(s, " (");
  md_cell(s, c->source);
  char *v = repro_format_value(cr->value);
  char *ra = isnan(cr->ratio) ? g_strdup("-")
                              : g_strdup_printf("%.2f", cr->ratio);
  char *tt = tol_text(c, cr->paper);
  g_string_append_printf(s, ") | %s | %s | %s (%s) |\n", v, ra,
                         cr->within == 1   ? "yes"
                         : cr->within == 0 ? "**no**"
                                           : "not evaluated",
                         tt);
  g_free(v);
  g_free(ra);
  g_free(tt);
}

/* The score line and the claims table. */
static void md_claims(GString *s, const GArray *res) {
  guint yes = 0, na = 0;
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    yes += cr->within == 1;
    na += cr->within == -1;
  }
  g_string_append_printf(s, "## Claims\n\n%u of %u within tolerance", yes,
                         res->len);
  if (na)
    g_string_append_printf(s, ", %u not evaluated", na);
  g_string_append(s, ".\n\n| claim | paper | gradsim | ratio | within "
                     "tolerance? |\n|---|---|---|---|---|\n");
  for (guint i = 0; i < res->len; i++)
    md_claim_row(s, &g_array_index(res, struct claim_result, i));
  g_string_append(s, "\n");
}

/* Why claims were not evaluated, and how each figure is computed. */
static void md_how(GString *s, const struct repro *r, const GArray *res) {
  bool errors = false;
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    if (!cr->error)
      continue;
    if (!errors)
      g_string_append(s, "Not evaluated:\n\n");
    errors = true;
    g_string_append_printf(s, "- %s%s%s%s: %s\n", cr->claim->id,
                           *cr->group ? " (" : "", cr->group,
                           *cr->group ? ")" : "", cr->error);
  }
  if (errors)
    g_string_append(s, "\n");
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

char *repro_markdown(const struct repro *r, const GArray *res,
                     const GPtrArray *plots, bool quick,
                     const char *command) {
  GString *s = g_string_new(NULL);
  md_head(s, r, plots, quick, command);
  md_claims(s, res);
  md_how(s, r, res);
  md_discussion(s, r);
  return g_string_free(s, FALSE);
}

static guint count_within(const GArray *res, int within) {
  guint n = 0;
  for (guint k = 0; k < res->len; k++)
    n += g_array_index(res, struct claim_result, k).within == within;
  return n;
}

char *repro_report(const GArray *done, bool quick) {
  GString *rep = g_string_new("# gradsim: reproductions of the seed papers\n\n");
  if (quick)
    g_string_append(rep, "**Quick run** (`gradsim reproduce --quick`): a "
                         "smoke test with fewer iterations and smaller "
                         "sizes; the README quotes the full run.\n\n");
  g_string_append(rep, "| experiment | what | claims within tolerance | not "
                       "evaluated |\n|---|---|---|---|\n");
  guint tot = 0, tot_yes = 0;
  for (guint i = 0; i < done->len; i++) {
    const struct repro_done *d = &g_array_index(done, struct repro_done, i);
    guint yes = count_within(d->res, 1), na = count_within(d->res, -1);
    tot += d->res->len;
    tot_yes += yes;
    g_string_append_printf(rep, "| [%s](%s/%s.md) | %s | %u of %u | %u |\n",
                           d->name, d->name, d->name, d->title, yes,
                           d->res->len, na);
  }
  g_string_append_printf(rep, "\n%u of %u claims within tolerance.\n\n",
                         tot_yes, tot);
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
