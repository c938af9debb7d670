/* repro/table.c: named columns of text fields, read from and written to
 * CSV (table.h). */
#include "table.h"

#include "sweep.h" /* csv_split, csv_text, csv_row_free_cb */

#include <string.h>

struct table *table_new(void) {
  struct table *t = g_new0(struct table, 1);
  t->cols = g_ptr_array_new_with_free_func(g_free);
  t->rows = g_ptr_array_new_with_free_func(csv_row_free_cb);
  return t;
}

void table_free(struct table *t) {
  if (!t)
    return;
  g_ptr_array_free(t->cols, TRUE);
  g_ptr_array_free(t->rows, TRUE);
  g_free(t);
}

void table_add_col(struct table *t, const char *name) {
  g_ptr_array_add(t->cols, g_strdup(name));
  for (guint i = 0; i < t->rows->len; i++)
    g_ptr_array_add(g_ptr_array_index(t->rows, i), g_strdup(""));
}

int table_col(const struct table *t, const char *name) {
  for (guint i = 0; i < t->cols->len; i++)
    if (!strcmp(g_ptr_array_index(t->cols, i), name))
      return (int)i;
  return -1;
}

const char *table_get(const struct table *t, guint row, guint col) {
  GPtrArray *r = g_ptr_array_index(t->rows, row);
  return col < r->len ? g_ptr_array_index(r, col) : "";
}

void table_add_row(struct table *t, GPtrArray *fields) {
  g_ptr_array_set_free_func(fields, g_free);
  while (fields->len < t->cols->len)
    g_ptr_array_add(fields, g_strdup(""));
  g_ptr_array_add(t->rows, fields);
}

struct table *table_parse_csv(const char *text, char **err) {
  struct table *t = table_new();
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (!**l)
      continue;
    GPtrArray *f = csv_split(*l);
    if (l == lines) {
      for (guint i = 0; i < f->len; i++)
        table_add_col(t, g_ptr_array_index(f, i));
      g_ptr_array_unref(f);
      continue;
    }
    if (f->len != t->cols->len) {
      *err = g_strdup_printf("a CSV row has %u fields, the header %u", f->len,
                             t->cols->len);
      g_ptr_array_unref(f);
      g_strfreev(lines);
      table_free(t);
      return NULL;
    }
    table_add_row(t, f);
  }
  g_strfreev(lines);
  return t;
}

char *table_to_csv(const struct table *t) {
  GString *s = g_string_new(NULL);
  for (guint c = 0; c < t->cols->len; c++) {
    if (c)
      g_string_append_c(s, ',');
    csv_text(s, g_ptr_array_index(t->cols, c));
  }
  g_string_append_c(s, '\n');
  for (guint r = 0; r < t->rows->len; r++) {
    for (guint c = 0; c < t->cols->len; c++) {
      if (c)
        g_string_append_c(s, ',');
      csv_text(s, table_get(t, r, c));
    }
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}
