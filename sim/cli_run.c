/* sim/cli_run.c: `gradsim run`: expand an experiment into points, run
 * each in a process of its own (SimGrid starts once per process), keep
 * every finished point in DIR/points/ so that a sweep resumes where it
 * stopped, and write runs.csv, iterations.csv, links.csv and the
 * effective configuration. */
#include "cli.h"

#include "experiment.h"
#include "platform.h"
#include "run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

static const char RUNS_HEADER[] =
    "point,model,nodes,aggregators,topology,bandwidth_bps,latency_s,"
    "algorithm,codec,placement,payload,mode,iterations,fusion_bytes,k,"
    "local_steps,seed,exchange_s,iteration_s,compute_s,codec_s,comm_s,"
    "reduce_s,idle_s,wire_bytes,formula_exchange_s,formula_rel_err,oracle,"
    "fast_forwarded_steps,packets,header_bytes,driver_s,nic_s,nic_busy,"
    "nic_stall_cycles\n";
static const char ITER_HEADER[] =
    "point,iteration,worker,start_s,end_s,compute_s,codec_s,comm_s,"
    "reduce_s,idle_s,exchange_s,wire_bytes\n";
static const char LINKS_HEADER[] =
    "point,link,bytes,mean_bytes_per_s,utilisation\n";

static const char *topo_name(const struct point *p) {
  static const char *const names[] = {"star", "fat-tree", "dragonfly",
                                      "gpu-cluster", "file"};
  return names[p->topology];
}

static void csv_text(GString *s, const char *v) {
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

static void csv_num(GString *s, double v) {
  if (isfinite(v))
    g_string_append_printf(s, ",%.9g", v);
  else
    g_string_append(s, ",");
}

/* The row of runs.csv for point P, without its index. */
static char *runs_row(const struct point *p, const struct run_result *r) {
  GString *s = g_string_new(NULL);
  csv_text(s, p->model);
  g_string_append_printf(s, ",%d,%d,%s", p->nodes, p->aggregators,
                         topo_name(p));
  csv_num(s, 8 * p->bandwidth_Bps);
  csv_num(s, p->latency_s);
  g_string_append_c(s, ',');
  csv_text(s, p->algorithm);
  g_string_append_c(s, ',');
  csv_text(s, p->codec);
  static const char *const place[] = {"cpu", "gpu", "nic"};
  static const char *const pay[] = {"full", "sampled", "none"};
  static const char *const mode[] = {"sync", "overlap", "pipe"};
  g_string_append_printf(s, ",%s,%s,%s,%d", place[p->placement],
                         pay[p->payload], mode[p->mode], p->iterations);
  if (isinf(p->fusion_bytes))
    g_string_append(s, ",all");
  else
    csv_num(s, p->fusion_bytes);
  g_string_append_printf(s, ",%d,%d,%" G_GUINT64_FORMAT, p->k,
                         p->local_steps, p->grad.seed);
  csv_num(s, r->exchange_s);
  csv_num(s, r->iteration_s);
  csv_num(s, r->compute_s);
  csv_num(s, r->codec_s);
  csv_num(s, r->comm_s);
  csv_num(s, r->reduce_s);
  csv_num(s, r->idle_s);
  csv_num(s, r->wire_bytes);
  csv_num(s, r->formula_s);
  csv_num(s, isfinite(r->formula_s) && r->formula_s > 0
                 ? fabs(r->exchange_s - r->formula_s) / r->formula_s
                 : NAN);
  g_string_append_printf(s, ",%s,%" G_GUINT64_FORMAT, r->oracle,
                         r->ff_steps);
  csv_num(s, r->packets);
  csv_num(s, r->header_bytes);
  csv_num(s, r->driver_s);
  csv_num(s, r->nic_s);
  csv_num(s, r->nic_busy);
  csv_num(s, r->nic_stall_cycles);
  g_string_append_c(s, '\n');
  return g_string_free(s, FALSE);
}

static char *point_file(const char *dir, const struct point *p,
                        const char *ext) {
  char *name = g_strconcat(p->hash, ext, NULL);
  char *path = g_build_filename(dir, "points", name, NULL);
  g_free(name);
  return path;
}

static bool write_file(const char *path, const char *text) {
  return g_file_set_contents(path, text, -1, NULL);
}

/* In a child process: run the point and leave its result files (or a
 * .err file) in DIR/points. Exit status 0, 2 (bad input) or 1. */
static G_NORETURN void child(const char *dir, const struct point *p,
                             bool trace) {
  char *work = g_build_filename(dir, "points", NULL);
  char *tmp = g_strconcat(work, "/", p->hash, ".work", NULL);
  g_mkdir_with_parents(tmp, 0755);
  struct run_result r;
  char *err = NULL;
  int rc = run_point(p, tmp, trace, &r, &err);
  int status = 0;
  if (rc != 0) {
    char *path = point_file(dir, p, ".err");
    write_file(path, err ? err : "unknown error");
    g_free(path);
    status = 2;
  } else {
    char *row = runs_row(p, &r);
    char *paths[] = {point_file(dir, p, ".iter"),
                     point_file(dir, p, ".links"),
                     point_file(dir, p, ".note"), point_file(dir, p, ".row")};
    bool ok = write_file(paths[0], r.iterations->str) &&
              write_file(paths[1], r.links->str) &&
              write_file(paths[2], r.note ? r.note : "");
    if (trace) {
      char *from = g_build_filename(tmp, "trace.paje", NULL);
      char *to = point_file(dir, p, ".paje");
      g_rename(from, to);
      g_free(from);
      g_free(to);
    }
    /* The row last: its presence marks the point done. */
    ok = ok && write_file(paths[3], row);
    status = ok ? 0 : 1;
    for (int i = 0; i < 4; i++)
      g_free(paths[i]);
    g_free(row);
  }
  /* The generated platform is rebuilt on demand. */
  char *xml = g_build_filename(tmp, "platform.xml", NULL);
  g_unlink(xml);
  g_rmdir(tmp);
  fflush(NULL);
  _exit(status);
}

static bool point_done(const char *dir, const struct point *p) {
  char *row = point_file(dir, p, ".row");
  bool done = g_file_test(row, G_FILE_TEST_EXISTS);
  g_free(row);
  return done;
}

static char *read_text(const char *path) {
  char *t = NULL;
  g_file_get_contents(path, &t, NULL, NULL);
  return t ? t : g_strdup("");
}

static void prefix_lines(GString *out, guint index, const char *text) {
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      g_string_append_printf(out, "%u,%s\n", index, *l);
  g_strfreev(lines);
}

static void progress(guint done, guint total, bool tty) {
  if (!tty)
    return;
  int width = 40, fill = total ? (int)((double)done / total * width) : width;
  fprintf(stderr, "\r[%.*s%*s] %u/%u points", fill,
          "########################################", width - fill, "", done,
          total);
  if (done == total)
    fprintf(stderr, "\n");
  fflush(stderr);
}

/* runs.csv columns (0-based). */
enum { COL_EXCHANGE = 17, COL_ITERATION, COL_COMPUTE, COL_CODEC, COL_COMM,
       COL_REDUCE, COL_IDLE, COL_WIRE, COL_FORMULA, COL_RELERR, COL_ORACLE,
       COL_FF, COL_PACKETS, COL_HEADER, COL_DRIVER, COL_NIC, COL_NIC_BUSY,
       COL_NIC_STALLS, NCOLS };

/* The fields of one CSV line (RFC 4180 quoting), g_ptr_array of strings. */
static GPtrArray *csv_split(const char *c) {
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

/* The value of KEY ("section.key") in point P's effective configuration. */
static char *config_value(const struct point *p, const char *key) {
  GKeyFile *kf = g_key_file_new();
  char *v = NULL;
  if (g_key_file_load_from_data(kf, p->config, (gsize)-1, G_KEY_FILE_NONE,
                                NULL)) {
    char *sec = g_strdup(key), *dot = strchr(sec, '.');
    if (dot) {
      *dot = '\0';
      v = g_key_file_get_value(kf, sec, dot + 1, NULL);
    }
    g_free(sec);
  }
  g_key_file_free(kf);
  return v ? v : g_strdup("");
}

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

/* gnuplot: the first swept key on x. One series (nothing else swept):
 * the exchange time, its critical-path breakdown and the formula. Several
 * (the other swept keys' combinations): each one's exchange time, and its
 * formula dashed where one applies. Into DIR/plot.png and DIR/plot.svg;
 * the data and script stay beside them (plot.dat, plot.gp). */
static void plot(const char *dir, const struct experiment *e,
                 GPtrArray *rows) {
  char *gp = g_find_program_in_path("gnuplot");
  if (!gp) {
    fprintf(stderr, "gradsim: run: --plot needs gnuplot (Debian package "
                    "gnuplot-nox); results are written without plots\n");
    return;
  }
  g_free(gp);
  const char *xkey = e->swept->len ? g_ptr_array_index(e->swept, 0) : NULL;
  int xcol = xkey ? numeric_column(xkey) : 0;
  /* Series: distinct labels of the other swept keys, in sweep order. */
  GPtrArray *labels = g_ptr_array_new_with_free_func(g_free);
  GHashTable *series = g_hash_table_new(g_str_hash, g_str_equal);
  guint *of = g_new(guint, rows->len);
  GPtrArray *xs = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < rows->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    GString *l = g_string_new(NULL);
    for (guint k = 1; k < e->swept->len; k++) {
      char *v = config_value(p, g_ptr_array_index(e->swept, k));
      const char *key = strchr(g_ptr_array_index(e->swept, k), '.') + 1;
      g_string_append_printf(l, "%s%s=%s", l->len ? " " : "", key, v);
      g_free(v);
    }
    gpointer idx;
    if (!g_hash_table_lookup_extended(series, l->str, NULL, &idx)) {
      idx = GUINT_TO_POINTER(labels->len);
      g_ptr_array_add(labels, g_strdup(l->str));
      g_hash_table_insert(series, g_ptr_array_index(labels, labels->len - 1),
                          idx);
    }
    of[i] = GPOINTER_TO_UINT(idx);
    g_string_free(l, TRUE);
    g_ptr_array_add(xs, xkey ? config_value(p, xkey) : g_strdup_printf("%u", i));
  }
  /* plot.dat: one block per series: x, xtic label, the time columns. */
  GString *dat = g_string_new("# x label exchange iteration compute codec "
                              "comm reduce idle formula\n");
  GHashTable *cats = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint sidx = 0; sidx < labels->len; sidx++) {
    g_string_append_printf(dat, "# series %u: %s\n", sidx,
                           (char *)g_ptr_array_index(labels, sidx));
    for (guint i = 0; i < rows->len; i++) {
      if (of[i] != sidx)
        continue;
      GPtrArray *f = g_ptr_array_index(rows, i);
      char *xv = g_ptr_array_index(xs, i);
      double x;
      if (xcol >= 0) {
        x = g_ascii_strtod(g_ptr_array_index(f, (guint)xcol), NULL);
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
      static const int cols[] = {COL_EXCHANGE, COL_ITERATION, COL_COMPUTE,
                                 COL_CODEC,    COL_COMM,      COL_REDUCE,
                                 COL_IDLE,     COL_FORMULA};
      for (size_t k = 0; k < G_N_ELEMENTS(cols); k++) {
        const char *v = g_ptr_array_index(f, (guint)cols[k]);
        g_string_append_printf(dat, " %s", *v ? v : "NaN");
      }
      g_string_append_c(dat, '\n');
    }
    g_string_append(dat, "\n\n");
  }
  bool single = labels->len == 1;
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
    gp_quote(s, xkey ? xkey : "point");
    g_string_append(s, " noenhanced\nset grid\nset style data "
                       "linespoints\nset datafile missing 'NaN'\n");
    if (xcol < 0)
      g_string_append(s, "set xrange [-0.5:*]\nset offsets 0, 0.5, 0, 0\n");
    g_string_append(s, "plot ");
    const char *xt = xcol < 0 ? ":xtic(2)" : "";
    if (single) {
      static const char *const names[] = {
          "exchange", "iteration", "compute", "codec",
          "comm",     "reduce",    "idle",    "formula (exchange)"};
      for (int k = 0; k < 8; k++)
        g_string_append_printf(s, "%s'%s/plot.dat' index 0 using 1:%d%s "
                                  "title '%s'%s",
                               k ? ", \\\n  " : "", dir, k + 3, xt, names[k],
                               k == 7 ? " dashtype 2 lc rgb 'black'" : "");
    } else {
      for (guint k = 0; k < labels->len; k++) {
        g_string_append_printf(s, "%s'%s/plot.dat' index %u using 1:3%s "
                                  "title ",
                               k ? ", \\\n  " : "", dir, k, xt);
        gp_quote(s, g_ptr_array_index(labels, k));
        g_string_append_printf(s, " lc %u, \\\n  '%s/plot.dat' index %u "
                                  "using 1:10 notitle dashtype 2 lc %u",
                               k + 1, dir, k, k + 1);
      }
    }
    g_string_append(s, "\n");
  }
  char *datf = g_build_filename(dir, "plot.dat", NULL);
  char *script = g_build_filename(dir, "plot.gp", NULL);
  char *cmd = g_strdup_printf("gnuplot '%s' 2>/dev/null", script);
  if (!g_file_set_contents(datf, dat->str, -1, NULL) ||
      !g_file_set_contents(script, s->str, -1, NULL) || system(cmd) != 0)
    fprintf(stderr, "gradsim: run: gnuplot failed on %s\n", script);
  g_free(cmd);
  g_free(script);
  g_free(datf);
  g_string_free(s, TRUE);
  g_string_free(dat, TRUE);
  g_hash_table_destroy(cats);
  g_hash_table_destroy(series);
  g_ptr_array_free(labels, TRUE);
  g_ptr_array_free(xs, TRUE);
  g_free(of);
}

/* The summary on stdout: the swept keys (or the usual identity columns)
 * and the headline times. */
static void summary(const struct experiment *e, GPtrArray *rows) {
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
  guint n = keys->len;
  int *w = g_new(int, n);
  char ***cells = g_new(char **, rows->len);
  for (guint k = 0; k < n; k++)
    w[k] = (int)strlen(strchr(g_ptr_array_index(keys, k), '.') + 1);
  for (guint i = 0; i < rows->len; i++) {
    cells[i] = g_new(char *, n);
    for (guint k = 0; k < n; k++) {
      cells[i][k] =
          config_value(g_ptr_array_index(e->points, i), g_ptr_array_index(keys, k));
      w[k] = MAX(w[k], (int)strlen(cells[i][k]));
    }
  }
  printf("%-5s", "point");
  for (guint k = 0; k < n; k++)
    printf(" %-*s", w[k], strchr(g_ptr_array_index(keys, k), '.') + 1);
  printf(" %11s %11s %11s %11s %11s %9s %6s\n", "exchange_s", "iteration_s",
         "comm_s", "codec_s", "formula_s", "rel_err", "oracle");
  for (guint i = 0; i < rows->len; i++) {
    GPtrArray *f = g_ptr_array_index(rows, i);
    const char *const *v = (const char *const *)f->pdata;
    printf("%-5s", v[0]);
    for (guint k = 0; k < n; k++)
      printf(" %-*s", w[k], cells[i][k]);
    printf(" %11.6g %11.6g %11.6g %11.6g %11s %9s %6s\n",
           g_ascii_strtod(v[COL_EXCHANGE], NULL),
           g_ascii_strtod(v[COL_ITERATION], NULL),
           g_ascii_strtod(v[COL_COMM], NULL),
           g_ascii_strtod(v[COL_CODEC], NULL),
           *v[COL_FORMULA] ? v[COL_FORMULA] : "-",
           *v[COL_RELERR] ? v[COL_RELERR] : "-", v[COL_ORACLE]);
    for (guint k = 0; k < n; k++)
      g_free(cells[i][k]);
    g_free(cells[i]);
  }
  g_free(cells);
  g_free(w);
  g_ptr_array_free(keys, TRUE);
}

int cli_run(int argc, char **argv) {
  const char *where = "run";
  char **sets = NULL, *out = NULL;
  gint64 jobs = 0;
  gboolean do_plot = FALSE, trace = FALSE, quiet = FALSE;
  GOptionEntry opts[] = {
      {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
       "override a key: section.key=value (repeat; commas sweep)", "S.K=V"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "output directory (default results/<experiment name>)", "DIR"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT64, &jobs,
       "points run at once (default: the number of CPUs)", "N"},
      {"plot", 'p', 0, G_OPTION_ARG_NONE, &do_plot,
       "draw the sweep with gnuplot into DIR/plot.png and plot.svg", NULL},
      {"trace", 't', 0, G_OPTION_ARG_NONE, &trace,
       "write a Paje trace of each point (DIR/points/<hash>.paje)", NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
       "print no table at the end", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "EXPERIMENT.ini",
            "Run an experiment (every combination of its comma-separated "
            "values) and write runs.csv, iterations.csv, links.csv and "
            "config.txt into the output directory. Finished points are "
            "kept in DIR/points/: running again skips them.",
            opts);
  if (argc < 2)
    cli_bad_input("%s: name an experiment file (e.g. experiments/"
                  "default.ini)",
                  where);
  if (argc > 2)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where,
                  argv[2]);
  if (jobs < 0 || jobs > 4096)
    cli_bad_input("%s: --jobs %" G_GINT64_FORMAT " must be in 1..4096",
                  where, jobs);
  if (jobs == 0)
    jobs = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN)
                                              : 1;
  char *err = NULL;
  struct experiment *e = experiment_load(argv[1], sets, &err);
  if (!e)
    cli_bad_input("%s", err);
  /* Everything that can be checked without simulating, before anything
   * is written. */
  for (guint i = 0; i < e->points->len; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    if (run_check(p, &err) != 0) {
      if (e->points->len > 1)
        cli_bad_input("%s: point %u: %s", argv[1], i, err);
      cli_bad_input("%s: %s", argv[1], err);
    }
  }
  /* Platform files: loadable, and with enough hosts. */
  GHashTable *xmls = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            NULL);
  for (guint i = 0; i < e->points->len; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    if (p->topology != TOPO_FILE)
      continue;
    gpointer known;
    size_t hosts;
    if (g_hash_table_lookup_extended(xmls, p->platform_file, NULL, &known)) {
      hosts = GPOINTER_TO_SIZE(known);
    } else {
      if (platform_file_check(p->platform_file, &hosts, &err) != 0)
        cli_bad_input("%s: %s", argv[1], err);
      g_hash_table_insert(xmls, g_strdup(p->platform_file),
                          GSIZE_TO_POINTER(hosts));
    }
    if (hosts < (size_t)p->nodes + (size_t)p->aggregators)
      cli_bad_input("%s: platform %s has %zu hosts; [platform] nodes = %d "
                    "and aggregators = %d need %d",
                    argv[1], p->platform_file, hosts, p->nodes,
                    p->aggregators, p->nodes + p->aggregators);
  }
  g_hash_table_destroy(xmls);
  if (!out) {
    char *base = g_path_get_basename(argv[1]);
    char *dot = strrchr(base, '.');
    if (dot)
      *dot = '\0';
    out = g_build_filename("results", base, NULL);
    g_free(base);
  }
  if (g_file_test(out, G_FILE_TEST_EXISTS) &&
      !g_file_test(out, G_FILE_TEST_IS_DIR))
    cli_bad_input("%s: --out %s exists and is not a directory", where, out);
  char *pdir = g_build_filename(out, "points", NULL);
  if (g_mkdir_with_parents(pdir, 0755) != 0)
    cli_env_failure("%s: cannot create %s: %s", where, pdir,
                    g_strerror(errno));

  guint total = e->points->len, done = 0, next = 0;
  bool tty = isatty(2);
  GHashTable *running = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < total; i++)
    done += point_done(out, g_ptr_array_index(e->points, i));
  progress(done, total, tty && !quiet);
  char *failure = NULL;
  int fail_status = 0;
  while (!failure && (next < total || g_hash_table_size(running))) {
    while (!failure && next < total &&
           g_hash_table_size(running) < (guint)jobs) {
      struct point *p = g_ptr_array_index(e->points, next++);
      if (point_done(out, p))
        continue;
      fflush(NULL);
      pid_t pid = fork();
      if (pid < 0)
        cli_env_failure("%s: fork failed: %s", where, g_strerror(errno));
      if (pid == 0)
        child(out, p, trace);
      g_hash_table_insert(running, GINT_TO_POINTER(pid), p);
    }
    if (!g_hash_table_size(running))
      break;
    int status;
    pid_t pid = wait(&status);
    if (pid < 0)
      continue;
    struct point *p = g_hash_table_lookup(running, GINT_TO_POINTER(pid));
    g_hash_table_remove(running, GINT_TO_POINTER(pid));
    if (!p)
      continue;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      done++;
      progress(done, total, tty && !quiet);
      continue;
    }
    char *errf = point_file(out, p, ".err");
    char *msg = NULL;
    if (g_file_get_contents(errf, &msg, NULL, NULL)) {
      failure = msg;
      fail_status = EXIT_BAD_INPUT;
      g_unlink(errf);
    } else {
      failure = g_strdup_printf(
          "a simulation process ended abnormally (%s %d)",
          WIFSIGNALED(status) ? "signal" : "status",
          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      fail_status = EXIT_ENV_FAILURE;
    }
    g_free(errf);
  }
  if (failure) {
    /* Let the others finish their point (kept for a later run). */
    while (g_hash_table_size(running)) {
      int status;
      pid_t pid = wait(&status);
      if (pid > 0)
        g_hash_table_remove(running, GINT_TO_POINTER(pid));
    }
    if (tty && !quiet)
      fprintf(stderr, "\n");
    if (fail_status == EXIT_BAD_INPUT)
      cli_bad_input("%s: %s", argv[1], failure);
    cli_env_failure("%s: %s", argv[1], failure);
  }

  /* Assemble the outputs, in sweep order. */
  GString *runs = g_string_new(RUNS_HEADER);
  GString *iters = g_string_new(ITER_HEADER);
  GString *links = g_string_new(LINKS_HEADER);
  GString *cfg = g_string_new(NULL);
  GString *notes = g_string_new(NULL);
  for (guint i = 0; i < total; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    char *paths[] = {point_file(out, p, ".row"), point_file(out, p, ".iter"),
                     point_file(out, p, ".links"),
                     point_file(out, p, ".note")};
    char *row = read_text(paths[0]), *it = read_text(paths[1]),
         *lk = read_text(paths[2]), *nt = read_text(paths[3]);
    g_string_append_printf(runs, "%u,%s", i, row);
    prefix_lines(iters, i, it);
    prefix_lines(links, i, lk);
    g_string_append_printf(cfg, "# point %u (%s)\n%s\n", i, p->hash,
                           p->config);
    if (*nt)
      g_string_append_printf(notes, "point %u: oracle: %s\n", i, nt);
    g_free(row), g_free(it), g_free(lk), g_free(nt);
    for (int k = 0; k < 4; k++)
      g_free(paths[k]);
  }
  struct {
    const char *name;
    GString *text;
  } files[] = {{"runs.csv", runs},
               {"iterations.csv", iters},
               {"links.csv", links},
               {"config.txt", cfg}};
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *path = g_build_filename(out, files[i].name, NULL);
    GError *ge = NULL;
    if (!g_file_set_contents(path, files[i].text->str,
                             (gssize)files[i].text->len, &ge))
      cli_env_failure("%s: %s", where, ge->message);
    g_free(path);
  }
  /* The rows, parsed back for the plot and the summary. */
  GPtrArray *rows = g_ptr_array_new_with_free_func(
      (GDestroyNotify)g_ptr_array_unref);
  {
    char **lines = g_strsplit(runs->str, "\n", -1);
    for (char **l = lines + 1; *l && **l; l++) {
      GPtrArray *f = csv_split(*l);
      if (f->len != NCOLS)
        cli_env_failure("%s: internal error: a runs.csv row has %u fields",
                        where, f->len);
      g_ptr_array_add(rows, f);
    }
    g_strfreev(lines);
  }
  if (do_plot)
    plot(out, e, rows);
  if (notes->len)
    fprintf(stderr, "gradsim: %s", notes->str);
  if (!quiet) {
    summary(e, rows);
    printf("\nresults in %s (runs.csv, iterations.csv, links.csv, "
           "config.txt)\n",
           out);
  }
  g_ptr_array_free(rows, TRUE);
  g_string_free(runs, TRUE);
  g_string_free(iters, TRUE);
  g_string_free(links, TRUE);
  g_string_free(cfg, TRUE);
  g_string_free(notes, TRUE);
  experiment_free(e);
  g_hash_table_destroy(running);
  g_free(pdir);
  g_free(out);
  g_strfreev(sets);
  return 0;
}

/* `gradsim platform EXPERIMENT [--set ...] --out FILE`: the platform XML
 * of the experiment's point (one point: sweep nothing), so that other
 * tools (SimGrid SMPI, bench/) can run on exactly the same platform. */
int cli_platform(int argc, char **argv) {
  const char *where = "platform";
  char **sets = NULL, *out = NULL;
  GOptionEntry opts[] = {
      {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
       "override a key (section.key=value)", "KEY=V"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "XML file to write",
       "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "EXPERIMENT",
            "Write the SimGrid platform of an experiment point (its hosts "
            "h0, h1, ...: the workers, then the aggregators).",
            opts);
  if (argc != 2)
    cli_bad_input("%s: expected one experiment file (see gradsim platform "
                  "--help)",
                  where);
  if (!out)
    cli_bad_input("%s: --out FILE is required", where);
  char *err = NULL;
  struct experiment *e = experiment_load(argv[1], sets, &err);
  if (!e)
    cli_bad_input("%s", err);
  if (e->points->len != 1)
    cli_bad_input("%s: %s sweeps %u points; the platform of one point is "
                  "written: fix the swept keys with --set",
                  where, argv[1], e->points->len);
  struct point *p = g_ptr_array_index(e->points, 0);
  char *tmp = g_dir_make_tmp("gradsim-XXXXXX", NULL);
  if (!tmp)
    cli_env_failure("%s: cannot make a temporary directory", where);
  char *xml = platform_xml(p, tmp, &err);
  if (!xml)
    cli_bad_input("%s: %s", argv[1], err);
  gchar *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(xml, &text, &len, NULL))
    cli_env_failure("%s: cannot read %s", where, xml);
  if (p->topology != TOPO_FILE)
    g_unlink(xml);
  g_rmdir(tmp);
  cli_outputs *o = cli_outputs_new();
  cli_outputs_add(o, out, text, len);
  cli_outputs_commit(o);
  g_free(xml);
  g_free(tmp);
  experiment_free(e);
  g_free(out);
  g_strfreev(sets);
  return 0;
}
