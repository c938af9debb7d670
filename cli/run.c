/* cli/run.c: `gradsim run`: expand an experiment into points, run
 * each in a process of its own (SimGrid starts once per process), keep
 * every finished point in DIR/points/ so that a sweep resumes where it
 * stopped, and write runs.csv, iterations.csv, links.csv and the
 * effective configuration. */
#include "cli.h"

#include "estimate.h"
#include "units.h"
#include "experiment.h"
#include "inputs.h"
#include "platform.h"
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

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

/* The scratch directory of a point's process: its platform XML, and its
 * result files until they are complete. */
static char *work_dir(const char *dir, const struct point *p) {
  char *name = g_strconcat(p->hash, ".work", NULL);
  char *path = g_build_filename(dir, "points", name, NULL);
  g_free(name);
  return path;
}

/* The point files, the row last: its presence marks the point done. */
static const char *const POINT_EXTS[] = {".iter", ".links", ".note",
                                         ".paje", ".row"};

/* In a child process: run the point, write its result files into its
 * work directory, then move them into DIR/points (the row last); or
 * leave a .err file. A stop (SIGTERM) ends the simulation at once but
 * waits for the moves, so that a point's files are all there or none.
 * Exit status 0, 2 (bad input) or 1. */
static G_NORETURN void child(const char *dir, const struct point *p,
                             bool trace) {
  char *tmp = work_dir(dir, p);
  g_mkdir_with_parents(tmp, 0755);
  struct run_result r;
  char *err = NULL;
  int rc = run_point(p, tmp, trace, &r, &err);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, NULL);
  int status = 0;
  if (rc != 0) {
    char *path = point_file(dir, p, ".err");
    write_file(path, err ? err : "unknown error");
    g_free(path);
    status = 2;
  } else {
    char *row = runs_row(p, &r);
    const char *text[] = {r.iterations->str, r.links->str,
                          r.note ? r.note : "", NULL, row};
    bool ok = true;
    for (size_t i = 0; i < G_N_ELEMENTS(POINT_EXTS) && ok; i++) {
      char *name = g_strconcat(p->hash, POINT_EXTS[i], NULL);
      char *from = g_build_filename(tmp, i == 3 ? "trace.paje" : name, NULL);
      char *to = point_file(dir, p, POINT_EXTS[i]);
      if (text[i])
        ok = write_file(from, text[i]);
      if (ok && (text[i] || trace))
        ok = g_rename(from, to) == 0;
      g_free(name);
      g_free(from);
      g_free(to);
    }
    status = ok ? 0 : 1;
    g_free(row);
  }
  /* The generated platform is rebuilt on demand. */
  char *xml = g_build_filename(tmp, "platform.xml", NULL);
  g_unlink(xml);
  g_rmdir(tmp);
  fflush(NULL);
  _exit(status);
}

static GPtrArray *csv_split(const char *c);
static bool row_current(const char *text);

/* A point is done when its row exists and has this version's columns: a
 * row an older gradsim wrote (fewer columns) is simulated again. */
static bool point_done(const char *dir, const struct point *p) {
  char *row = point_file(dir, p, ".row"), *text = NULL;
  bool done = g_file_get_contents(row, &text, NULL, NULL) &&
              row_current(text);
  g_free(text);
  g_free(row);
  return done;
}

/* Remove what a stopped or killed process left of a point that is not
 * done: its work directory and any of its files. */
static void point_clean(const char *dir, const struct point *p) {
  char *work = work_dir(dir, p);
  GDir *d = g_dir_open(work, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      char *path = g_build_filename(work, name, NULL);
      g_unlink(path);
      g_free(path);
    }
    g_dir_close(d);
    g_rmdir(work);
  }
  g_free(work);
  if (point_done(dir, p))
    return;
  for (size_t i = 0; i < G_N_ELEMENTS(POINT_EXTS); i++) {
    char *path = point_file(dir, p, POINT_EXTS[i]);
    g_unlink(path);
    g_free(path);
  }
}

/* ---- stopping a sweep ---------------------------------------------------
 * SIGINT and SIGTERM ask a sweep to stop: the handler records the signal,
 * the loop that runs the points stops the running ones (SIGTERM), removes
 * their partial files and exits with 128 + the signal. The signals are
 * blocked except while the loop waits (sigsuspend), so none is missed
 * between a check and the wait. A signal ignored when gradsim started
 * (a background job of a shell) stays ignored. */

/* The stopping signal, or 0: written by the handler only. */
static volatile sig_atomic_t Stop_signal;

static void on_stop(int sig) { Stop_signal = sig; }
static void on_child(int sig) { (void)sig; }

static const int CAUGHT[] = {SIGINT, SIGTERM, SIGCHLD};

struct catcher {
  sigset_t mask;      /* the mask before */
  sigset_t wait_mask; /* the mask while waiting: the caught ones open */
  struct sigaction old[G_N_ELEMENTS(CAUGHT)];
  pid_t parent;
};

static void catch_signals(struct catcher *c) {
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++)
    sigaddset(&set, CAUGHT[i]);
  sigprocmask(SIG_BLOCK, &set, &c->mask);
  c->wait_mask = c->mask;
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++)
    sigdelset(&c->wait_mask, CAUGHT[i]);
  c->parent = getpid();
  Stop_signal = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++) {
    sigaction(CAUGHT[i], NULL, &c->old[i]);
    if (CAUGHT[i] != SIGCHLD && c->old[i].sa_handler == SIG_IGN)
      continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = CAUGHT[i] == SIGCHLD ? on_child : on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(CAUGHT[i], &sa, NULL);
  }
}

/* A stop that arrived after the last point (while the outputs were
 * written) is delivered to the handler, and so ignored: the sweep is
 * complete. */
static void release_signals(const struct catcher *c) {
  sigprocmask(SIG_SETMASK, &c->mask, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++)
    sigaction(CAUGHT[i], &c->old[i], NULL);
}

/* In a child: the parent decides about interrupts (SIGINT from a
 * terminal reaches the whole process group) and stops it with SIGTERM,
 * which is also sent if the parent dies (killed with SIGKILL). */
static void child_signals(const struct catcher *c) {
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
  sigaction(SIGCHLD, &c->old[2], NULL);
  sigprocmask(SIG_SETMASK, &c->mask, NULL);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (getppid() != c->parent)
    _exit(1);
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
static bool row_current(const char *text) {
  char *line = g_strndup(text, strcspn(text, "\n"));
  GPtrArray *f = csv_split(line);
  bool ok = f->len + 1 == NCOLS;
  g_ptr_array_unref(f);
  g_free(line);
  return ok;
}

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

/* ---- the sweep manifest ---------------------------------------------------
 * DIR/points/ID.sweep names the sweep a directory's points belong to, so
 * that `gradsim merge` can join directories written on several machines:
 *
 *   gradsim-sweep 1
 *   id ID                     the first 16 hex digits of the SHA-256 of
 *                             the configuration text below
 *   experiment PATH           as given to gradsim run (C-escaped)
 *   points N
 *   swept KEY KEY ...         the swept keys, in sweep order
 *   # point 0 (HASH)          then config.txt, verbatim
 *   ...                                                                  */

/* config.txt: every point's effective configuration with its hash. */
static GString *config_text(const struct experiment *e) {
  GString *cfg = g_string_new(NULL);
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    g_string_append_printf(cfg, "# point %u (%s)\n%s\n", i, p->hash,
                           p->config);
  }
  return cfg;
}

static char *sweep_id(const char *config) {
  char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, config, -1);
  sum[16] = '\0';
  return sum;
}

static char *manifest_path(const char *dir, const char *id) {
  char *name = g_strconcat(id, ".sweep", NULL);
  char *path = g_build_filename(dir, "points", name, NULL);
  g_free(name);
  return path;
}

static void write_manifest(const char *dir, const struct experiment *e) {
  GString *cfg = config_text(e);
  char *id = sweep_id(cfg->str);
  char *path = g_strescape(e->path, NULL);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "gradsim-sweep 1\nid %s\nexperiment %s\npoints "
                            "%u\nswept",
                         id, path, e->points->len);
  for (guint k = 0; k < e->swept->len; k++)
    g_string_append_printf(s, " %s", (char *)g_ptr_array_index(e->swept, k));
  g_string_append_printf(s, "\n%s", cfg->str);
  char *file = manifest_path(dir, id);
  GError *ge = NULL;
  if (!g_file_set_contents(file, s->str, (gssize)s->len, &ge))
    cli_env_failure("%s", ge->message);
  g_free(file);
  g_string_free(s, TRUE);
  g_free(path);
  g_free(id);
  g_string_free(cfg, TRUE);
}

/* Read a manifest back into an experiment whose points hold only their
 * configuration and hash (what the outputs need). NULL with *ERR when the
 * file is not one, or does not match its own id and hashes. */
static struct experiment *manifest_load(const char *file, char **id,
                                        char **err) {
  char *text = NULL;
  *err = NULL;
  *id = NULL;
  if (!g_file_get_contents(file, &text, NULL, NULL)) {
    *err = g_strdup("cannot be read");
    return NULL;
  }
  struct experiment *e = g_new0(struct experiment, 1);
  e->points = g_ptr_array_new_with_free_func((GDestroyNotify)point_free);
  e->swept = g_ptr_array_new_with_free_func(g_free);
  const char *c = text, *body = NULL;
  guint n = 0;
  bool have_n = false;
  for (int line = 0; *c && !body; line++) {
    const char *eol = strchr(c, '\n');
    if (!eol)
      break;
    char *l = g_strndup(c, (gsize)(eol - c));
    if (line == 0 && strcmp(l, "gradsim-sweep 1") != 0) {
      *err = g_strdup("is not a gradsim sweep manifest (version 1)");
    } else if (g_str_has_prefix(l, "id ")) {
      *id = g_strdup(l + 3);
    } else if (g_str_has_prefix(l, "experiment ")) {
      e->path = g_strcompress(l + 11);
    } else if (g_str_has_prefix(l, "points ")) {
      n = (guint)g_ascii_strtoull(l + 7, NULL, 10);
      have_n = true;
    } else if (g_str_has_prefix(l, "swept")) {
      char **keys = g_strsplit(l + 5, " ", -1);
      for (char **k = keys; *k; k++)
        if (**k)
          g_ptr_array_add(e->swept, g_strdup(*k));
      g_strfreev(keys);
      body = eol + 1;
    }
    g_free(l);
    if (*err)
      break;
    c = eol + 1;
  }
  if (!*err && (!body || !*id || !e->path || !have_n || n == 0))
    *err = g_strdup("is truncated (no id, experiment, points or swept line)");
  /* The body: N blocks "# point I (HASH)\n" CONFIG "\n". */
  for (guint i = 0; !*err && i < n; i++) {
    char head[64];
    int len = snprintf(head, sizeof head, "# point %u (", i);
    const char *h = body + len, *cfg = h + 18;
    if (strncmp(body, head, (size_t)len) != 0 || strlen(h) < 18 ||
        strncmp(h + 16, ")\n", 2) != 0) {
      *err = g_strdup_printf("is malformed at point %u", i);
      break;
    }
    /* The configuration ends with a newline, the block with another. */
    const char *next = strstr(cfg, "\n\n# point ");
    const char *end = next ? next + 1 : cfg + strlen(cfg) - (*cfg != 0);
    struct point *p = g_new0(struct point, 1);
    memcpy(p->hash, h, 16);
    p->hash[16] = '\0';
    p->config = g_strndup(cfg, (gsize)(end - cfg));
    g_ptr_array_add(e->points, p);
    char *sum =
        g_compute_checksum_for_string(G_CHECKSUM_SHA256, p->config, -1);
    if (strncmp(sum, p->hash, 16) != 0)
      *err = g_strdup_printf("does not match itself: point %u's "
                             "configuration is not its hash %s",
                             i, p->hash);
    g_free(sum);
    body = end + 1;
  }
  if (!*err) {
    GString *cfg = config_text(e);
    char *sum = sweep_id(cfg->str);
    if (strcmp(sum, *id) != 0 || strcmp(cfg->str, strstr(text, "# point 0 (")))
      *err = g_strdup_printf("does not match its id %s", *id);
    g_free(sum);
    g_string_free(cfg, TRUE);
  }
  g_free(text);
  if (*err) {
    experiment_free(e);
    g_free(*id);
    *id = NULL;
    return NULL;
  }
  return e;
}

/* ---- running the points ------------------------------------------------ */

/* Run the points [FIRST, LAST) of E that are not done in OUT, JOBS at a
 * time, each in a process of its own. Returns when all are done. A point
 * that fails ends the sweep with its message (status 2 for bad input, 1
 * otherwise) once the running points have finished; a stop signal (C)
 * ends it at once: the running points are stopped, their partial files
 * removed, and the finished ones counted ("run again to finish"), status
 * 128 + the signal. */
static void run_points(const char *out, const struct experiment *e,
                       guint first, guint last, guint jobs, bool trace,
                       bool bar, const struct catcher *c) {
  const char *where = e->path;
  guint total = last - first, done = 0, next = first;
  for (guint i = first; i < last; i++)
    done += point_done(out, g_ptr_array_index(e->points, i));
  progress(done, total, bar);
  GHashTable *running = g_hash_table_new(g_direct_hash, g_direct_equal);
  char *failure = NULL;
  int fail_status = 0;
  bool stopping = false;
  for (;;) {
    if (Stop_signal && !stopping) {
      stopping = true;
      GHashTableIter it;
      gpointer pid;
      g_hash_table_iter_init(&it, running);
      while (g_hash_table_iter_next(&it, &pid, NULL))
        kill(GPOINTER_TO_INT(pid), SIGTERM);
    }
    while (!stopping && !failure && next < last &&
           g_hash_table_size(running) < jobs) {
      struct point *p = g_ptr_array_index(e->points, next++);
      if (point_done(out, p))
        continue;
      point_clean(out, p); /* what a killed run left */
      fflush(NULL);
      pid_t pid = fork();
      if (pid < 0)
        cli_env_failure("%s: fork failed: %s", where, g_strerror(errno));
      if (pid == 0) {
        child_signals(c);
        child(out, p, trace);
      }
      g_hash_table_insert(running, GINT_TO_POINTER(pid), p);
    }
    if (!g_hash_table_size(running))
      break;
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0) {
      sigsuspend(&c->wait_mask);
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      cli_env_failure("%s: wait failed: %s", where, g_strerror(errno));
    }
    struct point *p = g_hash_table_lookup(running, GINT_TO_POINTER(pid));
    g_hash_table_remove(running, GINT_TO_POINTER(pid));
    if (!p)
      continue;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      done++;
      progress(done, total, bar && !stopping);
      continue;
    }
    char *errf = point_file(out, p, ".err");
    char *msg = NULL;
    if (g_file_get_contents(errf, &msg, NULL, NULL)) {
      g_unlink(errf);
      if (!failure) {
        failure = msg;
        fail_status = EXIT_BAD_INPUT;
      } else {
        g_free(msg);
      }
    } else if (!failure && !(stopping && WIFSIGNALED(status) &&
                             WTERMSIG(status) == SIGTERM)) {
      failure = g_strdup_printf(
          "a simulation process ended abnormally (%s %d)",
          WIFSIGNALED(status) ? "signal" : "status",
          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      fail_status = EXIT_ENV_FAILURE;
    }
    g_free(errf);
    point_clean(out, p);
  }
  g_hash_table_destroy(running);
  if ((failure || stopping) && bar)
    fprintf(stderr, "\n");
  if (failure) {
    if (fail_status == EXIT_BAD_INPUT)
      cli_bad_input("%s: %s", where, failure);
    cli_env_failure("%s: %s", where, failure);
  }
  if (stopping) {
    if (total == 1 && e->points->len > 1)
      fprintf(stderr, "gradsim: interrupted: point %u is not done; run "
                      "again to finish\n",
              first);
    else
      fprintf(stderr, "gradsim: interrupted: %u of %u points done; run "
                      "again to finish\n",
              done, total);
    exit(128 + Stop_signal);
  }
}

/* ---- the outputs ----------------------------------------------------------- */

/* Join the point files of E in OUT/points into runs.csv, iterations.csv,
 * links.csv and config.txt, in sweep order; then the plot and the
 * summary. The old outputs are removed first and runs.csv is written
 * last, so that a run killed in between leaves no runs.csv rather than a
 * mixture. */
static void assemble(const char *out, const struct experiment *e,
                     bool do_plot, bool quiet) {
  const char *where = e->path;
  GString *runs = g_string_new(RUNS_HEADER);
  GString *iters = g_string_new(ITER_HEADER);
  GString *links = g_string_new(LINKS_HEADER);
  GString *cfg = config_text(e);
  GString *notes = g_string_new(NULL);
  for (guint i = 0; i < e->points->len; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    char *paths[] = {point_file(out, p, ".row"), point_file(out, p, ".iter"),
                     point_file(out, p, ".links"),
                     point_file(out, p, ".note")};
    char *row = read_text(paths[0]), *it = read_text(paths[1]),
         *lk = read_text(paths[2]), *nt = read_text(paths[3]);
    g_string_append_printf(runs, "%u,%s", i, row);
    prefix_lines(iters, i, it);
    prefix_lines(links, i, lk);
    if (*nt)
      g_string_append_printf(notes, "point %u: oracle: %s\n", i, nt);
    g_free(row), g_free(it), g_free(lk), g_free(nt);
    for (int k = 0; k < 4; k++)
      g_free(paths[k]);
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
  struct {
    const char *name;
    GString *text;
  } files[] = {{"iterations.csv", iters},
               {"links.csv", links},
               {"config.txt", cfg},
               {"runs.csv", runs}};
  cli_outputs *o = cli_outputs_new();
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *path = g_build_filename(out, files[i].name, NULL);
    g_unlink(path);
    size_t len = files[i].text->len;
    cli_outputs_add(o, path, g_string_free(files[i].text, FALSE), len);
    g_free(path);
  }
  cli_outputs_commit(o);
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
  g_string_free(notes, TRUE);
}

/* --list-points: index, hash and the swept keys' values, tab-separated. */
static void list_points(const struct experiment *e) {
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    printf("%u\t%s", i, p->hash);
    for (guint k = 0; k < e->swept->len; k++) {
      const char *key = g_ptr_array_index(e->swept, k);
      char *v = config_value(p, key);
      printf("\t%s=%s", key, v);
      g_free(v);
    }
    printf("\n");
  }
}

int cli_run(int argc, char **argv) {
  const char *where = "run";
  char **sets = NULL, *out = NULL;
  gint64 jobs = 0, point = G_MININT64;
  gboolean do_plot = FALSE, trace = FALSE, quiet = FALSE, list = FALSE;
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
      {"list-points", 'l', 0, G_OPTION_ARG_NONE, &list,
       "print the sweep's points (index, hash, swept values; tab-separated) "
       "and write nothing",
       NULL},
      {"point", 'i', 0, G_OPTION_ARG_INT64, &point,
       "run only point I (an index of --list-points) into DIR/points; "
       "gradsim merge joins the directories",
       "I"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "EXPERIMENT.ini",
            "Run an experiment (every combination of its comma-separated "
            "values) and write runs.csv, iterations.csv, links.csv and "
            "config.txt into the output directory. Finished points are "
            "kept in DIR/points/: running again skips them. SIGINT or "
            "SIGTERM stops the running points and keeps the finished "
            "ones.",
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
  bool one = point != G_MININT64;
  if (list && one)
    cli_bad_input("%s: --list-points and --point exclude each other", where);
  if (one && do_plot)
    cli_bad_input("%s: --plot draws a whole sweep: not with --point (plot "
                  "the joined directories with gradsim merge --plot)",
                  where);
  char *err = NULL;
  struct experiment *e = experiment_load(argv[1], sets, &err);
  if (!e)
    cli_bad_input("%s", err);
  experiment_seal_inputs(e);
  guint total = e->points->len;
  if (one && (point < 0 || point >= total))
    cli_bad_input("%s: --point %" G_GINT64_FORMAT ": %s has %u point%s "
                  "(0..%u; see --list-points)",
                  where, point, argv[1], total, total == 1 ? "" : "s",
                  total - 1);
  if (experiment_check(e, &err) != 0)
    cli_bad_input("%s", err);
  if (list) {
    list_points(e);
    experiment_free(e);
    g_strfreev(sets);
    return 0;
  }
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
  write_manifest(out, e);

  guint first = one ? (guint)point : 0, last = one ? first + 1 : total;
  bool was_done = one && point_done(out, g_ptr_array_index(e->points, first));
  struct catcher c;
  catch_signals(&c);
  run_points(out, e, first, last, (guint)jobs, trace,
             isatty(2) && !quiet && !one, &c);
  if (one) {
    if (!quiet)
      printf("point %u of %u (%s) %s in %s; gradsim merge joins the "
             "directories of a sweep\n",
             first, total,
             ((struct point *)g_ptr_array_index(e->points, first))->hash,
             was_done ? "was already done" : "done", pdir);
  } else {
    assemble(out, e, do_plot, quiet);
  }
  release_signals(&c);
  experiment_free(e);
  g_free(pdir);
  g_free(out);
  g_strfreev(sets);
  return 0;
}

/* The indices of MISSING (ascending) as "3, 5-7, 9". */
static char *ranges_text(GArray *missing) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < missing->len;) {
    guint a = g_array_index(missing, guint, i), b = a;
    while (++i < missing->len && g_array_index(missing, guint, i) == b + 1)
      b++;
    g_string_append_printf(s, "%s%u", s->len ? ", " : "", a);
    if (b > a)
      g_string_append_printf(s, "-%u", b);
  }
  return g_string_free(s, FALSE);
}

static gint by_name(gconstpointer a, gconstpointer b) {
  return strcmp(a, b);
}

static bool same_dir(const char *a, const char *b) {
  GStatBuf sa, sb;
  return g_stat(a, &sa) == 0 && g_stat(b, &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* `gradsim merge OUTDIR DIR...`: join the point files of one sweep spread
 * over several result directories (one per machine) into OUTDIR, as one
 * `gradsim run` of the whole sweep would have written it. */
int cli_merge(int argc, char **argv) {
  const char *where = "merge";
  char *want = NULL;
  gboolean do_plot = FALSE, quiet = FALSE;
  GOptionEntry opts[] = {
      {"sweep", 0, 0, G_OPTION_ARG_STRING, &want,
       "the sweep to join, where the directories hold several", "ID"},
      {"plot", 'p', 0, G_OPTION_ARG_NONE, &do_plot,
       "draw the sweep with gnuplot into OUTDIR/plot.png and plot.svg", NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
       "print no table at the end", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "OUTDIR DIR...",
            "Join the points of one sweep from several result directories "
            "(of gradsim run, or gradsim run --point on several machines) "
            "into OUTDIR: its points/ and runs.csv, iterations.csv, "
            "links.csv and config.txt, in sweep order, as one gradsim run "
            "would have written them.",
            opts);
  if (argc < 3)
    cli_bad_input("%s: expected OUTDIR and at least one result directory "
                  "(see gradsim merge --help)",
                  where);
  const char *out = argv[1];
  int ndirs = argc - 2;
  char **dirs = argv + 2;
  if (g_file_test(out, G_FILE_TEST_EXISTS) &&
      !g_file_test(out, G_FILE_TEST_IS_DIR))
    cli_bad_input("%s: %s exists and is not a directory", where, out);
  /* Every directory's sweeps, by id. */
  GHashTable **sweeps = g_new0(GHashTable *, ndirs);
  GHashTable *count = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            NULL);
  for (int d = 0; d < ndirs; d++) {
    if (!g_file_test(dirs[d], G_FILE_TEST_IS_DIR))
      cli_bad_input("%s: %s is not a directory", where, dirs[d]);
    sweeps[d] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                      (GDestroyNotify)experiment_free);
    char *pdir = g_build_filename(dirs[d], "points", NULL);
    GDir *dir = g_dir_open(pdir, 0, NULL);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (dir && (name = g_dir_read_name(dir)))
      if (g_str_has_suffix(name, ".sweep"))
        g_ptr_array_add(names, g_strdup(name));
    if (dir)
      g_dir_close(dir);
    for (guint i = 0; i < names->len; i++) {
      char *file = g_build_filename(pdir, g_ptr_array_index(names, i), NULL);
      char *id, *err;
      struct experiment *e = manifest_load(file, &id, &err);
      if (!e)
        cli_bad_input("%s: %s %s", where, file, err);
      g_free(file);
      guint seen = GPOINTER_TO_UINT(g_hash_table_lookup(count, id));
      g_hash_table_replace(count, g_strdup(id), GUINT_TO_POINTER(seen + 1));
      g_hash_table_insert(sweeps[d], id, e);
    }
    if (!names->len)
      cli_bad_input("%s: %s holds no sweep (no %s/*.sweep): not a result "
                    "directory of gradsim run",
                    where, dirs[d], pdir);
    g_ptr_array_free(names, TRUE);
    g_free(pdir);
  }
  /* The sweep: the one every directory holds, or --sweep. */
  GPtrArray *common = g_ptr_array_new();
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, count);
  while (g_hash_table_iter_next(&it, &key, &val))
    if (GPOINTER_TO_UINT(val) == (guint)ndirs &&
        (!want || !strcmp(want, key)))
      g_ptr_array_add(common, key);
  if (common->len != 1) {
    GString *s = g_string_new(NULL);
    for (int d = 0; d < ndirs; d++) {
      g_string_append_printf(s, "%s%s holds", d ? "; " : "", dirs[d]);
      GList *ids = g_list_sort(g_hash_table_get_keys(sweeps[d]), by_name);
      for (GList *l = ids; l; l = l->next) {
        const struct experiment *e = g_hash_table_lookup(sweeps[d], l->data);
        g_string_append_printf(s, "%s sweep %s (%s, %u points)",
                               l != ids ? "," : "", (char *)l->data,
                               e->path, e->points->len);
      }
      g_list_free(ids);
    }
    if (want)
      cli_bad_input("%s: sweep %s is not in every directory: %s", where,
                    want, s->str);
    if (!common->len)
      cli_bad_input("%s: the directories hold no common sweep (points of "
                    "different experiments or --set): %s",
                    where, s->str);
    cli_bad_input("%s: every directory holds several sweeps: %s; choose "
                  "one with --sweep ID",
                  where, s->str);
  }
  const char *id = g_ptr_array_index(common, 0);
  const struct experiment *e = g_hash_table_lookup(sweeps[0], id);
  /* Each point from the first directory that has it. */
  guint total = e->points->len;
  int *src = g_new(int, total);
  GArray *missing = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < total; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    char *row = NULL;
    src[i] = -1;
    for (int d = 0; d < ndirs; d++) {
      char *path = point_file(dirs[d], p, ".row"), *text = NULL;
      if (g_file_get_contents(path, &text, NULL, NULL)) {
        if (src[i] < 0) {
          src[i] = d;
          row = text;
          text = NULL;
        } else if (strcmp(row, text) != 0) {
          cli_bad_input("%s: point %u (%s) differs between %s and %s "
                        "(simulated by different versions of gradsim?)",
                        where, i, p->hash, dirs[src[i]], dirs[d]);
        }
      }
      g_free(text);
      g_free(path);
    }
    if (src[i] < 0) {
      g_array_append_val(missing, i);
    } else {
      GPtrArray *f = csv_split(row);
      if (f->len + 1 != NCOLS)
        cli_bad_input("%s: point %u (%s) in %s has %u result fields, this "
                      "gradsim writes %d (simulated by another version?)",
                      where, i, p->hash, dirs[src[i]], f->len, NCOLS - 1);
      g_ptr_array_unref(f);
    }
    g_free(row);
  }
  if (missing->len) {
    char *list = ranges_text(missing);
    GString *d = g_string_new(NULL);
    for (int k = 0; k < ndirs; k++)
      g_string_append_printf(d, "%s%s", k ? ", " : "", dirs[k]);
    cli_bad_input("%s: %u of %u points of sweep %s (%s) are in none of %s: "
                  "%s (run them with gradsim run %s --point I)",
                  where, missing->len, total, id, e->path, d->str, list,
                  e->path);
  }
  /* Copy the points into OUTDIR/points, then the outputs. */
  char *pdir = g_build_filename(out, "points", NULL);
  if (g_mkdir_with_parents(pdir, 0755) != 0)
    cli_env_failure("%s: cannot create %s: %s", where, pdir,
                    g_strerror(errno));
  for (guint i = 0; i < total; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    char *from_dir = g_build_filename(dirs[src[i]], "points", NULL);
    bool same = same_dir(from_dir, pdir);
    g_free(from_dir);
    for (size_t k = 0; k < G_N_ELEMENTS(POINT_EXTS) && !same; k++) {
      char *from = point_file(dirs[src[i]], p, POINT_EXTS[k]);
      char *to = point_file(out, p, POINT_EXTS[k]);
      char *text = NULL;
      gsize len = 0;
      GError *ge = NULL;
      if (g_file_get_contents(from, &text, &len, NULL) &&
          !g_file_set_contents(to, text, (gssize)len, &ge))
        cli_env_failure("%s: %s", where, ge->message);
      g_free(text);
      g_free(from);
      g_free(to);
    }
  }
  write_manifest(out, e);
  assemble(out, e, do_plot, quiet);
  g_free(pdir);
  g_array_free(missing, TRUE);
  g_free(src);
  g_ptr_array_free(common, TRUE);
  g_hash_table_destroy(count);
  for (int d = 0; d < ndirs; d++)
    g_hash_table_destroy(sweeps[d]);
  g_free(sweeps);
  g_free(want);
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
