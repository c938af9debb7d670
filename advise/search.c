/* advise/search.c: the search of advise.h: codec error measured on data,
 * every candidate predicted, the promising ones simulated in rounds, the
 * rest pruned by their lower bounds, and the best refined. */
#include "advise_impl.h"

#include "codec.h"
#include "codec_eval.h"
#include "experiment.h"
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *const cand_state_names[CAND_STATE_COUNT] = {
    [CAND_PENDING] = "pending",   [CAND_SIMULATED] = "simulated",
    [CAND_PRUNED] = "pruned",     [CAND_OVER_BUDGET] = "over-budget",
    [CAND_EXCLUDED] = "excluded", [CAND_NO_FIT] = "does-not-fit",
    [CAND_REFUSED] = "refused"};

/* One codec's measurement on the synthetic gradients. */
struct codec_error {
  double bits, err, cosine;
  bool lossy;
};

/* The codec whose error C's values carry: its codec, or for 16-bit
 * gradients without one the codec that rounds to their type. NULL: none
 * (fp32 without a codec). */
static const char *error_spec(const struct point *p) {
  if (run_has_codec(p))
    return p->codec;
  return p->grad_bytes < 4 ? p->grad_dtype : NULL;
}

/* SPEC on ADVISE_ERROR_STEPS steps of P's synthetic gradients. */
static int measure(const struct point *p, const char *spec,
                   struct codec_error *out, char **err) {
  codec_t *c;
  char e[256];
  if (codec_create(spec, &c, e, sizeof e) != 0) {
    *err = g_strdup_printf("codec %s: %s", spec, e);
    return -1;
  }
  size_t n = ADVISE_ERROR_VALUES;
  codec_state_t *st = NULL;
  if (!codec_accepts(c, n) ||
      codec_state_create(c, n, p->grad.seed, &st) != 0) {
    *err =
        g_strdup_printf("codec %s: cannot measure it on %zu values", spec, n);
    codec_free(c);
    return -1;
  }
  size_t cap = codec_bound(c, n);
  void *payload = g_malloc(cap);
  struct codec_eval_scratch w = {g_new(float, n), g_new(float, n),
                                 g_new(double, n), g_new(double, n)};
  struct codec_compare_row row;
  enum codec_eval_stage failed;
  int rc = codec_eval_compare(st, &p->grad, n, ADVISE_ERROR_STEPS, payload, cap,
                              &w, &row, &failed);
  if (rc != 0)
    *err = g_strdup_printf("codec %s on the synthetic gradients: %s", spec,
                           g_strerror(-rc));
  out->bits = row.bits_per_value;
  out->err = row.sum_rel_err;
  out->cosine = row.sum_cosine;
  out->lossy = !codec_is_lossless(c);
  g_free(w.x);
  g_free(w.y);
  g_free(w.sum_x);
  g_free(w.sum_y);
  g_free(payload);
  codec_state_free(st);
  codec_free(c);
  return rc == 0 ? 0 : -1;
}

/* What a measurement depends on: the codec and the point's [gradients]
 * section (a space may vary the data), as "SPEC\n[gradients]..."
 * (g_free). */
static char *measure_key(const struct point *p, const char *spec) {
  const char *g = strstr(p->config, "[gradients]\n");
  size_t n = g ? strcspn(g + 1, "[") + 1 : 0;
  return g_strdup_printf("%s\n%.*s", spec, (int)n, g ? g : "");
}

int search_measure(struct search *s, struct cand *c, char **err) {
  const char *spec = error_spec(c->p);
  if (!spec) {
    c->err = 0;
    c->cosine = 1;
    c->lossy = false;
    return 0;
  }
  char *key = measure_key(c->p, spec);
  struct codec_error *m = g_hash_table_lookup(s->errors, key);
  if (!m) {
    m = g_new0(struct codec_error, 1);
    if (measure(c->p, spec, m, err) != 0) {
      g_free(m);
      g_free(key);
      return -1;
    }
    g_hash_table_insert(s->errors, key, m);
  } else {
    g_free(key);
  }
  c->bits = run_has_codec(c->p) ? m->bits : NAN;
  c->err = m->err;
  c->cosine = m->cosine;
  c->lossy = m->lossy;
  return 0;
}

/* C measured, predicted and judged: excluded by --max-error, or not
 * fitting its GPU. -1 with *ERR only on a codec that cannot run on the
 * synthetic gradients. */
static int prepare(struct search *s, struct cand *c, char **err) {
  if (c->state != CAND_PENDING)
    return 0;
  if (search_measure(s, c, err) != 0)
    return -1;
  char *why = NULL;
  if (run_predict(c->p, c->bits, &c->pred, &why) != 0) {
    c->state = CAND_REFUSED;
    c->why = why;
    return 0;
  }
  if (!(c->err <= s->o->max_error))
    c->state = CAND_EXCLUDED;
  else if (!isnan(c->pred.capacity) && c->pred.memory_bytes > c->pred.capacity)
    c->state = CAND_NO_FIT;
  return 0;
}

/* No iteration is shorter than its compute, which the prediction has
 * exactly (the model's times); what it adds beyond, the exchange it
 * exposes, is scaled by the least ratio seen and the margin. */
double search_lower_bound(const struct search *s, const struct cand *c) {
  double beyond = c->pred.iteration_s - c->pred.compute_s;
  return c->pred.compute_s + fmax(0, beyond) * s->rho * ADVISE_MARGIN;
}

/* The least simulated time per sample among candidates that fit
 * (without a codec only, when PLAIN), INFINITY when none. */
static double best_of(const struct search *s, bool plain,
                      const struct cand **best) {
  double t = INFINITY;
  if (best)
    *best = NULL;
  for (guint i = 0; i < s->cands->len; i++) {
    const struct cand *c = g_ptr_array_index(s->cands, i);
    if (c->state != CAND_SIMULATED || strcmp(c->fits, "no") == 0 ||
        (plain && c->codec))
      continue;
    if (cand_per_sample(c, c->iter_s) < t) {
      t = cand_per_sample(c, c->iter_s);
      if (best)
        *best = c;
    }
  }
  return t;
}

/* Pending candidates by predicted time per sample (then by order of the
 * space). */
static gint by_prediction(gconstpointer a, gconstpointer b) {
  const struct cand *x = *(struct cand *const *)a,
                    *y = *(struct cand *const *)b;
  double u = cand_per_sample(x, x->pred.iteration_s),
         v = cand_per_sample(y, y->pred.iteration_s);
  if (u != v)
    return u < v ? -1 : 1;
  return 0;
}

/* Whether C may still beat BEST (the least simulated time per sample),
 * or PLAIN (that among candidates without a codec) when it has none. */
static bool promising(const struct search *s, const struct cand *c, double best,
                      double plain) {
  if (s->o->exhaustive)
    return true;
  double lb = cand_per_sample(c, search_lower_bound(s, c)) / (1 - ADVISE_TIE);
  return lb < best || (!c->codec && lb < plain);
}

/* Read C's simulated figures from runs.csv's row in OUT. */
static void read_row(struct search *s, struct cand *c, GPtrArray *cols) {
  GPtrArray *row = sweep_point_row(s->o->out, c->p, 0);
  if (!row) { /* not searched again */
    c->state = CAND_REFUSED;
    c->why = g_strdup("its simulation left no results");
    return;
  }
  for (guint i = 0; i < cols->len && i < row->len; i++) {
    const char *name = g_ptr_array_index(cols, i);
    const char *v = g_ptr_array_index(row, i);
    double x = *v ? g_ascii_strtod(v, NULL) : NAN;
    if (strcmp(name, "iteration_s") == 0)
      c->iter_s = x;
    else if (strcmp(name, "exposed_comm_s") == 0)
      c->exposed_comm_s = x;
    else if (strcmp(name, "exposed_codec_s") == 0)
      c->exposed_codec_s = x;
    else if (strcmp(name, "memory_bytes") == 0)
      c->memory_bytes = x;
    else if (strcmp(name, "fits") == 0)
      g_strlcpy(c->fits, v, sizeof c->fits);
  }
  g_ptr_array_unref(row);
  c->state = CAND_SIMULATED;
}

/* Simulate BATCH's candidates into OUT/points; one the engine refuses
 * while running is refused, the others run. */
static int simulate(struct search *s, GPtrArray *batch, char **err) {
  struct experiment e = {(char *)"advise", NULL, g_ptr_array_new(), s->keys};
  for (guint i = 0; i < batch->len; i++)
    g_ptr_array_add(e.points, ((struct cand *)g_ptr_array_index(batch, i))->p);
  struct sweep_opts so = {.out = s->o->out,
                          .jobs = s->o->jobs,
                          .progress = s->o->points_progress,
                          .ctx = s->o->points_ctx,
                          .tick_s = s->o->tick_s};
  int rc = sweep_run_points(&e, &so, err);
  if (rc == SWEEP_BAD_INPUT) {
    g_free(*err);
    *err = NULL;
    rc = 0;
    for (guint i = 0; i < batch->len && rc == 0; i++) {
      struct cand *c = g_ptr_array_index(batch, i);
      bool was = false;
      char *why = NULL;
      int r1 = sweep_run_point(&e, i, &so, &was, &why);
      if (r1 == SWEEP_BAD_INPUT) {
        c->state = CAND_REFUSED;
        c->why = why;
      } else if (r1 != 0) {
        *err = why;
        rc = r1;
      }
    }
  }
  g_ptr_array_free(e.points, TRUE);
  return rc;
}

/* Rounds until nothing promising is left: the pending candidates of
 * least prediction, ADVISE_BATCH a round, within the budget. */
static int rounds(struct search *s, GPtrArray *cols, char **err) {
  for (;;) {
    GPtrArray *pend = g_ptr_array_new();
    for (guint i = 0; i < s->cands->len; i++) {
      struct cand *c = g_ptr_array_index(s->cands, i);
      if (c->state == CAND_PENDING)
        g_ptr_array_add(pend, c);
    }
    g_ptr_array_sort(pend, by_prediction);
    GPtrArray *batch = g_ptr_array_new();
    double est = 0;
    double best = best_of(s, false, NULL), plain = best_of(s, true, NULL);
    for (guint i = 0; i < pend->len && batch->len < ADVISE_BATCH; i++) {
      struct cand *c = g_ptr_array_index(pend, i);
      if (!promising(s, c, best, plain))
        continue;
      if (!s->o->exhaustive && est + c->est_s > s->budget_left) {
        c->state = CAND_OVER_BUDGET;
        continue;
      }
      est += c->est_s;
      g_ptr_array_add(batch, c);
    }
    g_ptr_array_free(pend, TRUE);
    if (batch->len == 0) {
      g_ptr_array_free(batch, TRUE);
      return 0;
    }
    s->rounds++;
    if (s->o->progress) {
      char *line = g_strdup_printf("round %u: simulating %u candidate%s "
                                   "(estimated %.3g s of simulation)",
                                   s->rounds, batch->len,
                                   batch->len == 1 ? "" : "s", est);
      s->o->progress(line, s->o->ctx);
      g_free(line);
    }
    int rc = simulate(s, batch, err);
    s->budget_left -= est;
    for (guint i = 0; i < batch->len && rc == 0; i++) {
      struct cand *c = g_ptr_array_index(batch, i);
      if (c->state != CAND_PENDING)
        continue;
      read_row(s, c, cols);
      c->round = s->rounds;
      /* The ratio of the exposed parts, where the prediction exposes
       * enough of one to measure it by. */
      double beyond = c->pred.iteration_s - c->pred.compute_s;
      if (beyond > ADVISE_EXPOSED * c->pred.iteration_s && isfinite(c->iter_s))
        s->rho =
            fmax(0, fmin(s->rho, (c->iter_s - c->pred.compute_s) / beyond));
    }
    g_ptr_array_free(batch, TRUE);
    if (rc != 0)
      return rc;
  }
}

/* Load and prepare the candidates from FIRST on. */
static int prepare_from(struct search *s, guint first, char **err) {
  for (guint i = first; i < s->cands->len; i++) {
    struct cand *c = g_ptr_array_index(s->cands, i);
    if (!c->p && c->state == CAND_PENDING)
      cand_load(s, c);
    if (prepare(s, c, err) != 0)
      return -1;
  }
  return 0;
}

/* The search's outcome for the user's input: what makes it impossible,
 * as one line, or NULL. */
static char *impossible(const struct search *s) {
  unsigned live = 0, excluded = 0, nofit = 0;
  const struct cand *first = NULL, *small = NULL;
  for (guint i = 0; i < s->cands->len; i++) {
    const struct cand *c = g_ptr_array_index(s->cands, i);
    live += c->state == CAND_PENDING;
    excluded += c->state == CAND_EXCLUDED;
    if (c->state == CAND_NO_FIT) {
      nofit++;
      if (!small || c->pred.memory_bytes < small->pred.memory_bytes)
        small = c;
    }
    if (c->state == CAND_REFUSED && !first)
      first = c;
  }
  if (live)
    return NULL;
  if (nofit)
    return g_strdup_printf(
        "the model does not fit the GPU in any configuration of the space: "
        "at least %.1f GB a GPU (%s), the device has %.1f GB (the default "
        "space adds ZeRO's stages and activation checkpointing where they "
        "are needed and --set does not fix them; beyond those, more GPUs, "
        "a device with more memory or a smaller [model] batch)",
        small->pred.memory_bytes / 1e9, small->label,
        small->pred.capacity / 1e9);
  if (excluded)
    return g_strdup_printf("--max-error %g excludes every candidate the "
                           "engine can run (%u of them; a larger limit, or "
                           "codec = none in the space)",
                           s->o->max_error, excluded);
  if (first)
    return g_strdup_printf("no candidate of the space can run; the first, "
                           "%s: %s",
                           first->label, first->why);
  return g_strdup("the space has no candidates");
}

int advise_run(const struct advise_opts *o, struct advise_report *r,
               char **err) {
  memset(r, 0, sizeof *r);
  *err = NULL;
  struct search s = {
      o,
      g_string_new(NULL),
      g_ptr_array_new_with_free_func(g_free),
      g_ptr_array_new_with_free_func(cand_free),
      g_hash_table_new(g_str_hash, g_str_equal),
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
      o->budget_s,
      1,
      0};
  int rc = ADVISE_BAD_INPUT;
  GPtrArray *fams = NULL, *cols = sweep_runs_columns();
  struct experiment *base = NULL;
  if (space_base(o, s.base, err) != 0)
    goto out;
  /* The base alone: the model, the platform and --set as given. */
  base =
      experiment_load_data("advise", s.base->str, s.base->len, o->sets, 0, err);
  if (!base) {
    *err = space_message(*err);
    goto out;
  }
  if (base->points->len != 1) {
    *err = g_strdup("--set: a value with commas sweeps its key; advise "
                    "searches a space instead (--space)");
    goto out;
  }
  char *why = NULL;
  if (run_check(g_ptr_array_index(base->points, 0), &why) != 0) {
    *err = why;
    goto out;
  }
  if (space_families(&s, g_ptr_array_index(base->points, 0), &fams, err) != 0)
    goto out;
  space_expand(&s, fams);
  if (prepare_from(&s, 0, err) != 0)
    goto out;
  char *no = impossible(&s);
  if (no) {
    *err = no;
    goto out;
  }
  rc = ADVISE_ENV_FAILURE;
  if (g_mkdir_with_parents(o->out, 0777) != 0) {
    *err = g_strdup_printf("cannot create %s: %s", o->out, g_strerror(errno));
    goto out;
  }
  /* Search, then refine around the best until it stays. */
  const struct cand *best = NULL, *prev = NULL;
  for (int refine = 0; refine <= 3; refine++) {
    if ((rc = rounds(&s, cols, err)) != 0)
      goto out;
    best_of(&s, false, &best);
    if (!best || best == prev)
      break;
    prev = best;
    guint first = s.cands->len;
    if (space_neighbours(&s, best) == 0)
      break;
    if (prepare_from(&s, first, err) != 0) {
      rc = ADVISE_ENV_FAILURE;
      goto out;
    }
  }
  for (guint i = 0; i < s.cands->len; i++) {
    struct cand *c = g_ptr_array_index(s.cands, i);
    if (c->state == CAND_PENDING)
      c->state = CAND_PRUNED;
  }
  rc = report_write(&s, r, err);
out:
  if (base)
    experiment_free(base);
  if (fams)
    g_ptr_array_unref(fams);
  g_ptr_array_unref(cols);
  g_ptr_array_unref(s.cands);
  g_hash_table_destroy(s.labels);
  g_hash_table_destroy(s.errors);
  g_ptr_array_unref(s.keys);
  g_string_free(s.base, TRUE);
  return rc;
}

void advise_report_clear(struct advise_report *r) {
  g_free(r->table);
  g_free(r->recommendation);
  g_free(r->warnings);
  g_free(r->best_label);
  memset(r, 0, sizeof *r);
}
