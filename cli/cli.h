/* cli/cli.h: the gradsim command line: subcommands and shared helpers.
 *
 * Exit statuses: 0 success; 2 bad input of any kind (one line on stderr
 * naming what was wrong and what is allowed, nothing written); 1 a failure
 * of the environment (a write that fails, memory exhausted). */
#ifndef GRADSIM_CLI_CLI_H
#define GRADSIM_CLI_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

enum { EXIT_BAD_INPUT = 2, EXIT_ENV_FAILURE = 1 };

/* Print "gradsim: MESSAGE" and exit with status 2. */
G_NORETURN void cli_bad_input(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Print "gradsim: MESSAGE" and exit with status 1. */
G_NORETURN void cli_env_failure(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Print "gradsim: MESSAGE" and exit with STATUS (a lower layer's: 1, 2,
 * or 128 + a signal). */
G_NORETURN void cli_exit(int status, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

/* Parse OPTIONS from ARGV with GLib; on an unknown option or a bad value
 * exit 2 with GLib's message. SUMMARY is shown by --help. */
void cli_parse(int *argc, char ***argv, const char *usage, const char *summary,
               const GOptionEntry *options);

/* After cli_parse(): ARGV[1], if any, is an argument the command does
 * not take: exit 2 naming it and WHERE (the command, "codec roundtrip"). */
void cli_no_extra_args(int argc, char **argv, const char *where);

/* --format FORMAT: true for "csv", false for NULL or "table"; anything
 * else exits 2 naming WHERE. */
bool cli_format_csv(const char *format, const char *where);

/* A set of output files written all or nothing: files are added with
 * their contents and written (each atomically, by rename) only by
 * cli_outputs_commit(); if any write fails, the ones already written are
 * removed and the program exits with status 1. */
typedef struct outputs cli_outputs; /* sweep.h's outputs */
cli_outputs *cli_outputs_new(void);
/* Takes ownership of DATA (g_free'd). */
void cli_outputs_add(cli_outputs *o, const char *path, void *data, size_t len);
void cli_outputs_commit(cli_outputs *o); /* and frees O */

/* PATH, where a command writes (WHAT: its option, "--out", or "" for an
 * argument), must be a directory if it exists; otherwise exit 2 naming
 * WHERE. */
void cli_output_dir(const char *path, const char *what, const char *where);

/* Monotonic seconds, for benchmarks. */
double cli_now(void);

/* --jobs N: N in 1..4096, or 0 for the number of CPUs; exits 2 naming
 * WHERE otherwise. */
gint64 cli_jobs(gint64 jobs, const char *where);

/* A sweep's progress on stderr, the progress callback of struct
 * sweep_opts: on a terminal (TERMINAL) a bar redrawn every second with
 * the longest-running point's iterations, buckets, simulated time and
 * wall time against its estimate; elsewhere a line a minute while points
 * run. Nothing when QUIET. EST: each point's estimate (config/estimate.h),
 * or NULL. */
struct estimate;
struct cli_bar {
  bool terminal, quiet;
  const struct estimate *est;
  bool drawn; /* a bar is on the terminal's last line */
};
struct sweep_progress;
void cli_bar_update(const struct sweep_progress *sp, void *bar);
/* The timer period struct sweep_opts wants for BAR (0: none). */
double cli_bar_tick(const struct cli_bar *bar);

struct sweep_report;
/* A finished sweep's report: warnings and oracle notes on stderr, then,
 * unless QUIET, the summary table and where the results are (OUT). */
void cli_print_report(const struct sweep_report *r, const char *out,
                      bool quiet);

/* Subcommands. */
int cli_codec(int argc, char **argv);
int cli_platform(int argc, char **argv);
int cli_formula(int argc, char **argv);
int cli_gradients(int argc, char **argv);
int cli_model(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_reproduce(int argc, char **argv);
int cli_advise(int argc, char **argv);

#endif
