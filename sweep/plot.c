/* sweep/plot.c: --plot (gnuplot) and the summary table of a sweep.
 *
 * plot.png/svg: the iteration and exchange time of each series (a
 * combination of the swept keys after the first) against the first swept
 * key, with the collective's formula; breakdown.png/svg: each point's
 * iteration split (runs.csv split_compute_s ... split_idle_s) as stacked
 * bars, one group per series. Both are titled by what they show and the question of the
 * experiment's opening comment, with axes and legends in words. */
#include "sweep_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a swept key reads on a plot: its axis label, a legend item (the
 * value, in the axis unit when numeric, upper case when UPPER, between
 * BEFORE and AFTER), and the runs.csv column holding it as a number
 * (results.c, config_fields; times SCALE in the axis unit), or -1. Keys
 * not listed read as their name, and are numbers when every value is
 * one. */
struct key_words {
  const char *key, *axis, *before, *after;
  int col;
  double scale;
  bool upper;
};

static const struct key_words KEY_WORDS[] = {
    {"platform.nodes", "workers", "", " workers", 2, 1, false},
    {"platform.aggregators", "aggregators", "", " aggregators", 3, 1, false},
    {"platform.topology", "topology", "", "", -1, 1, false},
    {"platform.bandwidth", "link bandwidth (Gb/s)", "", " Gb/s", 5, 1e-9,
     false},
    {"platform.latency", "link latency (µs)", "", " µs latency", 6, 1e6, false},
    {"model.name", "model", "", "", -1, 1, false},
    {"exchange.algorithm", "collective", "", "", -1, 1, false},
    {"exchange.codec", "codec", "", "", -1, 1, false},
    {"exchange.placement", "codec placement", "codec on ", "", -1, 1, true},
    {"exchange.payload", "payload", "", " payload", -1, 1, false},
    {"training.mode", "schedule", "", " schedule", -1, 1, false},
    {"training.iterations", "iterations", "", " iterations", 12, 1, false},
    {"training.fusion_bytes", "fusion bucket size (MB)", "", " MB buckets", 13,
     1e-6, false},
    {"training.k", "pipeline depth k", "k = ", "", 14, 1, false},
    {"training.local_steps", "iterations per exchange", "", " local steps", 15,
     1, false},
    {"gradients.seed", "seed", "seed ", "", 16, 1, false},
};

static const struct key_words *key_words(const char *key) {
  for (size_t i = 0; i < G_N_ELEMENTS(KEY_WORDS); i++)
    if (!strcmp(KEY_WORDS[i].key, key))
      return &KEY_WORDS[i];
  return NULL;
}

/* KEY without its section, underscores as spaces (g_free). */
static char *bare_words(const char *key) {
  const char *dot = strchr(key, '.');
  char *w = g_strdup(dot ? dot + 1 : key);
  g_strdelimit(w, "_", ' ');
  return w;
}

static char *axis_words(const char *key) {
  const struct key_words *kw = key_words(key);
  return kw ? g_strdup(kw->axis) : bare_words(key);
}

/* V as a whole number, into *X. */
static bool number_of(const char *v, double *x) {
  char *end;
  if (!*v)
    return false;
  *x = g_ascii_strtod(v, &end);
  return !*end && isfinite(*x);
}

/* KEY's value at point P (runs.csv fields F) as the axis shows it: the
 * number of its runs.csv column in the axis unit, or its configuration
 * value (g_free). */
static char *axis_value(const char *key, const struct point *p,
                        const GPtrArray *f) {
  const struct key_words *kw = key_words(key);
  double x;
  if (kw && kw->col >= 0 && number_of(g_ptr_array_index(f, (guint)kw->col), &x))
    return g_strdup_printf("%.6g", x * kw->scale);
  return point_config_value(p, key);
}

/* A legend item: KEY = V in words ("ring", "16 workers", "no codec",
 * "q8 codec", "inceptionn codec (eb=-10)") (g_free). */
static char *item_words(const char *key, const char *v) {
  if (!strcmp(key, "exchange.codec")) {
    if (!strcmp(v, "none"))
      return g_strdup("no codec");
    const char *colon = strchr(v, ':');
    if (!colon)
      return g_strdup_printf("%s codec", v);
    char **params = g_strsplit(colon + 1, ",", -1);
    char *list = g_strjoinv(", ", params);
    char *w = g_strdup_printf("%.*s codec (%s)", (int)(colon - v), v, list);
    g_free(list);
    g_strfreev(params);
    return w;
  }
  const struct key_words *kw = key_words(key);
  if (kw) {
    char *up = kw->upper ? g_ascii_strup(v, -1) : g_strdup(v);
    char *w = g_strconcat(kw->before, up, kw->after, NULL);
    g_free(up);
    return w;
  }
  char *b = bare_words(key), *w = g_strdup_printf("%s %s", b, v);
  g_free(b);
  return w;
}

/* A gnuplot string: double-quoted, escaped. */
static void gp_quote(GString *s, const char *v) {
  g_string_append_c(s, '"');
  for (; *v; v++) {
    if (*v == '"' || *v == '\\')
      g_string_append_c(s, '\\');
    if (*v == '\n')
      g_string_append(s, "\\n");
    else
      g_string_append_c(s, *v);
  }
  g_string_append_c(s, '"');
}

/* TEXT wrapped into at most MAXLINES lines of about WIDTH characters,
 * at ", " where it can (between the items of a legend), else at spaces;
 * the last line cut short with "..." when the text does not fit. *NLINES:
 * its line count (g_free). */
static char *wrap(const char *text, int width, int maxlines, int *nlines) {
  GString *out = g_string_new(NULL);
  char **items = g_strsplit(text, ", ", -1);
  int line = 1, col = 0;
  bool cut = false;
  for (char **it = items; *it && !cut; it++) {
    int len = (int)g_utf8_strlen(*it, -1);
    bool last = !it[1];
    /* An item that fits on a line of its own starts one; else its words
     * fill the lines. */
    if (col && col + 1 + len + !last > width && len + !last <= width) {
      if (line == maxlines) {
        g_string_append(out, " ...");
        break;
      }
      g_string_append_c(out, '\n');
      line++;
      col = 0;
    }
    char **words = g_strsplit(*it, " ", -1);
    for (char **w = words; *w; w++) {
      int wl = (int)g_utf8_strlen(*w, -1);
      if (col && col + 1 + wl > width) {
        if (line == maxlines) {
          g_string_append(out, " ...");
          cut = true;
          break;
        }
        g_string_append_c(out, '\n');
        line++;
        col = 0;
      }
      if (col) {
        g_string_append_c(out, ' ');
        col++;
      }
      g_string_append(out, *w);
      col += wl;
    }
    g_strfreev(words);
    if (!last && !cut) {
      g_string_append_c(out, ',');
      col++;
    }
  }
  g_strfreev(items);
  *nlines = line;
  return g_string_free(out, FALSE);
}

/* TEXT in as few lines of at most WIDTH characters as it needs (at most
 * MAXLINES), balanced (g_free). */
static char *wrap_even(const char *text, int width, int maxlines, int *nlines) {
  int len = (int)g_utf8_strlen(text, -1);
  int n = MIN(maxlines, (len + width - 1) / width);
  return wrap(text, n > 1 ? len / n + 8 : width, maxlines, nlines);
}

/* The series of a sweep: the first swept key on x, one series per
 * combination of the other swept keys, in sweep order. */
struct series {
  const char *xkey;  /* NULL: nothing swept, x is the point index */
  char *xaxis;       /* x's label in words */
  bool numeric;      /* x holds numbers, else categories 0, 1, ... */
  double *x;         /* per row */
  GPtrArray *xs;     /* per row: x as text (a tic label) */
  GPtrArray *labels; /* per series: its legend in words */
  guint *of;         /* per row: its series */
  /* Per series: its colour, by the value of the second swept key, and its
   * marker, by the combination of the keys after it. */
  guint *color, *mark;
};

/* The index of TEXT in INDEX (numbered in order of first appearance). */
static guint index_of(GHashTable *index, const char *text) {
  gpointer idx;
  if (!g_hash_table_lookup_extended(index, text, NULL, &idx)) {
    idx = GUINT_TO_POINTER(g_hash_table_size(index));
    g_hash_table_insert(index, g_strdup(text), idx);
  }
  return GPOINTER_TO_UINT(idx);
}

static void series_init(struct series *sr, const struct experiment *e,
                        const GPtrArray *rows) {
  guint nrows = rows->len;
  sr->xkey = e->swept->len ? g_ptr_array_index(e->swept, 0) : NULL;
  sr->xaxis = sr->xkey ? axis_words(sr->xkey) : g_strdup("point");
  sr->x = g_new(double, nrows);
  sr->xs = g_ptr_array_new_with_free_func(g_free);
  sr->labels = g_ptr_array_new_with_free_func(g_free);
  sr->of = g_new(guint, nrows);
  sr->color = g_new0(guint, nrows);
  sr->mark = g_new0(guint, nrows);
  sr->numeric = true;
  for (guint i = 0; i < nrows; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    char *xv = sr->xkey ? axis_value(sr->xkey, p, g_ptr_array_index(rows, i))
                        : g_strdup_printf("%u", i);
    sr->numeric = sr->numeric && number_of(xv, &sr->x[i]);
    g_ptr_array_add(sr->xs, xv);
  }
  GHashTable *cats =
                 g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
             *index =
                 g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
             *colors =
                 g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
             *marks =
                 g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < nrows; i++) {
    if (!sr->numeric)
      sr->x[i] = index_of(cats, g_ptr_array_index(sr->xs, i));
    const struct point *p = g_ptr_array_index(e->points, i);
    GString *l = g_string_new(NULL), *rest = g_string_new(NULL);
    char *first = NULL;
    for (guint k = 1; k < e->swept->len; k++) {
      const char *key = g_ptr_array_index(e->swept, k);
      char *v = axis_value(key, p, g_ptr_array_index(rows, i));
      char *w = item_words(key, v);
      g_string_append_printf(l, "%s%s", l->len ? ", " : "", w);
      if (k == 1)
        first = g_strdup(v);
      else
        g_string_append_printf(rest, "%s\n", v);
      g_free(w);
      g_free(v);
    }
    guint n = g_hash_table_size(index);
    sr->of[i] = index_of(index, l->str);
    if (sr->of[i] == n) {
      g_ptr_array_add(sr->labels, g_strdup(l->str));
      sr->color[n] = first ? index_of(colors, first) : 0;
      sr->mark[n] = index_of(marks, rest->str);
    }
    g_free(first);
    g_string_free(rest, TRUE);
    g_string_free(l, TRUE);
  }
  g_hash_table_destroy(marks);
  g_hash_table_destroy(colors);
  g_hash_table_destroy(index);
  g_hash_table_destroy(cats);
}

static void series_fini(struct series *sr) {
  g_free(sr->xaxis);
  g_free(sr->x);
  g_ptr_array_free(sr->xs, TRUE);
  g_ptr_array_free(sr->labels, TRUE);
  g_free(sr->of);
  g_free(sr->color);
  g_free(sr->mark);
}

/* Colour-blind-safe colours (Okabe and Ito); per colour a marker shape
 * (circle, square, triangle, diamond, triangle down, pentagon), filled
 * for a series' first mark, open for its second, the line dashed
 * after. */
static const char *const COLORS[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                     "#E69F00", "#56B4E9", "#000000"};
static const int SHAPES[][2] = {{7, 6},   {5, 4},   {9, 8},
                                {13, 12}, {11, 10}, {15, 14}};

/* Series K's line style: colour, marker and dashes. */
static void series_style(GString *s, const struct series *sr, guint k) {
  guint c = sr->color[k], m = sr->mark[k];
  g_string_append_printf(s, "lw 2 pt %d ps 1.3 dt %u lc rgb '%s'",
                         SHAPES[c % G_N_ELEMENTS(SHAPES)][m % 2],
                         m / 2 % 2 ? 2u : 1u, COLORS[c % G_N_ELEMENTS(COLORS)]);
}

/* The distinct values of X (sorted), their count in *N (g_free). */
static double *distinct(const double *x, guint n, guint *nd) {
  double *d = g_memdup2(x, n * sizeof *x);
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && d[j - 1] > d[j]; j--) {
      double t = d[j];
      d[j] = d[j - 1];
      d[j - 1] = t;
    }
  guint k = 0;
  for (guint i = 0; i < n; i++)
    if (!k || d[i] != d[k - 1])
      d[k++] = d[i];
  *nd = k;
  return d;
}

/* The x axis of a numeric sweep: logarithmic for a geometric sweep (4,
 * 8, 16: a constant ratio, base 2 when it is a power of two) or one that
 * spans two decades; the range padded; tics at the swept values when
 * there are few. */
static void x_axis(GString *s, const struct series *sr, guint nrows) {
  if (!sr->numeric) {
    g_string_append(s, "set xrange [-0.5:*]\nset offsets 0, 0.5, 0, 0\n");
    return;
  }
  guint n;
  double *d = distinct(sr->x, nrows, &n);
  double lo = d[0], hi = d[n - 1];
  bool log = lo > 0 && hi / lo >= 100;
  int base = 10;
  if (lo > 0 && n >= 3) {
    double r = d[1] / d[0];
    bool geo = r >= 1.5;
    for (guint i = 2; i < n && geo; i++)
      geo = fabs(d[i] / d[i - 1] / r - 1) < 1e-6;
    if (geo) {
      log = true;
      double l2 = log2(r);
      if (fabs(l2 - round(l2)) < 1e-9)
        base = 2;
    }
  }
  if (log) {
    double pad = n > 1 ? pow(hi / lo, 0.05) : 1.5;
    g_string_append_printf(s, "set logscale x %d\nset xrange [%.9g:%.9g]\n",
                           base, lo / pad, hi * pad);
  } else {
    double pad = n > 1 ? 0.05 * (hi - lo) : fmax(fabs(lo) * 0.5, 0.5);
    g_string_append_printf(s, "set xrange [%.9g:%.9g]\n", lo - pad, hi + pad);
  }
  if (n <= 12) {
    g_string_append(s, "set xtics (");
    for (guint i = 0; i < n; i++)
      g_string_append_printf(s, "%s\"%.6g\" %.9g", i ? ", " : "", d[i], d[i]);
    g_string_append(s, ")\n");
  }
  g_free(d);
}

/* The smallest and largest positive values of columns COLS of ROWS. */
static void value_range(const GPtrArray *rows, const int *cols, size_t nc,
                        double *lo, double *hi) {
  *lo = INFINITY;
  *hi = 0;
  for (guint i = 0; i < rows->len; i++) {
    GPtrArray *f = g_ptr_array_index(rows, i);
    for (size_t k = 0; k < nc; k++) {
      double v;
      if (number_of(g_ptr_array_index(f, (guint)cols[k]), &v) && v > 0) {
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
      }
    }
  }
}

/* The unit of a time axis whose largest value is HI seconds: seconds,
 * milliseconds or microseconds, so that its tics read as plain numbers. */
struct time_unit {
  double per_s; /* the unit's values in a second */
  const char *name;
};

static struct time_unit time_unit(double hi) {
  if (!(hi < 1))
    return (struct time_unit){1, "s"};
  if (hi >= 1e-3)
    return (struct time_unit){1e3, "ms"};
  return (struct time_unit){1e6, "µs"};
}

/* A logarithmic y axis from LO to HI (in the axis unit), padded, tics
 * at 1, 2 and 5 of each decade (every digit when that makes fewer than
 * four). */
static void log_y_axis(GString *s, double lo, double hi) {
  lo /= 1.15;
  hi *= 1.15;
  g_string_append_printf(s,
                         "set logscale y 10\nset format y '%%g'\n"
                         "set mytics 10\nset yrange [%.6g:%.6g]\n"
                         "set ytics (",
                         lo, hi);
  static const int few[] = {1, 2, 5}, all[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int pass = 0; pass < 2; pass++) {
    const int *m = pass ? all : few;
    int nm = pass ? 9 : 3, n = 0;
    GString *t = g_string_new(NULL);
    for (int d = (int)floor(log10(lo)); d <= (int)ceil(log10(hi)); d++)
      for (int k = 0; k < nm; k++) {
        double v = m[k] * pow(10, d);
        if (v >= lo && v <= hi)
          g_string_append_printf(t, "%s%.6g", n++ ? ", " : "", v);
      }
    if (n >= 4 || pass) {
      g_string_append(s, t->str);
      g_string_free(t, TRUE);
      break;
    }
    g_string_free(t, TRUE);
  }
  g_string_append(s, ")\n");
}

/* The head of one terminal's plot: the canvas, its title and the
 * question under it, the top margin they leave (TOP_PX more for what
 * the plot puts above its data) and a paper's axes. */
static void gp_head(GString *s, int t, const char *dir, const char *name,
                    const char *title, const char *question, int top_px) {
  const int W = 960, H = 640;
  g_string_append_printf(
      s,
      "set terminal %s size %d,%d font 'Sans,11'\nset output '%s/%s.%s'\n"
      "set encoding utf8\nunset title\nset label 101 ",
      t ? "svg" : "pngcairo", W, H, dir, name, t ? "svg" : "png");
  gp_quote(s, title);
  double y = 1 - 24.0 / H;
  g_string_append_printf(s,
                         " at screen 0.5, screen %.4f center "
                         "font ',15' noenhanced\n",
                         y);
  int nq = 0;
  if (question) {
    char *q = wrap_even(question, 110, 2, &nq);
    g_string_append(s, "set label 102 ");
    gp_quote(s, q);
    g_string_append_printf(s,
                           " at screen 0.5, screen %.4f center "
                           "font ',11' textcolor rgb '#444444' "
                           "noenhanced\n",
                           y - 24.0 / H);
    g_free(q);
  }
  g_string_append_printf(
      s,
      "set tmargin at screen %.4f\nset border 3 lw 1\nset tics nomirror "
      "out\nset grid ytics lc rgb '#d8d8d8' lw 1 dt 1\nset key outside "
      "below center horizontal Left reverse noenhanced samplen 2.5 "
      "spacing 1.2 width 2\n",
      1 - (44.0 + 18.0 * nq + top_px) / H);
}

/* "MEASURE against X" (X's axis label without its unit) (g_free). */
static char *plot_title(const char *measure, const struct series *sr) {
  if (!sr->xkey)
    return g_strdup(measure);
  const char *unit = strstr(sr->xaxis, " (");
  return g_strdup_printf(
      "%s against %.*s", measure,
      (int)(unit ? unit - sr->xaxis : (ptrdiff_t)strlen(sr->xaxis)), sr->xaxis);
}

/* ---- plot.png: exchange times --------------------------------------- */

/* plot.dat: one block per series: x, its tic label, the time columns. */
static char *plot_data(const struct series *sr, const GPtrArray *rows) {
  GString *dat = g_string_new("# x label exchange iteration compute codec "
                              "comm reduce idle formula\n");
  static const int cols[] = {COL_EXCHANGE, COL_ITERATION, COL_COMPUTE,
                             COL_CODEC,    COL_COMM,      COL_REDUCE,
                             COL_IDLE,     COL_FORMULA};
  for (guint sidx = 0; sidx < sr->labels->len; sidx++) {
    g_string_append_printf(dat, "# series %u: %s\n", sidx,
                           (char *)g_ptr_array_index(sr->labels, sidx));
    for (guint i = 0; i < rows->len; i++) {
      if (sr->of[i] != sidx)
        continue;
      GPtrArray *f = g_ptr_array_index(rows, i);
      g_string_append_printf(dat, "%.9g ", sr->x[i]);
      gp_quote(dat, g_ptr_array_index(sr->xs, i));
      for (size_t k = 0; k < G_N_ELEMENTS(cols); k++) {
        const char *v = g_ptr_array_index(f, (guint)cols[k]);
        g_string_append_printf(dat, " %s", *v ? v : "NaN");
      }
      g_string_append_c(dat, '\n');
    }
    g_string_append(dat, "\n\n");
  }
  return g_string_free(dat, FALSE);
}

/* The collectives whose formula the rows have, comma-separated, or NULL
 * when none has one (g_free). */
static char *formula_algorithms(const GPtrArray *rows) {
  GString *s = NULL;
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < rows->len; i++) {
    const GPtrArray *f = g_ptr_array_index(rows, i);
    char *a = g_ptr_array_index(f, COL_ALGORITHM);
    if (!*(const char *)g_ptr_array_index(f, COL_FORMULA) ||
        g_hash_table_contains(seen, a))
      continue;
    g_hash_table_add(seen, a);
    if (!s)
      s = g_string_new(a);
    else
      g_string_append_printf(s, ", %s", a);
  }
  g_hash_table_destroy(seen);
  return s ? g_string_free(s, FALSE) : NULL;
}

/* The plot command: each series' iteration time (what a user pays) and
 * its exchange's (with one series in two colours, with several in the
 * series' colour, the exchange dashed); the formula of its collective
 * dotted beside (FORMULA: their names; NULL: none), its points small
 * crosses. Times in units of PER_S a second. */
static void plot_lines(GString *s, const struct series *sr, const char *dir,
                       const char *formula, double per_s) {
  const char *xt = sr->numeric ? "" : ":xtic(2)";
  char *ftitle = formula ? g_strdup_printf("analytic formula, no codec (%s)",
                                           formula)
                         : NULL;
  g_string_append(s, "plot ");
  if (sr->labels->len == 1) {
    g_string_append_printf(
        s,
        "'%s/plot.dat' index 0 using 1:($4*%g)%s with linespoints lw 2 pt 7 "
        "ps 1.3 lc rgb '%s' title 'iteration', \\\n  '%s/plot.dat' index 0 "
        "using 1:($3*%g) with linespoints lw 2 pt 5 ps 1.2 lc rgb '%s' "
        "title 'gradient exchange'",
        dir, per_s, xt, COLORS[0], dir, per_s, COLORS[1]);
    if (formula) {
      g_string_append_printf(s,
                             ", \\\n  '%s/plot.dat' index 0 using "
                             "1:($10*%g) with linespoints lw 1.5 dt 3 pt "
                             "2 ps 0.8 lc rgb '%s' title ",
                             dir, per_s, COLORS[1]);
      gp_quote(s, ftitle);
    }
  } else {
    for (guint k = 0; k < sr->labels->len; k++) {
      const char *c = COLORS[sr->color[k] % G_N_ELEMENTS(COLORS)];
      g_string_append_printf(s,
                             "%s'%s/plot.dat' index %u using 1:($4*%g)%s "
                             "with linespoints ",
                             k ? ", \\\n  " : "", dir, k, per_s, xt);
      series_style(s, sr, k);
      g_string_append(s, " title ");
      gp_quote(s, g_ptr_array_index(sr->labels, k));
      g_string_append_printf(s,
                             ", \\\n  '%s/plot.dat' index %u using "
                             "1:($3*%g) with linespoints lw 1.2 dt 2 pt 1 "
                             "ps 0.6 lc rgb '%s' notitle",
                             dir, k, per_s, c);
      if (formula)
        g_string_append_printf(s,
                               ", \\\n  '%s/plot.dat' index %u using "
                               "1:($10*%g) with linespoints lw 1.5 dt 3 "
                               "pt 2 ps 0.8 lc rgb '%s' notitle",
                               dir, k, per_s, c);
    }
    g_string_append(s, ", \\\n  NaN with lines lw 2 lc rgb '#444444' title "
                       "'iteration (markers)', \\\n  NaN with lines lw 1.2 "
                       "dt 2 lc rgb '#444444' title 'gradient exchange'");
    if (formula) {
      g_string_append(s, ", \\\n  NaN with linespoints lw 1.5 dt 3 pt 2 ps "
                         "0.8 lc rgb '#444444' title ");
      gp_quote(s, ftitle);
    }
  }
  g_string_append(s, "\n");
  g_free(ftitle);
}

/* plot.gp: a PNG and an SVG of the same plot. */
static char *plot_script(const struct series *sr, const struct experiment *e,
                         const GPtrArray *rows, const char *dir) {
  char *formula = formula_algorithms(rows);
  /* What is plotted: iteration, exchange and formula. */
  static const int ycols[] = {COL_EXCHANGE, COL_FORMULA, COL_ITERATION};
  double lo, hi;
  value_range(rows, ycols, 3, &lo, &hi);
  struct time_unit u = time_unit(hi);
  char *title = plot_title("Iteration and gradient exchange time", sr);
  GString *s = g_string_new(NULL);
  for (int t = 0; t < 2; t++) {
    gp_head(s, t, dir, "plot", title, e->question, 0);
    g_string_append_printf(s,
                           "set ylabel 'simulated time per iteration (%s)'\n"
                           "set xlabel ",
                           u.name);
    gp_quote(s, sr->xaxis);
    g_string_append(s, " noenhanced\nset datafile missing 'NaN'\n");
    if (hi > 10 * lo)
      log_y_axis(s, lo * u.per_s, hi * u.per_s);
    else
      g_string_append(s, "set yrange [0:*]\n");
    x_axis(s, sr, rows->len);
    plot_lines(s, sr, dir, formula, u.per_s);
    g_string_append(s, "reset\n");
  }
  g_free(formula);
  g_free(title);
  return g_string_free(s, FALSE);
}

/* ---- breakdown.png: where an iteration's time goes ------------------- */

/* The parts of the split, bottom to top, their colours and names. */
static const struct {
  int col;
  const char *color, *name;
} PARTS[] = {
    {COL_SPLIT_COMPUTE, "#0072B2", "compute"},
    {COL_EXPOSED_COMM, "#D55E00", "exposed communication"},
    {COL_EXPOSED_CODEC, "#CC79A7", "exposed codec"},
    {COL_EXPOSED_REDUCE, "#009E73", "exposed summation"},
    {COL_SPLIT_IDLE, "#BBBBBB", "idle, waiting for peers"},
};

/* The bars: one per point, grouped by series (a gap between groups),
 * within a group in sweep order; the bar of row I at *POS[I] (g_free). */
static double *bar_positions(const struct series *sr, guint nrows) {
  double *pos = g_new(double, nrows);
  double next = 0;
  for (guint g = 0; g < sr->labels->len; g++) {
    for (guint i = 0; i < nrows; i++)
      if (sr->of[i] == g)
        pos[i] = next++;
    next += 1; /* the gap */
  }
  return pos;
}

/* breakdown.dat: one block per series: bar position, x label, the five
 * parts, iteration_s, point index. */
static char *breakdown_data(const struct series *sr, const GPtrArray *rows,
                            const double *pos) {
  GString *dat = g_string_new("# bar label split_compute_s exposed_comm_s "
                              "exposed_codec_s exposed_reduce_s "
                              "split_idle_s iteration_s point\n");
  for (guint g = 0; g < sr->labels->len; g++) {
    g_string_append_printf(dat, "# series %u: %s\n", g,
                           (char *)g_ptr_array_index(sr->labels, g));
    for (guint i = 0; i < rows->len; i++) {
      if (sr->of[i] != g)
        continue;
      GPtrArray *f = g_ptr_array_index(rows, i);
      g_string_append_printf(dat, "%.9g ", pos[i]);
      gp_quote(dat, g_ptr_array_index(sr->xs, i));
      for (size_t k = 0; k < G_N_ELEMENTS(PARTS); k++) {
        const char *v = g_ptr_array_index(f, (guint)PARTS[k].col);
        g_string_append_printf(dat, " %s", *v ? v : "0");
      }
      const char *it = g_ptr_array_index(f, COL_ITERATION);
      g_string_append_printf(dat, " %s %u\n", *it ? it : "0", i);
    }
    g_string_append(dat, "\n\n");
  }
  return g_string_free(dat, FALSE);
}

/* breakdown.gp: stacked bars, the series' names above their groups. */
static char *breakdown_script(const struct series *sr,
                              const struct experiment *e, const GPtrArray *rows,
                              const double *pos, const char *dir) {
  guint nrows = rows->len, ngroups = sr->labels->len;
  double nslots = nrows + ngroups - 1;
  /* About 680 pixels of data area (the legend on the right), 6.5
   * pixels a character. */
  double slot_chars = 680.0 / fmax(nslots + 0.4, 1) / 6.5;
  GString *heads = g_string_new(NULL);
  int head_lines = 0;
  if (ngroups > 1) {
    for (guint g = 0; g < ngroups; g++) {
      double lo = INFINITY, hi = -INFINITY;
      guint n = 0;
      for (guint i = 0; i < nrows; i++)
        if (sr->of[i] == g) {
          lo = fmin(lo, pos[i]);
          hi = fmax(hi, pos[i]);
          n++;
        }
      int lines;
      char *w = wrap(g_ptr_array_index(sr->labels, g),
                     MAX(8, (int)((n + 0.6) * slot_chars)), 3, &lines);
      head_lines = MAX(head_lines, lines);
      g_string_append_printf(heads, "set label %u ", g + 1);
      gp_quote(heads, w);
      /* Bottom-aligned on the line under them, a line of 10-point
       * text being about 1.1 of the canvas's 11-point characters. */
      g_string_append_printf(heads,
                             " at first %.9g, graph 1 center "
                             "offset 0, %.2f font ',10' "
                             "noenhanced\n"
                             "set arrow %u from first %.9g, graph "
                             "1.02 to first %.9g, graph 1.02 nohead "
                             "lc rgb '#888888' lw 1\n",
                             (lo + hi) / 2, 1.35 + 1.0 * (lines - 1), g + 1,
                             lo - 0.45, hi + 0.45);
      g_free(w);
    }
  }
  size_t tic_len = 0;
  for (guint i = 0; i < nrows; i++)
    tic_len = MAX(tic_len, strlen(g_ptr_array_index(sr->xs, i)));
  double lo, hi;
  value_range(rows, (const int[]){COL_ITERATION}, 1, &lo, &hi);
  struct time_unit u = time_unit(hi);
  /* A few bars keep their width: the axis spans at least four slots. */
  double xlo = -0.7, xhi = nslots - 0.3;
  if (xhi - xlo < 4) {
    xlo = (nslots - 1) / 2 - 2;
    xhi = (nslots - 1) / 2 + 2;
  }
  char *title = sr->xkey ? g_strdup_printf("Where the time of an iteration "
                                           "goes, against %s",
                                           sr->xaxis)
                         : g_strdup("Where the time of an iteration goes");
  GString *s = g_string_new(NULL);
  for (int t = 0; t < 2; t++) {
    gp_head(s, t, dir, "breakdown", title, e->question,
            head_lines ? 17 * head_lines + 14 : 0);
    g_string_append(s, heads->str);
    g_string_append(s, "set key outside right top vertical reverse "
                       "Left samplen 1.5 spacing 1.4 width 1\n"
                       "set ylabel ");
    char *yl = g_strdup_printf("simulated time per iteration (%s)", u.name);
    gp_quote(s, yl);
    g_free(yl);
    g_string_append(s, "\nset xlabel ");
    gp_quote(s, sr->xaxis);
    g_string_append_printf(
        s,
        " noenhanced\nset yrange [0:*]\nset xrange [%.9g:%.9g]\n"
        "set boxwidth 0.8\nset style fill solid 1.0 noborder\n"
        "set grid noxtics\nset xtics scale 0%s\nset xtics (",
        xlo, xhi, (double)tic_len > slot_chars ? " rotate by 45 right" : "");
    guint step = nrows > 60 ? (nrows + 59) / 60 : 1;
    for (guint i = 0, k = 0; i < nrows; i++) {
      if (i % step)
        continue;
      g_string_append(s, k++ ? ", " : "");
      gp_quote(s, g_ptr_array_index(sr->xs, i));
      g_string_append_printf(s, " %.9g", pos[i]);
    }
    g_string_append(s, ")\nplot ");
    /* Tallest first: each part is the sum of those below it and itself,
     * drawn over by the next. */
    for (size_t k = G_N_ELEMENTS(PARTS); k-- > 0;) {
      g_string_append_printf(s, "%s'%s/breakdown.dat' using 1:((",
                             k + 1 < G_N_ELEMENTS(PARTS) ? ", \\\n  " : "",
                             dir);
      for (size_t j = 0; j <= k; j++)
        g_string_append_printf(s, "%s$%zu", j ? "+" : "", j + 3);
      g_string_append_printf(s, ")*%g) with boxes lc rgb '%s' title '%s'",
                             u.per_s, PARTS[k].color, PARTS[k].name);
    }
    /* Each bar's iteration_s above it, upright where the bars leave
     * room for five characters of 8 points. */
    if (nrows <= 60)
      g_string_append_printf(s,
                             ", \\\n  '%s/breakdown.dat' using "
                             "1:(($3+$4+$5+$6+$7)*%g):(sprintf('%%.3g', "
                             "$8*%g)) with labels %s font ',8' notitle",
                             dir, u.per_s, u.per_s,
                             slot_chars * 6.5 >= 34
                                 ? "offset 0, 0.6"
                                 : "rotate by 90 left offset 0, 0.4");
    g_string_append(s, "\nreset\n");
  }
  g_free(title);
  g_string_free(heads, TRUE);
  return g_string_free(s, FALSE);
}

/* Write NAME.dat and NAME.gp into DIR and run gnuplot on the script. */
static void plot_run(const char *dir, const char *name, const char *dat,
                     const char *script_text, GString *warnings) {
  char *f = g_strconcat(name, ".dat", NULL),
       *g = g_strconcat(name, ".gp", NULL);
  char *datf = g_build_filename(dir, f, NULL);
  char *script = g_build_filename(dir, g, NULL);
  char *cmd = g_strdup_printf("gnuplot '%s' 2>/dev/null", script);
  if (!g_file_set_contents(datf, dat, -1, NULL) ||
      !g_file_set_contents(script, script_text, -1, NULL) || system(cmd) != 0)
    g_string_append_printf(warnings, "run: gnuplot failed on %s\n", script);
  g_free(cmd);
  g_free(script);
  g_free(datf);
  g_free(g);
  g_free(f);
}

void plot_sweep(const char *dir, const struct experiment *e,
                const GPtrArray *rows, GString *warnings) {
  char *gp = g_find_program_in_path("gnuplot");
  if (!gp) {
    g_string_append(warnings, "run: --plot needs gnuplot (Debian package "
                              "gnuplot-nox); results are written without "
                              "plots\n");
    return;
  }
  g_free(gp);
  struct series sr;
  series_init(&sr, e, rows);
  char *dat = plot_data(&sr, rows), *script = plot_script(&sr, e, rows, dir);
  plot_run(dir, "plot", dat, script, warnings);
  g_free(dat);
  g_free(script);
  double *pos = bar_positions(&sr, rows->len);
  dat = breakdown_data(&sr, rows, pos);
  script = breakdown_script(&sr, e, rows, pos, dir);
  plot_run(dir, "breakdown", dat, script, warnings);
  g_free(dat);
  g_free(script);
  g_free(pos);
  series_fini(&sr);
}

/* The summary's key columns: the swept keys, or the main ones. */
static GPtrArray *summary_keys(const struct experiment *e) {
  GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
  if (e->swept->len) {
    for (guint k = 0; k < e->swept->len; k++)
      g_ptr_array_add(keys, g_strdup(g_ptr_array_index(e->swept, k)));
  } else {
    static const char *const dflt[] = {"model.name", "platform.nodes",
                                       "exchange.algorithm", "exchange.codec"};
    for (size_t k = 0; k < G_N_ELEMENTS(dflt); k++)
      g_ptr_array_add(keys, g_strdup(dflt[k]));
  }
  return keys;
}

char *plot_summary(const struct experiment *e, const GPtrArray *rows) {
  GPtrArray *keys = summary_keys(e);
  guint n = keys->len;
  int *w = g_new(int, n);
  char ***cells = g_new(char **, rows->len);
  for (guint k = 0; k < n; k++)
    w[k] = (int)strlen(strchr(g_ptr_array_index(keys, k), '.') + 1);
  for (guint i = 0; i < rows->len; i++) {
    cells[i] = g_new(char *, n);
    for (guint k = 0; k < n; k++) {
      cells[i][k] = point_config_value(g_ptr_array_index(e->points, i),
                                       g_ptr_array_index(keys, k));
      w[k] = MAX(w[k], (int)strlen(cells[i][k]));
    }
  }
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%-5s", "point");
  for (guint k = 0; k < n; k++)
    g_string_append_printf(s, " %-*s", w[k],
                           strchr(g_ptr_array_index(keys, k), '.') + 1);
  g_string_append_printf(s, " %11s %11s %11s %11s %11s %9s %6s\n",
                         "exchange_s", "iteration_s", "comm_s", "codec_s",
                         "formula_s", "rel_err", "oracle");
  for (guint i = 0; i < rows->len; i++) {
    GPtrArray *f = g_ptr_array_index(rows, i);
    const char *const *v = (const char *const *)f->pdata;
    g_string_append_printf(s, "%-5s", v[0]);
    for (guint k = 0; k < n; k++)
      g_string_append_printf(s, " %-*s", w[k], cells[i][k]);
    g_string_append_printf(
        s, " %11.6g %11.6g %11.6g %11.6g %11s %9s %6s\n",
        g_ascii_strtod(v[COL_EXCHANGE], NULL),
        g_ascii_strtod(v[COL_ITERATION], NULL),
        g_ascii_strtod(v[COL_COMM], NULL), g_ascii_strtod(v[COL_CODEC], NULL),
        *v[COL_FORMULA] ? v[COL_FORMULA] : "-",
        *v[COL_RELERR] ? v[COL_RELERR] : "-", v[COL_ORACLE]);
    for (guint k = 0; k < n; k++)
      g_free(cells[i][k]);
    g_free(cells[i]);
  }
  g_free(cells);
  g_free(w);
  g_ptr_array_free(keys, TRUE);
  return g_string_free(s, FALSE);
}
