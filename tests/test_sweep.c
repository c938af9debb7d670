/* tests/test_sweep.c: the sweep layer (sweep/sweep.h): CSV fields as the
 * result files write and read them, files written all or nothing, a
 * sweep's points run in processes and joined in sweep order, resuming,
 * stopping, and merges of a sweep split over directories, with their
 * manifests read back. The points are simulated for real, but are tiny
 * (a ring of 2 to 5 workers, two iterations, no payload: milliseconds
 * each). Every directory is a fresh one under the test's own
 * g_dir_make_tmp directory, removed when the test ends. */
#include "estimate.h"
#include "sweep.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* Four points, nodes = 2..5, in this order. */
static const char SWEEP[] =
    "# Does a ring's exchange grow with its workers?\n"
    "[platform]\nnodes = 2, 3, 4, 5\nideal = true\n"
    "[model]\nname = synthetic\nparams = 1000\n"
    "[exchange]\nalgorithm = ring\npayload = none\n"
    "[training]\niterations = 2\n";

static struct experiment *load_named(const char *path, const char *text,
                                     char **sets) {
  char *err = NULL;
  struct experiment *e =
      experiment_load_data(path, text, strlen(text), sets, 0, &err);
  cr_assert_not_null(e, "%s", err ? err : "?");
  return e;
}

static struct experiment *load(const char *text, char **sets) {
  return load_named("sweep.ini", text, sets);
}

static const struct point *point(const struct experiment *e, guint i) {
  return g_ptr_array_index(e->points, i);
}

static void rm_tree(const char *path);

/* Each test's directories are under a fresh one of its own, removed when
 * the test ends, also when it fails. */
static char *Root;

static void setup(void) {
  Root = g_dir_make_tmp("gssweep-XXXXXX", NULL);
  cr_assert_not_null(Root);
}

static void teardown(void) {
  rm_tree(Root);
  g_free(Root);
}

TestSuite(sweep, .init = setup, .fini = teardown);

/* A fresh directory (g_free). */
static char *tmp_dir(void) {
  char *d = g_build_filename(Root, "dXXXXXX", NULL);
  cr_assert_not_null(g_mkdtemp(d), "%s", d);
  return d;
}

static void rm_tree(const char *path) {
  GDir *d = g_dir_open(path, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      char *p = g_build_filename(path, name, NULL);
      rm_tree(p);
      g_free(p);
    }
    g_dir_close(d);
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

/* DIR/NAME (g_free). */
static char *in(const char *dir, const char *name) {
  return g_build_filename(dir, name, NULL);
}

/* The contents of DIR/NAME, or NULL (g_free). */
static char *slurp(const char *dir, const char *name) {
  char *path = in(dir, name), *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    text = NULL;
  g_free(path);
  return text;
}

static void spill(const char *dir, const char *name, const char *text) {
  char *path = in(dir, name);
  cr_assert(g_file_set_contents(path, text, -1, NULL), "%s", path);
  g_free(path);
}

static bool exists(const char *dir, const char *name) {
  char *path = in(dir, name);
  bool ok = g_file_test(path, G_FILE_TEST_EXISTS);
  g_free(path);
  return ok;
}

/* "points/HASH.EXT" of point I (g_free). */
static char *pfile(const struct experiment *e, guint i, const char *ext) {
  return g_strdup_printf("points/%s%s", point(e, i)->hash, ext);
}

static char *point_text(const char *dir, const struct experiment *e, guint i,
                        const char *ext) {
  char *name = pfile(e, i, ext), *text = slurp(dir, name);
  g_free(name);
  return text;
}

static void point_spill(const char *dir, const struct experiment *e, guint i,
                        const char *ext, const char *text) {
  char *name = pfile(e, i, ext);
  spill(dir, name, text);
  g_free(name);
}

/* The number of entries in DIR/points. */
static guint entries(const char *dir) {
  char *pdir = in(dir, "points");
  GDir *d = g_dir_open(pdir, 0, NULL);
  cr_assert_not_null(d, "%s", pdir);
  guint n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  g_free(pdir);
  return n;
}

/* The name of the one manifest in DIR/points (g_free). */
static char *manifest_name(const char *dir) {
  char *pdir = in(dir, "points");
  GDir *d = g_dir_open(pdir, 0, NULL);
  cr_assert_not_null(d, "%s", pdir);
  char *found = NULL;
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (g_str_has_suffix(name, ".sweep")) {
      cr_assert_null(found, "%s holds two manifests", dir);
      found = g_strconcat("points/", name, NULL);
    }
  g_dir_close(d);
  g_free(pdir);
  cr_assert_not_null(found, "%s holds no manifest", dir);
  return found;
}

/* Copy the files of FROM/points into TO/points. */
static void copy_points(const char *from, const char *to) {
  char *fdir = in(from, "points"), *tdir = in(to, "points");
  cr_assert_eq(g_mkdir_with_parents(tdir, 0755), 0);
  GDir *d = g_dir_open(fdir, 0, NULL);
  cr_assert_not_null(d);
  const char *name;
  while ((name = g_dir_read_name(d))) {
    char *text = NULL, *src = in(fdir, name), *dst = in(tdir, name);
    gsize len = 0;
    cr_assert(g_file_get_contents(src, &text, &len, NULL));
    cr_assert(g_file_set_contents(dst, text, (gssize)len, NULL));
    g_free(text);
    g_free(src);
    g_free(dst);
  }
  g_dir_close(d);
  g_free(fdir);
  g_free(tdir);
}

/* What the progress callback saw. RAISE_SIG: raised once the first point
 * is done. HOLD: a FIFO a held point waits at, opened and closed (the
 * point released) on the first tick that shows the point's whole run
 * simulated; TICKS, SEEN: the ticks, and that tick's view of the point. */
struct progress {
  unsigned calls, first, last, total;
  bool stopped, backwards;
  int raise_sig;
  const char *hold;
  unsigned ticks;
  bool released;
  struct sweep_running seen;
};

static void record(const struct sweep_progress *sp, void *ctx) {
  struct progress *p = ctx;
  if (sp->tick) {
    p->ticks++;
    cr_assert_eq(sp->done, p->last, "a tick changed the points done");
    const struct sweep_running *r = sp->nrunning ? &sp->running[0] : NULL;
    /* Point 2, 4 workers in a ring: its run is over when worker 0 has
     * done its iterations and every worker has sent its 2 (p - 1)
     * messages a bucket. */
    if (p->hold && !p->released && r && r->index == 2 &&
        r->at.iterations_total > 0 &&
        r->at.iterations == r->at.iterations_total &&
        r->at.messages == (double)(2 * 3 * 4 * r->at.buckets_total)) {
      p->seen = *r;
      int fd = open(p->hold, O_WRONLY);
      cr_assert_geq(fd, 0);
      close(fd);
      p->released = true;
    }
    return;
  }
  if (p->calls++ == 0)
    p->first = sp->done;
  else if (sp->done < p->last)
    p->backwards = true;
  p->last = sp->done;
  p->total = sp->total;
  p->stopped |= sp->stopped;
  if (p->raise_sig && sp->done == 1 && !sp->stopped)
    raise(p->raise_sig);
}

static struct sweep_opts opts(const char *out, unsigned jobs,
                              struct progress *pr) {
  struct sweep_opts o = {
      .out = out, .jobs = jobs, .progress = pr ? record : NULL, .ctx = pr};
  return o;
}

/* sweep_run of E into OUT; its report in *REP. */
static void run_ok(const struct experiment *e, const char *out, unsigned jobs,
                   struct progress *pr, struct sweep_report *rep) {
  struct sweep_opts o = opts(out, jobs, pr);
  char *err = NULL;
  int rc = sweep_run(e, &o, rep, &err);
  cr_assert_eq(rc, 0, "sweep_run: %d %s", rc, err ? err : "");
}

/* Point I of E alone into OUT; whether it was done already. */
static bool run_point_ok(const struct experiment *e, guint i, const char *out) {
  struct sweep_opts o = opts(out, 1, NULL);
  bool was_done = false;
  char *err = NULL;
  int rc = sweep_run_point(e, i, &o, &was_done, &err);
  cr_assert_eq(rc, 0, "sweep_run_point %u: %d %s", i, rc, err ? err : "");
  return was_done;
}

/* TEXT's lines each prefixed with "I," (what the joined files hold). */
static void prefixed(GString *s, guint i, const char *text) {
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      g_string_append_printf(s, "%u,%s\n", i, *l);
  g_strfreev(lines);
}

static const char *const JOINED[] = {"runs.csv", "iterations.csv", "links.csv",
                                     "nccl.csv", "config.txt"};

/* The joined files of A and B are equal, byte for byte. */
static void same_outputs(const char *a, const char *b) {
  for (size_t k = 0; k < G_N_ELEMENTS(JOINED); k++) {
    char *x = slurp(a, JOINED[k]), *y = slurp(b, JOINED[k]);
    cr_assert_not_null(x, "%s/%s", a, JOINED[k]);
    cr_assert_not_null(y, "%s/%s", b, JOINED[k]);
    cr_assert_str_eq(x, y, "%s differs between %s and %s", JOINED[k], a, b);
    g_free(x);
    g_free(y);
  }
}

/* ---- CSV fields ---------------------------------------------------------- */

Test(sweep, csv_quoting_round_trip) {
  static const struct {
    const char *value, *written;
  } cases[] = {
      {"", ""},
      {"plain", "plain"},
      {" padded ", " padded "},
      {"a,b", "\"a,b\""},
      {",", "\",\""},
      {"say \"hi\"", "\"say \"\"hi\"\"\""},
      {"\"", "\"\"\"\""},
      {"x\"", "\"x\"\"\""},
      {"two\nlines", "\"two\nlines\""},
      {"1e+10", "1e+10"},
  };
  GString *line = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GString *one = g_string_new(NULL);
    csv_text(one, cases[i].value);
    cr_expect_str_eq(one->str, cases[i].written, "case %zu", i);
    g_string_free(one, TRUE);
    if (i)
      g_string_append_c(line, ',');
    csv_text(line, cases[i].value);
  }
  GPtrArray *f = csv_split(line->str);
  cr_assert_eq(f->len, G_N_ELEMENTS(cases), "%u fields in %s", f->len,
               line->str);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    cr_expect_str_eq(g_ptr_array_index(f, i), cases[i].value, "field %zu", i);
  g_ptr_array_unref(f);
  g_string_free(line, TRUE);
}

Test(sweep, csv_split_empty_fields) {
  static const struct {
    const char *line;
    guint n;
    const char *fields[5];
  } cases[] = {
      {"", 1, {""}},
      {",", 2, {"", ""}},
      {"a,,b,", 4, {"a", "", "b", ""}},
      {"\"\",x", 2, {"", "x"}},
      {"x,\"a\"\"\"", 2, {"x", "a\""}},
      /* Unterminated: what is there, nothing read past the end. */
      {"x,\"open", 2, {"x", "open"}},
      {"x,\"", 2, {"x", ""}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GPtrArray *f = csv_split(cases[i].line);
    cr_expect_eq(f->len, cases[i].n, "'%s': %u fields", cases[i].line,
                 f->len);
    for (guint k = 0; k < f->len && k < cases[i].n; k++)
      cr_expect_str_eq(g_ptr_array_index(f, k), cases[i].fields[k],
                       "'%s' field %u", cases[i].line, k);
    g_ptr_array_unref(f);
  }
}

/* ---- files written all or nothing ------------------------------------- */

Test(sweep, outputs_all_or_nothing) {
  char *dir = tmp_dir();
  char *a = in(dir, "a.txt"), *b = in(dir, "missing/b.txt");
  char *c = in(dir, "c.bin"), *d = in(dir, "d.txt");
  char *err = NULL;

  /* The second file cannot be written: the first is removed again. */
  outputs *o = outputs_new();
  outputs_add(o, a, g_strdup("A"), 1);
  outputs_add(o, b, g_strdup("B"), 1);
  cr_assert_eq(outputs_commit(o, &err), -1);
  cr_assert_not_null(err);
  cr_expect(strstr(err, "b.txt") && strstr(err, "(nothing was written)"),
            "%s", err);
  cr_expect(!g_file_test(a, G_FILE_TEST_EXISTS), "a.txt was left");
  g_free(err);
  err = NULL;

  /* Every file written with its exact bytes (a NUL inside too). */
  o = outputs_new();
  outputs_add(o, a, g_strdup("A\n"), 2);
  outputs_add(o, c, g_memdup2("x\0y", 3), 3);
  cr_assert_eq(outputs_commit(o, &err), 0, "%s", err ? err : "");
  char *text = NULL;
  gsize len = 0;
  cr_assert(g_file_get_contents(c, &text, &len, NULL));
  cr_expect(len == 3 && memcmp(text, "x\0y", 3) == 0);
  g_free(text);
  cr_assert(g_file_get_contents(a, &text, NULL, NULL));
  cr_expect_str_eq(text, "A\n");
  g_free(text);

  /* Freed without a commit: nothing written. */
  o = outputs_new();
  outputs_add(o, d, g_strdup("D"), 1);
  outputs_free(o);
  outputs_free(NULL);
  cr_expect(!g_file_test(d, G_FILE_TEST_EXISTS));

  g_free(a);
  g_free(b);
  g_free(c);
  g_free(d);
  rm_tree(dir);
  g_free(dir);
}

/* ---- running a sweep ----------------------------------------------------- */

Test(sweep, run_joins_points_in_sweep_order) {
  struct experiment *e = load(SWEEP, NULL);
  cr_assert_eq(e->points->len, 4);
  char *dir = tmp_dir(), *out = in(dir, "out"); /* created by the run */
  struct progress pr = {0};
  struct sweep_report rep;
  run_ok(e, out, 2, &pr, &rep);

  /* runs.csv: the header, then point I's row prefixed with I. */
  char *runs = slurp(out, "runs.csv");
  cr_assert_not_null(runs);
  char **lines = g_strsplit(runs, "\n", -1);
  cr_assert_eq(g_strv_length(lines), 6, "%s", runs); /* and the last "" */
  cr_assert(g_str_has_prefix(lines[0], "point,model,nodes,aggregators,"),
            "%s", lines[0]);
  GPtrArray *header = csv_split(lines[0]);
  guint oracle = 0;
  while (oracle < header->len &&
         strcmp(g_ptr_array_index(header, oracle), "oracle"))
    oracle++;
  cr_assert_lt(oracle, header->len, "no oracle column: %s", lines[0]);
  GString *iters = g_string_new(NULL), *links = g_string_new(NULL),
          *config = g_string_new(NULL);
  for (guint i = 0; i < 4; i++) {
    char *row = point_text(out, e, i, ".row");
    cr_assert_not_null(row, "point %u has no row", i);
    char *want = g_strdup_printf("%u,%s", i, row);
    want[strlen(want) - 1] = '\0'; /* its newline */
    cr_expect_str_eq(lines[i + 1], want);
    GPtrArray *f = csv_split(lines[i + 1]);
    cr_assert_eq(f->len, header->len, "row %u", i);
    char nodes[8];
    snprintf(nodes, sizeof nodes, "%u", i + 2);
    cr_expect_str_eq(g_ptr_array_index(f, 2), nodes, "row %u", i);
    cr_expect_str_eq(g_ptr_array_index(f, 1), "synthetic");
    cr_expect_str_eq(g_ptr_array_index(f, oracle), "na");
    g_ptr_array_unref(f);
    g_free(want);
    g_free(row);
    char *it = point_text(out, e, i, ".iter");
    char *ln = point_text(out, e, i, ".links");
    cr_assert(it && *it && ln && *ln, "point %u: iterations, links", i);
    prefixed(iters, i, it);
    prefixed(links, i, ln);
    g_free(it);
    g_free(ln);
    g_string_append_printf(config, "# point %u (%s)\n%s\n", i,
                           point(e, i)->hash, point(e, i)->config);
  }
  g_ptr_array_unref(header);
  g_strfreev(lines);

  /* The other joined files, in sweep order likewise. */
  char *text = slurp(out, "iterations.csv");
  cr_assert(text && g_str_has_prefix(text, "point,iteration,worker,"));
  cr_expect_str_eq(strchr(text, '\n') + 1, iters->str);
  g_free(text);
  text = slurp(out, "links.csv");
  cr_assert(text && g_str_has_prefix(text, "point,link,bytes,"));
  cr_expect_str_eq(strchr(text, '\n') + 1, links->str);
  g_free(text);
  text = slurp(out, "config.txt");
  cr_expect_str_eq(text, config->str);
  g_free(text);

  /* The report: the swept key and a row per point; no notes. */
  cr_assert(g_str_has_prefix(rep.table, "point nodes "), "%s", rep.table);
  lines = g_strsplit(rep.table, "\n", -1);
  cr_assert_eq(g_strv_length(lines), 6, "%s", rep.table);
  for (guint i = 0; i < 4; i++) {
    char *want = g_strdup_printf("%-5u %-5u ", i, i + 2);
    cr_expect(g_str_has_prefix(lines[i + 1], want), "'%s'", lines[i + 1]);
    g_free(want);
  }
  g_strfreev(lines);
  cr_expect_str_eq(rep.notes, "");
  cr_expect_str_eq(rep.warnings, "");

  /* Progress from 0 to 4 of 4, never backwards, never stopped. */
  cr_expect_eq(pr.first, 0);
  cr_expect_eq(pr.last, 4);
  cr_expect_eq(pr.total, 4);
  cr_expect_eq(pr.calls, 5);
  cr_expect(!pr.stopped && !pr.backwards);

  /* Nothing but each point's five files and the manifest. */
  static const char *const exts[] = {".iter", ".links", ".nccl", ".note",
                                     ".row"};
  for (guint i = 0; i < 4; i++)
    for (size_t k = 0; k < G_N_ELEMENTS(exts); k++) {
      char *name = pfile(e, i, exts[k]);
      cr_expect(exists(out, name), "%s", name);
      g_free(name);
    }
  char *m = manifest_name(out);
  g_free(m);
  cr_expect_eq(entries(out), 4 * G_N_ELEMENTS(exts) + 1);

  sweep_report_clear(&rep);
  g_string_free(iters, TRUE);
  g_string_free(links, TRUE);
  g_string_free(config, TRUE);
  g_free(runs);
  experiment_free(e);
  rm_tree(dir);
  g_free(out);
  g_free(dir);
}

/* A finished point is never run again (its row is kept as it is, even
 * edited); a row of another version's columns, or a point without its
 * row, is simulated again. */
Test(sweep, resume_runs_only_missing_points) {
  struct experiment *e = load(SWEEP, NULL);
  char *dir = tmp_dir();
  struct sweep_report rep;
  run_ok(e, dir, 1, NULL, &rep);
  sweep_report_clear(&rep);
  char *before = slurp(dir, "runs.csv");
  char *row1 = point_text(dir, e, 1, ".row");
  char *row2 = point_text(dir, e, 2, ".row");
  cr_assert(before && row1 && row2);

  /* Point 1: edited, same columns; point 2: an older gradsim's row;
   * point 3: its row gone (a killed run's leftovers stay). */
  char *edited = g_strdup(row1);
  memcpy(edited, "synthetiX", 9);
  point_spill(dir, e, 1, ".row", edited);
  point_spill(dir, e, 2, ".row", "synthetic,3,0\n");
  char *row3 = pfile(e, 3, ".row"), *path = in(dir, row3);
  cr_assert_eq(g_unlink(path), 0);
  g_free(path);
  g_free(row3);

  struct progress pr = {0};
  run_ok(e, dir, 1, &pr, &rep);
  sweep_report_clear(&rep);
  cr_expect_eq(pr.first, 2, "points done at the start: %u", pr.first);
  cr_expect_eq(pr.last, 4);
  char *after = slurp(dir, "runs.csv");
  char *again = point_text(dir, e, 1, ".row");
  cr_expect_str_eq(again, edited, "point 1 was simulated again");
  g_free(again);
  again = point_text(dir, e, 2, ".row");
  cr_expect_str_eq(again, row2, "point 2's old row was not simulated again");
  g_free(again);
  /* runs.csv: as before but for point 1's edit. */
  char *want = g_strdup(before);
  char *at = strstr(want, "\n1,synthetic,");
  cr_assert_not_null(at);
  memcpy(at + 3, "synthetiX", 9);
  cr_expect_str_eq(after, want);
  g_free(want);
  g_free(after);
  g_free(edited);
  g_free(row1);
  g_free(row2);
  g_free(before);
  experiment_free(e);
  rm_tree(dir);
  g_free(dir);
}

Test(sweep, list_and_run_one_point) {
  struct experiment *e = load(SWEEP, NULL);
  char *list = sweep_list_points(e);
  GString *want = g_string_new(NULL);
  for (guint i = 0; i < 4; i++)
    g_string_append_printf(want, "%u\t%s\tplatform.nodes=%u\n", i,
                           point(e, i)->hash, i + 2);
  cr_expect_str_eq(list, want->str);
  g_string_free(want, TRUE);
  g_free(list);

  char *dir = tmp_dir();
  cr_expect(!run_point_ok(e, 2, dir), "point 2 was done before it ran");
  cr_expect(run_point_ok(e, 2, dir), "point 2 is not done after it ran");
  for (guint i = 0; i < 4; i++) {
    char *row = pfile(e, i, ".row");
    cr_expect_eq(exists(dir, row), i == 2, "%s", row);
    g_free(row);
  }
  cr_expect(!exists(dir, "runs.csv"), "one point joined outputs");
  char *m = manifest_name(dir); /* written before the point ran */
  g_free(m);
  experiment_free(e);
  rm_tree(dir);
  g_free(dir);
}

/* ---- stopping a sweep ------------------------------------------------------
 * Points 1 to 3 are held (GRADSIM_TEST_HOLD: their processes wait at a
 * FIFO nobody opens, after simulating and before writing their result
 * files); the progress callback raises SIG once point 0 is done, while
 * point 1 is running (--jobs 1). */
static void stop_with(int sig) {
  struct experiment *e = load(SWEEP, NULL);
  char *dir = tmp_dir(), *hold = in(dir, "hold"), *out = in(dir, "out");
  char *ref = in(dir, "ref");
  cr_assert_eq(g_mkdir(hold, 0755), 0);
  for (guint i = 1; i < 4; i++) {
    char *fifo = in(hold, point(e, i)->hash);
    cr_assert_eq(mkfifo(fifo, 0600), 0, "%s", fifo);
    g_free(fifo);
  }
  cr_assert_eq(setenv("GRADSIM_TEST_HOLD", hold, 1), 0);
  struct progress pr = {.raise_sig = sig};
  struct sweep_opts o = opts(out, 1, &pr);
  struct sweep_report rep;
  char *err = NULL;
  int rc = sweep_run(e, &o, &rep, &err);
  unsetenv("GRADSIM_TEST_HOLD");
  cr_assert_eq(rc, 128 + sig, "status %d: %s", rc, err ? err : "");
  cr_expect_str_eq(err, "interrupted: 1 of 4 points done; run again to "
                        "finish");
  g_free(err);
  cr_expect(pr.stopped, "progress was not told of the stop");
  cr_expect_eq(pr.last, 1);
  /* Point 0's files; none of point 1's, which was running; no outputs. */
  static const char *const exts[] = {".iter", ".links", ".nccl", ".note",
                                     ".row",  ".work",  ".err"};
  for (size_t k = 0; k < G_N_ELEMENTS(exts); k++) {
    char *name = pfile(e, 0, exts[k]);
    cr_expect_eq(exists(out, name), k < 5, "%s", name);
    g_free(name);
    name = pfile(e, 1, exts[k]);
    cr_expect(!exists(out, name), "%s of the stopped point", name);
    g_free(name);
  }
  for (size_t k = 0; k < G_N_ELEMENTS(JOINED); k++)
    cr_expect(!exists(out, JOINED[k]), "%s written", JOINED[k]);

  /* Resumed, it ends as an uninterrupted sweep does. */
  run_ok(e, out, 1, NULL, &rep);
  sweep_report_clear(&rep);
  run_ok(e, ref, 2, NULL, &rep);
  sweep_report_clear(&rep);
  same_outputs(ref, out);
  experiment_free(e);
  rm_tree(dir);
  g_free(hold);
  g_free(out);
  g_free(ref);
  g_free(dir);
}

/* A sweep's directories with point I held (GRADSIM_TEST_HOLD): DIR, its
 * HOLD directory with the point's FIFO, and OUT for the results. */
struct held {
  char *dir, *hold, *out, *fifo;
};

/* Point I's FIFO in HOLD, at which its process waits. */
static char *hold_fifo(const char *hold, const struct experiment *e, guint i) {
  char *fifo = in(hold, point(e, i)->hash);
  cr_assert_eq(mkfifo(fifo, 0600), 0, "%s", fifo);
  return fifo;
}

static struct held hold_point(const struct experiment *e, guint i) {
  struct held h;
  h.dir = tmp_dir();
  h.hold = in(h.dir, "hold");
  h.out = in(h.dir, "out");
  cr_assert_eq(g_mkdir(h.hold, 0755), 0);
  h.fifo = hold_fifo(h.hold, e, i);
  cr_assert_eq(setenv("GRADSIM_TEST_HOLD", h.hold, 1), 0);
  return h;
}

static void held_clear(struct held *h) {
  unsetenv("GRADSIM_TEST_HOLD");
  rm_tree(h->dir);
  g_free(h->fifo);
  g_free(h->hold);
  g_free(h->out);
  g_free(h->dir);
}

/* Progress within a point: a held point (simulated, its files not yet
 * written) shows its whole run, counted by the engine in memory shared
 * with the sweep, to the timer's calls (released only then: a count
 * that never reaches the run's messages times the test out); released,
 * the sweep ends as usual. */
Test(sweep, progress_within_a_point, .timeout = 60) {
  struct experiment *e = load(SWEEP, NULL);
  struct held h = hold_point(e, 2);
  struct progress pr = {.hold = h.fifo};
  struct sweep_opts o = opts(h.out, 1, &pr);
  o.tick_s = 0.01;
  struct sweep_report rep;
  char *err = NULL;
  int rc = sweep_run(e, &o, &rep, &err);
  cr_assert_eq(rc, 0, "%s", err ? err : "");
  cr_expect(pr.released, "no tick saw point 2 simulated (%u ticks)",
            pr.ticks);
  cr_expect_eq(pr.seen.index, 2);
  cr_expect_eq(pr.seen.at.iterations_total, 2);
  cr_expect_eq(pr.seen.at.buckets, pr.seen.at.buckets_total);
  cr_expect_gt(pr.seen.at.buckets_total, 0);
  cr_expect_gt(pr.seen.at.sim_s, 0);
  cr_expect_gt(pr.seen.wall_s, 0);
  cr_expect_eq(pr.last, 4);
  sweep_report_clear(&rep);
  held_clear(&h);
  experiment_free(e);
}

/* What a sweep's ticks saw: the most points running at once. HOLD[k]:
 * the FIFOs points 0 and 1 wait at, each released (opened and closed)
 * from the 20th tick on, once its point waits there (a writer's open
 * that does not block succeeds only then): both points stay running
 * until then, so that a tick sees them together if they run together
 * (point 1 unheld could start and end between two ticks). */
struct at_once {
  unsigned ticks, most;
  const char *hold[2];
  bool released[2];
};

static void count_running(const struct sweep_progress *sp, void *ctx) {
  struct at_once *a = ctx;
  if (!sp->tick)
    return;
  a->most = sp->nrunning > a->most ? sp->nrunning : a->most;
  if (++a->ticks < 20)
    return;
  for (int k = 0; k < 2; k++) {
    if (a->released[k])
      continue;
    int fd = open(a->hold[k], O_WRONLY | O_NONBLOCK);
    if (fd < 0) {
      cr_assert_eq(errno, ENXIO, "%s: %s", a->hold[k], g_strerror(errno));
      continue; /* its point not yet waiting */
    }
    close(fd);
    a->released[k] = true;
  }
}

/* Points start only while their estimated memory together fits
 * (sweep_opts memory_bytes): with two jobs and room for one point, no
 * point runs beside point 0, held for 20 ticks; with the default room
 * (60% of this machine's memory), point 1 (held too) does. */
Test(sweep, memory_limits_points_at_once, .timeout = 60) {
  for (int k = 0; k < 2; k++) {
    struct experiment *e = load(SWEEP, NULL);
    struct held h = hold_point(e, 0);
    char *fifo1 = hold_fifo(h.hold, e, 1);
    struct estimate est;
    char *err = NULL;
    cr_assert_eq(estimate_point(point(e, 0), &est, &err), 0, "%s",
                 err ? err : "?");
    struct at_once a = {.hold = {h.fifo, fifo1}};
    struct sweep_opts o = {.out = h.out,
                           .jobs = 2,
                           .progress = count_running,
                           .ctx = &a,
                           .tick_s = 0.01,
                           .memory_bytes = k == 0 ? 1.5 * est.memory_bytes : 0};
    struct sweep_report rep;
    int rc = sweep_run(e, &o, &rep, &err);
    cr_assert_eq(rc, 0, "%s", err ? err : "");
    cr_expect(a.released[0] && a.released[1], "only %u ticks", a.ticks);
    cr_expect_eq(a.most, k == 0 ? 1u : 2u, "%s: %u points at once",
                 k == 0 ? "room for one" : "the default room", a.most);
    sweep_report_clear(&rep);
    g_free(fifo1);
    held_clear(&h);
    experiment_free(e);
  }
}

/* The estimate of a sweep's wall time runs its points as the runner does:
 * in order, JOBS at once, fewer while their memory together would pass
 * the limit, skipping those done. */
Test(sweep, schedule_as_the_runner) {
  const double wall[] = {1, 2, 3, 1};
  const double small[] = {0.4, 0.4, 0.4, 0.4}, large[] = {0.6, 0.6, 0.6, 0.6};
  const bool skip[] = {false, true, false, false};
  /* two slots: 0 and 1 at 0, 2 when 0 ends (1), 3 when 1 ends (2); the
   * last, 2, ends at 4 */
  cr_expect_float_eq(sweep_schedule_s(wall, small, NULL, 4, 2, 1), 4, 1e-12);
  /* one at a time: each point's memory with another's passes 1 */
  cr_expect_float_eq(sweep_schedule_s(wall, large, NULL, 4, 2, 1), 7, 1e-12);
  /* the largest point alone still runs */
  cr_expect_float_eq(sweep_schedule_s(wall, large, NULL, 4, 2, 0.5), 7, 1e-12);
  /* without point 1: 0 and 2 at 0, 3 when 0 ends; 2 ends last, at 3 */
  cr_expect_float_eq(sweep_schedule_s(wall, small, skip, 4, 2, 1), 3, 1e-12);
  /* four slots, memory for two (0.8 of 1) as with two slots; for all */
  cr_expect_float_eq(sweep_schedule_s(wall, small, NULL, 4, 4, 1), 4, 1e-12);
  cr_expect_float_eq(sweep_schedule_s(wall, small, NULL, 4, 4, 2), 3, 1e-12);
  cr_expect_float_eq(sweep_schedule_s(wall, small, NULL, 0, 2, 1), 0, 1e-12);
}

Test(sweep, sigterm_stops_cleanly, .timeout = 60) { stop_with(SIGTERM); }
Test(sweep, sigint_stops_cleanly, .timeout = 60) { stop_with(SIGINT); }

/* A signal ignored when the sweep starts (a background job's SIGINT)
 * stays ignored. */
Test(sweep, ignored_sigint_stays_ignored) {
  struct experiment *e = load(SWEEP, NULL);
  char *dir = tmp_dir();
  signal(SIGINT, SIG_IGN);
  struct progress pr = {.raise_sig = SIGINT};
  struct sweep_report rep;
  run_ok(e, dir, 1, &pr, &rep);
  cr_expect(!pr.stopped);
  cr_expect(exists(dir, "runs.csv"));
  sweep_report_clear(&rep);
  signal(SIGINT, SIG_DFL);
  experiment_free(e);
  rm_tree(dir);
  g_free(dir);
}

/* ---- merging a sweep split over directories ------------------------------ */

static int merge(const char *const *dirs, int n, const char *id,
                 const char *out, struct sweep_report *rep, char **err) {
  struct sweep_opts o = opts(out, 1, NULL);
  *err = NULL;
  return sweep_merge(dirs, n, id, &o, rep, err);
}

static void merge_ok(const char *const *dirs, int n, const char *id,
                     const char *out, struct sweep_report *rep) {
  char *err = NULL;
  int rc = merge(dirs, n, id, out, rep, &err);
  cr_assert_eq(rc, 0, "merge: %d %s", rc, err ? err : "");
}

/* The merge of DIRS is refused (SWEEP_BAD_INPUT) with a one-line message
 * holding WANT, and writes nothing. */
static void refused(const char *const *dirs, int n, const char *id,
                    const char *want) {
  char *parent = tmp_dir(), *out = in(parent, "never");
  struct sweep_report rep;
  char *err = NULL;
  int rc = merge(dirs, n, id, out, &rep, &err);
  cr_assert_eq(rc, SWEEP_BAD_INPUT, "status %d (%s) for '%s'", rc,
               err ? err : "", want);
  cr_assert_not_null(err);
  cr_expect(strstr(err, want), "'%s' not in '%s'", want, err);
  cr_expect(!strchr(err, '\n'), "%s", err);
  cr_expect(!g_file_test(out, G_FILE_TEST_EXISTS), "%s", err);
  g_free(err);
  rm_tree(parent);
  g_free(out);
  g_free(parent);
}

/* Points 0 and 2 in one directory, 1 and 3 in another (two machines):
 * their merge is the whole run, in any order of the directories, also
 * overlapping ones and into one of them; the manifest read back and
 * written again is the same file, its unusual path and question too. */
Test(sweep, merge_of_split_sweep_equals_whole_run) {
  const char *path = "an \"odd\" dir\\name\t\xc3\xa9.ini";
  char *text = g_strconcat("# Does \xe2\x80\x9cit\xe2\x80\x9d hold? Yes.\n",
                           SWEEP + strcspn(SWEEP, "\n") + 1, NULL);
  struct experiment *e = load_named(path, text, NULL);
  cr_assert_str_eq(e->question, "Does \xe2\x80\x9cit\xe2\x80\x9d hold?");
  char *dir = tmp_dir(), *whole = in(dir, "whole"), *a = in(dir, "a"),
       *b = in(dir, "b"), *m = in(dir, "m");
  struct sweep_report ref, rep;
  run_ok(e, whole, 2, NULL, &ref);
  for (guint i = 0; i < 4; i++)
    run_point_ok(e, i, i % 2 ? b : a);
  char *manifest = manifest_name(whole);
  char *want = slurp(whole, manifest);
  cr_assert_not_null(want);
  cr_expect(strstr(want, "\nexperiment an \\\"odd\\\" dir\\\\name\\t"),
            "%s", want);

  const char *orders[][3] = {{a, b}, {b, a}, {a, whole, b}, {whole}};
  const int n[] = {2, 2, 3, 1};
  for (size_t k = 0; k < G_N_ELEMENTS(n); k++) {
    rm_tree(m);
    merge_ok(orders[k], n[k], NULL, m, &rep);
    same_outputs(whole, m);
    cr_expect_str_eq(rep.table, ref.table, "order %zu", k);
    char *got = slurp(m, manifest);
    cr_expect_str_eq(got, want, "order %zu: the manifest", k);
    g_free(got);
    sweep_report_clear(&rep);
  }
  /* Into one of the merged directories. */
  merge_ok((const char *[]){a, b}, 2, NULL, a, &rep);
  sweep_report_clear(&rep);
  same_outputs(whole, a);
  /* The sweep's id chooses it too. */
  char *id = g_strndup(manifest + strlen("points/"), 16);
  rm_tree(m);
  merge_ok((const char *[]){b, a}, 2, id, m, &rep);
  sweep_report_clear(&rep);
  same_outputs(whole, m);

  g_free(id);
  g_free(want);
  g_free(manifest);
  sweep_report_clear(&ref);
  experiment_free(e);
  g_free(text);
  rm_tree(dir);
  g_free(whole);
  g_free(a);
  g_free(b);
  g_free(m);
  g_free(dir);
}

/* What a merge refuses, before it writes anything: directories that are
 * none or hold no sweep, missing points, points that differ, rows of
 * another version's columns, no common sweep or several. */
Test(sweep, merge_refuses_bad_directories) {
  struct experiment *e = load(SWEEP, NULL);
  char *sets[] = {"platform.nodes=2,3", NULL};
  struct experiment *other = load(SWEEP, sets);
  char *dir = tmp_dir(), *whole = in(dir, "whole"), *a = in(dir, "a"),
       *c = in(dir, "c"), *d = in(dir, "d"), *both = in(dir, "both"),
       *t = in(dir, "t"), *f = in(dir, "f"), *empty = in(dir, "empty");
  struct sweep_report rep;
  run_ok(e, whole, 2, NULL, &rep);
  sweep_report_clear(&rep);
  run_point_ok(e, 0, a);
  run_point_ok(e, 2, a);
  run_point_ok(e, 0, c);
  run_ok(other, d, 2, NULL, &rep);
  sweep_report_clear(&rep);
  run_point_ok(e, 0, both);
  run_point_ok(other, 0, both);
  char *me = manifest_name(whole), *mo = manifest_name(d);
  char *ide = g_strndup(me + strlen("points/"), 16);
  char *ido = g_strndup(mo + strlen("points/"), 16);
  char *want;

  /* Not result directories. */
  char *runs = in(whole, "runs.csv"), *nope = in(dir, "nope");
  want = g_strdup_printf("%s is not a directory", runs);
  refused((const char *[]){runs}, 1, NULL, want);
  g_free(want);
  want = g_strdup_printf("%s is not a directory", nope);
  refused((const char *[]){whole, nope}, 2, NULL, want);
  g_free(want);
  cr_assert_eq(g_mkdir(empty, 0755), 0);
  want = g_strdup_printf("%s holds no sweep (no %s/points/*.sweep): not a "
                         "result directory of gradsim run",
                         empty, empty);
  refused((const char *[]){empty}, 1, NULL, want);
  g_free(want);

  /* Missing points, as ranges. */
  want = g_strdup_printf("2 of 4 points of sweep %s (sweep.ini) are in none "
                         "of %s: 1, 3 (run them with gradsim run sweep.ini "
                         "--point I)",
                         ide, a);
  refused((const char *[]){a}, 1, NULL, want);
  g_free(want);
  want = g_strdup_printf("3 of 4 points of sweep %s (sweep.ini) are in none "
                         "of %s, %s: 1-3 (",
                         ide, c, c);
  refused((const char *[]){c, c}, 2, NULL, want);
  g_free(want);

  /* A point whose rows differ: simulated by another gradsim. */
  copy_points(whole, t);
  char *row = point_text(t, e, 1, ".row");
  memcpy(row, "synthetiX", 9);
  point_spill(t, e, 1, ".row", row);
  g_free(row);
  want = g_strdup_printf("point 1 (%s) differs between %s and %s "
                         "(simulated by different versions of gradsim?)",
                         point(e, 1)->hash, whole, t);
  refused((const char *[]){whole, t}, 2, NULL, want);
  g_free(want);

  /* A row of another version's columns, in the only directory with it
   * (a row is runs.csv's without the point column). */
  run_point_ok(e, 1, f);
  run_point_ok(e, 3, f);
  point_spill(f, e, 1, ".row", "synthetic,3,0\n");
  char *head = slurp(whole, "runs.csv");
  head[strcspn(head, "\n")] = '\0';
  GPtrArray *columns = csv_split(head);
  want = g_strdup_printf("point 1 (%s) in %s has 3 result fields, this "
                         "gradsim writes %u (simulated by another version?)",
                         point(e, 1)->hash, f, columns->len - 1);
  g_ptr_array_unref(columns);
  g_free(head);
  refused((const char *[]){a, f}, 2, NULL, want);
  g_free(want);

  /* No common sweep; several; a chosen one. */
  want = g_strdup_printf("the directories hold no common sweep (points of "
                         "different experiments or --set): %s holds sweep "
                         "%s (sweep.ini, 4 points); %s holds sweep %s "
                         "(sweep.ini, 2 points)",
                         whole, ide, d, ido);
  refused((const char *[]){whole, d}, 2, NULL, want);
  g_free(want);
  refused((const char *[]){both}, 1, NULL,
          "every directory holds several sweeps: ");
  refused((const char *[]){both}, 1, NULL, "; choose one with --sweep ID");
  want = g_strdup_printf("sweep 0123456789abcdef is not in every directory: "
                         "%s holds",
                         both);
  refused((const char *[]){both}, 1, "0123456789abcdef", want);
  g_free(want);
  want = g_strdup_printf("1 of 2 points of sweep %s (sweep.ini) are in none "
                         "of %s: 1 (",
                         ido, both);
  refused((const char *[]){both}, 1, ido, want);
  g_free(want);
  /* The sweep every directory holds is chosen without --sweep. */
  char *m = in(dir, "m");
  merge_ok((const char *[]){both, whole}, 2, NULL, m, &rep);
  sweep_report_clear(&rep);
  same_outputs(whole, m);
  g_free(m);

  g_free(runs);
  g_free(nope);
  g_free(ide);
  g_free(ido);
  g_free(me);
  g_free(mo);
  experiment_free(e);
  experiment_free(other);
  rm_tree(dir);
  g_free(whole);
  g_free(a);
  g_free(c);
  g_free(d);
  g_free(both);
  g_free(t);
  g_free(f);
  g_free(empty);
  g_free(dir);
}

/* Manifests that are not one, or do not match themselves, are refused
 * naming the file. BAD(text of a good manifest) gives the file's text. */
static void bad_manifest(const char *good_dir, const char *manifest,
                         char *(*bad)(const char *), const char *want) {
  char *dir = tmp_dir();
  copy_points(good_dir, dir);
  char *text = slurp(dir, manifest);
  char *edited = bad(text);
  spill(dir, manifest, edited);
  char *path = in(dir, manifest);
  char *w = g_strdup_printf("%s %s", path, want);
  refused((const char *[]){dir}, 1, NULL, w);
  g_free(w);
  g_free(path);
  g_free(edited);
  g_free(text);
  rm_tree(dir);
  g_free(dir);
}

static char *replace(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  cr_assert_not_null(at, "no '%s' in the manifest", from);
  return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to,
                         at + strlen(from));
}

static char *other_version(const char *t) {
  return replace(t, "gradsim-sweep 1\n", "gradsim-sweep 2\n");
}
static char *edited_config(const char *t) {
  return replace(t, "\nnodes = 2\n", "\nnodes = 9\n");
}
static char *edited_id(const char *t) {
  return replace(t, "\nid ", "\nid 0");
}
/* T up to where NEEDLE starts, less DROP bytes. */
static char *cut(const char *t, const char *needle, size_t drop) {
  const char *at = strstr(t, needle);
  cr_assert_not_null(at, "no '%s' in the manifest", needle);
  size_t len = strlen(t) - strlen(at);
  return g_strndup(t, len - drop);
}
static char *head_only(const char *t) { return cut(t, "swept", 0); }
static char *last_block_gone(const char *t) {
  return cut(t, "# point 3 (", 0);
}
static char *no_newline(const char *t) {
  return g_strndup(t, strcspn(t, "\n"));
}
/* A block whose configuration is empty, and the SHA-256 of "" as its
 * hash: the text ends right after its head. */
static char *empty_config(const char *t) {
  (void)t;
  return g_strdup("gradsim-sweep 1\nid 0123456789abcdef\nexperiment e.ini\n"
                  "points 2\nswept platform.nodes\n"
                  "# point 0 (e3b0c44298fc1c14)\n");
}

Test(sweep, merge_refuses_bad_manifests) {
  struct experiment *e = load(SWEEP, NULL);
  char *dir = tmp_dir();
  for (guint i = 0; i < 4; i++)
    run_point_ok(e, i, dir);
  char *m = manifest_name(dir);
  bad_manifest(dir, m, other_version,
               "is not a gradsim sweep manifest (version 1)");
  bad_manifest(dir, m, no_newline,
               "is truncated (no id, experiment, points or swept line)");
  bad_manifest(dir, m, head_only,
               "is truncated (no id, experiment, points or swept line)");
  char *want = g_strdup_printf("does not match itself: point 0's "
                               "configuration is not its hash %s",
                               point(e, 0)->hash);
  bad_manifest(dir, m, edited_config, want);
  g_free(want);
  bad_manifest(dir, m, edited_id, "does not match its id 0");
  bad_manifest(dir, m, last_block_gone, "is malformed at point 3");
  bad_manifest(dir, m, empty_config, "is malformed at point 1");
  g_free(m);
  experiment_free(e);
  rm_tree(dir);
  g_free(dir);
}
