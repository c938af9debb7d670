/* advise/advise.h: `gradsim advise`: the fastest way to train a model on a
 * cluster, found by search over a space of configurations and checked by
 * simulation (docs/advise.md).
 *
 * A space is a union of families, each the combinations of some keys'
 * values (the experiment file's own syntax: a comma-separated value
 * sweeps its key). Every candidate is a point of an experiment made of
 * the base (the model, the platform, --set) and the candidate's values;
 * the engine refuses some (a codec a collective does not take), and they
 * are listed as refused, not searched. Then:
 *
 *  1. each lossy codec (and 16-bit gradients) runs on the model's
 *     synthetic gradients with its error feedback (models/codec_eval.h):
 *     its payload bits per value, the relative error and the cosine
 *     similarity of the summed updates; --max-error excludes what errs
 *     more;
 *  2. every candidate is predicted by the formulas (run_predict() of
 *     engine.h) and its simulation's wall time estimated
 *     (config/estimate.h);
 *  3. in rounds of ADVISE_BATCH, the candidates of least predicted time
 *     are simulated (sweep/, in parallel processes), while a candidate's
 *     lower bound (ADVISE_MARGIN, below) could beat the best simulated
 *     time by more than ADVISE_TIE (overall, and among the candidates
 *     without a codec, the baseline of the speed-ups); the rest are
 *     pruned;
 *  4. around the best, its bucket size and its codec's first parameter
 *     are halved and doubled, and searched the same way, until the best
 *     stays;
 *  5. the budget counts the estimates of simulation wall time, not the
 *     clock, so that a space, its seed and the budget always simulate
 *     the same candidates.
 *
 * Written into OUT: candidates.csv (every candidate: its values, state,
 * prediction, simulation, error, memory), best.ini (the winner as an
 * experiment that `gradsim run` reproduces to the byte), the winner's
 * runs.csv, iterations.csv, links.csv, nccl.csv and config.txt, advice.dat, .gp
 * and (with gnuplot) .png and .svg: time against error with the Pareto front,
 * and points/ of every simulated candidate.
 *
 * "Fastest" is the least time per sample the cluster trains (the
 * iteration over workers times batch: the inverse of the throughput), so
 * that a space that varies the workers or the batch compares like with
 * like; on one cluster it is the iteration's order.
 *
 * Errors as sweep.h's: 0, ADVISE_BAD_INPUT (2) with a one-line message
 * in *ERR before anything is written, ADVISE_ENV_FAILURE (1), or
 * 128 + a signal. Nothing here prints. */
#ifndef GRADSIM_ADVISE_ADVISE_H
#define GRADSIM_ADVISE_ADVISE_H

#include <stdbool.h>

struct sweep_progress; /* sweep.h */

enum { ADVISE_ENV_FAILURE = 1, ADVISE_BAD_INPUT = 2 };

/* The most combinations a space may have (each is loaded, measured and
 * predicted: milliseconds each). */
#define ADVISE_MAX_CANDIDATES 20000
/* Candidates simulated per round, whatever the number of processes (so
 * that the rounds, and which candidates they simulate, do not depend on
 * the machine). */
#define ADVISE_BATCH 6
/* A candidate's lower bound: its predicted compute (exact: the model's
 * times), plus what its prediction adds beyond compute x the least ratio
 * of simulated to predicted time beyond compute seen so far (over the
 * candidates whose prediction adds at least ADVISE_EXPOSED of their
 * time) x ADVISE_MARGIN. */
#define ADVISE_MARGIN 0.9
#define ADVISE_EXPOSED 0.05
/* A candidate is simulated only if its lower bound could beat the best by
 * more than this fraction: ties are not worth a simulation. */
#define ADVISE_TIE 0.005
/* Codec error: values per synthetic gradient (or the model's, if fewer)
 * and training steps, each a fresh gradient through the codec's error
 * feedback. */
#define ADVISE_ERROR_VALUES (1u << 16)
#define ADVISE_ERROR_STEPS 100
/* --max-error's default: a summed update more than half wrong after
 * ADVISE_ERROR_STEPS steps changes the training, not only its speed. */
#define ADVISE_MAX_ERROR 0.5

struct advise_opts {
  const char *model;    /* [model] name */
  const char *platform; /* a platform XML file, or KEY=VALUE,... of
                         * [platform] keys */
  char **sets;          /* --set section.key=value (NULL-terminated; may be
                         * NULL); their keys leave the space */
  const char *space;    /* an experiment-syntax file of the space, or NULL
                         * for the default space */
  double max_error;     /* exclude codecs whose relative error is larger
                         * (INFINITY: no limit) */
  double budget_s;      /* estimated simulation seconds, > 0 */
  unsigned jobs;        /* processes at once */
  bool exhaustive;      /* simulate every candidate (no pruning) */
  const char *out;      /* the result directory */
  /* Called with a line of progress ("round 2: 6 candidates ..."); may be
   * NULL. */
  void (*progress)(const char *line, void *ctx);
  void *ctx;
  /* A round's points as they run: sweep.h's progress callback, its
   * context and its timer period (NULL, NULL, 0: none). */
  void (*points_progress)(const struct sweep_progress *sp, void *ctx);
  void *points_ctx;
  double tick_s;
};

/* What the search found, for its caller to print (strings never NULL
 * after a successful call). */
struct advise_report {
  char *table;          /* the ranked table */
  char *recommendation; /* one sentence, its reason, and where the file is */
  char *warnings;       /* what could not be done (no gnuplot) */
  char *best_label;     /* the winner's values, "key=value ..." */
  unsigned candidates, refused, excluded, simulated, pruned, over_budget;
};

int advise_run(const struct advise_opts *o, struct advise_report *r,
               char **err);
void advise_report_clear(struct advise_report *r);

#endif
