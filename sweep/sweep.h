/* sweep/sweep.h: running an experiment's sweep and writing its results.
 *
 * Every point of an experiment (config/experiment.h) is simulated by the
 * engine (sim/engine.h) in a process of its own, JOBS at a time, because
 * SimGrid starts once per process. A point's process leaves its result
 * files in OUT/points/HASH.* (written into a work directory, then moved,
 * the row last: a point's files are all there or none), so that a sweep
 * that was stopped resumes where it was and a finished point is never
 * run twice. When every point is done, the results are joined into
 * OUT/runs.csv, iterations.csv, links.csv, nccl.csv and config.txt, in sweep
 * order (docs/outputs.md gives their columns), written all or nothing.
 * OUT/points/ID.sweep, a manifest written before anything is simulated,
 * names the sweep, so that sweep_merge() can join the points of one sweep
 * run on several machines.
 *
 * Errors: functions return 0, or a status with a one-line message in
 * *ERR (g_free): SWEEP_BAD_INPUT (a point the engine refused, a
 * directory that holds another sweep), SWEEP_ENV_FAILURE (a write, a
 * fork, a simulation process that crashed), or 128 + the signal when
 * SIGINT or SIGTERM stopped the sweep (the running points were stopped,
 * their partial files removed, no output written; *ERR says how many
 * points are done). Nothing here prints or exits: the caller does. */
#ifndef GRADSIM_SWEEP_SWEEP_H
#define GRADSIM_SWEEP_SWEEP_H

#include "experiment.h"

#include <stdbool.h>

enum { SWEEP_ENV_FAILURE = 1, SWEEP_BAD_INPUT = 2 };

/* A point running, as a progress display sees it. */
struct sweep_running {
  unsigned index;         /* the point (an index of the experiment) */
  double wall_s;          /* wall time since its process started */
  struct run_progress at; /* what it has simulated so far (engine.h) */
};

/* A sweep's state for a progress display. */
struct sweep_progress {
  unsigned done, total; /* points */
  bool stopped;         /* the sweep ends early (the last call) */
  bool tick;            /* a call of the timer (every TICK_S), not of a
                         * point's end */
  unsigned nrunning;    /* the points running, in the order started */
  const struct sweep_running *running;
};

struct sweep_opts {
  const char *out; /* the result directory (created if missing) */
  unsigned jobs;   /* points simulated at once, >= 1 */
  bool trace;      /* a Paje trace of each point: OUT/points/HASH.paje */
  bool plot;       /* OUT/plot and breakdown .png and .svg, by gnuplot */
  /* Called in the calling process as points finish (first with the
   * points already done), every TICK_S seconds of wall time while points
   * run (0: never), and once with STOPPED set when the sweep ends early;
   * may be NULL. */
  void (*progress)(const struct sweep_progress *sp, void *ctx);
  void *ctx;
  double tick_s;
  /* The estimated memory (config/estimate.h) the points running at once
   * may take together: a point waits while the running ones and it would
   * take more (one point always runs; each was checked against the limit
   * on its own). 0: ESTIMATE_MEMORY_FRACTION of physical memory. */
  double memory_bytes;
};

/* What a finished sweep has to say, for its caller to print. Strings are
 * never NULL after a successful call; free with sweep_report_clear(). */
struct sweep_report {
  char *table;    /* the summary table: a row per point, with the swept
                     keys, exchange, iteration, comm and codec time, the
                     formula and the oracle */
  char *notes;    /* "point I: oracle: ..." lines of failed oracles */
  char *warnings; /* lines about what could not be done (no gnuplot) */
};
void sweep_report_clear(struct sweep_report *r);

/* Run every point of E that is not done in O->out, then write the
 * outputs (and the plot). E must have passed experiment_check(). */
int sweep_run(const struct experiment *e, const struct sweep_opts *o,
              struct sweep_report *report, char **err);

/* Run point INDEX of E only, into O->out/points (no outputs joined: see
 * sweep_merge()); *WAS_DONE tells whether it was done already. */
int sweep_run_point(const struct experiment *e, unsigned index,
                    const struct sweep_opts *o, bool *was_done, char **err);

/* Run every point of E that is not done in O->out/points, joining no
 * outputs (a later sweep_run() finds them done and joins them). */
int sweep_run_points(const struct experiment *e, const struct sweep_opts *o,
                     char **err);

/* The wall time of N points run as a sweep runs them: in order, at most
 * JOBS at once, the next waiting while its BYTES and those of the points
 * running would pass MEMORY_BYTES (0: sweep_opts' default), point I
 * taking WALL_S[I]; the points with SKIP[I] are not run (SKIP may be
 * NULL). */
double sweep_schedule_s(const double *wall_s, const double *bytes,
                        const bool *skip, guint n, unsigned jobs,
                        double memory_bytes);

/* Whether point P's results are in OUT (a sweep run there skips it). */
bool sweep_point_done(const char *out, const struct point *p);

/* Point P's row of runs.csv as its fields, the point index first (as
 * INDEX), when P is done in OUT; NULL otherwise (g_ptr_array_unref). */
GPtrArray *sweep_point_row(const char *out, const struct point *p,
                           unsigned index);
/* The names of runs.csv's columns, in order (docs/outputs.md;
 * g_ptr_array_unref). */
GPtrArray *sweep_runs_columns(void);

/* One line per point: its index, hash and the swept keys as
 * section.key=value, tab-separated (g_free). */
char *sweep_list_points(const struct experiment *e);

/* Join the points of one sweep from the result directories DIRS (of
 * sweep_run or sweep_run_point, in any mix) into O->out, as one
 * sweep_run of the whole sweep would have written it. SWEEP_ID chooses
 * the sweep where the directories hold several (NULL: the one they all
 * hold). Refuses directories of different sweeps, missing points, a
 * point whose results differ between directories, and manifests that do
 * not match their id (SWEEP_BAD_INPUT), before writing anything. */
int sweep_merge(const char *const *dirs, int ndirs, const char *sweep_id,
                const struct sweep_opts *o, struct sweep_report *report,
                char **err);

/* ---- CSV as the result files are written (RFC 4180 quoting) ------------ */

/* The fields of one CSV line: strings (free with the array). */
GPtrArray *csv_split(const char *line);
/* g_ptr_array_unref() as a GDestroyNotify, for arrays of rows such as
 * csv_split()'s. */
void csv_row_free_cb(gpointer row);
/* Append field V to S, quoted when it holds a comma, a quote or a
 * newline. */
void csv_text(GString *s, const char *v);

/* ---- a set of files written all or nothing ------------------------------
 * Files are added with their contents and written (each atomically, by
 * rename) only by outputs_commit(); if any write fails, the ones already
 * written are removed. */
typedef struct outputs outputs;
outputs *outputs_new(void);
/* Takes ownership of DATA (g_free). */
void outputs_add(outputs *o, const char *path, void *data, size_t len);
/* Writes and frees O: 0, or -1 with *ERR. */
int outputs_commit(outputs *o, char **err);
/* Frees O without writing anything (NULL is fine). */
void outputs_free(outputs *o);

#endif
