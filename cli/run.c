/* cli/run.c: `gradsim run`: an experiment's sweep simulated (sweep/), or
 * its points listed, or one of its points run. */
#include "cli.h"

#include "experiment.h"
#include "inputs.h"
#include "sweep.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct run_args {
  char **sets, *out;
  gint64 jobs, point;
  gboolean plot, trace, quiet, list;
};

/* The options, parsed into A (ARGV keeps the experiment file). */
static void parse(int *argc, char ***argv, struct run_args *a) {
  GOptionEntry opts[] = {
      {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &a->sets,
       "override a key: section.key=value (repeat; commas sweep)", "S.K=V"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out,
       "output directory (default results/<experiment name>)", "DIR"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT64, &a->jobs,
       "points run at once (default: the number of CPUs)", "N"},
      {"plot", 'p', 0, G_OPTION_ARG_NONE, &a->plot,
       "draw the sweep with gnuplot: DIR/plot.png and breakdown.png (and "
       ".svg)", NULL},
      {"trace", 't', 0, G_OPTION_ARG_NONE, &a->trace,
       "write a Paje trace of each point (DIR/points/<hash>.paje)", NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet,
       "print no table at the end", NULL},
      {"list-points", 'l', 0, G_OPTION_ARG_NONE, &a->list,
       "print the sweep's points (index, hash, swept values; tab-separated) "
       "and write nothing",
       NULL},
      {"point", 'i', 0, G_OPTION_ARG_INT64, &a->point,
       "run only point I (an index of --list-points) into DIR/points; "
       "gradsim merge joins the directories",
       "I"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(argc, argv, "EXPERIMENT.ini",
            "Run an experiment (every combination of its comma-separated "
            "values) and write runs.csv, iterations.csv, links.csv and "
            "config.txt into the output directory. Finished points are "
            "kept in DIR/points/: running again skips them. SIGINT or "
            "SIGTERM stops the running points and keeps the finished "
            "ones.",
            opts);
}

/* The options' values and combinations, before the experiment is read. */
static void validate(int argc, char **argv, struct run_args *a) {
  const char *where = "run";
  if (argc < 2)
    cli_bad_input("%s: name an experiment file (e.g. experiments/"
                  "default.ini)",
                  where);
  if (argc > 2)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where,
                  argv[2]);
  a->jobs = cli_jobs(a->jobs, where);
  bool one = a->point != G_MININT64;
  if (a->list && one)
    cli_bad_input("%s: --list-points and --point exclude each other", where);
  if (one && a->plot)
    cli_bad_input("%s: --plot draws a whole sweep: not with --point (plot "
                  "the joined directories with gradsim merge --plot)",
                  where);
}

/* --out, or results/NAME for NAME.ini; it must be a directory if it
 * exists. */
static char *out_dir(const char *path, char *out) {
  if (!out) {
    char *base = g_path_get_basename(path);
    char *dot = strrchr(base, '.');
    if (dot)
      *dot = '\0';
    out = g_build_filename("results", base, NULL);
    g_free(base);
  }
  if (g_file_test(out, G_FILE_TEST_EXISTS) &&
      !g_file_test(out, G_FILE_TEST_IS_DIR))
    cli_bad_input("run: --out %s exists and is not a directory", out);
  return out;
}

/* The whole sweep, then its report: warnings and oracle notes on stderr,
 * the summary table on stdout. */
static void run_all(const struct experiment *e, const struct run_args *a,
                    const char *out) {
  struct cli_bar bar = {isatty(2) && !a->quiet};
  struct sweep_opts o = {out, (unsigned)a->jobs, a->trace, a->plot,
                         cli_bar_update, &bar};
  struct sweep_report rep;
  char *err = NULL;
  int rc = sweep_run(e, &o, &rep, &err);
  if (rc != 0)
    cli_exit(rc, "%s", err);
  cli_print_report(&rep, out, a->quiet);
  sweep_report_clear(&rep);
}

/* --point I: that point only. */
static void run_one(const struct experiment *e, const struct run_args *a,
                    const char *out) {
  guint total = e->points->len, i = (guint)a->point;
  struct sweep_opts o = {out, (unsigned)a->jobs, a->trace, false, NULL, NULL};
  bool was_done = false;
  char *err = NULL;
  int rc = sweep_run_point(e, i, &o, &was_done, &err);
  if (rc != 0)
    cli_exit(rc, "%s", err);
  if (!a->quiet) {
    char *pdir = g_build_filename(out, "points", NULL);
    printf("point %u of %u (%s) %s in %s; gradsim merge joins the "
           "directories of a sweep\n",
           i, total, ((struct point *)g_ptr_array_index(e->points, i))->hash,
           was_done ? "was already done" : "done", pdir);
    g_free(pdir);
  }
}

int cli_run(int argc, char **argv) {
  struct run_args a = {NULL, NULL, 0, G_MININT64, FALSE, FALSE, FALSE, FALSE};
  parse(&argc, &argv, &a);
  validate(argc, argv, &a);
  char *err = NULL;
  struct experiment *e = experiment_load(argv[1], a.sets, &err);
  if (!e)
    cli_bad_input("%s", err);
  experiment_seal_inputs(e);
  guint total = e->points->len;
  bool one = a.point != G_MININT64;
  if (one && (a.point < 0 || a.point >= total))
    cli_bad_input("run: --point %" G_GINT64_FORMAT ": %s has %u point%s "
                  "(0..%u; see --list-points)",
                  a.point, argv[1], total, total == 1 ? "" : "s", total - 1);
  if (experiment_check(e, &err) != 0)
    cli_bad_input("%s", err);
  if (a.list) {
    char *list = sweep_list_points(e);
    fputs(list, stdout);
    g_free(list);
  } else {
    char *out = out_dir(argv[1], a.out);
    if (one)
      run_one(e, &a, out);
    else
      run_all(e, &a, out);
    g_free(out);
  }
  experiment_free(e);
  g_strfreev(a.sets);
  return 0;
}
