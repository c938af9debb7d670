/* cli/formula.c: `gradsim formula`: the analytic timing models of
 * models/formula.h, evaluated and printed with their terms, one row per
 * worker count. The inputs are read and evaluated by
 * models/formula_input.h. */
#include "cli.h"

#include "formula.h"
#include "formula_input.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct formula_args {
  char *vals[FP_COUNT]; /* --alpha ..., as given */
  char *bandwidth, *bw_intra, *reduce_rate; /* rates instead of times */
  char *format;
  gboolean list;
  char *descs[FP_COUNT]; /* --help text of vals */
};

/* The --help line of parameter K: its description and unit. */
static char *param_help(enum formula_param k) {
  const char *unit = formula_param_unit(k);
  return g_strdup_printf("%s%s%s%s", formula_param_help(k), *unit ? " (" : "",
                         *unit ? (strcmp(unit, "s") == 0   ? "seconds, e.g. 5us"
                                  : strcmp(unit, "B") == 0 ? "bytes, e.g. 64MB"
                                                           : "seconds per byte")
                               : "",
                         *unit ? ")" : "");
}

/* The options of `gradsim formula` into A: one per formula parameter,
 * then the rates and the output options. OPTS holds FP_COUNT + 6. */
static void formula_options(struct formula_args *a, GOptionEntry *opts) {
  size_t no = 0;
  for (int k = 0; k < FP_COUNT; k++) {
    a->descs[k] = param_help((enum formula_param)k);
    opts[no++] = (GOptionEntry){formula_param_name((enum formula_param)k), 0,
                                0, G_OPTION_ARG_STRING, &a->vals[k],
                                a->descs[k], "V"};
  }
  opts[no++] = (GOptionEntry){"bandwidth", 0, 0, G_OPTION_ARG_STRING,
                              &a->bandwidth,
                              "link rate, instead of --beta (e.g. 10Gbps)",
                              "RATE"};
  opts[no++] = (GOptionEntry){"bandwidth-intra", 0, 0, G_OPTION_ARG_STRING,
                              &a->bw_intra, "rate inside a node (hierarchical)",
                              "RATE"};
  opts[no++] = (GOptionEntry){
      "reduce-rate", 0, 0, G_OPTION_ARG_STRING, &a->reduce_rate,
      "bytes summed per second, instead of --gamma (e.g. 4GBps)", "RATE"};
  opts[no++] = (GOptionEntry){"format", 'f', 0, G_OPTION_ARG_STRING,
                              &a->format, "table (default) or csv", "FORMAT"};
  opts[no++] = (GOptionEntry){"list", 'l', 0, G_OPTION_ARG_NONE, &a->list,
                              "list the formulas and their parameters", NULL};
  opts[no] = (GOptionEntry){NULL, 0, 0, 0, NULL, NULL, NULL};
}

static void print_formulas(FILE *f) {
  for (size_t i = 0; i < formula_count(); i++) {
    const struct formula *fm = formula_at(i);
    fprintf(f, "%-19s %s\n%-19s   %s\n%-19s   source: %s; needs:", fm->name,
            fm->description, "", fm->expression, "", fm->source);
    for (int k = 0; k < FP_COUNT; k++)
      if (fm->needs & (1ul << k))
        fprintf(f, " --%s", formula_param_name((enum formula_param)k));
    fprintf(f, "%s\n", fm->pow2 ? " (p a power of two)" : "");
  }
}

/* The formula named by the one argument; exit 2 without one, for an
 * unknown name or with more arguments. */
static const struct formula *need_formula(int argc, char **argv,
                                          const char *where) {
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < formula_count(); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "",
                           formula_at(i)->name);
  if (argc < 2)
    cli_bad_input("%s: name a formula (valid: %s; see gradsim formula "
                  "--list)",
                  where, names->str);
  const struct formula *f = formula_find(argv[1]);
  if (!f)
    cli_bad_input("%s: unknown formula '%s' (valid: %s)", where, argv[1],
                  names->str);
  g_string_free(names, TRUE);
  cli_no_extra_args(argc - 1, argv + 1, where);
  return f;
}

/* The parameters A gives (all but p), into IN; exit 2 on a bad value or
 * on a rate given beside the time per byte it replaces. */
static void formula_inputs(const struct formula_args *a, struct formula_in *in,
                           const char *where) {
  formula_in_init(in);
  char err[256];
  for (int k = 0; k < FP_COUNT; k++)
    if (a->vals[k] && k != FP_P &&
        formula_param_parse((enum formula_param)k, a->vals[k], &in->v[k], err,
                            sizeof err) != 0)
      cli_bad_input("%s: --%s: %s", where,
                    formula_param_name((enum formula_param)k), err);
  const struct {
    const char *text;
    enum formula_param param;
    const char *name, *instead;
  } rates[] = {{a->bandwidth, FP_BETA, "bandwidth", "beta"},
               {a->bw_intra, FP_BETA_IN, "bandwidth-intra", "beta-intra"},
               {a->reduce_rate, FP_GAMMA, "reduce-rate", "gamma"}};
  for (size_t i = 0; i < G_N_ELEMENTS(rates); i++) {
    if (!rates[i].text)
      continue;
    if (!isnan(in->v[rates[i].param]))
      cli_bad_input("%s: give --%s or --%s, not both", where, rates[i].name,
                    rates[i].instead);
    if (formula_rate_parse(rates[i].text, &in->v[rates[i].param], err,
                           sizeof err) != 0)
      cli_bad_input("%s: --%s: %s", where, rates[i].name, err);
  }
}

/* The worker counts of --p TEXT (NULL: one row without p), g_free'd by
 * the caller; exit 2 on a malformed list. */
static double *formula_ps(const char *text, size_t *n, const char *where) {
  if (!text) {
    double *nan = g_new(double, 1);
    nan[0] = NAN;
    *n = 1;
    return nan;
  }
  double *ps;
  char err[256];
  if (formula_p_list_parse(text, &ps, n, err, sizeof err) != 0)
    cli_bad_input("%s: --p %s: %s", where, text, err);
  return ps;
}

/* Every input and term, full precision; parameters the formula does not
 * take are empty fields. */
static void print_csv(const struct formula *f, const struct formula_in *in,
                      const double *ps, size_t np,
                      const struct formula_out *outs) {
  printf("formula,p,n_bytes,alpha_s,beta_s_per_byte,gamma_s_per_byte,"
         "total%s",
         *f->unit ? "_s" : "");
  for (size_t t = 0; t < outs[0].nterms; t++)
    printf(",%s", outs[0].terms[t].name);
  printf("\n");
  for (size_t i = 0; i < np; i++) {
    double cols[] = {ps[i], in->v[FP_N], in->v[FP_ALPHA], in->v[FP_BETA],
                     in->v[FP_GAMMA]};
    printf("%s", f->name);
    for (size_t c = 0; c < G_N_ELEMENTS(cols); c++)
      if (isnan(cols[c]))
        printf(",");
      else
        printf(",%.17g", cols[c]);
    printf(",%.17g", outs[i].total);
    for (size_t t = 0; t < outs[i].nterms; t++)
      printf(",%.17g", outs[i].terms[t].value);
    printf("\n");
  }
}

/* The formula and its terms, then one row per p. */
static void print_table(const struct formula *f, const double *ps, size_t np,
                        const struct formula_out *outs) {
  printf("%s (%s)\n  %s\n", f->name, f->source, f->expression);
  for (size_t t = 0; t < outs[0].nterms; t++)
    printf("  %-16s %s\n", outs[0].terms[t].name, outs[0].terms[t].expr);
  printf("\n%8s %14s", "p", *f->unit ? "total (s)" : "total");
  for (size_t t = 0; t < outs[0].nterms; t++)
    printf(" %14s", outs[0].terms[t].name);
  printf("\n");
  for (size_t i = 0; i < np; i++) {
    printf("%8.0f %14.6g", ps[i], outs[i].total);
    for (size_t t = 0; t < outs[i].nterms; t++)
      printf(" %14.6g", outs[i].terms[t].value);
    printf("\n");
  }
}

static void formula_args_free(struct formula_args *a) {
  for (int k = 0; k < FP_COUNT; k++)
    g_free(a->vals[k]);
  g_free(a->bandwidth);
  g_free(a->bw_intra);
  g_free(a->reduce_rate);
  g_free(a->format);
}

int cli_formula(int argc, char **argv) {
  const char *where = "formula";
  struct formula_args a = {0};
  GOptionEntry opts[FP_COUNT + 6];
  formula_options(&a, opts);
  cli_parse(&argc, &argv, "NAME",
            "Evaluate an analytic timing model of the seed papers (or of a "
            "collective gradsim simulates) and print its terms. --p takes a "
            "number, a list (2,4,8), a range of every integer (2..64) or a "
            "geometric range (2..1024x2), and prints one row per p. Units "
            "as in SimGrid: 10Gbps, 1.25GBps, 5us, 64MB. 'gradsim formula "
            "--list' lists the formulas.",
            opts);
  for (int k = 0; k < FP_COUNT; k++)
    g_free(a.descs[k]);
  if (a.list) {
    cli_no_extra_args(argc, argv, where);
    print_formulas(stdout);
    formula_args_free(&a);
    return 0;
  }
  const struct formula *f = need_formula(argc, argv, where);
  bool csv = cli_format_csv(a.format, where);
  struct formula_in in;
  formula_inputs(&a, &in, where);
  size_t np;
  double *ps = formula_ps(a.vals[FP_P], &np, where);

  /* Evaluate everything before printing anything. */
  struct formula_out *outs = g_new(struct formula_out, np);
  char err[256];
  if (formula_eval_each(f, &in, ps, np, outs, err, sizeof err) != 0)
    cli_bad_input("%s: %s", where, err);
  if (csv)
    print_csv(f, &in, ps, np, outs);
  else
    print_table(f, ps, np, outs);
  g_free(outs);
  g_free(ps);
  formula_args_free(&a);
  return 0;
}
