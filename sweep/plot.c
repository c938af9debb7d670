/* sweep/plot.c: --plot (gnuplot) and the summary table of a sweep. */
#include "sweep_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runs.csv column holding a swept key as a number, or -1. */
static int numeric_column(const char *key) {
  static const struct {
    const char *key;
    int col;
  } map[] = {{"platform.nodes", 2},     {"platform.aggregators", 3},
             {"platform.bandwidth", 5}, {"platform.latency", 6},
             {"training.iterations", 12}, {"training.fusion_bytes", 13},
             {"training.k", 14},        {"training.local_steps", 15},
             {"gradients.seed", 16}};
  for (size_t i = 0; i < G_N_ELEMENTS(map); i++)
    if (!strcmp(map[i].key, key))
      return map[i].col;
  return -1;
}

static void gp_quote(GString *s, const char *v) {
  g_string_append_c(s, '"');
  for (; *v; v++) {
    if (*v == '"' || *v == '\\')
      g_string_append_c(s, '\\');
    g_string_append_c(s, *v);
  }
  g_string_append_c(s, '"');
}

/* The plot's series: the first swept key on x, one series per
 * combination of the other swept keys, in sweep order. */
struct series {
  const char *xkey; /* NULL: nothing swept, x is the point index */
  int xcol;         /* runs.csv column of x, or -1 for categories */
  GPtrArray *labels; /* a label per series */
  guint *of;         /* per row: its series */
  GPtrArray *xs;     /* per row: x as text */
};

static void series_init(struct series *sr, const struct experiment *e,
                        guint nrows) {
  sr->xkey = e->swept->len ? g_ptr_array_index(e->swept, 0) : NULL;
  sr->xcol = sr->xkey ? numeric_column(sr->xkey) : 0;
  sr->labels = g_ptr_array_new_with_free_func(g_free);
  sr->of = g_new(guint, nrows);
  sr->xs = g_ptr_array_new_with_free_func(g_free);
  GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < nrows; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    GString *l = g_string_new(NULL);
    for (guint k = 1; k < e->swept->len; k++) {
      char *v = point_config_value(p, g_ptr_array_index(e->swept, k));
      const char *key = strchr(g_ptr_array_index(e->swept, k), '.') + 1;
      g_string_append_printf(l, "%s%s=%s", l->len ? " " : "", key, v);
      g_free(v);
    }
    gpointer idx;
    if (!g_hash_table_lookup_extended(index, l->str, NULL, &idx)) {
      idx = GUINT_TO_POINTER(sr->labels->len);
      g_ptr_array_add(sr->labels, g_strdup(l->str));
      g_hash_table_insert(index,
                          g_ptr_array_index(sr->labels, sr->labels->len - 1),
                          idx);
    }
    sr->of[i] = GPOINTER_TO_UINT(idx);
    g_string_free(l, TRUE);
    g_ptr_array_add(sr->xs, sr->xkey ? point_config_value(p, sr->xkey)
                                     : g_strdup_printf("%u", i));
  }
  g_hash_table_destroy(index);
}

static void series_fini(struct series *sr) {
  g_ptr_array_free(sr->labels, TRUE);
  g_ptr_array_free(sr->xs, TRUE);
  g_free(sr->of);
}

/* plot.dat: one block per series: x, xtic label, the time columns.
 * Categorical x values are numbered in order of appearance. */
static char *plot_data(const struct series *sr, const GPtrArray *rows) {
  GString *dat = g_string_new("# x label exchange iteration compute codec "
                              "comm reduce idle formula\n");
  GHashTable *cats = g_hash_table_new(g_str_hash, g_str_equal);
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
      char *xv = g_ptr_array_index(sr->xs, i);
      double x;
      if (sr->xcol >= 0) {
        x = g_ascii_strtod(g_ptr_array_index(f, (guint)sr->xcol), NULL);
      } else {
        gpointer c;
        if (!g_hash_table_lookup_extended(cats, xv, NULL, &c)) {
          c = GUINT_TO_POINTER(g_hash_table_size(cats));
          g_hash_table_insert(cats, xv, c);
        }
        x = GPOINTER_TO_UINT(c);
      }
      g_string_append_printf(dat, "%.9g ", x);
      gp_quote(dat, xv);
      for (size_t k = 0; k < G_N_ELEMENTS(cols); k++) {
        const char *v = g_ptr_array_index(f, (guint)cols[k]);
        g_string_append_printf(dat, " %s", *v ? v : "NaN");
      }
      g_string_append_c(dat, '\n');
    }
    g_string_append(dat, "\n\n");
  }
  g_hash_table_destroy(cats);
  return g_string_free(dat, FALSE);
}

/* The plot command of one terminal: with one series the exchange time,
 * its breakdown and the formula; with several each one's exchange time
 * and its formula dashed. */
static void plot_lines(GString *s, const struct series *sr, const char *dir) {
  const char *xt = sr->xcol < 0 ? ":xtic(2)" : "";
  g_string_append(s, "plot ");
  if (sr->labels->len == 1) {
    static const char *const names[] = {
        "exchange", "iteration", "compute", "codec",
        "comm",     "reduce",    "idle",    "formula (exchange)"};
    for (int k = 0; k < 8; k++)
      g_string_append_printf(s, "%s'%s/plot.dat' index 0 using 1:%d%s "
                                "title '%s'%s",
                             k ? ", \\\n  " : "", dir, k + 3, xt, names[k],
                             k == 7 ? " dashtype 2 lc rgb 'black'" : "");
  } else {
    for (guint k = 0; k < sr->labels->len; k++) {
      g_string_append_printf(s, "%s'%s/plot.dat' index %u using 1:3%s "
                                "title ",
                             k ? ", \\\n  " : "", dir, k, xt);
      gp_quote(s, g_ptr_array_index(sr->labels, k));
      g_string_append_printf(s, " lc %u, \\\n  '%s/plot.dat' index %u "
                                "using 1:10 notitle dashtype 2 lc %u",
                             k + 1, dir, k, k + 1);
    }
  }
  g_string_append(s, "\n");
}

/* plot.gp: a PNG and an SVG of the same plot. */
static char *plot_script(const struct series *sr, const struct experiment *e,
                         const char *dir) {
  bool single = sr->labels->len == 1;
  GString *s = g_string_new(NULL);
  for (int t = 0; t < 2; t++) {
    g_string_append_printf(
        s,
        "set terminal %s size 960,560\nset output '%s/plot.%s'\n"
        "set key %s noenhanced\nset title ",
        t ? "svg" : "pngcairo", dir, t ? "svg" : "png",
        single ? "outside right" : "inside top left");
    gp_quote(s, e->path);
    g_string_append_printf(s, " noenhanced\nset ylabel 'simulated %sseconds "
                              "per iteration%s'\nset xlabel ",
                           single ? "" : "exchange ",
                           single ? "" : " (dashed: formula)");
    gp_quote(s, sr->xkey ? sr->xkey : "point");
    g_string_append(s, " noenhanced\nset grid\nset style data "
                       "linespoints\nset datafile missing 'NaN'\n");
    if (sr->xcol < 0)
      g_string_append(s, "set xrange [-0.5:*]\nset offsets 0, 0.5, 0, 0\n");
    plot_lines(s, sr, dir);
  }
  return g_string_free(s, FALSE);
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
  series_init(&sr, e, rows->len);
  char *dat = plot_data(&sr, rows), *script_text = plot_script(&sr, e, dir);
  char *datf = g_build_filename(dir, "plot.dat", NULL);
  char *script = g_build_filename(dir, "plot.gp", NULL);
  char *cmd = g_strdup_printf("gnuplot '%s' 2>/dev/null", script);
  if (!g_file_set_contents(datf, dat, -1, NULL) ||
      !g_file_set_contents(script, script_text, -1, NULL) || system(cmd) != 0)
    g_string_append_printf(warnings, "run: gnuplot failed on %s\n", script);
  g_free(cmd);
  g_free(script);
  g_free(datf);
  g_free(dat);
  g_free(script_text);
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
