/* repro/repro.h: the reproduction framework: the layer between the
 * command line and the sweep runner. It reads the [reproduce] sections
 * of an experiment file, runs the experiment (simulated designs through
 * sweep/sweep.h, measurements of the codec library through measure.h),
 * computes gradsim's figure for each of the paper's claims in the claim
 * language (claim.h) over the results table (table.h), judges it against
 * the paper, and writes runs.csv, claims.csv, the plots, NAME.md and
 * REPORT.md. Uses sweep/, config/ and the layers below; nothing here
 * prints or exits: errors are one-line messages in *ERR (g_free) with a
 * status (REPRO_BAD_INPUT: the files or the names given; nothing was
 * written; REPRO_ENV_FAILURE: a write, a process, a tool).
 *
 * An experiment file that reproduces a figure or table carries, beside
 * the usual [platform], [model], [exchange], [training] and [gradients]
 * sections (which `gradsim run` reads and which it ignores these for):
 *
 *   [reproduce]                  title, source, setup, discussion, kind,
 *                                plot, and the kind's parameters
 *   [reproduce.quick]            overrides for --quick: section.key = value
 *                                for the simulation, key = value for
 *                                [reproduce] parameters
 *   [reproduce.variant LABEL]    section.key = value overrides: one
 *                                simulated design (kind run); a LABEL#part
 *                                suffix adds more points under LABEL;
 *                                quick.section.key = value applies with
 *                                --quick only, after [reproduce.quick]
 *   [reproduce.derive]           NAME = EXPR: extra columns of runs.csv,
 *                                computed per row (claim.h)
 *   [reproduce.claim ID]         kind, text, source, value (EXPR), by,
 *                                paper, tolerance, note, not_evaluable
 *   [reproduce.calibrate NAME]   fit (section.key), claim (the ID of a
 *                                calibration claim), group, range
 *                                (LO..HI), unit (of the range and the
 *                                value, for keys that want one: GBps),
 *                                variants, apply, precision: a
 *                                parameter fitted before the run (below)
 *   [reproduce.mechanism NAME]   text, source, and what turning it off
 *                                means: off (section.key = value; ...
 *                                for every variant), calibrate (the
 *                                calibrations that belong to it: not
 *                                fitted when off, their claims then
 *                                scored as validation), derive (NAME =
 *                                EXPR; ...: derived columns redefined)
 *
 * A claim's kind says what it can show:
 *   validation   a paper measurement gradsim predicts: scored;
 *   calibration  a paper number a parameter was set to (by a
 *                [reproduce.calibrate] section or by hand): reported,
 *                never scored;
 *   check        arithmetic or a property that holds by construction:
 *                reported as holding or not, never scored;
 *   contradicted a paper number that the same paper's own figures or
 *                stated settings contradict (its note says how):
 *                reported, never scored.
 * not_evaluable = REASON: a validation claim gradsim cannot evaluate
 * here (e.g. GPU timings on a CPU): shown with its figure and the reason,
 * not scored.
 *
 * Calibration: each [reproduce.calibrate NAME] section, in file order,
 * fits the simulation key `fit` (e.g. model.compute_scale) within
 * `range` so that its calibration claim (its `group` of a claim with
 * `by`) meets the paper's value: bisection on the simulation itself (on
 * the measurement, for the kinds without variants),
 * simulating only the `variants` listed (default all), in log space when
 * LO > 0, until the claim is within `precision` (default 1e-3) of the
 * paper's value (a key fitted again by a later section takes the later
 * value: two dependent parameters are fitted in turn). The fitted value
 * then applies to the variants of
 * `apply` (default all: one paper's cluster; an experiment of two
 * clusters fits each its own), and NAME.md and calibration.csv give it
 * with the claim's residual. The claim's value must be monotone in the
 * parameter over the range and bracket the paper's value (with --quick,
 * whose smaller sizes may not reach it, the nearer end is used).
 *
 * --quick may cut sizes only: [reproduce.quick] and quick. keys set
 * training.iterations, exchange.sample, platform.nodes, model.params,
 * or the parameters sample, steps, sizes and runs (never a design or a
 * schedule).
 *
 * With `by = COLUMN: v1, v2`, a claim is evaluated once per value with
 * COLUMN = v added to every term of its expression.
 *
 * Paper values: `X`, a range `LO..HI`, or a bound `>X` / `<X`.
 * Tolerance: `rel R` (default 0.25: |gradsim - paper| <= R |paper|, a
 * range widened by R at both ends) or `abs A`; bounds hold strictly. A
 * validation claim wider than rel 0.25 says why: `rel 0.4: REASON`. */
#ifndef GRADSIM_REPRO_REPRO_H
#define GRADSIM_REPRO_REPRO_H

#include "claim.h"
#include "table.h"

#include <stdbool.h>

/* ---- the [reproduce] sections -------------------------------------------- */

enum repro_kind {
  REPRO_RUN,         /* gradsim run, once per variant */
  REPRO_CODEC_RATIO, /* payload size of codecs on each model's gradients */
  REPRO_SELECT_TIME, /* selection time against vector size, this CPU */
};

struct repro_variant {
  char *label;           /* LABEL without any #part */
  GPtrArray *sets;       /* "section.key=value" */
  GPtrArray *quick_sets; /* its quick.section.key keys, with --quick only */
};

enum paper_kind { PAPER_VALUE, PAPER_RANGE, PAPER_GT, PAPER_LT };

struct paper_value {
  enum paper_kind kind;
  double lo, hi; /* VALUE: lo = hi; GT/LT: the bound in lo */
  char *text;    /* as written */
};

/* VALIDATION: a paper measurement gradsim predicts (scored);
 * CALIBRATION: a paper number a parameter was fitted to; CHECK:
 * arithmetic or true by construction; CONTRADICTED: a paper number that
 * the same paper's own figures or stated settings contradict (its note
 * quotes them and gives the arithmetic). Only VALIDATION is scored. */
enum claim_kind {
  CLAIM_VALIDATION,
  CLAIM_CALIBRATION,
  CLAIM_CHECK,
  CLAIM_CONTRADICTED,
  CLAIM_KIND_COUNT
};

struct repro_claim {
  char *id, *text, *source, *note;
  enum claim_kind kind;
  char *not_evaluable; /* the reason, or NULL */
  char *tol_why;       /* why the tolerance is wider than rel 0.25, or NULL */
  char *value;         /* the expression */
  struct expr *expr;
  char *by;          /* column, or NULL */
  GPtrArray *groups; /* char *: the values of BY (one "" without BY) */
  GArray *paper;     /* struct paper_value, one per group */
  double tol;
  bool tol_abs;
};

/* A mechanism the paper implies and the reproduction models: what
 * turning it off changes (docs/reproductions.md, "Ablation"). */
struct repro_mechanism {
  char *name, *text, *source;
  GPtrArray *off_sets;  /* "section.key=value", every variant, when off */
  GPtrArray *calibrate; /* char *: names of its [reproduce.calibrate] */
  GPtrArray *derive;    /* char *: "NAME=EXPR" redefinitions when off */
  bool off;             /* turned off in this load */
};

/* A parameter fitted before the run. */
struct repro_calibrate {
  char *name;
  char *fit;      /* "section.key" */
  char *claim_id; /* the calibration claim */
  char *group;    /* its group ("" without by) */
  /* Resolved when the file is loaded: the claim, and its group's index
   * in its groups and paper values. */
  const struct repro_claim *claim;
  guint group_index;
  double lo, hi;       /* the search range (in UNIT) */
  char *unit;          /* what follows the number when the key is set
                        * (e.g. GBps, us); "" for a plain number */
  double precision;    /* stop within this share of the paper's value */
  GPtrArray *variants; /* labels simulated while fitting (empty: all) */
  GPtrArray *apply;    /* labels the fitted value applies to (empty: all) */
};

struct repro {
  char *name; /* file name without .ini */
  char *path;
  char *title, *source, *setup, *discussion, *plot;
  enum repro_kind kind;
  GPtrArray *variants;     /* struct repro_variant * (kind run) */
  GPtrArray *sets;         /* --quick: "section.key=value" for the run */
  GHashTable *params;      /* [reproduce] keys, --quick ones applied */
  GPtrArray *derive_names; /* char * */
  GPtrArray *derive_exprs; /* struct expr * */
  GPtrArray *claims;       /* struct repro_claim * */
  GPtrArray *calibrate;    /* struct repro_calibrate *, in file order */
  GPtrArray *mechanisms;   /* struct repro_mechanism *, in file order */
};

/* Read the [reproduce] sections of PATH (QUICK: with [reproduce.quick]
 * applied; OFF: NULL, or a NULL-terminated list of mechanism names, or
 * "all", turned off). NULL with a one-line *ERR (file, section, key,
 * what is allowed) on bad input, or when the file has no [reproduce]
 * section. */
struct repro *repro_load(const char *path, bool quick, const char *const *off,
                         char **err);
/* Turn off the mechanisms of R that OFF names (NULL-terminated; "all":
 * every one), skipping the names R does not have; FOUND[k] is set when R
 * has OFF[k] ("all" always), left as it was otherwise. */
void repro_off_known(struct repro *r, const char *const *off, bool *found);
void repro_free(struct repro *r);
/* A [reproduce] parameter, or DEF. */
const char *repro_param(const struct repro *r, const char *key,
                        const char *def);

/* ---- claims and reports ------------------------------------------------ */

struct claim_result {
  const struct repro_claim *claim;
  const char *group; /* "" without BY */
  const struct paper_value *paper;
  double value; /* NAN when not evaluated */
  double ratio; /* gradsim / paper (a range: its nearest end) */
  int within;   /* 1, 0, or -1 not judged (not evaluated, or
                   not evaluable) */
  char *error;  /* why not judged, or NULL */
};

/* Claims of KIND in RES, and of those the ones within tolerance (or
 * holding) and the ones not judged. */
struct claim_score {
  guint total, within, not_judged;
};
struct claim_score claim_score(const GArray *res, enum claim_kind kind);
const char *claim_kind_name(enum claim_kind kind);

/* Evaluate every claim of R over T: an array of struct claim_result
 * (free with claim_results_free). */
GArray *repro_evaluate(const struct repro *r, const struct table *t);
void claim_results_free(GArray *res);

/* Add R's derived columns to T (in order, each may use the earlier
 * ones). -1 with *ERR when one cannot be computed for some row. */
int repro_derive(const struct repro *r, struct table *t, char **err);

/* A fitted parameter (struct repro_calibrate) and how well it fits. */
struct repro_fit {
  const struct repro_calibrate *cal;
  double value;  /* the fitted value */
  double target; /* the calibration claim's value with it */
  double paper;  /* the paper's value (a range: its middle) */
  guint runs;    /* simulations of the search */
};

/* NAME.md: title, setup, the plots, the score, the calibrated
 * parameters (FITS: struct repro_fit, may be empty), the mechanisms
 * (with ABLATION, struct repro_ablation, their scores; may be NULL),
 * the claims table, the discussion. PLOTS: file names in the same
 * directory (may be empty). */
char *repro_markdown(const struct repro *r, const GArray *res,
                     const GArray *fits, const GArray *ablation,
                     const GPtrArray *plots, bool quick, const char *command);

/* calibration.csv: name, fit, value, claim, group, paper, gradsim,
 * residual (gradsim / paper - 1), runs. */
char *repro_fits_csv(const GArray *fits);

/* claims.csv, one row per claim and group, for the plots: claim, group,
 * text, paper, paper_lo, paper_hi, gradsim, ratio, within (yes, no, or
 * empty when not judged), kind. */
char *repro_claims_csv(const GArray *res);

/* A claim's gradsim figure as printed in the tables ("0.412"). */
char *repro_format_value(double v);

/* ---- running reproductions ---------------------------------------------- */

enum { REPRO_ENV_FAILURE = 1, REPRO_BAD_INPUT = 2 };

/* The experiments of DIR with a [reproduce] section, by name (without
 * .ini), sorted. */
GPtrArray *repro_list(const char *dir);

struct repro_opts {
  const char *out;         /* results directory (created) */
  const char *experiments; /* the experiments directory */
  const char *plots;       /* the gnuplot scripts (plots/NAME.gp) */
  unsigned jobs;           /* points simulated at once, >= 1 */
  bool quick;              /* [reproduce.quick] and quick. keys applied */
  const char *const *off;  /* mechanisms turned off (repro_load), or NULL */
  bool ablation; /* also run each reproduction with each of its
                    mechanisms off, and with all off (ablation/ in its
                    directory; the scores in NAME.md and REPORT.md) */
  /* Called with a line of progress, or of a warning (WARNING set), no
   * newline; may be NULL. */
  void (*note)(bool warning, const char *line, void *ctx);
  void *ctx;
};

/* One run of an ablation: the mechanisms turned off ("all", or one
 * name) and the validation score without them. */
struct repro_ablation {
  char *off;
  struct claim_score validation;
};

/* One finished reproduction. */
struct repro_done {
  char *name, *title;
  /* The scores of its claims by kind. */
  struct claim_score validation, checks, calibration, contradicted;
  double wall_s; /* wall time it took */
  GArray *ablation; /* struct repro_ablation (--ablation), or NULL */
  /* While the reproductions run (REPORT.md is made from them); NULL once
   * repro_reproduce() returns, since they point into the loaded specs. */
  GArray *res;  /* struct claim_result */
  GArray *fits; /* struct repro_fit */
  char *md;     /* NAME.md */
};

/* Reproduce the experiments NAMES (N of them, from repro_list()): load
 * and check every one first (REPRO_BAD_INPUT, nothing written), then run
 * each and write O->out/NAME/{runs.csv, claims.csv, plots, NAME.md}, and
 * O->out/REPORT.md. Relative paths inside experiments are from the
 * experiments directory's parent, which becomes the working directory.
 * Returns 0 with *DONE (free with repro_done_free()), or a status. */
int repro_reproduce(char *const *names, guint n, const struct repro_opts *o,
                    GArray **done, char **err);
void repro_done_free(GArray *done);

/* REPORT.md: a summary line per experiment, then every claims table. */
char *repro_report(const GArray *done, bool quick);

#endif
