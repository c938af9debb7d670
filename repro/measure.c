/* repro/measure.c: the reproductions that measure codecs instead of
 * simulating (measure.h): payload sizes on each model's synthetic
 * gradients (INCEPTIONN Fig. 14 and Table III, 3LC Table 2) and the time
 * of communication-set selection on this CPU (RedSync Fig. 3). */
#include "measure.h"

#include "codec.h"
#include "models.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* codec_free() as a GDestroyNotify (codecs/ knows no GLib). */
static void codec_free_cb(gpointer c) { codec_free(c); }

GPtrArray *repro_split_specs(const char *text) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  char **parts = g_strsplit(text ? text : "", ";", -1);
  for (char **p = parts; *p; p++)
    if (*g_strstrip(*p))
      g_ptr_array_add(out, g_strdup(*p));
  g_strfreev(parts);
  return out;
}

/* A whole number >= 1, or 2^K. */
static bool parse_count(const char *s, double *out) {
  char *end;
  if (!strncmp(s, "2^", 2)) {
    long k = strtol(s + 2, &end, 10);
    if (*end || k < 0 || k > 40)
      return false;
    *out = ldexp(1, (int)k);
    return true;
  }
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end || !(v >= 1) || v != floor(v) || v > 1e12)
    return false;
  *out = v;
  return true;
}

static int param_count(const struct repro *r, const char *key, const char *def,
                       double lo, double hi, double *out, char **err) {
  const char *v = repro_param(r, key, def);
  if (!parse_count(v, out) || *out < lo || *out > hi) {
    *err = g_strdup_printf("%s: [reproduce] %s = %s: must be a whole number "
                           "(or 2^K) in %g..%g",
                           r->path, key, v, lo, hi);
    return -1;
  }
  return 0;
}

/* codec-ratio's counts: values held per tensor, uncounted warm-up steps
 * (0, the default, or 1..10000) and measured steps; END_TO_END: the
 * pushes of every worker and the shared pull are counted (3LC Table 2's
 * "end-to-end compression ratio"), not one stream of gradients. */
struct ratio_counts {
  size_t sample, warmup, steps;
  bool end_to_end;
  double momentum; /* pull_momentum: the server's, 0 for none */
};

/* The workers whose pushes are measured on point P: its nodes end to
 * end, one stream of gradients otherwise. */
static size_t ratio_workers(const struct ratio_counts *nc,
                            const struct point *p) {
  return nc->end_to_end ? (size_t)p->nodes : 1;
}

static int ratio_counts(const struct repro *r, struct ratio_counts *nc,
                        char **err) {
  double sample, steps, warmup = 0;
  if (param_count(r, "sample", "65536", 64, 1 << 26, &sample, err) ||
      param_count(r, "steps", "1", 1, 10000, &steps, err) ||
      (strcmp(repro_param(r, "warmup", "0"), "0") &&
       param_count(r, "warmup", NULL, 1, 10000, &warmup, err)))
    return -1;
  const char *e2e = repro_param(r, "end_to_end", "no");
  if (strcmp(e2e, "yes") && strcmp(e2e, "no")) {
    *err = g_strdup_printf("%s: [reproduce] end_to_end = %s: must be yes or "
                           "no",
                           r->path, e2e);
    return -1;
  }
  const char *mv = repro_param(r, "pull_momentum", "0");
  char *end;
  double mom = g_ascii_strtod(mv, &end);
  if (end == mv || *end || !(mom >= 0 && mom < 1) ||
      (mom > 0 && strcmp(e2e, "yes"))) {
    *err = g_strdup_printf("%s: [reproduce] pull_momentum = %s: must be a "
                           "number in [0, 1), and needs end_to_end = yes",
                           r->path, mv);
    return -1;
  }
  *nc = (struct ratio_counts){(size_t)sample, (size_t)warmup, (size_t)steps,
                              !strcmp(e2e, "yes"), mom};
  return 0;
}

/* select-time's counts: timed runs and encodes per run. */
static int select_counts(const struct repro *r, size_t *runs, size_t *steps,
                         char **err) {
  double x, y;
  if (param_count(r, "runs", "5", 1, 1000, &x, err) ||
      param_count(r, "steps", "5", 1, 1000, &y, err))
    return -1;
  *runs = (size_t)x, *steps = (size_t)y;
  return 0;
}

/* The codecs and their labels, checked. */
static int codecs_of(const struct repro *r, GPtrArray **specs,
                     GPtrArray **labels, GPtrArray **codecs, char **err) {
  *specs = repro_split_specs(repro_param(r, "codecs", ""));
  *labels = repro_split_specs(repro_param(r, "labels", ""));
  *codecs = g_ptr_array_new_with_free_func(codec_free_cb);
  if (!(*specs)->len) {
    *err = g_strdup_printf(
        "%s: [reproduce] codecs = SPEC; SPEC; ... is "
        "required for kind = %s",
        r->path, r->kind == REPRO_CODEC_RATIO ? "codec-ratio" : "select-time");
    return -1;
  }
  if ((*labels)->len && (*labels)->len != (*specs)->len) {
    *err = g_strdup_printf("%s: [reproduce] labels has %u entries for %u "
                           "codecs",
                           r->path, (*labels)->len, (*specs)->len);
    return -1;
  }
  for (guint i = 0; i < (*specs)->len; i++) {
    codec_t *c;
    char msg[CODEC_ERR_MAX];
    if (codec_create(g_ptr_array_index(*specs, i), &c, msg, sizeof msg)) {
      *err = g_strdup_printf("%s: [reproduce] codecs: %s", r->path, msg);
      return -1;
    }
    g_ptr_array_add(*codecs, c);
    if (!(*labels)->len || i >= (*labels)->len)
      g_ptr_array_add(*labels, g_strdup(g_ptr_array_index(*specs, i)));
  }
  return 0;
}

/* codec-ratio's parameters, and a model file for every point. */
static int check_codec_ratio(const struct repro *r, const struct experiment *e,
                             guint ncodecs, char **err) {
  struct ratio_counts nc;
  if (ratio_counts(r, &nc, err))
    return -1;
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    if (nc.end_to_end && !collective_shares_pull(p->algorithm)) {
      *err = g_strdup_printf("%s: [reproduce] end_to_end = yes measures "
                             "the pushes and shared pull of a parameter "
                             "server that shares it (ps-shared); [exchange] "
                             "algorithm = %s",
                             r->path, p->algorithm);
      return -1;
    }
    /* One residual per worker, codec and tensor, plus the sums. */
    size_t nw = ratio_workers(&nc, p);
    double held = (double)(nw + (nc.end_to_end ? 1 : 0)) * (double)ncodecs *
                  (double)nc.sample;
    if (held > (double)(1u << 27)) {
      *err = g_strdup_printf("%s: [reproduce] %zu workers x %u codecs x "
                             "sample = %zu hold %.0f values of codec state; "
                             "at most 2^27",
                             r->path, nw, ncodecs, nc.sample, held);
      return -1;
    }
    struct model *m;
    char msg[512];
    struct model_opts o = point_model_opts(p);
    if (p->synthetic || model_load(p->model, &o, &m, msg, sizeof msg) != 0) {
      *err = g_strdup_printf("%s: [model] name = %s: %s", r->path, p->model,
                             p->synthetic ? "codec-ratio needs a model file"
                                          : msg);
      return -1;
    }
    model_free(m);
  }
  return 0;
}

/* select-time's parameters: runs, steps, sizes and the allreduce
 * formula. */
static int check_select_time(const struct repro *r, char **err) {
  size_t runs, steps;
  double x;
  if (select_counts(r, &runs, &steps, err))
    return -1;
  GPtrArray *sizes = repro_split_specs(repro_param(r, "sizes", ""));
  int rc = 0;
  if (!sizes->len) {
    *err = g_strdup_printf("%s: [reproduce] sizes = N; N; ... (values, or "
                           "2^K) is required for kind = select-time",
                           r->path);
    rc = -1;
  }
  for (guint i = 0; !rc && i < sizes->len; i++)
    if (!parse_count(g_ptr_array_index(sizes, i), &x) || x > (1u << 28)) {
      *err = g_strdup_printf("%s: [reproduce] sizes: '%s' must be a whole "
                             "number of values (or 2^K) up to 2^28",
                             r->path, (char *)g_ptr_array_index(sizes, i));
      rc = -1;
    }
  g_ptr_array_free(sizes, TRUE);
  if (rc)
    return rc;
  const char *fname = repro_param(r, "allreduce", "rabenseifner");
  if (!formula_find(fname)) {
    *err = g_strdup_printf("%s: [reproduce] allreduce = %s: not a formula "
                           "(see gradsim formula --list)",
                           r->path, fname);
    return -1;
  }
  return 0;
}

int repro_measure_check(const struct repro *r, const struct experiment *e,
                        char **err) {
  GPtrArray *specs, *labels, *codecs;
  int rc = codecs_of(r, &specs, &labels, &codecs, err);
  if (!rc && r->kind == REPRO_CODEC_RATIO)
    rc = check_codec_ratio(r, e, codecs->len, err);
  if (!rc && r->kind == REPRO_SELECT_TIME)
    rc = check_select_time(r, err);
  g_ptr_array_free(specs, TRUE);
  g_ptr_array_free(labels, TRUE);
  g_ptr_array_free(codecs, TRUE);
  return rc;
}

static char *num(double v) {
  return isfinite(v) ? g_strdup_printf("%.9g", v) : g_strdup("");
}

static struct table *columns(const char *const *names, size_t n) {
  struct table *t = table_new();
  for (size_t i = 0; i < n; i++)
    table_add_col(t, names[i]);
  return t;
}

/* What each codec of CODECS adds up to on model M's gradients (point P):
 * N->steps steps of every tensor after N->warmup uncounted ones, one
 * codec stream per tensor as in the simulator, so that error feedback
 * carries from step to step. Each tensor is represented by up to
 * N->sample of its values, its bytes scaled to its size; a step's values
 * are drawn once and encoded by every codec (the draw costs more than
 * the encodings). PUSH[c]: codec c's bytes of the counted steps;
 * COUNTS[4c..4c+3]: for a codec with value classes (inceptionn), its
 * values in its first four classes (INCEPTIONN's 2, 10, 18 and 34-bit
 * ones, tag included), scaled alike.
 *
 * With N->end_to_end, as the simulator's ps-shared does it: each of the
 * point's workers pushes its own gradient (worker w's draws) through its
 * own stream, the server sums the decoded pushes and encodes the sum
 * once through its own stream, and every worker receives that pull.
 * PUSH[c] sums every worker's pushes, PULL[c] one copy of the pull. With
 * N->momentum m the server applies momentum before the pull, as 3LC's
 * MomentumOptimizer does on the parameter server (seeds/004 Section
 * 5.2): the pull is the model delta v = m v + sum (its learning rate
 * left out: 3LC's quantizer is scale-free).
 *
 * The tensors are independent: JOBS threads take them in turn, each
 * tensor's sums are kept apart and added up in tensor order afterwards,
 * so the result does not depend on JOBS. */
struct ratio_sums {
  double *push, *pull, *counts;
};

struct ratio_work {
  const struct repro *r;
  const struct point *p;
  const struct model *m;
  const GPtrArray *codecs;
  const struct ratio_counts *nc;
  size_t nw, cap;
  /* Per tensor ti and codec c: [ti * ncod + c] (counts times 4). */
  double *push, *pull, *counts;
  char **errs; /* per tensor */
  gint next;   /* the next tensor to take (atomic) */
};

/* A thread's buffers: X (sample values), OUT (cap bytes), the states of
 * one tensor and the server's sums. */
struct ratio_bufs {
  float *x, *agg, *vel;
  unsigned char *out;
  codec_state_t **st, **pst;
};

static char *encode_tensor(const struct ratio_work *W, size_t ti,
                           struct ratio_bufs *b) {
  const struct ratio_counts *nc = W->nc;
  const struct point *p = W->p;
  guint ncod = W->codecs->len;
  size_t nw = W->nw;
  uint64_t el = W->m->tensors[ti].elements;
  size_t n = el < nc->sample ? (size_t)el : nc->sample;
  double scale = (double)el / (double)n;
  double *push = W->push + ti * ncod, *pull = W->pull + ti * ncod;
  double *counts = W->counts + 4 * ti * ncod;
  char *err = NULL;
  for (size_t k = 0; k < ncod * nw && !err; k++)
    if (codec_state_create(g_ptr_array_index(W->codecs, k / nw), n,
                           p->grad.seed + k % nw, &b->st[k]) != 0)
      err = g_strdup("out of memory for a codec state");
  for (guint c = 0; c < ncod && b->agg && !err; c++)
    if (codec_state_create(g_ptr_array_index(W->codecs, c), n,
                           p->grad.seed + nw, &b->pst[c]) != 0)
      err = g_strdup("out of memory for a codec state");
  /* The persistent component is the same at every step: drawn once. */
  struct gradgen_cache *gc = gradgen_cache_new(n);
  if (b->vel)
    memset(b->vel, 0, ncod * n * sizeof *b->vel);
  for (size_t s = 0; s < nc->warmup + nc->steps && !err; s++) {
    bool counted = s >= nc->warmup;
    if (b->agg)
      memset(b->agg, 0, ncod * n * sizeof *b->agg);
    for (size_t w = 0; w < nw && !err; w++) {
      gradgen_fill_cached(&p->grad, gc, (uint32_t)w, (uint32_t)ti, s, 1.0, 0,
                          b->x, n);
      for (guint c = 0; c < ncod && !err; c++) {
        const codec_t *codec = g_ptr_array_index(W->codecs, c);
        ptrdiff_t len =
            codec_encode(b->st[c * nw + w], b->x, n, b->out, W->cap);
        int bad = len < 0  ? (int)len
                  : b->agg ? codec_decode_add(codec, b->out, (size_t)len,
                                              b->agg + c * n, n)
                           : 0;
        if (bad) {
          err =
              g_strdup_printf("%s: %s on %s's gradients: %s", W->r->path,
                              codec_spec(codec), p->model, codec_strerror(bad));
          break;
        }
        if (!counted)
          continue;
        push[c] += (double)len * scale;
        uint64_t k[CODEC_CLASS_MAX];
        size_t ncls = codec_class_count(codec);
        if (ncls && codec_classes(codec, b->out, (size_t)len, n, NULL, k) == 0)
          for (size_t j = 0; j < 4 && j < ncls; j++)
            counts[4 * c + j] += (double)k[j] * scale;
      }
    }
    for (guint c = 0; c < ncod && b->agg && !err; c++) {
      ptrdiff_t len = server_pull(b->pst[c], b->agg + c * n,
                                  b->vel ? b->vel + c * n : NULL, n,
                                  nc->momentum, b->out, W->cap);
      if (len < 0)
        err = g_strdup_printf("%s: %s on %s's pull: %s", W->r->path,
                              codec_spec(g_ptr_array_index(W->codecs, c)),
                              p->model, codec_strerror((int)len));
      else if (counted)
        pull[c] += (double)len * scale;
    }
  }
  for (size_t k = 0; k < ncod * nw; k++) {
    codec_state_free(b->st[k]);
    b->st[k] = NULL;
  }
  for (guint c = 0; c < ncod; c++) {
    codec_state_free(b->pst[c]);
    b->pst[c] = NULL;
  }
  gradgen_cache_free(gc);
  return err;
}

static gpointer ratio_thread(gpointer data) {
  struct ratio_work *W = data;
  guint ncod = W->codecs->len;
  struct ratio_bufs b = {
      g_new(float, W->nc->sample),
      W->nc->end_to_end ? g_new(float, ncod * W->nc->sample) : NULL,
      W->nc->momentum > 0 ? g_new(float, ncod * W->nc->sample) : NULL,
      g_malloc(W->cap),
      g_new0(codec_state_t *, ncod * W->nw),
      g_new0(codec_state_t *, ncod)};
  for (;;) {
    size_t ti = (size_t)g_atomic_int_add(&W->next, 1);
    if (ti >= W->m->ntensors)
      break;
    W->errs[ti] = encode_tensor(W, ti, &b);
  }
  g_free(b.x);
  g_free(b.agg);
  g_free(b.vel);
  g_free(b.out);
  g_free(b.st);
  g_free(b.pst);
  return NULL;
}

static int encode_model(const struct repro *r, const struct point *p,
                        const struct model *m, const GPtrArray *codecs,
                        const struct ratio_counts *nc, int jobs,
                        struct ratio_sums *sum, char **err) {
  guint ncod = codecs->len;
  size_t nt = m->ntensors;
  struct ratio_work W = {r,
                         p,
                         m,
                         codecs,
                         nc,
                         ratio_workers(nc, p),
                         0,
                         g_new0(double, nt *ncod),
                         g_new0(double, nt *ncod),
                         g_new0(double, 4 * nt * ncod),
                         g_new0(char *, nt),
                         0};
  for (guint c = 0; c < ncod; c++) {
    size_t b = codec_bound(g_ptr_array_index(codecs, c), nc->sample);
    W.cap = b > W.cap ? b : W.cap;
  }
  /* No more threads than processors: each holds a tensor's streams. */
  size_t nthreads = jobs < 1 ? 1 : (size_t)jobs;
  nthreads = MIN(nthreads, (size_t)g_get_num_processors());
  nthreads = MAX(MIN(nthreads, nt), 1);
  GThread **th = g_new0(GThread *, nthreads);
  for (size_t i = 1; i < nthreads; i++)
    th[i] = g_thread_new("codec-ratio", ratio_thread, &W);
  ratio_thread(&W);
  for (size_t i = 1; i < nthreads; i++)
    g_thread_join(th[i]);
  g_free(th);
  int rc = 0;
  for (size_t ti = 0; ti < nt; ti++) {
    if (W.errs[ti] && !rc) {
      *err = W.errs[ti];
      W.errs[ti] = NULL;
      rc = -1;
    }
    g_free(W.errs[ti]);
    for (guint c = 0; c < ncod; c++) {
      sum->push[c] += W.push[ti * ncod + c];
      sum->pull[c] += W.pull[ti * ncod + c];
      for (int j = 0; j < 4; j++)
        sum->counts[4 * c + j] += W.counts[4 * (ti * ncod + c) + j];
    }
  }
  g_free(W.errs);
  g_free(W.push);
  g_free(W.pull);
  g_free(W.counts);
  return rc;
}

/* The row of runs.csv for codec C (LABEL) on model M (point P) with NW
 * workers: PUSH and PULL bytes as encode_model sums them, COUNTS[4]. */
static GPtrArray *ratio_row(const struct point *p, const struct model *m,
                            const char *label, const codec_t *c,
                            const struct ratio_counts *nc, size_t nw,
                            double push, double pull, const double counts[4]) {
  bool inc = codec_class_count(c) > 0;
  /* The values each worker pushes over the counted steps. */
  double values = (double)m->params * (double)nc->steps;
  double sent = nc->end_to_end ? push + (double)nw * pull : push;
  double bits = 8.0 * sent / (values * (double)nw * (nc->end_to_end ? 2 : 1));
  GPtrArray *f = g_ptr_array_new();
  g_ptr_array_add(f, g_strdup(p->model));
  g_ptr_array_add(f, g_strdup(label));
  g_ptr_array_add(f, g_strdup(codec_spec(c)));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->params));
  g_ptr_array_add(f, g_strdup_printf("%zu", nc->sample));
  g_ptr_array_add(f, g_strdup_printf("%zu", nc->warmup));
  g_ptr_array_add(f, g_strdup_printf("%zu", nc->steps));
  g_ptr_array_add(f, num(bits));
  g_ptr_array_add(f, num(32.0 / bits));
  for (int j = 0; j < 4; j++)
    g_ptr_array_add(f, inc ? num(counts[j] / (values * (double)nw))
                           : g_strdup(""));
  g_ptr_array_add(f, g_strdup_printf("%zu", nw));
  g_ptr_array_add(f, num(4.0 * values * (double)nw / push));
  g_ptr_array_add(f, nc->end_to_end ? num(4.0 * values / pull) : g_strdup(""));
  return f;
}

struct table *repro_codec_ratio(const struct repro *r,
                                const struct experiment *e, int jobs,
                                char **err) {
  GPtrArray *specs, *labels, *codecs;
  struct ratio_counts nc;
  if (ratio_counts(r, &nc, err) != 0 ||
      codecs_of(r, &specs, &labels, &codecs, err) != 0)
    return NULL;
  static const char *const cols[] = {
      "model",       "label",      "codec",       "params",
      "sample",      "warmup",     "steps",       "bits_per_value",
      "ratio",       "share_2bit", "share_10bit", "share_18bit",
      "share_34bit", "workers",    "push_ratio",  "pull_ratio"};
  struct table *t = columns(cols, G_N_ELEMENTS(cols));
  for (guint pi = 0; pi < e->points->len && t; pi++) {
    const struct point *p = g_ptr_array_index(e->points, pi);
    struct model *m;
    char msg[512];
    struct model_opts o = point_model_opts(p);
    if (model_load(p->model, &o, &m, msg, sizeof msg) != 0) {
      *err = g_strdup_printf("%s: %s", r->path, msg);
      table_free(t);
      t = NULL;
      break;
    }
    struct ratio_sums sum = {g_new0(double, codecs->len),
                             g_new0(double, codecs->len),
                             g_new0(double, 4 * (size_t)codecs->len)};
    if (encode_model(r, p, m, codecs, &nc, jobs, &sum, err)) {
      table_free(t);
      t = NULL;
    }
    size_t nw = ratio_workers(&nc, p);
    for (guint ci = 0; ci < codecs->len && t; ci++)
      table_add_row(t,
                    ratio_row(p, m, g_ptr_array_index(labels, ci),
                              g_ptr_array_index(codecs, ci), &nc, nw,
                              sum.push[ci], sum.pull[ci], sum.counts + 4 * ci));
    g_free(sum.push);
    g_free(sum.pull);
    g_free(sum.counts);
    model_free(m);
  }
  g_ptr_array_free(specs, TRUE);
  g_ptr_array_free(labels, TRUE);
  g_ptr_array_free(codecs, TRUE);
  return t;
}

/* splitmix64: the uniform test data of RedSync Fig. 3. */
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* N values drawn from the standard uniform distribution from SEED. */
static float *uniform_values(size_t n, uint64_t seed) {
  float *x = g_new(float, n);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)((double)(mix(&seed) >> 11) * 0x1p-53);
  return x;
}

/* The seconds of formula F (an allreduce, RedSync Eq. 2) for N float32
 * values on point P's platform; NaN when it does not apply. */
static double allreduce_s(const struct formula *f, const struct point *p,
                          size_t n) {
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_P] = p->nodes;
  in.v[FP_N] = 4.0 * (double)n;
  in.v[FP_ALPHA] = p->latency_s;
  in.v[FP_BETA] = 1.0 / p->bandwidth_Bps;
  in.v[FP_GAMMA] = 1.0 / p->reduce_Bps;
  struct formula_out fo;
  char msg[256];
  return formula_eval(f, &in, &fo, msg, sizeof msg) == 0 ? fo.total : NAN;
}

/* Codec C's encode of the N values X, timed: one untimed warm-up run
 * (page faults, scratch buffers), then RUNS timed runs of STEPS
 * consecutive encodes from a fresh residual; *MED the median seconds per
 * encode (TIMES: room for RUNS), *SENT the values a sparse payload says
 * it sent, per encode of the last run. Steps matter to `sampled`, which
 * reuses a threshold for several steps. */
static int time_encode(const struct repro *r, const codec_t *c, const float *x,
                       size_t n, uint64_t seed, size_t runs, size_t steps,
                       double *times, double *med, double *sent, char **err) {
  size_t cap = codec_bound(c, n);
  unsigned char *out = g_malloc(cap);
  codec_state_t *st;
  if (!codec_accepts(c, n) || codec_state_create(c, n, seed, &st) != 0) {
    *err = g_strdup_printf("%s: %s cannot take %zu values", r->path,
                           codec_spec(c), n);
    g_free(out);
    return -1;
  }
  *sent = 0;
  int rc = 0;
  for (size_t run = 0; run <= runs && !rc; run++) {
    codec_state_reset(st);
    double t0 = codec_bench_now();
    for (size_t s = 0; s < steps; s++) {
      ptrdiff_t len = codec_encode(st, x, n, out, cap);
      if (len < 0) {
        *err = g_strdup_printf("%s: %s: %s", r->path, codec_spec(c),
                               codec_strerror((int)len));
        rc = -1;
        break;
      }
      if (run == runs && codec_is_sparse(c))
        *sent += (double)codec_payload_values(c, out, (size_t)len, n) /
                 (double)steps;
    }
    if (!rc && run)
      times[run - 1] = (codec_bench_now() - t0) / (double)steps;
  }
  codec_state_free(st);
  g_free(out);
  if (rc)
    return rc;
  *med = codec_bench_median(times, runs);
  return 0;
}

/* The row of runs.csv for codec C (LABEL) on N values. */
static GPtrArray *select_row(size_t n, const char *label, const codec_t *c,
                             double med, double allreduce, double sent) {
  GPtrArray *row = g_ptr_array_new();
  g_ptr_array_add(row, g_strdup_printf("%zu", n));
  g_ptr_array_add(row, g_strdup_printf("%zu", 4 * n));
  g_ptr_array_add(row, g_strdup(label));
  g_ptr_array_add(row, g_strdup(codec_spec(c)));
  g_ptr_array_add(row, num(med));
  g_ptr_array_add(row, num(allreduce));
  g_ptr_array_add(row, num(med / allreduce));
  g_ptr_array_add(row,
                  codec_is_sparse(c) ? num(sent) : g_strdup(""));
  return row;
}

struct table *repro_select_time(const struct repro *r,
                                const struct experiment *e, char **err) {
  GPtrArray *specs, *labels, *codecs;
  size_t runs, steps;
  if (select_counts(r, &runs, &steps, err) != 0 ||
      codecs_of(r, &specs, &labels, &codecs, err) != 0)
    return NULL;
  GPtrArray *sizes = repro_split_specs(repro_param(r, "sizes", ""));
  const struct point *p = g_ptr_array_index(e->points, 0);
  const struct formula *f =
      formula_find(repro_param(r, "allreduce", "rabenseifner"));
  static const char *const cols[] = {"values",
                                     "bytes",
                                     "label",
                                     "codec",
                                     "select_s",
                                     "allreduce_s",
                                     "select_x_allreduce",
                                     "sent_values"};
  struct table *t = columns(cols, G_N_ELEMENTS(cols));
  double *times = g_new(double, runs);
  for (guint si = 0; si < sizes->len && t; si++) {
    double nd;
    parse_count(g_ptr_array_index(sizes, si), &nd);
    size_t n = (size_t)nd;
    float *x = uniform_values(n, p->grad.seed);
    double allreduce = allreduce_s(f, p, n);
    for (guint ci = 0; ci < codecs->len; ci++) {
      const codec_t *c = g_ptr_array_index(codecs, ci);
      double med, sent;
      if (time_encode(r, c, x, n, p->grad.seed, runs, steps, times, &med, &sent,
                      err)) {
        table_free(t);
        t = NULL;
        break;
      }
      table_add_row(t, select_row(n, g_ptr_array_index(labels, ci), c, med,
                                  allreduce, sent));
    }
    g_free(x);
  }
  g_free(times);
  g_ptr_array_free(sizes, TRUE);
  g_ptr_array_free(specs, TRUE);
  g_ptr_array_free(labels, TRUE);
  g_ptr_array_free(codecs, TRUE);
  return t;
}
