/* repro/claim.c: the claim language (claim.h): a recursive-descent
 * parser to a tree, and its evaluation over a table. */
#include "claim.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

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

void expr_free_cb(gpointer e) { expr_free(e); }

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

static const char *const functions[] = {"max",   "min", "mean", "sum",
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

static struct expr *parse_primary(struct parser *ps);

static struct expr *node(enum node kind) {
  struct expr *e = g_new0(struct expr, 1);
  e->kind = kind;
  return e;
}

/* NAME '(' expr (',' expr)* ')', the name read and PS at '('. */
static struct expr *parse_call(struct parser *ps, char *name) {
  struct expr *e = node(N_CALL);
  e->name = name;
  bool known = false;
  for (size_t i = 0; i < G_N_ELEMENTS(functions); i++)
    known |= !strcmp(functions[i], name);
  if (!known) {
    expr_free(e);
    return fail_at(ps, "unknown function (valid: max, min, mean, sum, "
                       "count, abs, lg)");
  }
  e->args = g_ptr_array_new_with_free_func(expr_free_cb);
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

/* A column with its filter, or a function call. */
static struct expr *parse_name(struct parser *ps) {
  const char *s = ps->p;
  while (is_ident_char(*ps->p, ps->p == s))
    ps->p++;
  char *name = g_strndup(s, (gsize)(ps->p - s));
  skip_ws(ps);
  if (*ps->p == '(')
    return parse_call(ps, name);
  struct expr *e = node(N_TERM);
  e->name = name;
  if (*ps->p == '{' && !parse_filter(ps, e)) {
    expr_free(e);
    return NULL;
  }
  return e;
}

static struct expr *parse_primary(struct parser *ps) {
  skip_ws(ps);
  if (*ps->p == '-') {
    ps->p++;
    struct expr *a = parse_primary(ps);
    if (!a)
      return NULL;
    struct expr *e = node(N_NEG);
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
    struct expr *e = node(N_NUM);
    e->num = v;
    return e;
  }
  if (!is_ident_char(*ps->p, true))
    return fail_at(ps, "expected a number, a column, a function or '('");
  return parse_name(ps);
}

/* A left-associative chain of SUB separated by the operators in OPS
 * (multiplication and division, or addition and subtraction). */
static struct expr *parse_chain(struct parser *ps, const char *ops,
                                struct expr *(*sub)(struct parser *)) {
  struct expr *a = sub(ps);
  while (a) {
    skip_ws(ps);
    if (!*ps->p || !strchr(ops, *ps->p))
      break;
    char op = *ps->p++;
    struct expr *b = sub(ps);
    if (!b) {
      expr_free(a);
      return NULL;
    }
    struct expr *e = node(N_BIN);
    e->op = op;
    e->a = a;
    e->b = b;
    a = e;
  }
  return a;
}

static struct expr *parse_product(struct parser *ps) {
  return parse_chain(ps, "*/", parse_primary);
}

static struct expr *parse_sum(struct parser *ps) {
  return parse_chain(ps, "+-", parse_product);
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

static char *columns_text(const struct table *t) {
  GString *cols = g_string_new(NULL);
  for (guint i = 0; i < t->cols->len; i++)
    g_string_append_printf(cols, "%s%s", i ? ", " : "",
                           (char *)g_ptr_array_index(t->cols, i));
  return g_string_free(cols, FALSE);
}

/* A term's columns and filters, resolved against the table. */
struct term {
  const struct expr *e;
  int col;     /* the column the term reads */
  guint nf;    /* filters */
  int *fcols;  /* their columns */
  char **want; /* their values, `max`/`min` resolved (owned), or NULL */
  int bcol;    /* the bound column, or -1 */
};

static void term_clear(struct term *tm) {
  for (guint i = 0; tm->want && i < tm->nf; i++)
    g_free(tm->want[i]);
  g_free(tm->want);
  g_free(tm->fcols);
}

/* The columns of E's filters and of the binding; false with ev->err. */
static bool term_columns(const struct expr *e, struct eval *ev,
                         struct term *tm) {
  const struct table *t = ev->t;
  tm->e = e;
  tm->col = table_col(t, e->name);
  tm->nf = e->fkeys ? e->fkeys->len : 0;
  tm->fcols = g_new(int, tm->nf + 1);
  tm->want = g_new0(char *, tm->nf + 1);
  for (guint i = 0; i < tm->nf; i++) {
    tm->fcols[i] = table_col(t, g_ptr_array_index(e->fkeys, i));
    if (tm->fcols[i] < 0) {
      ev->err = g_strdup_printf("no column '%s' to filter on",
                                (char *)g_ptr_array_index(e->fkeys, i));
      return false;
    }
  }
  tm->bcol = ev->bind_col ? table_col(t, ev->bind_col) : -1;
  if (ev->bind_col && tm->bcol < 0) {
    ev->err = g_strdup_printf("no column '%s' to group by", ev->bind_col);
    return false;
  }
  return true;
}

static bool is_extreme(const char *w) {
  return !strcmp(w, "max") || !strcmp(w, "min");
}

/* Filter I's value `max` or `min`: the extreme of its column among the
 * rows the other filters (and the binding) select. */
static char *extreme_of(const struct term *tm, guint i, struct eval *ev) {
  const struct table *t = ev->t;
  const struct expr *e = tm->e;
  bool is_max = !strcmp(g_ptr_array_index(e->fvals, i), "max");
  double best = NAN;
  for (guint r = 0; r < t->rows->len; r++) {
    bool ok = tm->bcol < 0 ||
              field_matches(table_get(t, r, (guint)tm->bcol), ev->bind_val);
    for (guint k = 0; k < tm->nf && ok; k++) {
      const char *w = g_ptr_array_index(e->fvals, k);
      if (k == i || is_extreme(w) || !strcmp(w, "$"))
        continue;
      ok = field_matches(table_get(t, r, (guint)tm->fcols[k]), w);
    }
    double v;
    if (ok && field_number(table_get(t, r, (guint)tm->fcols[i]), &v) &&
        (isnan(best) || (is_max ? v > best : v < best)))
      best = v;
  }
  return g_strdup_printf("%.17g", best);
}

/* Whether row R passes every filter; -1 with ev->err on a `$` without a
 * current row. */
static int row_selected(const struct term *tm, guint r, struct eval *ev) {
  const struct table *t = ev->t;
  for (guint i = 0; i < tm->nf; i++) {
    const char *want =
        tm->want[i] ? tm->want[i] : g_ptr_array_index(tm->e->fvals, i);
    if (!strcmp(want, "$")) {
      if (ev->row < 0) {
        ev->err = g_strdup("'$' in a filter needs a current row (derived "
                           "columns only)");
        return -1;
      }
      want = table_get(t, (guint)ev->row, (guint)tm->fcols[i]);
    }
    if (!field_matches(table_get(t, r, (guint)tm->fcols[i]), want))
      return 0;
  }
  return tm->bcol < 0 ||
         field_matches(table_get(t, r, (guint)tm->bcol), ev->bind_val);
}

/* The values of the rows the term selects; NULL with ev->err. */
static GArray *selected_values(const struct term *tm, struct eval *ev) {
  const struct table *t = ev->t;
  GArray *out = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint r = 0; r < t->rows->len; r++) {
    int sel = row_selected(tm, r, ev);
    if (sel < 0)
      break;
    if (!sel)
      continue;
    const char *f = table_get(t, r, (guint)tm->col);
    double v = NAN;
    if (*f && !field_number(f, &v)) {
      char *d = describe_term(tm->e);
      ev->err = g_strdup_printf("%s: '%s' is not a number", d, f);
      g_free(d);
      break;
    }
    g_array_append_val(out, v);
  }
  if (ev->err) {
    g_array_free(out, TRUE);
    return NULL;
  }
  return out;
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
    char *cols = columns_text(t);
    ev->err = g_strdup_printf("no column '%s' (columns: %s)", e->name, cols);
    g_free(cols);
    return NULL;
  }
  struct term tm = {0};
  GArray *out = NULL;
  if (term_columns(e, ev, &tm)) {
    for (guint i = 0; i < tm.nf; i++)
      if (is_extreme(g_ptr_array_index(e->fvals, i)))
        tm.want[i] = extreme_of(&tm, i, ev);
    out = selected_values(&tm, ev);
  }
  term_clear(&tm);
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
  char *bind = ev->bind_col
                   ? g_strdup_printf(" with %s=%s", ev->bind_col, ev->bind_val)
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

static GArray *eval_binary(const struct expr *e, struct eval *ev) {
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

/* FUNC over the N values V (NaN: nothing to work on). */
static double apply(const char *func, const double *v, guint n) {
  if (!strcmp(func, "count"))
    return n;
  if (!strcmp(func, "abs"))
    return n == 1 ? fabs(v[0]) : NAN;
  if (!strcmp(func, "lg"))
    return n == 1 ? log2(v[0]) : NAN;
  if (!n)
    return NAN;
  double r = v[0], s = 0;
  for (guint k = 0; k < n; k++) {
    if (!strcmp(func, "max"))
      r = MAX(r, v[k]);
    else if (!strcmp(func, "min"))
      r = MIN(r, v[k]);
    s += v[k];
  }
  if (!strcmp(func, "sum"))
    return s;
  if (!strcmp(func, "mean"))
    return s / n;
  return r;
}

static GArray *eval_call(const struct expr *e, struct eval *ev) {
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
  double r = apply(e->name, (const double *)(void *)all->data, all->len);
  g_array_free(all, TRUE);
  if (isnan(r) && strcmp(e->name, "count") != 0) {
    ev->err = g_strdup_printf("%s() has no values to work on", e->name);
    return NULL;
  }
  return one(r);
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
  case N_BIN:
    return eval_binary(e, ev);
  case N_CALL:
    return eval_call(e, ev);
  }
  return NULL;
}

int expr_eval(const struct expr *e, const struct table *t, const char *bind_col,
              const char *bind_val, int row, double *out, char **err) {
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
