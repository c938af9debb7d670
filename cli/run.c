/* cli/run.c: `gradsim run`: an experiment's sweep simulated (sweep/), or
 * its points listed, or one of its points run. */
#include "cli.h"

#include "estimate.h"
#include "experiment.h"
#include "inputs.h"
#include "sweep.h"
#include "units.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct run_args {
  char **sets, *out;
  gint64 jobs, point;
  gboolean plot, trace, quiet, list, estimate;
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
      {"estimate", 'e', 0, G_OPTION_ARG_NONE, &a->estimate,
       "print each point's estimated wall time, memory and simulated "
       "messages, and run nothing",
       NULL},
      {"point", 'i', 0, G_OPTION_ARG_INT64, &a->point,
       "run only point I (an index of --list-points) into DIR/points; "
       "gradsim merge joins the directories",
       "I"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(
      argc, argv, "EXPERIMENT.ini",
      "Run an experiment (every combination of its comma-separated "
      "values) and write runs.csv, iterations.csv, links.csv, nccl.csv and "
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
  if (a->estimate && (a->list || one || a->plot || a->trace))
    cli_bad_input("%s: --estimate runs nothing: not with --list-points, "
                  "--point, --plot or --trace",
                  where);
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
  cli_output_dir(out, "--out", "run");
  return out;
}

/* The swept values of point P, space-separated (g_free). */
static char *swept_text(const struct experiment *e, const struct point *p) {
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < e->swept->len; k++) {
    const char *key = g_ptr_array_index(e->swept, k);
    char *v = point_config_value(p, key);
    g_string_append_printf(s, "%s%s=%s", k ? " " : "", strchr(key, '.') + 1,
                           v);
    g_free(v);
  }
  return g_string_free(s, FALSE);
}

/* One point's estimate as a line on stderr: "gradsim: point 3
 * (nodes=8): about 4.2 s, 18.0 MB, 5.2e+05 messages". */
static void estimate_line(const struct experiment *e, guint i,
                          const struct estimate *est) {
  char *sw = swept_text(e, g_ptr_array_index(e->points, i));
  char *wall = estimate_duration_text(est->wall_s);
  char *mem = units_bytes_text(est->memory_bytes);
  fprintf(stderr, "gradsim:   point %u%s%s%s: about %s, %s, %.2g messages\n",
          i, *sw ? " (" : "", sw, *sw ? ")" : "", wall, mem, est->messages);
  g_free(sw);
  g_free(wall);
  g_free(mem);
}

/* The sum of the estimates of the points not done in OUT, their wall
 * time run JOBS at once as the sweep runs them (fewer where their memory
 * together would pass the limit), and how many. */
static double sweep_wall(const struct experiment *e, const struct estimate *est,
                         const bool *done, unsigned jobs, double *sum,
                         guint *todo) {
  guint n = e->points->len;
  double *wall = g_new(double, n ? n : 1), *bytes = g_new(double, n ? n : 1);
  *sum = 0;
  *todo = 0;
  for (guint i = 0; i < n; i++) {
    wall[i] = est[i].wall_s;
    bytes[i] = est[i].memory_bytes;
    if (!done[i]) {
      *sum += est[i].wall_s;
      (*todo)++;
    }
  }
  double s = sweep_schedule_s(wall, bytes, done, n, jobs, 0);
  g_free(wall);
  g_free(bytes);
  return s;
}

/* Which points of E are done in OUT. */
static bool *points_done(const struct experiment *e, const char *out) {
  bool *done = g_new0(bool, e->points->len);
  for (guint i = 0; i < e->points->len; i++)
    done[i] = sweep_point_done(out, g_ptr_array_index(e->points, i));
  return done;
}

/* --estimate: every point's estimate on stdout, a row each (numbers a
 * script can read), then the sweep's. */
static void print_estimates(const struct experiment *e,
                            const struct run_args *a,
                            const struct estimate *est, const char *out) {
  bool *done = points_done(e, out);
  printf("# estimated wall time, peak memory and simulated messages of each "
         "point (docs/performance.md, \"Estimates\")\n");
  printf("%5s  %9s  %9s  %9s  %s\n", "point", "wall_s", "memory_MB",
         "messages", "swept values");
  for (guint i = 0; i < e->points->len; i++) {
    char *sw = swept_text(e, g_ptr_array_index(e->points, i));
    printf("%5u  %9.3g  %9.1f  %9.3g  %s%s\n", i, est[i].wall_s,
           est[i].memory_bytes / 1e6, est[i].messages, sw,
           done[i] ? " (done: kept)" : "");
    g_free(sw);
  }
  double sum;
  guint todo;
  double wall = sweep_wall(e, est, done, (unsigned)a->jobs, &sum, &todo);
  char *w = estimate_duration_text(wall), *ws = estimate_duration_text(sum);
  printf("# %u of %u points to run: about %s with --jobs %" G_GINT64_FORMAT
         " (%s of simulation)\n",
         todo, e->points->len, w, a->jobs, ws);
  g_free(w);
  g_free(ws);
  g_free(done);
}

/* Before a sweep whose points to run are estimated at over NOTICE_S of
 * wall time: each point's estimate on stderr (at most NOTICE_LINES). */
enum { NOTICE_LINES = 20 };
#define NOTICE_S 10.0
static void notice(const struct experiment *e, const struct run_args *a,
                   const struct estimate *est, const char *out) {
  bool *done = points_done(e, out);
  double sum;
  guint todo;
  double wall = sweep_wall(e, est, done, (unsigned)a->jobs, &sum, &todo);
  if (wall > NOTICE_S) {
    char *w = estimate_duration_text(wall);
    fprintf(stderr, "gradsim: %u point%s to run, estimated at about %s with "
                    "--jobs %" G_GINT64_FORMAT ":\n",
            todo, todo == 1 ? "" : "s", w, a->jobs);
    g_free(w);
    guint shown = 0;
    for (guint i = 0; i < e->points->len && shown < NOTICE_LINES; i++)
      if (!done[i]) {
        estimate_line(e, i, &est[i]);
        shown++;
      }
    if (todo > shown)
      fprintf(stderr, "gradsim: ... and %u more (--estimate lists them "
                      "all)\n",
              todo - shown);
  }
  g_free(done);
}

/* The whole sweep, then its report: warnings and oracle notes on stderr,
 * the summary table on stdout. */
static void run_all(const struct experiment *e, const struct run_args *a,
                    const struct estimate *est, const char *out) {
  if (!a->quiet)
    notice(e, a, est, out);
  struct cli_bar bar = {isatty(2), a->quiet, est, false};
  struct sweep_opts o = {.out = out,
                         .jobs = (unsigned)a->jobs,
                         .trace = a->trace,
                         .plot = a->plot,
                         .progress = cli_bar_update,
                         .ctx = &bar,
                         .tick_s = cli_bar_tick(&bar)};
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
  struct sweep_opts o = {
      .out = out, .jobs = (unsigned)a->jobs, .trace = a->trace};
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
  struct run_args a = {NULL, NULL, 0,     G_MININT64, FALSE,
                       FALSE, FALSE, FALSE, FALSE};
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
  struct estimate *est = g_new0(struct estimate, total);
  if (experiment_check(e, est, &err) != 0)
    cli_bad_input("%s", err);
  if (a.list) {
    char *list = sweep_list_points(e);
    fputs(list, stdout);
    g_free(list);
  } else {
    char *out = out_dir(argv[1], a.out);
    if (a.estimate)
      print_estimates(e, &a, est, out);
    else if (one)
      run_one(e, &a, out);
    else
      run_all(e, &a, est, out);
    g_free(out);
  }
  g_free(est);
  experiment_free(e);
  g_strfreev(a.sets);
  return 0;
}
