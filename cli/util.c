/* cli/util.c: helpers shared by the subcommands. */
#include "cli.h"

#include "estimate.h"
#include "sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* vprintf-style (0: the arguments come as a va_list): FMT is checked as
 * a format where it is a literal, at the callers, which are printf-style
 * themselves (cli.h). */
G_GNUC_PRINTF(2, 0)
static G_NORETURN void vfail(int status, const char *fmt, va_list ap) {
  char *msg = g_strdup_vprintf(fmt, ap);
  /* One line: newlines inside a message (GLib's option errors) become
   * spaces. */
  for (char *p = msg; *p; p++)
    if (*p == '\n')
      *p = ' ';
  fprintf(stderr, "gradsim: %s\n", msg);
  g_free(msg);
  exit(status);
}

void cli_bad_input(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(EXIT_BAD_INPUT, fmt, ap);
}

void cli_env_failure(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(EXIT_ENV_FAILURE, fmt, ap);
}

void cli_exit(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(status, fmt, ap);
}

void cli_parse(int *argc, char ***argv, const char *usage, const char *summary,
               const GOptionEntry *options) {
  GOptionContext *ctx = g_option_context_new(usage);
  g_option_context_set_summary(ctx, summary);
  g_option_context_add_main_entries(ctx, options, NULL);
  GError *err = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &err)) {
    char *msg = g_strdup(err->message);
    g_error_free(err);
    g_option_context_free(ctx);
    cli_bad_input("%s: %s (see --help)", (*argv)[0], msg);
  }
  g_option_context_free(ctx);
}

void cli_no_extra_args(int argc, char **argv, const char *where) {
  if (argc > 1)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where, argv[1]);
}

bool cli_format_csv(const char *format, const char *where) {
  if (format && strcmp(format, "csv") == 0)
    return true;
  if (format && strcmp(format, "table") != 0)
    cli_bad_input("%s: --format %s: expected table or csv", where, format);
  return false;
}

/* The output sets of the command line are sweep/'s, failing with exit
 * status 1. */
cli_outputs *cli_outputs_new(void) { return outputs_new(); }

void cli_outputs_add(cli_outputs *o, const char *path, void *data,
                     size_t len) {
  outputs_add(o, path, data, len);
}

void cli_outputs_commit(cli_outputs *o) {
  char *err = NULL;
  if (outputs_commit(o, &err) != 0)
    cli_env_failure("%s", err);
}

double cli_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cli_output_dir(const char *path, const char *what, const char *where) {
  if (g_file_test(path, G_FILE_TEST_EXISTS) &&
      !g_file_test(path, G_FILE_TEST_IS_DIR))
    cli_bad_input("%s: %s%s%s exists and is not a directory", where, what,
                  *what ? " " : "", path);
}

gint64 cli_jobs(gint64 jobs, const char *where) {
  if (jobs < 0 || jobs > 4096)
    cli_bad_input("%s: --jobs %" G_GINT64_FORMAT " must be in 1..4096",
                  where, jobs);
  if (jobs == 0)
    jobs = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN)
                                              : 1;
  return jobs;
}

/* What the point RUN has done, as text (g_free). */
static char *running_text(const struct sweep_running *run,
                          const struct estimate *est) {
  const struct run_progress *a = &run->at;
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "point %u: ", run->index);
  if (a->iterations_total > 1)
    g_string_append_printf(s, "iteration %" G_GINT64_FORMAT " of %"
                              G_GINT64_FORMAT ", ",
                           MIN(a->iterations + 1, a->iterations_total),
                           a->iterations_total);
  if (a->buckets_total > a->iterations_total)
    g_string_append_printf(s, "%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                              " buckets, ",
                           a->buckets, a->buckets_total);
  g_string_append_printf(s, "%.4g s simulated, %.3g messages, ", a->sim_s,
                         a->messages);
  char *wall = estimate_duration_text(run->wall_s);
  g_string_append_printf(s, "%s running", wall);
  g_free(wall);
  /* What is left at the pace of the buckets so far (buckets that
   * fast-forward skips go faster: an upper bound then), and what was
   * estimated before the run. */
  if (a->buckets > 0 && a->buckets < a->buckets_total && run->wall_s >= 1) {
    char *left = estimate_duration_text(
        run->wall_s * (double)(a->buckets_total - a->buckets) /
        (double)a->buckets);
    g_string_append_printf(s, ", %s left at this pace", left);
    g_free(left);
  }
  if (est && est[run->index].wall_s >= 1) {
    char *all = estimate_duration_text(est[run->index].wall_s);
    g_string_append_printf(s, " (estimated %s in all)", all);
    g_free(all);
  }
  return g_string_free(s, FALSE);
}

double cli_bar_tick(const struct cli_bar *bar) {
  return bar->quiet ? 0 : bar->terminal ? 1 : 60;
}

void cli_bar_update(const struct sweep_progress *sp, void *data) {
  struct cli_bar *bar = data;
  if (bar->quiet)
    return;
  char *run = sp->nrunning ? running_text(&sp->running[0], bar->est)
                           : g_strdup("");
  if (!bar->terminal) {
    /* A line a minute while points run. */
    if (sp->tick && sp->nrunning)
      fprintf(stderr, "gradsim: %u of %u points done; %s%s\n", sp->done,
              sp->total, run, sp->nrunning > 1 ? " (and others)" : "");
    g_free(run);
    return;
  }
  if (sp->stopped) {
    if (bar->drawn)
      fprintf(stderr, "\n");
    bar->drawn = false;
    g_free(run);
    return;
  }
  int width = 20;
  int fill = sp->total ? (int)((double)sp->done / sp->total * width) : width;
  fprintf(stderr, "\r[%.*s%*s] %u/%u points%s%s%s\033[K", fill,
          "####################", width - fill, "", sp->done, sp->total,
          *run ? "  " : "", run, sp->nrunning > 1 ? " +more" : "");
  bar->drawn = sp->done != sp->total;
  if (sp->done == sp->total)
    fprintf(stderr, "\n");
  fflush(stderr);
  g_free(run);
}

void cli_print_report(const struct sweep_report *r, const char *out,
                      bool quiet) {
  /* Warnings, then notes (the oracle's, memory that does not fit), a
   * line each. */
  const char *const texts[] = {r->warnings, r->notes};
  for (size_t t = 0; t < G_N_ELEMENTS(texts); t++) {
    char **lines = g_strsplit(texts[t], "\n", -1);
    for (char **l = lines; *l; l++)
      if (**l)
        fprintf(stderr, "gradsim: %s\n", *l);
    g_strfreev(lines);
  }
  if (!quiet) {
    fputs(r->table, stdout);
    printf("\nresults in %s (runs.csv, iterations.csv, links.csv, "
           "nccl.csv, config.txt)\n",
           out);
  }
}
