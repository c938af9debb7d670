/* cli/reproduce.c: `gradsim reproduce [NAME ...|all] [--quick]
 * [--jobs N] [--out DIR] [--off MECH ...] [--ablation]`: the paper
 * reproductions (repro/repro.h): arguments, progress on stderr, the
 * summary table on stdout, exit codes. */
#include "cli.h"

#include "repro.h"

#include <stdio.h>
#include <string.h>

#ifndef GRADSIM_SOURCE_DIR
#define GRADSIM_SOURCE_DIR "."
#endif

static char *source_subdir(const char *env, const char *sub) {
  const char *v = g_getenv(env);
  if (v && *v)
    return g_strdup(v);
  return g_build_filename(GRADSIM_SOURCE_DIR, sub, NULL);
}

static char *joined(const GPtrArray *a) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < a->len; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "",
                           (char *)g_ptr_array_index(a, i));
  return g_string_free(s, FALSE);
}

static bool contains(const GPtrArray *a, const char *s) {
  for (guint k = 0; k < a->len; k++)
    if (!strcmp(s, g_ptr_array_index(a, k)))
      return true;
  return false;
}

/* The names asked for (none or `all`: every one KNOWN), once each. */
static GPtrArray *names_of(int argc, char **argv, const GPtrArray *known) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  bool all = argc < 2;
  for (int i = 1; i < argc; i++)
    all |= !strcmp(argv[i], "all");
  if (all && argc > 2)
    cli_bad_input("reproduce: 'all' takes no other names");
  for (int i = 1; i < argc && !all; i++) {
    if (!contains(known, argv[i])) {
      char *valid = joined(known);
      cli_bad_input("reproduce: unknown experiment '%s' (valid: %s, or all)",
                    argv[i], valid);
    }
    if (!contains(names, argv[i]))
      g_ptr_array_add(names, g_strdup(argv[i]));
  }
  for (guint k = 0; all && k < known->len; k++)
    g_ptr_array_add(names, g_strdup(g_ptr_array_index(known, k)));
  return names;
}

static void to_stderr(bool warning, const char *line, void *ctx) {
  (void)ctx;
  fprintf(stderr, "%s%s\n", warning ? "gradsim: " : "", line);
}

/* The validation score of each experiment and in total. */
static void print_summary(const GArray *done, const char *out) {
  guint tot = 0, tot_yes = 0;
  printf("%-24s %10s %8s\n", "experiment", "validation", "wall s");
  for (guint i = 0; i < done->len; i++) {
    const struct repro_done *d = &g_array_index(done, struct repro_done, i);
    struct claim_score v = d->validation;
    tot += v.total - v.not_judged;
    tot_yes += v.within;
    printf("%-24s %4u / %-4u %8.1f\n", d->name, v.within,
           v.total - v.not_judged, d->wall_s);
  }
  char *rep_path = g_build_filename(out, "REPORT.md", NULL);
  printf("\n%u of %u validation claims within tolerance; report in %s\n",
         tot_yes, tot, rep_path);
  g_free(rep_path);
}

int cli_reproduce(int argc, char **argv) {
  gboolean quick = FALSE, ablation = FALSE;
  gint64 jobs = 0;
  char *out = NULL;
  char **off = NULL;
  GOptionEntry opts[] = {
      {"quick", 0, 0, G_OPTION_ARG_NONE, &quick,
       "fewer iterations and smaller sizes: a smoke test of every "
       "reproduction (a few minutes for all)",
       NULL},
      {"jobs", 'j', 0, G_OPTION_ARG_INT64, &jobs,
       "simulations at once: variants side by side, or one variant's "
       "points (default: the number of CPUs)",
       "N"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "results directory (default results)", "DIR"},
      {"off", 0, 0, G_OPTION_ARG_STRING_ARRAY, &off,
       "turn a mechanism of the reproductions off ([reproduce.mechanism "
       "NAME]; all: every one); may be repeated",
       "NAME"},
      {"ablation", 0, 0, G_OPTION_ARG_NONE, &ablation,
       "also run each reproduction with each of its mechanisms off and "
       "with all off, and report the scores (NAME.md, REPORT.md)",
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "[NAME ...|all]",
            "Reproduce the seed papers' figures and tables: run each "
            "experiment with a [reproduce] section (default: all) and write "
            "DIR/NAME/runs.csv, its plots and NAME.md (the paper's claims "
            "beside gradsim's), and DIR/REPORT.md.",
            opts);
  jobs = cli_jobs(jobs, "reproduce");
  if (!out)
    out = g_strdup("results");
  char *exp_dir = source_subdir("GRADSIM_EXPERIMENTS_DIR", "experiments");
  char *plots_dir = source_subdir("GRADSIM_PLOTS_DIR", "plots");
  GPtrArray *known = repro_list(exp_dir);
  if (!known->len)
    cli_bad_input("reproduce: no experiment with a [reproduce] section in %s",
                  exp_dir);
  GPtrArray *names = names_of(argc, argv, known);
  cli_output_dir(out, "--out", "reproduce");
  if (off && ablation)
    cli_bad_input("reproduce: --ablation turns the mechanisms off itself: "
                  "give it without --off");
  struct repro_opts o = {out,
                         exp_dir,
                         plots_dir,
                         (unsigned)jobs,
                         (bool)quick,
                         (const char *const *)off,
                         (bool)ablation,
                         to_stderr,
                         NULL};
  GArray *done;
  char *err = NULL, *cwd = g_get_current_dir();
  char *abs_out = g_path_is_absolute(out) ? g_strdup(out)
                                          : g_build_filename(cwd, out, NULL);
  g_free(cwd);
  int rc =
      repro_reproduce((char *const *)names->pdata, names->len, &o, &done, &err);
  if (rc != 0)
    cli_exit(rc, "reproduce: %s", err);
  print_summary(done, abs_out);
  g_free(abs_out);
  repro_done_free(done);
  g_ptr_array_free(names, TRUE);
  g_ptr_array_free(known, TRUE);
  g_free(exp_dir);
  g_free(plots_dir);
  g_free(out);
  g_strfreev(off);
  return 0;
}
