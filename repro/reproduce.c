/* repro/reproduce.c: running reproductions (repro.h): load and check
 * every experiment, run each one's variants through the sweep runner (or
 * measure the codec library, measure.h), join the results into one
 * table, judge the claims and write the files.
 *
 * Simulated designs (kind run) are each one sweep (sweep/sweep.h) into
 * OUT/NAME/sim/V/, with the variant's keys set as `gradsim run --set`
 * would set them, so that a reproduction simulates exactly what
 * `gradsim run` does and its finished points are reused. */
#include "repro.h"

#include "engine.h"
#include "experiment.h"
#include "inputs.h"
#include "measure.h"
#include "model.h"
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *repro_list(const char *dir) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d)
    return names;
  const char *f;
  while ((f = g_dir_read_name(d))) {
    if (!g_str_has_suffix(f, ".ini"))
      continue;
    char *path = g_build_filename(dir, f, NULL);
    GKeyFile *kf = g_key_file_new();
    if (g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, NULL) &&
        g_key_file_has_group(kf, "reproduce"))
      g_ptr_array_add(names, g_strndup(f, strlen(f) - 4));
    g_key_file_free(kf);
    g_free(path);
  }
  g_dir_close(d);
  g_ptr_array_sort(names, cmp_str);
  return names;
}

/* A failure: its status, and the message in *ERR (the first one kept). */
G_GNUC_PRINTF(3, 4)
static int fail(char **err, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (*err)
    g_free(m);
  else
    *err = m;
  return status;
}

static void note(const struct repro_opts *o, bool warning, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static void note(const struct repro_opts *o, bool warning, const char *fmt,
                 ...) {
  if (!o->note)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  o->note(warning, m, o->ctx);
  g_free(m);
}

/* ---- loading ------------------------------------------------------------ */

/* One reproduction, loaded and checked. */
struct job {
  struct repro *r;
  GPtrArray *exps; /* struct experiment *: one per variant (kind run), or
                      the experiment itself (the other kinds) */
};

static void job_free(struct job *j) {
  repro_free(j->r);
  if (j->exps)
    g_ptr_array_free(j->exps, TRUE);
  g_free(j);
}

static void job_free_cb(gpointer j) { job_free(j); }

/* The --set keys of variant V (NULL: none) of R: its own, the quick
 * ones of [reproduce.quick], its quick. ones, then EXTRA (fitted
 * parameters; may be NULL). */
static char **sets_of(const struct repro *r, const struct repro_variant *v,
                      const GPtrArray *extra) {
  GPtrArray *s = g_ptr_array_new();
  for (guint i = 0; v && i < v->sets->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(v->sets, i)));
  for (guint i = 0; i < r->sets->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(r->sets, i)));
  for (guint i = 0; v && i < v->quick_sets->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(v->quick_sets, i)));
  for (guint i = 0; extra && i < extra->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(extra, i)));
  g_ptr_array_add(s, NULL);
  return (char **)g_ptr_array_free(s, FALSE);
}

/* The experiment of variant V of R (NULL for the other kinds), checked
 * as `gradsim run` checks it. */
static struct experiment *variant_experiment(const struct repro *r,
                                             const struct repro_variant *v,
                                             const GPtrArray *extra,
                                             char **err) {
  char **sets = sets_of(r, v, extra);
  char *e2 = NULL;
  struct experiment *e = experiment_load(r->path, sets, &e2);
  g_strfreev(sets);
  if (e) {
    experiment_seal_inputs(e);
    if (r->kind == REPRO_RUN && experiment_check(e, NULL, &e2) != 0) {
      experiment_free(e);
      e = NULL;
    }
  }
  if (!e) {
    fail(err, REPRO_BAD_INPUT, "%s%s%s: %s", r->name, v ? ": variant " : "",
         v ? v->label : "", e2);
    g_free(e2);
  }
  return e;
}

/* The job of R (which it then owns): R's variants as experiments,
 * checked; NULL with *ERR (R freed). */
static struct job *job_of(struct repro *r, char **err) {
  struct job *j = g_new0(struct job, 1);
  j->r = r;
  j->exps = g_ptr_array_new_with_free_func(experiment_free_cb);
  guint nv = r->kind == REPRO_RUN ? r->variants->len : 1;
  for (guint v = 0; v < nv; v++) {
    const struct repro_variant *var =
        r->kind == REPRO_RUN ? g_ptr_array_index(r->variants, v) : NULL;
    struct experiment *e = variant_experiment(r, var, NULL, err);
    if (!e) {
      job_free(j);
      return NULL;
    }
    g_ptr_array_add(j->exps, e);
  }
  if (r->kind != REPRO_RUN &&
      repro_measure_check(r, g_ptr_array_index(j->exps, 0), err) != 0) {
    job_free(j);
    return NULL;
  }
  return j;
}

static struct job *job_load(const char *path, bool quick,
                            const char *const *off, char **err) {
  struct repro *r = repro_load(path, quick, off, err);
  return r ? job_of(r, err) : NULL;
}

/* ---- the results table of simulated designs ------------------------------ */

/* What runs.csv does not say about point P's model: the per-device
 * batch (its [model] batch, or the model file's), its parameters and
 * gradient tensors. */
struct model_facts {
  int batch;
  double params, tensors;
};

static struct model_facts facts_of(const struct point *p, GHashTable *cache) {
  struct model_facts f = {p->batch, (double)p->params, p->tensors};
  if (p->synthetic)
    return f;
  struct model_facts *c = g_hash_table_lookup(cache, p->model);
  if (!c) {
    c = g_new0(struct model_facts, 1);
    struct model *m;
    char msg[512];
    struct model_opts o = point_model_opts(p);
    o.batch = 0; /* the file's own, which the facts report */
    if (model_load(p->model, &o, &m, msg, sizeof msg) == 0) {
      c->batch = m->file_batch;
      c->params = (double)m->params;
      c->tensors = (double)m->ntensors;
      model_free(m);
    }
    g_hash_table_insert(cache, g_strdup(p->model), c);
  }
  f = *c;
  if (p->batch)
    f.batch = p->batch;
  return f;
}

static void add_unique(GPtrArray *keys, const char *k) {
  for (guint i = 0; i < keys->len; i++)
    if (!strcmp(g_ptr_array_index(keys, i), k))
      return;
  g_ptr_array_add(keys, g_strdup(k));
}

/* The keys every variant's points may differ in (swept, or set by a
 * variant), "section.key", in first-seen order. */
static GPtrArray *varying_keys(const struct job *j) {
  GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
  for (guint v = 0; v < j->exps->len; v++) {
    const struct experiment *e = g_ptr_array_index(j->exps, v);
    for (guint k = 0; k < e->swept->len; k++)
      add_unique(keys, g_ptr_array_index(e->swept, k));
    const struct repro_variant *var = g_ptr_array_index(j->r->variants, v);
    for (guint k = 0; k < var->sets->len; k++) {
      const char *set = g_ptr_array_index(var->sets, k);
      char *key = g_strndup(set, strcspn(set, "="));
      add_unique(keys, key);
      g_free(key);
    }
  }
  return keys;
}

/* The joined table: `variant`, runs.csv's columns, `batch`,
 * `model_params`, `model_tensors`, then the varying keys runs.csv lacks
 * (named by the key alone), which go into *EXTRA. */
static struct table *joined_table(const struct table *runs,
                                  const GPtrArray *keys, GPtrArray **extra) {
  struct table *all = table_new();
  table_add_col(all, "variant");
  for (guint c = 0; c < runs->cols->len; c++)
    table_add_col(all, g_ptr_array_index(runs->cols, c));
  table_add_col(all, "batch");
  table_add_col(all, "model_params");
  table_add_col(all, "model_tensors");
  *extra = g_ptr_array_new_with_free_func(g_free);
  for (guint k = 0; k < keys->len; k++) {
    const char *key = g_ptr_array_index(keys, k);
    const char *bare = strchr(key, '.') + 1;
    if (table_col(all, bare) < 0) {
      table_add_col(all, bare);
      g_ptr_array_add(*extra, g_strdup(key));
    }
  }
  return all;
}

/* Variant LABEL's rows of RUNS (its experiment E) into ALL. */
static void join_rows(struct table *all, const struct table *runs,
                      const char *label, const struct experiment *e,
                      const GPtrArray *extra, GHashTable *facts) {
  for (guint row = 0; row < runs->rows->len; row++) {
    GPtrArray *f = g_ptr_array_new();
    g_ptr_array_add(f, g_strdup(label));
    for (guint c = 0; c < runs->cols->len; c++)
      g_ptr_array_add(f, g_strdup(table_get(runs, row, c)));
    const struct point *p =
        row < e->points->len ? g_ptr_array_index(e->points, row) : NULL;
    struct model_facts mf = {0, 0, 0};
    if (p)
      mf = facts_of(p, facts);
    g_ptr_array_add(f, g_strdup_printf("%d", mf.batch));
    g_ptr_array_add(f, g_strdup_printf("%.0f", mf.params));
    g_ptr_array_add(f, g_strdup_printf("%.0f", mf.tensors));
    for (guint k = 0; k < extra->len; k++)
      g_ptr_array_add(f, p ? point_config_value(p, g_ptr_array_index(extra, k))
                           : g_strdup(""));
    table_add_row(all, f);
  }
}

/* Variant V's sweep directory under SIMDIR (g_free). */
static char *variant_dir(const char *simdir, guint v) {
  return g_strdup_printf("%s/%u", simdir, v);
}

/* Sweep variant V of J (its experiment E) into SIMDIR/V and read its
 * runs.csv. */
static struct table *sweep_variant(const struct job *j, guint v,
                                   const struct experiment *e,
                                   const char *simdir,
                                   const struct repro_opts *o, int *status,
                                   char **err) {
  const struct repro_variant *var = g_ptr_array_index(j->r->variants, v);
  char *out = variant_dir(simdir, v);
  struct sweep_opts so = {.out = out, .jobs = o->jobs};
  struct sweep_report rep;
  char *e2 = NULL;
  struct table *t = NULL;
  int rc = sweep_run(e, &so, &rep, &e2);
  if (rc != 0) {
    *status =
        fail(err, rc == SWEEP_BAD_INPUT ? REPRO_BAD_INPUT : REPRO_ENV_FAILURE,
             "%s: variant %s: %s", j->r->name, var->label, e2);
    g_free(e2);
    g_free(out);
    return NULL;
  }
  char **lines = g_strsplit(rep.warnings, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      note(o, true, "%s", *l);
  g_strfreev(lines);
  if (*rep.notes)
    note(o, true, "%s: variant %s: %s", j->r->name, var->label, rep.notes);
  sweep_report_clear(&rep);
  char *csv_path = g_build_filename(out, "runs.csv", NULL), *text = NULL;
  if (!g_file_get_contents(csv_path, &text, NULL, NULL))
    *status = fail(err, REPRO_ENV_FAILURE, "cannot read %s", csv_path);
  else if (!(t = table_parse_csv(text, &e2))) {
    *status = fail(err, REPRO_ENV_FAILURE, "%s: %s", csv_path, e2);
    g_free(e2);
  }
  g_free(text);
  g_free(csv_path);
  g_free(out);
  return t;
}

static void wait_one(void) {
  while (waitpid(-1, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* With several jobs, the variants' sweeps first run side by side, a
 * process each with one job, at most O->jobs at once: most variants are
 * one point, which a sweep runs on one core. They only run the points:
 * run_variants() then finds them done (a point's files are there whole
 * or not at all), joins the outputs once, and reports any failure
 * itself, running the missing points again. */
static void sweep_side_by_side(const GPtrArray *exps, const char *simdir,
                               const struct repro_opts *o) {
  guint n = 0, running = 0;
  for (guint v = 0; v < exps->len; v++)
    n += g_ptr_array_index(exps, v) != NULL;
  if (o->jobs < 2 || n < 2)
    return;
  for (guint v = 0; v < exps->len; v++) {
    const struct experiment *e = g_ptr_array_index(exps, v);
    if (!e)
      continue;
    if (running >= o->jobs) {
      wait_one();
      running--;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      char *out = variant_dir(simdir, v), *err = NULL;
      struct sweep_opts so = {.out = out, .jobs = 1};
      _exit(sweep_run_points(e, &so, &err) == 0 ? 0 : 1);
    }
    running += pid > 0;
  }
  while (running--)
    wait_one();
}

/* Simulate the variants whose experiment EXPS holds (NULL: skipped)
 * into SIMDIR and join their runs.csv (joined_table). */
static struct table *run_variants(const struct job *j, const GPtrArray *exps,
                                  const char *simdir,
                                  const struct repro_opts *o, int *status,
                                  char **err) {
  struct table *all = NULL;
  sweep_side_by_side(exps, simdir, o);
  GPtrArray *keys = varying_keys(j), *extra = NULL;
  GHashTable *facts =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint v = 0; v < j->r->variants->len; v++) {
    const struct experiment *e = g_ptr_array_index(exps, v);
    if (!e)
      continue;
    struct table *t = sweep_variant(j, v, e, simdir, o, status, err);
    if (!t)
      break;
    if (!all)
      all = joined_table(t, keys, &extra);
    if (t->cols->len + 4 + extra->len != all->cols->len) {
      *status =
          fail(err, REPRO_ENV_FAILURE,
               "%s: variants wrote different runs.csv columns", j->r->name);
      table_free(t);
      break;
    }
    const struct repro_variant *var = g_ptr_array_index(j->r->variants, v);
    join_rows(all, t, var->label, e, extra, facts);
    table_free(t);
  }
  g_hash_table_destroy(facts);
  if (extra)
    g_ptr_array_free(extra, TRUE);
  g_ptr_array_free(keys, TRUE);
  if (*err && all) {
    table_free(all);
    all = NULL;
  }
  return all;
}

/* The results of J's experiments EXPS: the variants simulated into
 * SIMDIR, or the one experiment measured (codec-ratio, select-time). */
static struct table *table_of(const struct job *j, GPtrArray *exps,
                              const char *simdir, const struct repro_opts *o,
                              int *status, char **err) {
  *status = REPRO_ENV_FAILURE;
  switch (j->r->kind) {
  case REPRO_RUN:
    return run_variants(j, exps, simdir, o, status, err);
  case REPRO_CODEC_RATIO:
    return repro_codec_ratio(j->r, g_ptr_array_index(exps, 0), o->jobs, err);
  case REPRO_SELECT_TIME:
    return repro_select_time(j->r, g_ptr_array_index(exps, 0), err);
  }
  return NULL;
}

/* ---- calibration --------------------------------------------------- */

static bool listed(const GPtrArray *labels, const char *label) {
  if (!labels->len)
    return true; /* no list: every variant */
  for (guint k = 0; k < labels->len; k++)
    if (!strcmp(g_ptr_array_index(labels, k), label))
      return true;
  return false;
}

/* The "fit=value" sets of the parameters of FITS that apply to variant
 * VAR (NULL: the one experiment of a kind without variants, to which
 * every fit applies). */
static GPtrArray *fitted_sets(const GArray *fits,
                              const struct repro_variant *var) {
  GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < fits->len; i++) {
    const struct repro_fit *f = &g_array_index(fits, struct repro_fit, i);
    if (!var || listed(f->cal->apply, var->label))
      g_ptr_array_add(sets, g_strdup_printf("%s=%.9g%s", f->cal->fit,
                                            f->value, f->cal->unit));
  }
  return sets;
}

/* Variant V of J, or NULL for the kinds without variants (one
 * experiment, measured rather than simulated). */
static const struct repro_variant *variant_of(const struct job *j, guint v) {
  return j->r->kind == REPRO_RUN ? g_ptr_array_index(j->r->variants, v) : NULL;
}

/* One step of a search: the experiments of the variants C simulates (the
 * one experiment of a measured kind), with the parameters of FITS
 * (fitted before) and C's key set to X. */
static GPtrArray *step_experiments(const struct job *j,
                                   const struct repro_calibrate *c,
                                   const GArray *fits, double x, char **err) {
  GPtrArray *exps = g_ptr_array_new_with_free_func(experiment_free_cb);
  for (guint v = 0; v < j->exps->len && !*err; v++) {
    const struct repro_variant *var = variant_of(j, v);
    if (var && !listed(c->variants, var->label)) {
      g_ptr_array_add(exps, NULL);
      continue;
    }
    GPtrArray *extra = fitted_sets(fits, var);
    g_ptr_array_add(extra, g_strdup_printf("%s=%.9g%s", c->fit, x, c->unit));
    g_ptr_array_add(exps, variant_experiment(j->r, var, extra, err));
    g_ptr_array_free(extra, TRUE);
  }
  if (*err) {
    g_ptr_array_free(exps, TRUE);
    return NULL;
  }
  return exps;
}

/* The calibration claim of C over the simulation at X: 0 with *Y. */
static int claim_at(const struct job *j, const struct repro_calibrate *c,
                    const GArray *fits, double x, const char *simdir,
                    const struct repro_opts *o, double *y, char **err) {
  int status = REPRO_BAD_INPUT;
  GPtrArray *exps = step_experiments(j, c, fits, x, err);
  if (!exps)
    return fail(err, status, "calibrate %s: %s = %.9g%s", c->name, c->fit, x,
                c->unit);
  struct table *t = table_of(j, exps, simdir, o, &status, err);
  g_ptr_array_free(exps, TRUE);
  if (!t)
    return status;
  const struct repro_claim *cl = c->claim;
  char *e2 = NULL;
  status = 0;
  if (repro_derive(j->r, t, &e2) != 0 ||
      expr_eval(cl->expr, t, cl->by, cl->by ? c->group : NULL, -1, y, &e2) !=
          0 ||
      !isfinite(*y)) {
    status = fail(err, REPRO_BAD_INPUT,
                  "%s: calibrate %s: claim %s at %s = "
                  "%.9g: %s",
                  j->r->name, c->name, c->claim_id, c->fit, x,
                  e2 ? e2 : "not a finite number");
    g_free(e2);
  }
  table_free(t);
  return status;
}

/* The paper's value of C's claim and group (a range: its middle). */
static double paper_target(const struct repro_calibrate *c) {
  const struct paper_value *pv =
      &g_array_index(c->claim->paper, struct paper_value, c->group_index);
  return (pv->lo + pv->hi) / 2;
}

/* The search: bisection between C's bounds (in log space when both are
 * positive) on the sign of claim - paper, which must differ at the two
 * ends; it stops within C's precision of the paper's value or after 40
 * simulations, keeping the best value seen. */
enum { FIT_MAX_RUNS = 40 };

static int fit_one(const struct job *j, const struct repro_calibrate *c,
                   const GArray *fits, const char *dir,
                   const struct repro_opts *o, struct repro_fit *f,
                   char **err) {
  double target = paper_target(c), lo = c->lo, hi = c->hi, ylo, yhi;
  bool logs = lo > 0;
  *f = (struct repro_fit){c, NAN, NAN, target, 0};
  char *base = g_strdup_printf("%s/calibrate/%s", dir, c->name);
  char *d0 = g_strdup_printf("%s/0", base), *d1 = g_strdup_printf("%s/1", base);
  int status = claim_at(j, c, fits, lo, d0, o, &ylo, err);
  if (!status)
    status = claim_at(j, c, fits, hi, d1, o, &yhi, err);
  g_free(d0);
  g_free(d1);
  f->runs = 2;
  /* Only both ends' claims give YLO and YHI (claim_at sets *Y when it
   * returns 0). */
  if (status) {
    g_free(base);
    return status;
  }
  bool bracket = (ylo - target) * (yhi - target) <= 0;
  if (!bracket && !o->quick)
    status = fail(err, REPRO_BAD_INPUT,
                  "%s: calibrate %s: claim %s is %.6g at %s = %.6g and %.6g "
                  "at %.6g, both on one side of the paper's %.6g: widen "
                  "range",
                  j->r->name, c->name, c->claim_id, ylo, c->fit, lo, yhi, hi,
                  target);
  bool rising = yhi > ylo;
  f->value = fabs(ylo - target) <= fabs(yhi - target) ? lo : hi;
  f->target = fabs(ylo - target) <= fabs(yhi - target) ? ylo : yhi;
  if (!status && !bracket)
    /* --quick's smaller sizes may not reach a full-size paper number: a
     * smoke test goes on with the nearer end. */
    note(o, true,
         "reproduce: %s: calibrate %s: the paper's %.6g is out of "
         "reach at --quick sizes; using %s = %.6g",
         j->r->name, c->name, target, c->fit, f->value);
  while (!status && bracket && f->runs < FIT_MAX_RUNS &&
         fabs(f->target - target) > c->precision * fabs(target)) {
    double mid = logs ? sqrt(lo * hi) : (lo + hi) / 2, y;
    char *dk = g_strdup_printf("%s/%u", base, f->runs);
    status = claim_at(j, c, fits, mid, dk, o, &y, err);
    g_free(dk);
    f->runs++;
    if (status)
      break;
    if (fabs(y - target) < fabs(f->target - target))
      f->value = mid, f->target = y;
    if ((y < target) == rising)
      lo = mid;
    else
      hi = mid;
  }
  g_free(base);
  return status;
}

/* Remove PATH and what it holds (a failed search's simulations). */
static void remove_tree(const char *path) {
  GDir *d = g_dir_open(path, 0, NULL);
  const char *f;
  while (d && (f = g_dir_read_name(d))) {
    char *p = g_build_filename(path, f, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) &&
        !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      remove_tree(p);
    else
      g_remove(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(path);
}

/* After a failed search (bad input, which writes nothing): its
 * simulations go, and the directories above them if nothing else is in
 * them. */
static void forget_search(const struct repro_calibrate *c, const char *dir,
                          const struct repro_opts *o) {
  char *cal = g_build_filename(dir, "calibrate", NULL);
  char *mine = g_build_filename(cal, c->name, NULL);
  remove_tree(mine);
  g_rmdir(cal);
  g_rmdir(dir);
  g_rmdir(o->out);
  g_free(mine);
  g_free(cal);
}

/* Fit every [reproduce.calibrate] parameter of J in order (FITS gets one
 * struct repro_fit each), then load every variant with the ones that
 * apply to it. */
static int calibrate(struct job *j, const char *dir, const struct repro_opts *o,
                     GArray *fits, char **err) {
  int status = 0;
  for (guint i = 0; i < j->r->calibrate->len && !status; i++) {
    const struct repro_calibrate *c = g_ptr_array_index(j->r->calibrate, i);
    struct repro_fit f;
    note(o, false, "reproduce: %s: calibrating %s (%s)...", j->r->name, c->fit,
         c->name);
    status = fit_one(j, c, fits, dir, o, &f, err);
    if (status == REPRO_BAD_INPUT)
      forget_search(c, dir, o);
    if (!status)
      g_array_append_val(fits, f);
  }
  for (guint v = 0; v < j->exps->len && !status; v++) {
    const struct repro_variant *var = variant_of(j, v);
    GPtrArray *sets = fitted_sets(fits, var);
    struct experiment *e =
        sets->len ? variant_experiment(j->r, var, sets, err) : NULL;
    g_ptr_array_free(sets, TRUE);
    if (e) {
      experiment_free(j->exps->pdata[v]);
      j->exps->pdata[v] = e;
    } else if (*err) {
      status = REPRO_BAD_INPUT;
    }
  }
  return status;
}

/* ---- one reproduction ---------------------------------------------------- */

static void ablation_free(GArray *a) {
  for (guint i = 0; a && i < a->len; i++)
    g_free(g_array_index(a, struct repro_ablation, i).off);
  if (a)
    g_array_free(a, TRUE);
}

/* Drop what points into D's loaded spec: its results and fits. */
static void forget_one(struct repro_done *d) {
  g_free(d->md);
  claim_results_free(d->res);
  if (d->fits)
    g_array_free(d->fits, TRUE);
  d->md = NULL, d->res = NULL, d->fits = NULL;
}

/* Free what D holds. */
static void done_clear(struct repro_done *d) {
  forget_one(d);
  g_free(d->name);
  g_free(d->title);
  ablation_free(d->ablation);
}

/* plots/PLOT.gp, once per terminal: gnuplot -e "dir='D'; term='png'". */
static GPtrArray *draw(const struct repro *r, const char *dir,
                       const struct repro_opts *o) {
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  char *script = g_strdup_printf("%s/%s.gp", o->plots, r->plot);
  char *gp = g_find_program_in_path("gnuplot");
  if (!g_file_test(script, G_FILE_TEST_IS_REGULAR)) {
    note(o, true, "reproduce: %s: no plot script %s", r->name, script);
  } else if (!gp) {
    note(o, true,
         "reproduce: gnuplot (Debian package gnuplot-nox) is not "
         "installed: no plots");
  } else {
    static const char *const terms[] = {"png", "svg"};
    for (int t = 0; t < 2; t++) {
      char *cmd = g_strdup_printf("gnuplot -e \"dir='%s'; term='%s'; "
                                  "lib='%s/common.gp'\" '%s'",
                                  dir, terms[t], o->plots, script);
      if (system(cmd) != 0)
        note(o, true, "reproduce: %s: gnuplot failed on %s", r->name, script);
      g_free(cmd);
    }
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *f;
    while (d && (f = g_dir_read_name(d)))
      if (g_str_has_suffix(f, ".png"))
        g_ptr_array_add(files, g_strdup(f));
    if (d)
      g_dir_close(d);
    g_ptr_array_sort(files, cmp_str);
  }
  g_free(gp);
  g_free(script);
  return files;
}

static int write_file(const char *dir, const char *name, const char *text,
                      char **err) {
  char *path = g_build_filename(dir, name, NULL);
  GError *ge = NULL;
  int rc = 0;
  if (!g_file_set_contents(path, text, -1, &ge)) {
    rc = fail(err, REPRO_ENV_FAILURE, "%s", ge->message);
    g_error_free(ge);
  }
  g_free(path);
  return rc;
}

static int make_dir(const char *dir, char **err) {
  if (g_mkdir_with_parents(dir, 0755) != 0)
    return fail(err, REPRO_ENV_FAILURE, "cannot create %s: %s", dir,
                g_strerror(errno));
  return 0;
}

/* The results table of J: simulated or measured, with derived columns. */
static struct table *results_of(const struct job *j, const char *dir,
                                const struct repro_opts *o, int *status,
                                char **err) {
  const struct repro *r = j->r;
  char *simdir = g_build_filename(dir, "sim", NULL);
  struct table *t = table_of(j, j->exps, simdir, o, status, err);
  g_free(simdir);
  if (!t) {
    if (!*err)
      *err = g_strdup_printf("%s: no results", r->name);
    return NULL;
  }
  char *e2 = NULL;
  if (repro_derive(r, t, &e2) != 0) {
    *status = fail(err, REPRO_BAD_INPUT, "%s: %s", r->name, e2);
    g_free(e2);
    table_free(t);
    return NULL;
  }
  return t;
}

/* The judged claims of J over T, and its files: runs.csv, claims.csv,
 * calibration.csv (with FITS), the plots and NAME.md; *D filled. */
static int write_results(const struct job *j, const struct table *t,
                         GArray *fits, GArray *ablation, const char *dir,
                         const struct repro_opts *o, struct repro_done *d,
                         char **err) {
  const struct repro *r = j->r;
  char *csv = table_to_csv(t);
  int status = write_file(dir, "runs.csv", csv, err);
  g_free(csv);
  GArray *res = repro_evaluate(r, t);
  char *cl = repro_claims_csv(res);
  status = status ? status : write_file(dir, "claims.csv", cl, err);
  g_free(cl);
  if (fits->len) {
    char *fc = repro_fits_csv(fits);
    status = status ? status : write_file(dir, "calibration.csv", fc, err);
    g_free(fc);
  }
  GPtrArray *plots = draw(r, dir, o);
  GString *cmd = g_string_new(NULL);
  g_string_printf(cmd, "gradsim reproduce %s%s", r->name,
                  o->quick ? " --quick" : "");
  for (guint i = 0; i < r->mechanisms->len; i++) {
    const struct repro_mechanism *m = g_ptr_array_index(r->mechanisms, i);
    if (m->off)
      g_string_append_printf(cmd, " --off %s", m->name);
  }
  char *md = repro_markdown(r, res, fits, ablation, plots, o->quick, cmd->str);
  char *md_name = g_strdup_printf("%s.md", r->name);
  status = status ? status : write_file(dir, md_name, md, err);
  d->name = g_strdup(r->name);
  d->title = g_strdup(r->title);
  d->validation = claim_score(res, CLAIM_VALIDATION);
  d->checks = claim_score(res, CLAIM_CHECK);
  d->calibration = claim_score(res, CLAIM_CALIBRATION);
  d->contradicted = claim_score(res, CLAIM_CONTRADICTED);
  d->res = res;
  d->fits = fits;
  d->ablation = ablation;
  d->md = md;
  g_free(md_name);
  g_string_free(cmd, TRUE);
  g_ptr_array_free(plots, TRUE);
  return status;
}

/* Calibrate J, run it and write its files into DIR; *D filled (with
 * ABLATION, which it then owns). */
static int reproduce_in(struct job *j, const char *dir,
                        const struct repro_opts *o, GArray *ablation,
                        struct repro_done *d, char **err) {
  GArray *fits = g_array_new(FALSE, TRUE, sizeof(struct repro_fit));
  int status = make_dir(dir, err);
  if (!status && j->r->calibrate->len)
    status = calibrate(j, dir, o, fits, err);
  struct table *t = status ? NULL : results_of(j, dir, o, &status, err);
  if (!t) {
    g_array_free(fits, TRUE);
    ablation_free(ablation);
    return status ? status : REPRO_ENV_FAILURE;
  }
  status = write_results(j, t, fits, ablation, dir, o, d, err);
  table_free(t);
  return status;
}

/* The ablation of J: J again with each mechanism off, then (with more
 * than one) with all off, each in DIR/ablation/without-NAME (all-off),
 * calibrated afresh; *OUT: their validation scores. */
static int ablate(const struct job *j, const char *dir,
                  const struct repro_opts *o, GArray **out, char **err) {
  GArray *abl = g_array_new(FALSE, TRUE, sizeof(struct repro_ablation));
  const GPtrArray *ms = j->r->mechanisms;
  int status = 0;
  for (guint i = 0; i <= ms->len && !status; i++) {
    if (i == ms->len && ms->len < 2)
      break;
    const char *name =
        i < ms->len
            ? ((const struct repro_mechanism *)g_ptr_array_index(ms, i))->name
            : "all";
    const char *off[] = {name, NULL};
    struct job *k = job_load(j->r->path, o->quick, off, err);
    if (!k) {
      status = REPRO_BAD_INPUT;
      break;
    }
    char *sub = i < ms->len ? g_strdup_printf("without-%s", name)
                            : g_strdup("all-off");
    char *kdir = g_build_filename(dir, "ablation", sub, NULL);
    note(o, false, "reproduce: %s: ablation, %s off...", j->r->name, name);
    struct repro_done d = {0};
    status = reproduce_in(k, kdir, o, NULL, &d, err);
    struct repro_ablation a = {g_strdup(name), d.validation};
    g_array_append_val(abl, a);
    done_clear(&d);
    g_free(kdir);
    g_free(sub);
    job_free(k);
  }
  if (status) {
    ablation_free(abl);
    abl = NULL;
  }
  *out = abl;
  return status;
}

/* J into OUT/NAME, after its ablation (--ablation); *D filled. */
static int reproduce_one(struct job *j, const struct repro_opts *o,
                         struct repro_done *d, char **err) {
  double t0 = g_get_monotonic_time() / 1e6;
  char *dir = g_build_filename(o->out, j->r->name, NULL);
  GArray *abl = NULL;
  int status = 0;
  if (o->ablation && j->r->mechanisms->len)
    status = ablate(j, dir, o, &abl, err);
  if (!status)
    status = reproduce_in(j, dir, o, abl, d, err);
  d->wall_s = g_get_monotonic_time() / 1e6 - t0;
  g_free(dir);
  return status;
}

/* ---- all of them --------------------------------------------------------- */

static void forget_results(GArray *done) {
  for (guint i = 0; done && i < done->len; i++)
    forget_one(&g_array_index(done, struct repro_done, i));
}

void repro_done_free(GArray *done) {
  if (!done)
    return;
  for (guint i = 0; i < done->len; i++)
    done_clear(&g_array_index(done, struct repro_done, i));
  g_array_free(done, TRUE);
}

static char *absolute(const char *path, const char *cwd) {
  return g_path_is_absolute(path) ? g_strdup(path)
                                  : g_build_filename(cwd, path, NULL);
}

/* Every job loaded and checked before anything runs or is written; the
 * mechanisms of OFF turned off in the reproductions that have them (a
 * name none of them has is bad input). */
static GPtrArray *load_all(char *const *names, guint n, const char *exp_dir,
                           bool quick, const char *const *off, char **err) {
  GPtrArray *jobs = g_ptr_array_new_with_free_func(job_free_cb);
  guint noff = 0;
  while (off && off[noff])
    noff++;
  bool *used = g_new0(bool, noff + 1);
  for (guint i = 0; i < n && !*err; i++) {
    char *path = g_strdup_printf("%s/%s.ini", exp_dir, names[i]);
    struct repro *r = repro_load(path, quick, NULL, err);
    if (r)
      repro_off_known(r, off, used);
    struct job *j = r ? job_of(r, err) : NULL;
    if (j)
      g_ptr_array_add(jobs, j);
    g_free(path);
  }
  for (guint k = 0; k < noff && !*err; k++)
    if (!used[k])
      *err = g_strdup_printf("--off %s: none of the reproductions asked for "
                             "has a mechanism of that name ([reproduce."
                             "mechanism NAME])",
                             off[k]);
  g_free(used);
  if (*err) {
    g_ptr_array_free(jobs, TRUE);
    return NULL;
  }
  return jobs;
}

static int run_all(GPtrArray *jobs, const struct repro_opts *o, GArray *done,
                   char **err) {
  int status = make_dir(o->out, err);
  for (guint i = 0; i < jobs->len && !status; i++) {
    struct job *j = g_ptr_array_index(jobs, i);
    note(o, false, "reproduce: %s (%u/%u)...", j->r->name, i + 1, jobs->len);
    struct repro_done d = {0};
    status = reproduce_one(j, o, &d, err);
    if (d.res)
      g_array_append_val(done, d);
    if (status)
      break;
    struct claim_score v = d.validation;
    note(o, false,
         "reproduce: %s: %u of %u validation claims within "
         "tolerance, %u not evaluated (%.1f s)",
         d.name, v.within, v.total - v.not_judged, v.not_judged, d.wall_s);
  }
  if (!status) {
    char *rep = repro_report(done, o->quick);
    status = write_file(o->out, "REPORT.md", rep, err);
    g_free(rep);
  }
  return status;
}

int repro_reproduce(char *const *names, guint n, const struct repro_opts *o,
                    GArray **done, char **err) {
  *err = NULL;
  *done = NULL;
  /* Relative paths inside experiments (file: platforms, cost tables) are
   * from the repository root, the experiments directory's parent: work
   * from there, with every path of our own made absolute first. */
  char *cwd = g_get_current_dir();
  struct repro_opts ao = *o;
  char *out = absolute(o->out, cwd), *exps = absolute(o->experiments, cwd),
       *plots = absolute(o->plots, cwd), *root = g_path_get_dirname(exps);
  ao.out = out, ao.experiments = exps, ao.plots = plots;
  g_free(cwd);
  int status = 0;
  if (chdir(root) != 0)
    status = fail(err, REPRO_BAD_INPUT, "cannot enter %s: %s", root,
                  g_strerror(errno));
  GPtrArray *jobs =
      status ? NULL : load_all(names, n, exps, o->quick, o->off, err);
  if (!status && !jobs)
    status = REPRO_BAD_INPUT;
  if (jobs) {
    *done = g_array_new(FALSE, TRUE, sizeof(struct repro_done));
    status = run_all(jobs, &ao, *done, err);
    forget_results(*done);
    g_ptr_array_free(jobs, TRUE);
  }
  if (status) {
    repro_done_free(*done);
    *done = NULL;
  }
  g_free(root);
  g_free(out);
  g_free(exps);
  g_free(plots);
  return status;
}
