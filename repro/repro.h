/* repro/repro.h: paper reproductions: the [reproduce] sections of an
 * experiment file, result tables, the small expression language that
 * computes gradsim's figure for each of the paper's claims, and the
 * reports (NAME.md, REPORT.md).
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
 *                                computed per row
 *   [reproduce.claim ID]         text, source, value (EXPR), by, paper,
 *                                tolerance, note
 *
 * Expressions: numbers, + - * / and parentheses; COLUMN{key=value, ...}
 * is the column's values in the rows matching every filter (a value `$`
 * means "as in the current row", for derived columns; `max` or `min` the
 * column's extreme among the rows the other filters select; in a derived
 * column a bare COLUMN is the current row's value); the functions
 * max, min, mean, sum (of all their arguments' values, empty fields
 * skipped), count, abs and lg (log2). Arithmetic needs single values: a term that
 * matches several rows must be aggregated. With `by = COLUMN: v1, v2`, a
 * claim is evaluated once per value with COLUMN = v added to every term.
 *
 * Paper values: `X`, a range `LO..HI`, or a bound `>X` / `<X`.
 * Tolerance: `rel R` (default 0.25: |gradsim - paper| <= R |paper|, a
 * range widened by R at both ends) or `abs A`; bounds hold strictly. */
#ifndef GRADSIM_REPRO_REPRO_H
#define GRADSIM_REPRO_REPRO_H

#include <glib.h>
#include <stdbool.h>

/* ---- tables ------------------------------------------------------------ */

/* Named columns of text fields (a CSV file in memory). */
struct table {
  GPtrArray *cols; /* char * */
  GPtrArray *rows; /* GPtrArray of char *, one field per column */
};

struct table *table_new(void);
void table_free(struct table *t);
void table_add_col(struct table *t, const char *name);
/* -1 when there is no such column. */
int table_col(const struct table *t, const char *name);
const char *table_get(const struct table *t, guint row, guint col);
/* Append a row; takes FIELDS (missing fields become ""). */
void table_add_row(struct table *t, GPtrArray *fields);
/* RFC 4180 fields; the first line names the columns. NULL with *ERR on a
 * row of the wrong width. */
struct table *table_parse_csv(const char *text, char **err);
char *table_to_csv(const struct table *t);

/* ---- expressions ------------------------------------------------------- */

struct expr;
/* NULL with a one-line *ERR naming the position on a syntax error. */
struct expr *expr_parse(const char *text, char **err);
void expr_free(struct expr *e);
/* Evaluate E over T. BIND_COL/BIND_VAL (or NULLs): a filter added to
 * every term; ROW: the row `$` filters refer to, or -1. Returns 0 with
 * *OUT, or -1 with *ERR (an unknown column, a term matching no row or
 * several where one is needed, a field that is not a number). */
int expr_eval(const struct expr *e, const struct table *t,
              const char *bind_col, const char *bind_val, int row,
              double *out, char **err);

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

struct repro_claim {
  char *id, *text, *source, *note;
  char *value; /* the expression */
  struct expr *expr;
  char *by;          /* column, or NULL */
  GPtrArray *groups; /* char *: the values of BY (one "" without BY) */
  GArray *paper;     /* struct paper_value, one per group */
  double tol;
  bool tol_abs;
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
};

/* Read the [reproduce] sections of PATH (QUICK: with [reproduce.quick]
 * applied). NULL with a one-line *ERR (file, section, key, what is
 * allowed) on bad input, or when the file has no [reproduce] section. */
struct repro *repro_load(const char *path, bool quick, char **err);
void repro_free(struct repro *r);
/* A [reproduce] parameter, or DEF. */
const char *repro_param(const struct repro *r, const char *key,
                        const char *def);

/* ---- claims and reports ------------------------------------------------ */

struct claim_result {
  const struct repro_claim *claim;
  const char *group;         /* "" without BY */
  const struct paper_value *paper;
  double value;              /* NAN when not evaluated */
  double ratio;              /* gradsim / paper (a range: its nearest end) */
  int within;                /* 1, 0, or -1 not evaluated */
  char *error;               /* why not evaluated, or NULL */
};

/* Evaluate every claim of R over T: an array of struct claim_result
 * (free with claim_results_free). */
GArray *repro_evaluate(const struct repro *r, const struct table *t);
void claim_results_free(GArray *res);

/* Add R's derived columns to T (in order, each may use the earlier
 * ones). -1 with *ERR when one cannot be computed for some row. */
int repro_derive(const struct repro *r, struct table *t, char **err);

/* NAME.md: title, setup, the plots, the claims table, the discussion.
 * PLOTS: file names in the same directory (may be empty). */
char *repro_markdown(const struct repro *r, const GArray *res,
                     const GPtrArray *plots, bool quick,
                     const char *command);

/* claims.csv, one row per claim and group, for the plots: claim, group,
 * text, paper, paper_lo, paper_hi, gradsim, ratio, within (yes, no, or
 * empty when not evaluated). */
char *repro_claims_csv(const GArray *res);

/* A claim's gradsim figure as printed in the tables ("0.412"). */
char *repro_format_value(double v);

#endif
