/* repro/table.h: a table of named columns of text fields: a CSV file in
 * memory (runs.csv, claims.csv). Fields are kept as text, as written;
 * the claim language (claim.h) reads numbers from them. The table owns
 * its strings. */
#ifndef GRADSIM_REPRO_TABLE_H
#define GRADSIM_REPRO_TABLE_H

#include <glib.h>

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

#endif
