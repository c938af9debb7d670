/* cli/advise.c: `gradsim advise`: the fastest configuration of a model
 * on a cluster, found by search and checked by simulation (advise/). */
#include "cli.h"

#include "advise.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

struct advise_args {
  char *model, *platform, *space, *out;
  char **sets;
  double max_error, budget;
  gint64 jobs;
  gboolean exhaustive, quiet;
};

static void parse(int *argc, char ***argv, struct advise_args *a) {
  GOptionEntry opts[] = {
      {"model", 'm', 0, G_OPTION_ARG_STRING, &a->model,
       "the model: a name of gradsim model list, or a file (required)", "M"},
      {"platform", 'P', 0, G_OPTION_ARG_STRING, &a->platform,
       "the cluster: [platform] keys as KEY=VALUE,... (preset=dgx-h100,"
       "nodes=64) or a SimGrid platform XML file (required)",
       "SPEC"},
      {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &a->sets,
       "fix a key: section.key=value (repeat); it leaves the space", "S.K=V"},
      {"max-error", 'e', 0, G_OPTION_ARG_DOUBLE, &a->max_error,
       "exclude codecs whose summed update errs more than this (relative; "
       "default 0.5, inf: no limit)",
       "E"},
      {"space", 0, 0, G_OPTION_ARG_FILENAME, &a->space,
       "the space to search, in the experiment file's syntax (commas list "
       "a key's values; default: docs/advise.md)",
       "FILE"},
      {"budget", 'b', 0, G_OPTION_ARG_DOUBLE, &a->budget,
       "estimated seconds of simulation to spend (default 300)", "SECONDS"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT64, &a->jobs,
       "candidates simulated at once (default: the number of CPUs)", "N"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out,
       "output directory (default results/advise)", "DIR"},
      {"exhaustive", 0, 0, G_OPTION_ARG_NONE, &a->exhaustive,
       "simulate every candidate, pruning none and ignoring the budget", NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet,
       "print only the recommendation", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(argc, argv, "",
            "Search a space of configurations (codec, how it is applied, "
            "collective, bucket size, sharding) for the fastest way to "
            "train MODEL on the cluster: rank every candidate by the "
            "formulas, simulate the promising ones, measure each codec's "
            "error on the model's synthetic gradients, and write the "
            "ranked candidates (candidates.csv), the winner as an "
            "experiment (best.ini) with its results, and a plot of time "
            "against error (advice.png).",
            opts);
}

static void progress(const char *line, void *ctx) {
  (void)ctx;
  fprintf(stderr, "gradsim: advise: %s\n", line);
}

int cli_advise(int argc, char **argv) {
  struct advise_args a = {NULL, NULL, NULL,  NULL, NULL, ADVISE_MAX_ERROR,
                          300,  0,    FALSE, FALSE};
  parse(&argc, &argv, &a);
  const char *where = "advise";
  cli_no_extra_args(argc, argv, where);
  if (!a.model)
    cli_bad_input("%s: name a model with --model (gradsim model list)", where);
  if (!a.platform)
    cli_bad_input("%s: name the cluster with --platform (KEY=VALUE,... of "
                  "[platform] keys, e.g. preset=dgx-h100,nodes=64, or a "
                  "SimGrid platform file)",
                  where);
  if (!(a.budget > 0) || !isfinite(a.budget))
    cli_bad_input("%s: --budget %g must be a number of seconds above 0", where,
                  a.budget);
  if (!(a.max_error >= 0))
    cli_bad_input("%s: --max-error %g must be a relative error, 0 or more "
                  "(inf: no limit)",
                  where, a.max_error);
  a.jobs = cli_jobs(a.jobs, where);
  char *out = a.out ? a.out : g_build_filename("results", "advise", NULL);
  cli_output_dir(out, "--out", where);
  /* A round's points on a terminal as gradsim run shows a sweep's. */
  struct cli_bar bar = {isatty(2), a.quiet, NULL, false};
  struct advise_opts o = {a.model,
                          a.platform,
                          a.sets,
                          a.space,
                          a.max_error,
                          a.budget,
                          (unsigned)a.jobs,
                          a.exhaustive,
                          out,
                          a.quiet ? NULL : progress,
                          NULL,
                          cli_bar_update,
                          &bar,
                          cli_bar_tick(&bar)};
  struct advise_report r;
  char *err = NULL;
  int rc = advise_run(&o, &r, &err);
  if (rc != 0)
    cli_exit(rc, "%s: %s", where, err);
  fputs(r.warnings, stderr);
  if (!a.quiet)
    printf("%s\n", r.table);
  fputs(r.recommendation, stdout);
  if (!a.quiet)
    printf("Results in %s: candidates.csv, best.ini, runs.csv, advice.png\n",
           out);
  advise_report_clear(&r);
  if (out != a.out)
    g_free(out);
  g_free(a.model);
  g_free(a.platform);
  g_free(a.space);
  g_free(a.out);
  g_strfreev(a.sets);
  return 0;
}
