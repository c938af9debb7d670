/* repro/repro.c: reproduction specs, tables, claim expressions and reports
 * (repro.h). */
#include "repro.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables ------------------------------------------------------------ */

struct table *table_new(void) {
  struct table *t = g_new0(struct table, 1);
  t->cols = g_ptr_array_new_with_free_func(g_free);
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
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

/* The fields of one CSV line (RFC 4180 quoting). */
static GPtrArray *csv_fields(const char *c) {
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  for (;;) {
    GString *field = g_string_new(NULL);
    if (*c == '"') {
      for (c++; *c && !(*c == '"' && c[1] != '"'); c++) {
        if (*c == '"')
          c++;
        g_string_append_c(field, *c);
      }
      if (*c)
        c++;
    } else {
      while (*c && *c != ',')
        g_string_append_c(field, *c++);
    }
    g_ptr_array_add(f, g_string_free(field, FALSE));
    if (*c != ',')
      break;
    c++;
  }
  return f;
}

struct table *table_parse_csv(const char *text, char **err) {
  struct table *t = table_new();
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (!**l)
      continue;
    GPtrArray *f = csv_fields(*l);
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

static void csv_append(GString *s, const char *v) {
  if (!strpbrk(v, ",\"\n")) {
    g_string_append(s, v);
    return;
  }
  g_string_append_c(s, '"');
  for (; *v; v++) {
    if (*v == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *v);
  }
  g_string_append_c(s, '"');
}

char *table_to_csv(const struct table *t) {
  GString *s = g_string_new(NULL);
  for (guint c = 0; c < t->cols->len; c++) {
    if (c)
      g_string_append_c(s, ',');
    csv_append(s, g_ptr_array_index(t->cols, c));
  }
  g_string_append_c(s, '\n');
  for (guint r = 0; r < t->rows->len; r++) {
    for (guint c = 0; c < t->cols->len; c++) {
      if (c)
        g_string_append_c(s, ',');
      csv_append(s, table_get(t, r, c));
    }
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}

/* ---- expressions ------------------------------------------------------- */

enum node { N_NUM, N_TERM, N_NEG, N_BIN, N_CALL };

struct expr {
  enum node kind;
  double num;
  char op;          /* N_BIN: + - * / */
  char *name;       /* N_TERM: column; N_CALL: function */
  GPtrArray *fkeys; /* N_TERM: filter keys and values */
  GPtrArray *fvals;
  struct expr *a, *b;
  GPtrArray *args; /* N_CALL: struct expr * */
};

void expr_free(struct expr *e) {
  if (!e)
    return;
  g_free(e->name);
  if (e->fkeys)
    g_ptr_array_free(e->fkeys, TRUE);
  if (e->fvals)
    g_ptr_array_free(e->fvals, TRUE);
  expr_free(e->a);
  expr_free(e->b);
  if (e->args)
    g_ptr_array_free(e->args, TRUE);
  g_free(e);
}

struct parser {
  const char *text, *p;
  char *err;
};

static void skip_ws(struct parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
    ps->p++;
}

static struct expr *fail_at(struct parser *ps, const char *what) {
  if (!ps->err)
    ps->err = g_strdup_printf("%s at character %d of '%s'", what,
                              (int)(ps->p - ps->text) + 1, ps->text);
  return NULL;
}

static const char *const functions[] = {"max", "min", "mean", "sum",
                                        "count", "abs", "lg"};

static struct expr *parse_sum(struct parser *ps);

static bool is_ident_char(char c, bool first) {
  return g_ascii_isalpha(c) || c == '_' || (!first && g_ascii_isdigit(c));
}

/* key=value, ... } : the value runs to the next ',' or '}'. */
static bool parse_filter(struct parser *ps, struct expr *e) {
  e->fkeys = g_ptr_array_new_with_free_func(g_free);
  e->fvals = g_ptr_array_new_with_free_func(g_free);
  ps->p++; /* '{' */
  skip_ws(ps);
  if (*ps->p == '}') {
    ps->p++;
    return true;
  }
  for (;;) {
    skip_ws(ps);
    const char *k = ps->p;
    while (is_ident_char(*ps->p, ps->p == k))
      ps->p++;
    if (ps->p == k) {
      fail_at(ps, "expected a column name in a filter");
      return false;
    }
    char *key = g_strndup(k, (gsize)(ps->p - k));
    skip_ws(ps);
    if (*ps->p != '=') {
      g_free(key);
      fail_at(ps, "expected '=' in a filter");
      return false;
    }
    ps->p++;
    const char *v = ps->p;
    while (*ps->p && *ps->p != ',' && *ps->p != '}')
      ps->p++;
    if (!*ps->p) {
      g_free(key);
      fail_at(ps, "unterminated filter (missing '}')");
      return false;
    }
    char *val = g_strstrip(g_strndup(v, (gsize)(ps->p - v)));
    g_ptr_array_add(e->fkeys, key);
    g_ptr_array_add(e->fvals, val);
    if (*ps->p == '}') {
      ps->p++;
      return true;
    }
    ps->p++; /* ',' */
  }
}

static struct expr *parse_primary(struct parser *ps) {
  skip_ws(ps);
  if (*ps->p == '-') {
    ps->p++;
    struct expr *a = parse_primary(ps);
    if (!a)
      return NULL;
    struct expr *e = g_new0(struct expr, 1);
    e->kind = N_NEG;
    e->a = a;
    return e;
  }
  if (*ps->p == '(') {
    ps->p++;
    struct expr *e = parse_sum(ps);
    if (!e)
      return NULL;
    skip_ws(ps);
    if (*ps->p != ')') {
      expr_free(e);
      return fail_at(ps, "expected ')'");
    }
    ps->p++;
    return e;
  }
  if (g_ascii_isdigit(*ps->p) || *ps->p == '.') {
    char *end;
    double v = g_ascii_strtod(ps->p, &end);
    if (end == ps->p)
      return fail_at(ps, "bad number");
    ps->p = end;
    struct expr *e = g_new0(struct expr, 1);
    e->kind = N_NUM;
    e->num = v;
    return e;
  }
  if (!is_ident_char(*ps->p, true))
    return fail_at(ps, "expected a number, a column, a function or '('");
  const char *s = ps->p;
  while (is_ident_char(*ps->p, ps->p == s))
    ps->p++;
  char *name = g_strndup(s, (gsize)(ps->p - s));
  skip_ws(ps);
  struct expr *e = g_new0(struct expr, 1);
  e->name = name;
  if (*ps->p == '(') {
    e->kind = N_CALL;
    bool known = false;
    for (size_t i = 0; i < G_N_ELEMENTS(functions); i++)
      known |= !strcmp(functions[i], name);
    if (!known) {
      expr_free(e);
      return fail_at(ps, "unknown function (valid: max, min, mean, sum, "
                         "count, abs, lg)");
    }
    e->args = g_ptr_array_new_with_free_func((GDestroyNotify)expr_free);
    ps->p++;
    for (;;) {
      struct expr *a = parse_sum(ps);
      if (!a) {
        expr_free(e);
        return NULL;
      }
      g_ptr_array_add(e->args, a);
      skip_ws(ps);
      if (*ps->p == ')') {
        ps->p++;
        break;
      }
      if (*ps->p != ',') {
        expr_free(e);
        return fail_at(ps, "expected ',' or ')'");
      }
      ps->p++;
    }
    if ((!strcmp(name, "abs") || !strcmp(name, "lg")) && e->args->len != 1) {
      expr_free(e);
      return fail_at(ps, "abs and lg take one argument");
    }
    return e;
  }
  e->kind = N_TERM;
  if (*ps->p == '{' && !parse_filter(ps, e)) {
    expr_free(e);
    return NULL;
  }
  return e;
}

static struct expr *parse_product(struct parser *ps) {
  struct expr *a = parse_primary(ps);
  while (a) {
    skip_ws(ps);
    if (*ps->p != '*' && *ps->p != '/')
      break;
    char op = *ps->p++;
    struct expr *b = parse_primary(ps);
    if (!b) {
      expr_free(a);
      return NULL;
    }
    struct expr *e = g_new0(struct expr, 1);
    e->kind = N_BIN;
    e->op = op;
    e->a = a;
    e->b = b;
    a = e;
  }
  return a;
}

static struct expr *parse_sum(struct parser *ps) {
  struct expr *a = parse_product(ps);
  while (a) {
    skip_ws(ps);
    if (*ps->p != '+' && *ps->p != '-')
      break;
    char op = *ps->p++;
    struct expr *b = parse_product(ps);
    if (!b) {
      expr_free(a);
      return NULL;
    }
    struct expr *e = g_new0(struct expr, 1);
    e->kind = N_BIN;
    e->op = op;
    e->a = a;
    e->b = b;
    a = e;
  }
  return a;
}

struct expr *expr_parse(const char *text, char **err) {
  struct parser ps = {text, text, NULL};
  struct expr *e = parse_sum(&ps);
  if (e) {
    skip_ws(&ps);
    if (*ps.p) {
      expr_free(e);
      e = fail_at(&ps, "unexpected text");
    }
  }
  if (!e)
    *err = ps.err ? ps.err : g_strdup("empty expression");
  else
    g_free(ps.err);
  return e;
}

struct eval {
  const struct table *t;
  const char *bind_col, *bind_val;
  int row;
  char *err;
};

static bool field_number(const char *s, double *out) {
  char *end;
  if (!*s)
    return false;
  double v = g_ascii_strtod(s, &end);
  if (*end)
    return false;
  *out = v;
  return true;
}

static bool field_matches(const char *field, const char *want) {
  if (!strcmp(field, want))
    return true;
  double a, b;
  return field_number(field, &a) && field_number(want, &b) && a == b;
}

static char *describe_term(const struct expr *e) {
  GString *s = g_string_new(e->name);
  if (e->fkeys) {
    g_string_append_c(s, '{');
    for (guint i = 0; i < e->fkeys->len; i++)
      g_string_append_printf(s, "%s%s=%s", i ? "," : "",
                             (char *)g_ptr_array_index(e->fkeys, i),
                             (char *)g_ptr_array_index(e->fvals, i));
    g_string_append_c(s, '}');
  }
  return g_string_free(s, FALSE);
}

static GArray *eval_node(const struct expr *e, struct eval *ev);

static GArray *one(double v) {
  GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
  g_array_append_val(a, v);
  return a;
}

static GArray *eval_term(const struct expr *e, struct eval *ev) {
  const struct table *t = ev->t;
  int col = table_col(t, e->name);
  /* In a derived column, a bare column is the current row's value. */
  if (col >= 0 && ev->row >= 0 && !e->fkeys) {
    double v = NAN;
    const char *f = table_get(t, (guint)ev->row, (guint)col);
    if (*f && !field_number(f, &v)) {
      ev->err = g_strdup_printf("%s: '%s' is not a number", e->name, f);
      return NULL;
    }
    return one(v);
  }
  if (col < 0) {
    GString *cols = g_string_new(NULL);
    for (guint i = 0; i < t->cols->len; i++)
      g_string_append_printf(cols, "%s%s", i ? ", " : "",
                             (char *)g_ptr_array_index(t->cols, i));
    ev->err = g_strdup_printf("no column '%s' (columns: %s)", e->name,
                              cols->str);
    g_string_free(cols, TRUE);
    return NULL;
  }
  guint nf = e->fkeys ? e->fkeys->len : 0;
  int *fcols = g_new(int, nf + 1);
  for (guint i = 0; i < nf; i++) {
    fcols[i] = table_col(t, g_ptr_array_index(e->fkeys, i));
    if (fcols[i] < 0) {
      ev->err = g_strdup_printf("no column '%s' to filter on",
                                (char *)g_ptr_array_index(e->fkeys, i));
      g_free(fcols);
      return NULL;
    }
  }
  int bcol = ev->bind_col ? table_col(t, ev->bind_col) : -1;
  if (ev->bind_col && bcol < 0) {
    ev->err = g_strdup_printf("no column '%s' to group by", ev->bind_col);
    g_free(fcols);
    return NULL;
  }
  /* A filter value `max` or `min`: the extreme of that column among the
   * rows the other filters select. */
  char **extreme = g_new0(char *, nf + 1);
  for (guint i = 0; i < nf; i++) {
    const char *want = g_ptr_array_index(e->fvals, i);
    if (strcmp(want, "max") != 0 && strcmp(want, "min") != 0)
      continue;
    bool is_max = !strcmp(want, "max");
    double best = NAN;
    for (guint r = 0; r < t->rows->len; r++) {
      bool ok = bcol < 0 || field_matches(table_get(t, r, (guint)bcol),
                                          ev->bind_val);
      for (guint k = 0; k < nf && ok; k++) {
        const char *w = g_ptr_array_index(e->fvals, k);
        if (k == i || !strcmp(w, "max") || !strcmp(w, "min") ||
            !strcmp(w, "$"))
          continue;
        ok = field_matches(table_get(t, r, (guint)fcols[k]), w);
      }
      double v;
      if (ok && field_number(table_get(t, r, (guint)fcols[i]), &v) &&
          (isnan(best) || (is_max ? v > best : v < best)))
        best = v;
    }
    extreme[i] = g_strdup_printf("%.17g", best);
  }
  GArray *out = g_array_new(FALSE, FALSE, sizeof(double));
  bool bad_field = false;
  for (guint r = 0; r < t->rows->len && !bad_field; r++) {
    bool ok = true;
    for (guint i = 0; i < nf && ok; i++) {
      const char *want = g_ptr_array_index(e->fvals, i);
      if (extreme[i])
        want = extreme[i];
      if (!strcmp(want, "$")) {
        if (ev->row < 0) {
          ev->err = g_strdup("'$' in a filter needs a current row (derived "
                             "columns only)");
          bad_field = true;
          break;
        }
        want = table_get(t, (guint)ev->row, (guint)fcols[i]);
      }
      ok = field_matches(table_get(t, r, (guint)fcols[i]), want);
    }
    if (ok && bcol >= 0)
      ok = field_matches(table_get(t, r, (guint)bcol), ev->bind_val);
    if (!ok || bad_field)
      continue;
    const char *f = table_get(t, r, (guint)col);
    double v = NAN;
    if (*f && !field_number(f, &v)) {
      char *d = describe_term(e);
      ev->err = g_strdup_printf("%s: '%s' is not a number", d, f);
      g_free(d);
      bad_field = true;
      break;
    }
    g_array_append_val(out, v);
  }
  g_free(fcols);
  for (guint i = 0; i < nf; i++)
    g_free(extreme[i]);
  g_free(extreme);
  if (bad_field) {
    g_array_free(out, TRUE);
    return NULL;
  }
  return out;
}

/* One value from a term or an operation, with a message naming the term
 * when it matched none or several rows. */
static bool scalar(const struct expr *e, GArray *v, struct eval *ev,
                   double *out) {
  if (v->len == 1) {
    *out = g_array_index(v, double, 0);
    return true;
  }
  char *d = e->kind == N_TERM ? describe_term(e) : g_strdup("an operand");
  char *bind = ev->bind_col ? g_strdup_printf(" with %s=%s", ev->bind_col,
                                              ev->bind_val)
                            : g_strdup("");
  ev->err = v->len ? g_strdup_printf("%s%s matches %u rows where one is "
                                     "needed (filter more, or use max, min "
                                     "or mean)",
                                     d, bind, v->len)
                   : g_strdup_printf("%s%s matches no row", d, bind);
  g_free(d);
  g_free(bind);
  return false;
}

static GArray *eval_node(const struct expr *e, struct eval *ev) {
  switch (e->kind) {
  case N_NUM:
    return one(e->num);
  case N_TERM:
    return eval_term(e, ev);
  case N_NEG: {
    GArray *a = eval_node(e->a, ev);
    double x;
    bool ok = a && scalar(e->a, a, ev, &x);
    if (a)
      g_array_free(a, TRUE);
    return ok ? one(-x) : NULL;
  }
  case N_BIN: {
    GArray *a = eval_node(e->a, ev);
    if (!a)
      return NULL;
    GArray *b = eval_node(e->b, ev);
    double x = 0, y = 0;
    bool ok = b && scalar(e->a, a, ev, &x) && scalar(e->b, b, ev, &y);
    g_array_free(a, TRUE);
    if (b)
      g_array_free(b, TRUE);
    if (!ok)
      return NULL;
    switch (e->op) {
    case '+':
      return one(x + y);
    case '-':
      return one(x - y);
    case '*':
      return one(x * y);
    default:
      return one(y != 0 ? x / y : NAN);
    }
  }
  case N_CALL: {
    GArray *all = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < e->args->len; i++) {
      GArray *a = eval_node(g_ptr_array_index(e->args, i), ev);
      if (!a) {
        g_array_free(all, TRUE);
        return NULL;
      }
      for (guint k = 0; k < a->len; k++)
        if (!isnan(g_array_index(a, double, k)))
          g_array_append_val(all, g_array_index(a, double, k));
      g_array_free(a, TRUE);
    }
    double r = NAN;
    guint n = all->len;
    const double *v = (const double *)(void *)all->data;
    if (!strcmp(e->name, "count")) {
      r = n;
    } else if (!strcmp(e->name, "abs")) {
      r = n == 1 ? fabs(v[0]) : NAN;
    } else if (!strcmp(e->name, "lg")) {
      r = n == 1 ? log2(v[0]) : NAN;
    } else if (n) {
      r = v[0];
      double s = 0;
      for (guint k = 0; k < n; k++) {
        if (!strcmp(e->name, "max"))
          r = MAX(r, v[k]);
        else if (!strcmp(e->name, "min"))
          r = MIN(r, v[k]);
        s += v[k];
      }
      if (!strcmp(e->name, "sum"))
        r = s;
      else if (!strcmp(e->name, "mean"))
        r = s / n;
    }
    g_array_free(all, TRUE);
    if (isnan(r) && strcmp(e->name, "count") != 0) {
      ev->err = g_strdup_printf("%s() has no values to work on", e->name);
      return NULL;
    }
    return one(r);
  }
  }
  return NULL;
}

int expr_eval(const struct expr *e, const struct table *t,
              const char *bind_col, const char *bind_val, int row,
              double *out, char **err) {
  struct eval ev = {t, bind_col, bind_val, row, NULL};
  GArray *v = eval_node(e, &ev);
  double x = NAN;
  bool ok = v && scalar(e, v, &ev, &x);
  if (v)
    g_array_free(v, TRUE);
  if (!ok) {
    *err = ev.err ? ev.err : g_strdup("cannot evaluate");
    return -1;
  }
  g_free(ev.err);
  *out = x;
  return 0;
}

/* ---- the [reproduce] sections -------------------------------------------- */

static void variant_free(struct repro_variant *v) {
  g_free(v->label);
  g_ptr_array_free(v->sets, TRUE);
  g_ptr_array_free(v->quick_sets, TRUE);
  g_free(v);
}

static void claim_free(struct repro_claim *c) {
  g_free(c->id);
  g_free(c->text);
  g_free(c->source);
  g_free(c->note);
  g_free(c->value);
  expr_free(c->expr);
  g_free(c->by);
  if (c->groups)
    g_ptr_array_free(c->groups, TRUE);
  if (c->paper) {
    for (guint i = 0; i < c->paper->len; i++)
      g_free(g_array_index(c->paper, struct paper_value, i).text);
    g_array_free(c->paper, TRUE);
  }
  g_free(c);
}

void repro_free(struct repro *r) {
  if (!r)
    return;
  g_free(r->name);
  g_free(r->path);
  g_free(r->title);
  g_free(r->source);
  g_free(r->setup);
  g_free(r->discussion);
  g_free(r->plot);
  if (r->variants)
    g_ptr_array_free(r->variants, TRUE);
  if (r->sets)
    g_ptr_array_free(r->sets, TRUE);
  if (r->params)
    g_hash_table_destroy(r->params);
  if (r->derive_names)
    g_ptr_array_free(r->derive_names, TRUE);
  if (r->derive_exprs)
    g_ptr_array_free(r->derive_exprs, TRUE);
  if (r->claims)
    g_ptr_array_free(r->claims, TRUE);
  g_free(r);
}

const char *repro_param(const struct repro *r, const char *key,
                        const char *def) {
  const char *v = g_hash_table_lookup(r->params, key);
  return v ? v : def;
}

/* A whole number string: the entire text is one finite number. */
static bool parse_number(const char *s, double *out) {
  char *end;
  while (*s == ' ')
    s++;
  double v = g_ascii_strtod(s, &end);
  if (end == s)
    return false;
  while (*end == ' ')
    end++;
  if (*end || !isfinite(v))
    return false;
  *out = v;
  return true;
}

static int parse_paper(const char *s, struct paper_value *pv) {
  const char *t = s;
  while (*t == ' ')
    t++;
  memset(pv, 0, sizeof *pv);
  const char *dots = strstr(t, "..");
  bool ok;
  if (*t == '>' || *t == '<') {
    pv->kind = *t == '>' ? PAPER_GT : PAPER_LT;
    ok = parse_number(t + 1, &pv->lo);
    pv->hi = pv->lo;
  } else if (dots) {
    /* LO..HI: "1..2" must not read as "1." then ".2". */
    char *lo = g_strndup(t, (gsize)(dots - t));
    pv->kind = PAPER_RANGE;
    ok = parse_number(lo, &pv->lo) && parse_number(dots + 2, &pv->hi) &&
         pv->lo <= pv->hi;
    g_free(lo);
  } else {
    pv->kind = PAPER_VALUE;
    ok = parse_number(t, &pv->lo);
    pv->hi = pv->lo;
  }
  if (!ok)
    return -EINVAL;
  pv->text = g_strstrip(g_strdup(s));
  return 0;
}

static const char *const repro_keys[] = {
    "title", "source", "setup", "discussion", "kind", "plot",
    /* kind parameters */
    "codecs", "labels", "sample", "steps", "sizes", "runs", "allreduce"};

static const char *const claim_keys[] = {"text", "source", "value", "by",
                                         "paper", "tolerance", "note"};

static bool in_list(const char *k, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(k, list[i]))
      return true;
  return false;
}

static char *join(const char *const *list, size_t n) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", list[i]);
  return g_string_free(s, FALSE);
}

/* "section.key" with a known section of the simulation. */
static bool is_sim_key(const char *k) {
  static const char *const sec[] = {"platform.", "model.", "exchange.",
                                    "training.", "gradients.", "nic."};
  for (size_t i = 0; i < G_N_ELEMENTS(sec); i++)
    if (g_str_has_prefix(k, sec[i]) && k[strlen(sec[i])])
      return true;
  return false;
}

static char *get(GKeyFile *kf, const char *group, const char *key) {
  /* get_string: "\n" in a long text is a line break. */
  char *v = g_key_file_get_string(kf, group, key, NULL);
  return v ? g_strstrip(v) : NULL;
}

static struct repro_claim *load_claim(GKeyFile *kf, const char *group,
                                      const char *path, char **err) {
  struct repro_claim *c = g_new0(struct repro_claim, 1);
  c->id = g_strdup(group + strlen("reproduce.claim "));
  g_strstrip(c->id);
  char **keys = g_key_file_get_keys(kf, group, NULL, NULL);
  for (char **k = keys; *k; k++)
    if (!in_list(*k, claim_keys, G_N_ELEMENTS(claim_keys))) {
      char *valid = join(claim_keys, G_N_ELEMENTS(claim_keys));
      *err = g_strdup_printf("%s: [%s] unknown key '%s' (valid: %s)", path,
                             group, *k, valid);
      g_free(valid);
      g_strfreev(keys);
      claim_free(c);
      return NULL;
    }
  g_strfreev(keys);
  c->text = get(kf, group, "text");
  c->source = get(kf, group, "source");
  c->note = get(kf, group, "note");
  c->value = get(kf, group, "value");
  char *paper = get(kf, group, "paper");
  if (!c->text || !c->value || !paper || !c->source) {
    *err = g_strdup_printf("%s: [%s] needs text, source, value and paper",
                           path, group);
    g_free(paper);
    claim_free(c);
    return NULL;
  }
  char *perr = NULL;
  c->expr = expr_parse(c->value, &perr);
  if (!c->expr) {
    *err = g_strdup_printf("%s: [%s] value: %s", path, group, perr);
    g_free(perr);
    g_free(paper);
    claim_free(c);
    return NULL;
  }
  /* by = COLUMN: v1, v2, ... */
  c->groups = g_ptr_array_new_with_free_func(g_free);
  char *by = get(kf, group, "by");
  if (by) {
    char *colon = strchr(by, ':');
    if (!colon || colon == by) {
      *err = g_strdup_printf("%s: [%s] by = %s: expected COLUMN: value, "
                             "value, ...",
                             path, group, by);
      g_free(by);
      g_free(paper);
      claim_free(c);
      return NULL;
    }
    *colon = '\0';
    c->by = g_strstrip(g_strdup(by));
    char **vals = g_strsplit(colon + 1, ",", -1);
    for (char **v = vals; *v; v++)
      if (*g_strstrip(*v))
        g_ptr_array_add(c->groups, g_strdup(*v));
    g_strfreev(vals);
    g_free(by);
  }
  if (!c->groups->len)
    g_ptr_array_add(c->groups, g_strdup(""));
  /* paper = one value, or one per group */
  c->paper = g_array_new(FALSE, FALSE, sizeof(struct paper_value));
  char **ps = g_strsplit(paper, ",", -1);
  guint np = g_strv_length(ps);
  if (np != 1 && np != c->groups->len) {
    *err = g_strdup_printf("%s: [%s] paper has %u values for %u groups (give "
                           "one, or one per value of 'by')",
                           path, group, np, c->groups->len);
    g_strfreev(ps);
    g_free(paper);
    claim_free(c);
    return NULL;
  }
  for (guint i = 0; i < c->groups->len; i++) {
    struct paper_value pv;
    if (parse_paper(ps[np == 1 ? 0 : i], &pv) != 0) {
      *err = g_strdup_printf("%s: [%s] paper = %s: expected a number, LO..HI, "
                             ">X or <X",
                             path, group, ps[np == 1 ? 0 : i]);
      g_strfreev(ps);
      g_free(paper);
      claim_free(c);
      return NULL;
    }
    g_array_append_val(c->paper, pv);
  }
  g_strfreev(ps);
  g_free(paper);
  c->tol = 0.25;
  char *tol = get(kf, group, "tolerance");
  if (tol) {
    char **w = g_strsplit_set(tol, " \t", -1);
    GPtrArray *words = g_ptr_array_new();
    for (char **x = w; *x; x++)
      if (**x)
        g_ptr_array_add(words, *x);
    char *end = NULL;
    bool ok = words->len == 2 &&
              (!strcmp(g_ptr_array_index(words, 0), "rel") ||
               !strcmp(g_ptr_array_index(words, 0), "abs"));
    if (ok) {
      c->tol_abs = !strcmp(g_ptr_array_index(words, 0), "abs");
      c->tol = g_ascii_strtod(g_ptr_array_index(words, 1), &end);
      ok = *end == '\0' && c->tol >= 0 && isfinite(c->tol);
    }
    g_ptr_array_free(words, TRUE);
    g_strfreev(w);
    if (!ok) {
      *err = g_strdup_printf("%s: [%s] tolerance = %s: expected 'rel R' or "
                             "'abs A' with R, A >= 0",
                             path, group, tol);
      g_free(tol);
      claim_free(c);
      return NULL;
    }
    g_free(tol);
  }
  return c;
}

struct repro *repro_load(const char *path, bool quick, char **err) {
  *err = NULL;
  GKeyFile *kf = g_key_file_new();
  GError *ge = NULL;
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &ge)) {
    *err = g_strdup_printf("%s: %s", path, ge->message);
    g_error_free(ge);
    g_key_file_free(kf);
    return NULL;
  }
  if (!g_key_file_has_group(kf, "reproduce")) {
    *err = g_strdup_printf("%s: no [reproduce] section: not a reproduction",
                           path);
    g_key_file_free(kf);
    return NULL;
  }
  struct repro *r = g_new0(struct repro, 1);
  r->path = g_strdup(path);
  char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".ini"))
    base[strlen(base) - 4] = '\0';
  r->name = base;
  r->variants =
      g_ptr_array_new_with_free_func((GDestroyNotify)variant_free);
  r->sets = g_ptr_array_new_with_free_func(g_free);
  r->params = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  r->derive_names = g_ptr_array_new_with_free_func(g_free);
  r->derive_exprs = g_ptr_array_new_with_free_func((GDestroyNotify)expr_free);
  r->claims = g_ptr_array_new_with_free_func((GDestroyNotify)claim_free);

  char **keys = g_key_file_get_keys(kf, "reproduce", NULL, NULL);
  for (char **k = keys; *k && !*err; k++) {
    if (!in_list(*k, repro_keys, G_N_ELEMENTS(repro_keys))) {
      char *valid = join(repro_keys, G_N_ELEMENTS(repro_keys));
      *err = g_strdup_printf("%s: [reproduce] unknown key '%s' (valid: %s)",
                             path, *k, valid);
      g_free(valid);
      break;
    }
    g_hash_table_insert(r->params, g_strdup(*k), get(kf, "reproduce", *k));
  }
  g_strfreev(keys);

  gsize ngroups;
  char **groups = g_key_file_get_groups(kf, &ngroups);
  for (gsize gi = 0; gi < ngroups && !*err; gi++) {
    const char *g = groups[gi];
    if (!g_str_has_prefix(g, "reproduce."))
      continue;
    char **ks = g_key_file_get_keys(kf, g, NULL, NULL);
    if (g_str_has_prefix(g, "reproduce.variant ")) {
      struct repro_variant *v = g_new0(struct repro_variant, 1);
      v->label = g_strstrip(g_strdup(g + strlen("reproduce.variant ")));
      char *hash = strchr(v->label, '#');
      if (hash)
        *hash = '\0';
      v->sets = g_ptr_array_new_with_free_func(g_free);
      v->quick_sets = g_ptr_array_new_with_free_func(g_free);
      g_ptr_array_add(r->variants, v);
      if (!*v->label)
        *err = g_strdup_printf("%s: [%s] needs a label", path, g);
      for (char **k = ks; *k && !*err; k++) {
        if (g_str_has_prefix(*k, "quick.") && is_sim_key(*k + 6)) {
          char *val = get(kf, g, *k);
          if (quick)
            g_ptr_array_add(v->quick_sets,
                            g_strdup_printf("%s=%s", *k + 6, val));
          g_free(val);
          continue;
        }
        if (!is_sim_key(*k)) {
          *err = g_strdup_printf("%s: [%s] key '%s' must be section.key of "
                                 "the simulation (e.g. exchange.codec), or "
                                 "quick.section.key",
                                 path, g, *k);
          break;
        }
        char *val = get(kf, g, *k);
        g_ptr_array_add(v->sets, g_strdup_printf("%s=%s", *k, val));
        g_free(val);
      }
    } else if (!strcmp(g, "reproduce.quick")) {
      for (char **k = ks; *k && quick && !*err; k++) {
        char *val = get(kf, g, *k);
        if (is_sim_key(*k)) {
          g_ptr_array_add(r->sets, g_strdup_printf("%s=%s", *k, val));
          g_free(val);
        } else if (in_list(*k, repro_keys, G_N_ELEMENTS(repro_keys))) {
          g_hash_table_insert(r->params, g_strdup(*k), val);
        } else {
          *err = g_strdup_printf("%s: [%s] unknown key '%s' (section.key of "
                                 "the simulation, or a [reproduce] key)",
                                 path, g, *k);
          g_free(val);
        }
      }
    } else if (!strcmp(g, "reproduce.derive")) {
      for (char **k = ks; *k && !*err; k++) {
        char *val = get(kf, g, *k), *perr = NULL;
        struct expr *e = expr_parse(val, &perr);
        if (!e) {
          *err = g_strdup_printf("%s: [%s] %s: %s", path, g, *k, perr);
          g_free(perr);
        } else {
          g_ptr_array_add(r->derive_names, g_strdup(*k));
          g_ptr_array_add(r->derive_exprs, e);
        }
        g_free(val);
      }
    } else if (g_str_has_prefix(g, "reproduce.claim ")) {
      struct repro_claim *c = load_claim(kf, g, path, err);
      if (c)
        g_ptr_array_add(r->claims, c);
    } else {
      *err = g_strdup_printf("%s: unknown section [%s] (valid: reproduce, "
                             "reproduce.quick, reproduce.variant LABEL, "
                             "reproduce.derive, reproduce.claim ID)",
                             path, g);
    }
    g_strfreev(ks);
  }
  g_strfreev(groups);
  g_key_file_free(kf);

  if (!*err) {
    static const char *const kinds[] = {"run", "codec-ratio", "select-time"};
    const char *kind = repro_param(r, "kind", "run");
    int k = -1;
    for (int i = 0; i < 3; i++)
      if (!strcmp(kind, kinds[i]))
        k = i;
    if (k < 0)
      *err = g_strdup_printf("%s: [reproduce] kind = %s: must be run, "
                             "codec-ratio or select-time",
                             path, kind);
    r->kind = (enum repro_kind)(k < 0 ? 0 : k);
  }
  if (!*err && (!repro_param(r, "title", NULL) ||
                !repro_param(r, "source", NULL)))
    *err = g_strdup_printf("%s: [reproduce] needs a title and a source", path);
  if (!*err && r->kind == REPRO_RUN && !r->variants->len)
    *err = g_strdup_printf("%s: kind = run needs at least one [reproduce."
                           "variant LABEL] section",
                           path);
  if (!*err && !r->claims->len)
    *err = g_strdup_printf("%s: no [reproduce.claim ID] section: a "
                           "reproduction states the paper's claims",
                           path);
  if (*err) {
    repro_free(r);
    return NULL;
  }
  r->title = g_strdup(repro_param(r, "title", ""));
  r->source = g_strdup(repro_param(r, "source", ""));
  r->setup = g_strdup(repro_param(r, "setup", ""));
  r->discussion = g_strdup(repro_param(r, "discussion", ""));
  r->plot = g_strdup(repro_param(r, "plot", r->name));
  return r;
}

/* ---- claims and reports ------------------------------------------------ */

void claim_results_free(GArray *res) {
  if (!res)
    return;
  for (guint i = 0; i < res->len; i++)
    g_free(g_array_index(res, struct claim_result, i).error);
  g_array_free(res, TRUE);
}

static void judge(struct claim_result *cr) {
  const struct repro_claim *c = cr->claim;
  const struct paper_value *pv = cr->paper;
  double v = cr->value;
  cr->ratio = NAN;
  if (isnan(v)) {
    cr->within = -1;
    return;
  }
  switch (pv->kind) {
  case PAPER_GT:
    cr->within = v > pv->lo;
    return;
  case PAPER_LT:
    cr->within = v < pv->lo;
    return;
  case PAPER_VALUE:
  case PAPER_RANGE: {
    double near = v < pv->lo ? pv->lo : v > pv->hi ? pv->hi : v;
    cr->ratio = near != 0 ? v / near : NAN;
    double lo = pv->lo, hi = pv->hi;
    if (c->tol_abs) {
      lo -= c->tol;
      hi += c->tol;
    } else {
      lo -= c->tol * fabs(lo);
      hi += c->tol * fabs(hi);
    }
    cr->within = v >= lo && v <= hi;
    return;
  }
  }
}

GArray *repro_evaluate(const struct repro *r, const struct table *t) {
  GArray *res = g_array_new(FALSE, TRUE, sizeof(struct claim_result));
  for (guint i = 0; i < r->claims->len; i++) {
    const struct repro_claim *c = g_ptr_array_index(r->claims, i);
    for (guint g = 0; g < c->groups->len; g++) {
      struct claim_result cr = {0};
      cr.claim = c;
      cr.group = g_ptr_array_index(c->groups, g);
      cr.paper = &g_array_index(c->paper, struct paper_value, g);
      cr.value = NAN;
      double v;
      if (expr_eval(c->expr, t, c->by, c->by ? cr.group : NULL, -1, &v,
                    &cr.error) == 0)
        cr.value = v;
      judge(&cr);
      g_array_append_val(res, cr);
    }
  }
  return res;
}

char *repro_format_value(double v) {
  if (isnan(v))
    return g_strdup("-");
  double a = fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6))
    return g_strdup_printf("%.3g", v);
  if (a >= 100)
    return g_strdup_printf("%.1f", v);
  return g_strdup_printf("%.3g", v);
}

int repro_derive(const struct repro *r, struct table *t, char **err) {
  for (guint d = 0; d < r->derive_names->len; d++) {
    const char *name = g_ptr_array_index(r->derive_names, d);
    const struct expr *e = g_ptr_array_index(r->derive_exprs, d);
    char **vals = g_new0(char *, t->rows->len + 1);
    for (guint row = 0; row < t->rows->len; row++) {
      double v;
      char *e2 = NULL;
      if (expr_eval(e, t, NULL, NULL, (int)row, &v, &e2) != 0) {
        *err = g_strdup_printf("derived column %s, row %u: %s", name, row + 1,
                               e2);
        g_free(e2);
        g_strfreev(vals);
        return -1;
      }
      vals[row] = isfinite(v) ? g_strdup_printf("%.9g", v) : g_strdup("");
    }
    table_add_col(t, name);
    guint col = t->cols->len - 1;
    for (guint row = 0; row < t->rows->len; row++) {
      GPtrArray *f = g_ptr_array_index(t->rows, row);
      g_free(f->pdata[col]);
      f->pdata[col] = vals[row];
      vals[row] = NULL;
    }
    g_strfreev(vals);
  }
  return 0;
}

char *repro_claims_csv(const GArray *res) {
  struct table *t = table_new();
  static const char *const cols[] = {"claim",    "group",    "text",
                                     "paper",    "paper_lo", "paper_hi",
                                     "gradsim",  "ratio",    "within"};
  for (size_t i = 0; i < G_N_ELEMENTS(cols); i++)
    table_add_col(t, cols[i]);
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    GPtrArray *f = g_ptr_array_new();
    g_ptr_array_add(f, g_strdup(cr->claim->id));
    g_ptr_array_add(f, g_strdup(cr->group));
    g_ptr_array_add(f, g_strdup(cr->claim->text));
    g_ptr_array_add(f, g_strdup(cr->paper->text));
    g_ptr_array_add(f, g_strdup_printf("%.9g", cr->paper->lo));
    g_ptr_array_add(f, g_strdup_printf("%.9g", cr->paper->hi));
    g_ptr_array_add(f, isnan(cr->value) ? g_strdup("")
                                        : g_strdup_printf("%.9g", cr->value));
    g_ptr_array_add(f, isnan(cr->ratio) ? g_strdup("")
                                        : g_strdup_printf("%.9g", cr->ratio));
    g_ptr_array_add(f, g_strdup(cr->within == 1   ? "yes"
                                : cr->within == 0 ? "no"
                                                  : ""));
    table_add_row(t, f);
  }
  char *csv = table_to_csv(t);
  table_free(t);
  return csv;
}

/* Markdown table cells hold no '|' or newline. */
static void md_cell(GString *s, const char *v) {
  for (; *v; v++) {
    if (*v == '|')
      g_string_append(s, "\\|");
    else if (*v == '\n')
      g_string_append_c(s, ' ');
    else
      g_string_append_c(s, *v);
  }
}

static char *tol_text(const struct repro_claim *c, const struct paper_value *pv) {
  if (pv->kind == PAPER_GT || pv->kind == PAPER_LT)
    return g_strdup("bound");
  if (c->tol_abs)
    return g_strdup_printf("abs %g", c->tol);
  return g_strdup_printf("rel %g", c->tol);
}

char *repro_markdown(const struct repro *r, const GArray *res,
                     const GPtrArray *plots, bool quick,
                     const char *command) {
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "# %s: %s\n\n", r->name, r->title);
  g_string_append_printf(s, "Paper: %s.\n\n", r->source);
  if (quick)
    g_string_append(s, "**Quick run** (`--quick`: fewer iterations and "
                       "smaller sizes, a smoke test): the figures below are "
                       "not the ones the README reports.\n\n");
  if (*r->setup)
    g_string_append_printf(s, "%s\n\n", r->setup);
  g_string_append_printf(s, "Reproduce: `%s`. Experiment file: "
                            "`experiments/%s.ini`; data: `runs.csv`.\n\n",
                         command, r->name);
  for (guint i = 0; plots && i < plots->len; i++)
    g_string_append_printf(s, "![%s](%s)\n\n", r->name,
                           (char *)g_ptr_array_index(plots, i));
  guint yes = 0, no = 0, na = 0;
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    yes += cr->within == 1;
    no += cr->within == 0;
    na += cr->within == -1;
  }
  g_string_append_printf(s, "## Claims\n\n%u of %u within tolerance", yes,
                         res->len);
  if (na)
    g_string_append_printf(s, ", %u not evaluated", na);
  g_string_append(s, ".\n\n| claim | paper | gradsim | ratio | within "
                     "tolerance? |\n|---|---|---|---|---|\n");
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    const struct repro_claim *c = cr->claim;
    g_string_append(s, "| ");
    md_cell(s, c->text);
    if (*cr->group)
      g_string_append_printf(s, " (%s)", cr->group);
    g_string_append(s, " | ");
    md_cell(s, cr->paper->text);
    g_string_append(s, " (");
    md_cell(s, c->source);
    char *v = repro_format_value(cr->value);
    char *ra = isnan(cr->ratio) ? g_strdup("-")
                                : g_strdup_printf("%.2f", cr->ratio);
    char *tt = tol_text(c, cr->paper);
    g_string_append_printf(s, ") | %s | %s | %s (%s) |\n", v, ra,
                           cr->within == 1   ? "yes"
                           : cr->within == 0 ? "**no**"
                                             : "not evaluated",
                           tt);
    g_free(v);
    g_free(ra);
    g_free(tt);
  }
  g_string_append(s, "\n");
  bool errors = false;
  for (guint i = 0; i < res->len; i++) {
    const struct claim_result *cr = &g_array_index(res, struct claim_result, i);
    if (!cr->error)
      continue;
    if (!errors)
      g_string_append(s, "Not evaluated:\n\n");
    errors = true;
    g_string_append_printf(s, "- %s%s%s%s: %s\n", cr->claim->id,
                           *cr->group ? " (" : "", cr->group,
                           *cr->group ? ")" : "", cr->error);
  }
  if (errors)
    g_string_append(s, "\n");
  g_string_append(s, "How each gradsim figure is computed (columns of "
                     "`runs.csv`):\n\n");
  for (guint i = 0; i < r->claims->len; i++) {
    const struct repro_claim *c = g_ptr_array_index(r->claims, i);
    g_string_append_printf(s, "- %s: `%s`%s%s%s\n", c->id, c->value,
                           c->by ? " for each " : "", c->by ? c->by : "",
                           c->by ? "" : "");
  }
  g_string_append(s, "\n## Discussion\n\n");
  if (*r->discussion)
    g_string_append_printf(s, "%s\n\n", r->discussion);
  for (guint i = 0; i < r->claims->len; i++) {
    const struct repro_claim *c = g_ptr_array_index(r->claims, i);
    if (c->note && *c->note)
      g_string_append_printf(s, "- **%s**: %s\n", c->text, c->note);
  }
  if (s->str[s->len - 1] != '\n')
    g_string_append_c(s, '\n');
  return g_string_free(s, FALSE);
}
