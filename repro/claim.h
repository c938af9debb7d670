/* repro/claim.h: the claim language: the small expression language in
 * which a reproduction computes gradsim's figure for a paper's claim (a
 * [reproduce.claim ID] value) or an extra column of runs.csv (a
 * [reproduce.derive] NAME), from the rows of a table (table.h).
 *
 * Grammar (whitespace, tabs and newlines are free between tokens):
 *
 *   expr     := product (('+' | '-') product)*
 *   product  := unary (('*' | '/') unary)*
 *   unary    := '-' unary | primary
 *   primary  := NUMBER | '(' expr ')' | FUNC '(' expr (',' expr)* ')'
 *             | COLUMN [filter]
 *   filter   := '{' [KEY '=' VALUE (',' KEY '=' VALUE)*] '}'
 *   FUNC     := max | min | mean | sum | count | abs | lg
 *   COLUMN, KEY := [A-Za-z_][A-Za-z0-9_]*
 *   NUMBER   := a decimal number as strtod reads it (1, .5, 2e-3)
 *   VALUE    := the text up to the next ',' or '}', trimmed
 *
 * Meaning:
 *   COLUMN{k=v, ...}  the column's values in the rows where every column
 *                     k holds v (as text, or as equal numbers: 1e3 = 1000);
 *                     v = `$`: as in the current row (derived columns
 *                     only); v = `max` or `min`: that column's extreme
 *                     among the rows the other filters select.
 *   COLUMN            every row's value; in a derived column the current
 *                     row's.
 *   a + b, -a, ...    arithmetic on single values: a term that matches
 *                     several rows (or none) is an error unless a function
 *                     aggregates it; x / 0 is NaN.
 *   max min mean sum  over all their arguments' values, empty fields
 *                     skipped; count: how many; abs, lg (log2): of one
 *                     value.
 * A binding (BIND_COL = BIND_VAL, for a claim's `by`) adds a filter to
 * every term. Empty fields read as NaN.
 *
 * Example: speedup{variant=INC, model=$} / speedup{variant=WA, model=$}
 *
 * Errors are one line: a parse error names the character position; an
 * evaluation error names the term (an unknown column, a term matching no
 * row or several where one is needed, a field that is not a number). */
#ifndef GRADSIM_REPRO_CLAIM_H
#define GRADSIM_REPRO_CLAIM_H

#include "table.h"

struct expr;

/* NULL with a one-line *ERR (g_free) naming the position on a syntax
 * error. */
struct expr *expr_parse(const char *text, char **err);
void expr_free(struct expr *e);
/* expr_free() as a GDestroyNotify (g_ptr_array_new_with_free_func()). */
void expr_free_cb(gpointer e);

/* Evaluate E over T. BIND_COL/BIND_VAL (or NULLs): a filter added to
 * every term; ROW: the row `$` filters and bare columns refer to, or -1.
 * Returns 0 with *OUT, or -1 with *ERR. */
int expr_eval(const struct expr *e, const struct table *t, const char *bind_col,
              const char *bind_val, int row, double *out, char **err);

#endif
