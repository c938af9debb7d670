/* sweep/sweep_impl.h: what the files of sweep/ share: the result files'
 * formats, the point files, manifests, the signal handling of a running
 * sweep. Not for users of the layer (they see sweep.h). */
#ifndef GRADSIM_SWEEP_SWEEP_IMPL_H
#define GRADSIM_SWEEP_SWEEP_IMPL_H

#include "sweep.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* ---- results.c: runs.csv and the joined outputs ------------------------ */

/* runs.csv columns (0-based). */
enum {
  COL_ALGORITHM = 7,
  COL_EXCHANGE = 17, COL_ITERATION, COL_COMPUTE, COL_CODEC, COL_COMM,
  COL_REDUCE, COL_IDLE, COL_WIRE, COL_FORMULA, COL_RELERR, COL_ORACLE,
  COL_FF, COL_PACKETS, COL_HEADER, COL_DRIVER, COL_NIC, COL_NIC_BUSY,
  COL_NIC_STALLS, COL_FF_ITERATIONS, COL_DEVICE, COL_PRECISION,
  COL_GRAD_DTYPE, COL_SPLIT_COMPUTE, COL_EXPOSED_COMM, COL_EXPOSED_CODEC,
  COL_EXPOSED_REDUCE, COL_SPLIT_IDLE, COL_AGGR_REDUCE, COL_FF_BUCKETS,
  COL_COMPRESSION, COL_IMPLEMENTATION, COL_OPTIMIZER, COL_CHECKPOINT,
  COL_SHARDING,
  COL_MEM_PARAMS, COL_MEM_GRADS, COL_MEM_OPTIMIZER, COL_MEM_ACTIVATIONS,
  COL_MEM_RESIDUAL, COL_MEMORY, COL_CAPACITY, COL_FITS, COL_MEM_BUFFERS,
  NCOLS
};

/* OUT/points/HASH.EXT (g_free): where a point's result files are kept
 * until results_join() joins them (points.c writes them there). */
char *point_file(const char *out, const struct point *p, const char *ext);
/* The row of runs.csv for point P, without its index (g_free). */
char *results_row(const struct point *p, const struct run_result *r);
/* Whether TEXT's first line has this version's runs.csv columns. */
bool results_row_current(const char *text);

/* Join the point files of E in OUT/points into OUT's runs.csv,
 * iterations.csv, links.csv, nccl.csv and config.txt, in sweep order; then the
 * plot (PLOT) and REPORT's texts. The old outputs are removed first and
 * runs.csv is written last, so that a run killed in between leaves no
 * runs.csv rather than a mixture. 0, or SWEEP_ENV_FAILURE with *ERR. */
int results_join(const char *out, const struct experiment *e, bool plot,
                 struct sweep_report *report, char **err);

/* ---- points.c: a point's files and its process ------------------------- */

/* Whether P's row exists in OUT and has this version's columns (a row an
 * older gradsim wrote is simulated again). */
bool point_done(const char *out, const struct point *p);
/* Remove what a stopped or killed process left of P in OUT when P is not
 * done: its work directory and any of its files. */
void point_clean(const char *out, const struct point *p);
/* The files of a point, the row last: its presence marks the point
 * done. */
extern const char *const POINT_EXTS[6];
/* In a child process: run P, reporting its progress into PROGRESS (may
 * be NULL), write its files into OUT/points and _exit with 0, 2 (bad
 * input, message in OUT/points/HASH.err) or 1. */
G_NORETURN void point_child(const char *out, const struct point *p,
                            bool trace, struct run_progress *progress);

/* ---- manifest.c: OUT/points/ID.sweep ------------------------------------ */

/* config.txt: every point's effective configuration with its hash. */
GString *manifest_config_text(const struct experiment *e);
/* Write OUT/points/ID.sweep for E: 0, or SWEEP_ENV_FAILURE with *ERR. */
int manifest_write(const char *out, const struct experiment *e, char **err);
/* Read a manifest back into an experiment whose points hold only their
 * configuration and hash (what the outputs need), and its id. NULL with
 * *ERR (a predicate: "is truncated ...") when the file is not one, or
 * does not match its own id and hashes. */
struct experiment *manifest_load(const char *file, char **id, char **err);

/* ---- runner.c: points in processes ------------------------------------- */

/* Run the points [FIRST, LAST) of E that are not done in O->out,
 * O->jobs at a time, each in a process of its own; 0 when all are done,
 * else the status of sweep.h with *ERR. SIGINT and SIGTERM must be
 * caught around it (runner.c does). */
int runner_points(const struct experiment *e, const struct sweep_opts *o,
                  guint first, guint last, char **err);

/* ---- plot.c: --plot and the summary table -------------------------------- */

/* DIR/plot.png and breakdown.png (and .svg, .dat, .gp) of E's ROWS
 * (runs.csv fields); what could not be done is appended to WARNINGS. */
void plot_sweep(const char *dir, const struct experiment *e,
                const GPtrArray *rows, GString *warnings);
/* The summary table of E's ROWS (g_free). */
char *plot_summary(const struct experiment *e, const GPtrArray *rows);

#endif
