/* sim/run.c: one simulation: the actors of workers and aggregators, the
 * training schedules (sync, overlap, pipe), payloads and the oracle, and
 * the measurements (engine.h). */
#include "engine.h"

#include "codec_cost.h"
#include "gradgen.h"
#include "platform.h"
#include "sim.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mutex.h>
#include <simgrid/plugins/load.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

XBT_LOG_NEW_CATEGORY(gradsim, "gradsim");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(gs_run, gradsim, "runs");

/* ---- configuration checks -------------------------------------------- */

/* Codecs whose payload size does not depend on the data (payload = none
 * can time them without values). */
static bool fixed_size(const codec_t *c) {
  const char *n = codec_name(c);
  if (!strcmp(n, "inceptionn") || !strcmp(n, "3lc"))
    return false;
  if (!strcmp(n, "rgc"))
    return strstr(codec_spec(c), "select=exact") ||
           strstr(codec_spec(c), "select=trimmed");
  return true;
}

static struct model *load_model(const struct point *p, char **err) {
  struct model *m;
  char e[512];
  int rc;
  if (!strcmp(p->model, "synthetic"))
    rc = model_synthetic(p->params, (size_t)p->tensors, p->compute_s,
                         p->update_s, &m, e, sizeof e);
  else {
    struct model_opts o = {p->device, p->precision, p->batch, NULL};
    rc = model_load(p->model, &o, &m, e, sizeof e);
  }
  if (rc) {
    *err = g_strdup_printf("[model] %s", e);
    return NULL;
  }
  return m;
}

/* Values held per bucket: everything, a sample of at least 64 per worker
 * (so that every ring block holds some), or nothing. */
static size_t held_of(const struct point *p, uint64_t n) {
  if (p->payload == PAYLOAD_NONE)
    return 0;
  if (p->payload == PAYLOAD_FULL)
    return (size_t)n;
  uint64_t s = (uint64_t)p->sample;
  uint64_t floor64 = 64 * (uint64_t)(p->nodes + p->aggregators);
  s = s > floor64 ? s : floor64;
  return (size_t)(n < s ? n : s);
}

static size_t physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : (size_t)1 << 34;
}

/* Ring legs in lockstep can be fast-forwarded (collectives/common.c):
 * a symmetric platform, everyone at the same speed, no data. */
static bool ff_allowed(const struct point *p) {
  bool ok = p->fast_forward && p->payload == PAYLOAD_NONE &&
            p->topology == TOPO_STAR && p->mode == MODE_SYNC &&
            p->placement != PLACE_NIC && !p->framing.packets;
  for (int i = 0; p->slowdown && i < p->nodes && ok; i++)
    ok = p->slowdown[i] == 1.0;
  return ok;
}

static struct bucket *buckets_of(const struct model *m, double fusion_bytes,
                                 size_t *count);

/* The alpha count of a symmetric collective's formula (no aggregators,
 * a formula of p, n, alpha, beta and gamma only), in which every worker
 * sends one message per round; 0 for the others. */
static double rounds_of(const struct collective *c, int p) {
  const struct formula *f = c->formula ? formula_find(c->formula) : NULL;
  const unsigned long netg = 1UL << FP_P | 1UL << FP_N | 1UL << FP_ALPHA |
                             1UL << FP_BETA | 1UL << FP_GAMMA;
  if (!f || c->aggregators || f->needs != netg)
    return 0;
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_P] = p;
  in.v[FP_N] = 0;
  in.v[FP_ALPHA] = 1;
  in.v[FP_BETA] = 1;
  in.v[FP_GAMMA] = 0;
  struct formula_out o;
  char e[256];
  if (formula_eval(f, &in, &o, e, sizeof e) != 0)
    return 0;
  return floor(o.total + 0.5);
}

/* Steps of a ring leg simulated under fast-forward (collectives/common.c
 * simulates two per leg, two legs). */
enum { FF_ROUNDS = 4 };

int run_shape(const struct point *p, struct run_shape *out, char **err) {
  *err = NULL;
  memset(out, 0, sizeof *out);
  const struct collective *coll = coll_find(p->algorithm);
  if (!coll) {
    *err = g_strdup_printf("[exchange] algorithm = %s is not valid",
                           p->algorithm);
    return -1;
  }
  struct model *m = load_model(p, err);
  if (!m)
    return -1;
  if (strcmp(p->codec, "none") != 0) {
    codec_t *c;
    if (codec_create(p->codec, &c, NULL, 0) == 0) {
      out->stateful = codec_is_stateful(c);
      codec_free(c);
    }
  }
  out->hosts = p->nodes + (coll->aggregators ? p->aggregators : 0);
  struct bucket *b = buckets_of(m, p->fusion_bytes, &out->buckets);
  for (size_t i = 0; i < out->buckets; i++)
    out->held_values += (double)held_of(p, b[i].n);
  g_free(b);
  model_free(m);
  out->exchanges = floor((double)p->iterations / p->local_steps) +
                   (p->iterations % p->local_steps != 0);
  out->rounds = rounds_of(coll, p->nodes);
  out->fast_forward = ff_allowed(p);
  if (out->fast_forward)
    out->rounds = fmin(out->rounds, FF_ROUNDS);
  return 0;
}

int run_check(const struct point *p, char **err) {
  *err = NULL;
  const struct collective *coll = coll_find(p->algorithm);
  if (!coll) {
    char *names = coll_names();
    *err = g_strdup_printf("[exchange] algorithm = %s is not valid (valid: "
                           "%s)",
                           p->algorithm, names);
    g_free(names);
    return -1;
  }
  if (coll->pow2 && (p->nodes & (p->nodes - 1))) {
    *err = g_strdup_printf("[exchange] algorithm = %s needs a power-of-two "
                           "number of workers, not [platform] nodes = %d",
                           coll->name, p->nodes);
    return -1;
  }
  if (coll->aggregators && p->aggregators < 1) {
    *err = g_strdup_printf("[exchange] algorithm = %s needs [platform] "
                           "aggregators >= 1",
                           coll->name);
    return -1;
  }
  if (coll->aggregators && p->aggregators > p->nodes) {
    *err = g_strdup_printf("[platform] aggregators = %d: at most one per "
                           "worker (nodes = %d)",
                           p->aggregators, p->nodes);
    return -1;
  }
  codec_t *c = NULL;
  if (strcmp(p->codec, "none") != 0) {
    char e[CODEC_ERR_MAX];
    if (codec_create(p->codec, &c, e, sizeof e) != 0) {
      *err = g_strdup_printf("[exchange] codec = %s: %s", p->codec, e);
      return -1;
    }
    if (codec_is_stateful(c) && !coll->stateful) {
      *err = g_strdup_printf(
          "[exchange] codec = %s keeps an error-feedback state per worker, "
          "which algorithm = %s (re-encoding partial sums on every hop) "
          "cannot use: take allgather-rdb, ps or ps-shared, or a stateless "
          "codec",
          p->codec, coll->name);
      codec_free(c);
      return -1;
    }
    if (p->payload == PAYLOAD_NONE && !fixed_size(c)) {
      *err = g_strdup_printf("[exchange] codec = %s: its payload size "
                             "depends on the data, so payload = none cannot "
                             "time it (use full or sampled)",
                             p->codec);
      codec_free(c);
      return -1;
    }
  }
  struct model *m = load_model(p, err);
  if (!m) {
    codec_free(c);
    return -1;
  }
  if (p->payload == PAYLOAD_FULL) {
    /* Gradient values, the oracle's double shadow and sums, residuals. */
    double per_value = 4 + 8 + 8 + (c && codec_is_stateful(c) ? 4 : 0);
    double need = per_value * (double)m->params *
                  (double)(p->nodes + 1 + p->aggregators);
    double have = 0.6 * (double)physical_memory();
    if (need > have) {
      *err = g_strdup_printf(
          "payload = full for %s on %d workers needs about %.1f GB, more "
          "than this machine can give (%.1f GB): use [exchange] payload = "
          "sampled",
          m->name, p->nodes, need / 1e9, have / 1e9);
      model_free(m);
      codec_free(c);
      return -1;
    }
  }
  model_free(m);
  codec_free(c);
  return 0;
}

/* ---- the run's shared state ------------------------------------------ */

/* Gradient jobs between a worker's compute and communication actors. */
struct job {
  int iteration;
  size_t bucket; /* SIZE_MAX: every bucket of the iteration */
};

struct wstate {
  struct worker *w;
  struct vec *vecs;    /* per bucket */
  float **accum;       /* per bucket: local steps not yet sent */
  GQueue *jobs;
  sg_sem_t job_sem, done_sem;
  int done_iters;      /* exchanges completed (pipe) */
  GArray *waits;       /* compute-side waits: pairs of doubles */
};

static struct sim S;
static struct wstate *WS;
static const struct point *P;
static double **Truth;     /* [slot * nbuckets + bucket], the oracle */
static int Truth_slots;

static int exchanges_of(int it) {
  /* 3LC's local steps: an exchange every local_steps iterations. */
  return (it + 1) % P->local_steps == 0 || it == P->iterations - 1;
}

/* Fill bucket B of worker W at iteration IT with its gradient: each
 * tensor's values, or, sampled, a prefix of each tensor in proportion. */
static void generate(int w, size_t b, int it, float *out, size_t m) {
  const struct bucket *bk = &S.buckets[b];
  size_t done = 0;
  for (size_t t = bk->first; t < bk->first + bk->count && done < m; t++) {
    uint64_t n = S.model->tensors[t].elements;
    size_t take = m == bk->n ? (size_t)n
                             : (size_t)((long double)n * m / bk->n + 0.5);
    if (t == bk->first + bk->count - 1 || done + take > m)
      take = m - done;
    gradgen_fill(&P->grad, (uint32_t)w, (uint32_t)t, (uint64_t)it, 1.0, 0,
                 out + done, take);
    done += take;
  }
}

/* The worker's vector of bucket B for the exchange of iteration IT. */
static void prepare(struct wstate *ws, size_t b, int it) {
  struct vec *v = &ws->vecs[b];
  if (!v->m)
    return;
  generate(ws->w->rank, b, it, v->x, v->m);
  if (ws->accum) {
    for (size_t i = 0; i < v->m; i++)
      v->x[i] += ws->accum[b][i];
    memset(ws->accum[b], 0, v->m * sizeof(float));
  }
  if (v->exact) {
    double *truth = Truth[(it % Truth_slots) * (int)S.nbuckets + (int)b];
    for (size_t i = 0; i < v->m; i++) {
      v->exact[i] = v->x[i];
      truth[i] += v->x[i];
    }
  }
}

/* A local step without exchange: keep the gradient for later. It is
 * generated aside, not in the bucket's vector, which an exchange of an
 * earlier iteration may still be using (overlap, pipe). */
static void accumulate(struct wstate *ws, int it) {
  for (size_t b = 0; b < S.nbuckets; b++) {
    struct vec *v = &ws->vecs[b];
    if (!v->m)
      continue;
    float *g = g_new(float, v->m);
    generate(ws->w->rank, b, it, g, v->m);
    for (size_t i = 0; i < v->m; i++)
      ws->accum[b][i] += g[i];
    g_free(g);
  }
}

/* Per-value error bound of one encode of a value of magnitude up to A. */
static double codec_bound_abs(double a) {
  if (!S.codec)
    return 0;
  const char *n = codec_name(S.codec), *spec = codec_spec(S.codec);
  if (!strcmp(n, "fp16"))
    return a * 0x1p-11 + 0x1p-24;
  if (!strcmp(n, "trunc")) {
    int bits = atoi(strstr(spec, "bits=") + 5);
    return a * ldexp(1.0, bits - 23);
  }
  if (!strcmp(n, "q8"))
    return a / 254.0 * 1.0001;
  if (!strcmp(n, "inceptionn")) {
    int eb = atoi(strstr(spec, "eb=") + 3);
    double e = ldexp(1.0, eb);
    return e > 0x1p-7 ? e : 0x1p-7;
  }
  return INFINITY; /* error feedback or stochastic: no per-step bound */
}

/* After bucket B's exchange at IT: the shadow must be the exact sum of
 * every worker's gradient (the collective's dataflow), and the values
 * within the codec's own error of it. */
static void oracle_check(struct wstate *ws, size_t b, int it) {
  struct vec *v = &ws->vecs[b];
  if (!v->exact || S.coll->no_oracle)
    return;
  double *truth = Truth[(it % Truth_slots) * (int)S.nbuckets + (int)b];
  double amax = 0, tmax = 0;
  for (size_t i = 0; i < v->m; i++) {
    tmax = fmax(tmax, fabs(truth[i]));
    amax = fmax(amax, fabs(v->exact[i]));
  }
  /* A bound on any partial sum's magnitude: p times the largest input. */
  double a = tmax * S.nworkers + amax;
  int hops = 2 * S.nworkers + 2;
  double lossy = codec_bound_abs(a) * hops + a * S.nworkers * 0x1p-23;
  for (size_t i = 0; i < v->m; i++) {
    double flow = fabs(v->exact[i] - truth[i]);
    double loss = fabs((double)v->x[i] - truth[i]);
    bool bad = flow > 1e-9 * (a + 1e-30) || !isfinite(v->x[i]) ||
               (isfinite(lossy) && loss > lossy);
    if (bad) {
      S.oracle_ok = false;
      if (!S.oracle_msg->len)
        g_string_printf(S.oracle_msg,
                        "iteration %d, bucket %zu, worker %d, value %zu: "
                        "got %.9g, the exact sum is %.9g (dataflow %.9g, "
                        "allowed codec error %.3g)",
                        it, b, ws->w->rank, i, (double)v->x[i], truth[i],
                        v->exact[i], lossy);
      return;
    }
  }
  S.oracle_run = true;
}

/* Everyone's check of IT done: the truth slot can be reused. */
static int *Checked;
static void truth_release(int it) {
  int slot = it % Truth_slots;
  if (++Checked[slot] < S.nworkers)
    return;
  Checked[slot] = 0;
  for (size_t b = 0; b < S.nbuckets; b++)
    if (Truth[slot * (int)S.nbuckets + (int)b])
      memset(Truth[slot * (int)S.nbuckets + (int)b], 0,
             WS[0].vecs[b].m * sizeof(double));
}

/* ---- accounting -------------------------------------------------------- */

static struct iter_rec *rec(int it, int w) {
  return &S.recs[(size_t)it * (size_t)S.nworkers + (size_t)w];
}

/* Attribute the wait [a, b) of worker W to its communication side's
 * states; the uncovered rest is idle. */
static void attribute(struct worker *w, double a, double b,
                      struct iter_rec *r) {
  if (b <= a)
    return;
  double covered = 0;
  for (guint i = 0; i < w->spans->len; i++) {
    const struct span *s = &g_array_index(w->spans, struct span, i);
    double lo = fmax(a, s->t0), hi = fmin(b, s->t1);
    if (hi <= lo)
      continue;
    covered += hi - lo;
    switch (s->st) {
    case ST_CODEC:
      r->codec_s += hi - lo;
      break;
    case ST_COMM:
      r->comm_s += hi - lo;
      break;
    case ST_REDUCE:
      r->reduce_s += hi - lo;
      break;
    case ST_IDLE:
    case ST_NSTATES:
      r->idle_s += hi - lo;
      break;
    }
  }
  r->idle_s += fmax(0, (b - a) - covered);
}

/* Drop spans that ended before T (no later wait can overlap them). */
static void prune_spans(struct worker *w, double t) {
  guint keep = 0;
  for (guint i = 0; i < w->spans->len; i++) {
    struct span s = g_array_index(w->spans, struct span, i);
    if (s.t1 > t)
      g_array_index(w->spans, struct span, keep++) = s;
  }
  g_array_set_size(w->spans, keep);
}

/* ---- collectives and schedules ----------------------------------------- */

/* [exchange] compress_min: small buckets (batch normalization's scales
 * and shifts, biases) go as plain fp32 whatever the codec, as 3LC does
 * (seeds/004 Section 5.1: "we exclude state changes for small layers
 * (batch normalization in our experiments) from compression"). */
static bool uncompressed(size_t b) {
  return S.codec && S.buckets[b].n < (uint64_t)P->compress_min;
}

static void exchange_bucket(struct wstate *ws, size_t b) {
  struct coll_call c = {&S, ws->w, ws->w->rank, b, &ws->vecs[b],
                        uncompressed(b)};
  S.coll->worker(&c);
}

/* All buckets of iteration IT, in order. */
static void exchange_all(struct wstate *ws, int it) {
  struct worker *w = ws->w;
  w->first_send = -1;
  w->wire_bytes = 0;
  for (size_t b = 0; b < S.nbuckets; b++) {
    prepare(ws, b, it);
    exchange_bucket(ws, b);
    oracle_check(ws, b, it);
  }
  truth_release(it);
  struct iter_rec *r = rec(it, w->rank);
  r->exchange_start = w->first_send;
  r->exchange_end = sim_now();
  r->wire_bytes = w->wire_bytes;
}

static void compute(struct worker *w, double seconds, struct iter_rec *r) {
  double t0 = sim_now();
  sim_gpu(w, seconds);
  r->compute_s += sim_now() - t0;
  sim_trace(&S, w->rank, 0, t0, sim_now(), ST_NSTATES);
}

/* sync: update, forward, backward, then the exchange (Pipe-SGD Eq. 2). */
static void worker_sync(int argc, char **argv) {
  (void)argc;
  struct wstate *ws = &WS[atoi(argv[1])];
  struct worker *w = ws->w;
  const struct model *m = S.model;
  /* Everything the communication side logs falls inside the exchange
   * window: sum it rather than keep it. */
  w->direct = true;
  for (int it = 0; it < P->iterations; it++) {
    struct iter_rec *r = rec(it, w->rank);
    r->start = sim_now();
    compute(w, m->update_s + m->forward_s + m->backward_s, r);
    if (exchanges_of(it)) {
      double a = sim_now();
      memset(w->acc, 0, sizeof w->acc);
      exchange_all(ws, it);
      double covered = 0;
      for (int st = 0; st < ST_NSTATES; st++)
        covered += w->acc[st];
      r->codec_s += w->acc[ST_CODEC];
      r->comm_s += w->acc[ST_COMM];
      r->reduce_s += w->acc[ST_REDUCE];
      r->idle_s += w->acc[ST_IDLE] + fmax(0, (sim_now() - a) - covered);
    } else {
      accumulate(ws, it);
      r->exchange_start = r->exchange_end = -1;
    }
    r->end = sim_now();
  }
}

/* The communication actor of overlap and pipe: exchanges the jobs the
 * compute actor posts, in order. */
static void worker_comm(int argc, char **argv) {
  (void)argc;
  struct wstate *ws = &WS[atoi(argv[1])];
  struct worker *w = ws->w;
  for (;;) {
    sg_sem_acquire(ws->job_sem);
    struct job *j = g_queue_pop_head(ws->jobs);
    if (j->iteration < 0) {
      g_free(j);
      break;
    }
    struct iter_rec *r = rec(j->iteration, w->rank);
    if (j->bucket == SIZE_MAX) {
      exchange_all(ws, j->iteration);
    } else {
      if (j->bucket == 0) {
        w->first_send = -1;
        w->wire_bytes = 0;
      }
      prepare(ws, j->bucket, j->iteration);
      exchange_bucket(ws, j->bucket);
      oracle_check(ws, j->bucket, j->iteration);
      if (j->bucket == S.nbuckets - 1) {
        truth_release(j->iteration);
        r->exchange_start = w->first_send;
        r->exchange_end = sim_now();
        r->wire_bytes = w->wire_bytes;
      }
    }
    if (j->bucket == SIZE_MAX || j->bucket == S.nbuckets - 1)
      sg_sem_release(ws->done_sem);
    g_free(j);
  }
}

static void post(struct wstate *ws, int it, size_t bucket) {
  struct job *j = g_new(struct job, 1);
  j->iteration = it;
  j->bucket = bucket;
  g_queue_push_tail(ws->jobs, j);
  sg_sem_release(ws->job_sem);
}

/* Wait for one finished exchange, attributing the wait. */
static void wait_done(struct wstate *ws, struct iter_rec *r) {
  double a = sim_now();
  sg_sem_acquire(ws->done_sem);
  attribute(ws->w, a, sim_now(), r);
}

/* overlap: each bucket is exchanged as soon as backward has produced its
 * tensors (layer-wise overlap, GradientFlow Fig. 12; lazy allreduce when
 * fusion_bytes groups them, Fig. 15); the next update waits for all. */
static void worker_overlap(int argc, char **argv) {
  (void)argc;
  struct wstate *ws = &WS[atoi(argv[1])];
  struct worker *w = ws->w;
  const struct model *m = S.model;
  for (int it = 0; it < P->iterations; it++) {
    struct iter_rec *r = rec(it, w->rank);
    r->start = sim_now();
    compute(w, m->update_s + m->forward_s, r);
    bool send = exchanges_of(it);
    size_t next = 0, produced = 0; /* buckets posted; tensors produced */
    for (size_t l = m->nlayers; l-- > 0;) {
      compute(w, m->layers[l].backward_s, r);
      while (produced < m->ntensors && m->tensors[produced].layer == l)
        produced++;
      /* Tensors appear in backward order; a bucket is complete when its
       * last tensor is. */
      while (send && next < S.nbuckets &&
             S.buckets[next].first + S.buckets[next].count <= produced)
        post(ws, it, next++);
    }
    while (send && next < S.nbuckets)
      post(ws, it, next++);
    if (send)
      wait_done(ws, r);
    else {
      accumulate(ws, it);
      r->exchange_start = r->exchange_end = -1;
    }
    prune_spans(w, sim_now());
    r->end = sim_now();
  }
  post(ws, -1, 0);
}

/* pipe: Pipe-SGD Algorithm 1 with iteration dependency K: iteration t
 * waits for the aggregated gradient of iteration t - K before its update,
 * and its own gradient is exchanged by the communication actor while the
 * next iterations compute. */
static void worker_pipe(int argc, char **argv) {
  (void)argc;
  struct wstate *ws = &WS[atoi(argv[1])];
  struct worker *w = ws->w;
  const struct model *m = S.model;
  int posted = 0, waited = 0;
  for (int it = 0; it < P->iterations; it++) {
    struct iter_rec *r = rec(it, w->rank);
    r->start = sim_now();
    /* gsum[t - K] must be ready: that is, all but the K - 1 latest of the
     * exchanges posted so far. */
    while (posted - waited > P->k - 1) {
      wait_done(ws, r);
      waited++;
    }
    compute(w, m->update_s + m->forward_s + m->backward_s, r);
    if (exchanges_of(it)) {
      post(ws, it, SIZE_MAX);
      posted++;
    } else {
      accumulate(ws, it);
      r->exchange_start = r->exchange_end = -1;
    }
    prune_spans(w, r->start);
    r->end = sim_now();
  }
  while (waited < posted) {
    wait_done(ws, rec(P->iterations - 1, w->rank));
    waited++;
  }
  post(ws, -1, 0);
}

struct astate {
  int a;
  struct vec *vecs; /* per bucket: the shard */
};
static struct astate *AS;

static void aggregator_actor(int argc, char **argv) {
  (void)argc;
  struct astate *as = &AS[atoi(argv[1])];
  for (int it = 0; it < P->iterations; it++) {
    if (!exchanges_of(it))
      continue;
    for (size_t b = 0; b < S.nbuckets; b++) {
      struct vec *v = &as->vecs[b];
      struct coll_call c = {&S, NULL, S.nworkers + as->a, b, v,
                            uncompressed(b)};
      S.coll->aggregator(&c);
    }
  }
}

/* SimGrid 3.32's link-load plugin can start tracking only inside the
 * simulation: this actor, created first, does it at time 0. */
static void track_links(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sg_link_t *links = sg_link_list();
  for (size_t i = 0; i < sg_link_count(); i++)
    sg_link_load_track(links[i]);
  xbt_free(links);
}

/* ---- setup and results --------------------------------------------------- */

/* Tensors into buckets of at least FUSION_BYTES (0: one per tensor,
 * INFINITY: one for all), in backward order. */
static struct bucket *buckets_of(const struct model *m, double fusion_bytes,
                                 size_t *count) {
  GArray *bs = g_array_new(FALSE, FALSE, sizeof(struct bucket));
  struct bucket cur = {0, 0, 0};
  for (size_t t = 0; t < m->ntensors; t++) {
    cur.count++;
    cur.n += m->tensors[t].elements;
    if (4.0 * (double)cur.n >= fusion_bytes || t == m->ntensors - 1) {
      g_array_append_val(bs, cur);
      cur = (struct bucket){t + 1, 0, 0};
    }
  }
  *count = bs->len;
  return (struct bucket *)(void *)g_array_free(bs, FALSE);
}

static void vec_init(struct vec *v, uint64_t n, size_t m, bool oracle) {
  v->n = n;
  v->m = m;
  v->x = m ? g_new0(float, m) : NULL;
  v->exact = m && oracle ? g_new0(double, m) : NULL;
}

/* The analytic model of the collective, summed over the buckets, on the
 * point's network: NAN where none applies (a codec, another topology). */
static double formula_of(void) {
  if (!S.coll->formula || S.codec || P->topology == TOPO_FILE ||
      P->topology == TOPO_FAT_TREE || P->topology == TOPO_DRAGONFLY ||
      (P->topology == TOPO_GPU && strcmp(S.coll->name, "hierarchical") != 0))
    return NAN;
  const struct formula *f = formula_find(S.coll->formula);
  double total = 0;
  for (size_t b = 0; b < S.nbuckets; b++) {
    struct formula_in in;
    formula_in_init(&in);
    in.v[FP_P] = S.nworkers;
    in.v[FP_N] = 4.0 * (double)S.buckets[b].n;
    in.v[FP_ALPHA] = P->latency_s;
    in.v[FP_BETA] = 1.0 / P->bandwidth_Bps;
    in.v[FP_GAMMA] = S.gamma;
    if (S.coll->formula_params)
      S.coll->formula_params(&S, &in);
    struct formula_out o;
    char err[256];
    if (formula_eval(f, &in, &o, err, sizeof err) != 0)
      return NAN;
    total += o.total;
  }
  return total;
}

static void summarize(struct run_result *r) {
  int n = P->iterations, ex = 0;
  double exch = 0;
  r->iterations = g_string_new(NULL);
  for (int it = 0; it < n; it++) {
    /* The worker whose iteration ends last is the critical path. */
    int crit = 0;
    double lo = INFINITY, hi = -INFINITY, wire = 0;
    for (int w = 0; w < S.nworkers; w++) {
      struct iter_rec *x = rec(it, w);
      if (x->end > rec(it, crit)->end)
        crit = w;
      if (x->exchange_start >= 0) {
        lo = fmin(lo, x->exchange_start);
        hi = fmax(hi, x->exchange_end);
      }
      wire += x->wire_bytes;
      g_string_append_printf(
          r->iterations,
          "%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.17g\n", it, w,
          x->start, x->end, x->compute_s, x->codec_s, x->comm_s, x->reduce_s,
          x->idle_s, x->exchange_start >= 0 ? x->exchange_end - x->exchange_start
                                            : 0,
          x->wire_bytes);
    }
    struct iter_rec *c = rec(it, crit);
    r->compute_s += c->compute_s / n;
    r->codec_s += c->codec_s / n;
    r->comm_s += c->comm_s / n;
    r->reduce_s += c->reduce_s / n;
    r->idle_s += c->idle_s / n;
    r->wire_bytes += wire / n;
    if (hi > lo) {
      exch += hi - lo;
      ex++;
    }
  }
  r->wire_bytes += S.aggr_wire_bytes / n;
  r->exchange_s = ex ? exch / ex : 0;
  r->simulated_s = simgrid_get_clock();
  r->iteration_s = r->simulated_s / n;
  double per = (double)n * S.nworkers;
  r->packets = S.net.packets / n;
  r->header_bytes = S.net.header_bytes / n;
  r->driver_s = S.net.driver_s / per;
  r->nic_s = S.net.nic_s / per;
  r->nic_busy = r->iteration_s > 0 ? r->nic_s / (2 * r->iteration_s) : 0;
  r->nic_stall_cycles = S.net.nic_stalls / per;
  r->formula_s = formula_of();
  r->ff_steps = S.ff_steps;
  r->oracle = !S.oracle_ok ? "fail" : S.oracle_run ? "pass" : "na";
  if (!S.oracle_ok)
    r->note = g_strdup(S.oracle_msg->str);
  /* links.csv: SimGrid's link-load plugin. */
  r->links = g_string_new(NULL);
  sg_link_t *links = sg_link_list();
  size_t nl = sg_link_count();
  for (size_t i = 0; i < nl; i++) {
    double bytes = sg_link_get_cum_load(links[i]);
    if (bytes <= 0)
      continue;
    double bw = sg_link_get_bandwidth(links[i]);
    g_string_append_printf(r->links, "%s,%.17g,%.9g,%.9g\n",
                           sg_link_get_name(links[i]), bytes,
                           bytes / fmax(r->simulated_s, 1e-300),
                           bytes / fmax(r->simulated_s, 1e-300) / bw);
  }
  xbt_free(links);
}

void run_result_clear(struct run_result *r) {
  if (r->iterations)
    g_string_free(r->iterations, TRUE);
  if (r->links)
    g_string_free(r->links, TRUE);
  g_free(r->note);
  memset(r, 0, sizeof *r);
}

int run_point(const struct point *p, const char *workdir, bool trace,
              struct run_result *r, char **err) {
  memset(r, 0, sizeof *r);
  if (run_check(p, err) != 0)
    return -1;
  P = p;
  memset(&S, 0, sizeof S);
  S.p = p;
  S.coll = coll_find(p->algorithm);
  S.model = load_model(p, err);
  if (strcmp(p->codec, "none") != 0)
    codec_create(p->codec, &S.codec, NULL, 0);
  char e[512];
  struct codec_costs *costs;
  if (codec_costs_load(*p->costs ? p->costs : NULL, &costs, e, sizeof e) !=
      0) {
    *err = g_strdup(e);
    return -1;
  }
  S.costs = costs;
  if (p->placement == PLACE_NIC && S.codec &&
      strcmp(codec_name(S.codec), "inceptionn") != 0 &&
      !codec_costs_nic(costs, S.codec, &S.nic_stream)) {
    *err = g_strdup_printf("[exchange] placement = nic: the cost table "
                           "has no 'nic' line for codec %s (see "
                           "models/codec_costs.conf)",
                           codec_spec(S.codec));
    return -1;
  }
  S.gamma = 1.0 / p->reduce_Bps;
  S.ff_ok = ff_allowed(p);
  S.nworkers = p->nodes;
  S.naggr = S.coll->aggregators ? p->aggregators : 0;
  S.oracle_ok = true;
  S.oracle_msg = g_string_new(NULL);
  S.mb = g_hash_table_new(g_direct_hash, g_direct_equal);
  S.buckets = buckets_of(S.model, p->fusion_bytes, &S.nbuckets);
  if (S.coll->check && S.coll->check(&S, e, sizeof e) != 0) {
    *err = g_strdup(e);
    return -1;
  }

  /* SimGrid. */
  char *xml = platform_xml(p, workdir, err);
  if (!xml)
    return -1;
  GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(args, g_strdup("gradsim"));
  char **cfg = platform_cfg(p);
  for (char **c = cfg; *c; c++)
    g_ptr_array_add(args, g_strdup(*c));
  g_strfreev(cfg);
  g_ptr_array_add(args, g_strdup("--cfg=contexts/stack-size:64"));
  g_ptr_array_add(args, g_strdup("--log=root.thres:critical"));
  /* --trace: gradsim writes its own Paje trace of the workers' states
   * (SimGrid 3.32's tracer aborts on split-duplex links). */
  if (trace)
    S.trace = g_array_new(FALSE, FALSE, sizeof(struct trace_ev));
  int argc = (int)args->len;
  g_ptr_array_add(args, NULL);
  /* SimGrid shifts the options it takes out of argv: give it a copy of the
   * pointer array, so that ARGS still holds every string to free. */
  char **argv = g_memdup2(args->pdata, args->len * sizeof(char *));
  simgrid_init(&argc, argv);
  sg_link_load_plugin_init();
  simgrid_load_platform(xml);
  g_free(xml);
  sg_host_t *whosts, *ahosts;
  if (platform_hosts(p, &whosts, &ahosts, err) != 0)
    return -1;

  /* Workers. */
  bool oracle = p->payload == PAYLOAD_FULL && !S.coll->no_oracle;
  Truth_slots = p->mode == MODE_PIPE ? p->k + 1 : 2;
  Truth = g_new0(double *, (size_t)Truth_slots * S.nbuckets);
  Checked = g_new0(int, Truth_slots);
  if (oracle)
    for (int s = 0; s < Truth_slots; s++)
      for (size_t b = 0; b < S.nbuckets; b++)
        Truth[(size_t)s * S.nbuckets + b] =
            g_new0(double, held_of(p, S.buckets[b].n) + 1);
  S.workers = g_new0(struct worker, S.nworkers);
  S.ranks = g_new(int, S.nworkers);
  for (int i = 0; i < S.nworkers; i++)
    S.ranks[i] = i;
  S.trees = g_new0(int *, S.naggr ? S.naggr : 1);
  for (int a = 0; a < S.naggr; a++) {
    S.trees[a] = g_new(int, S.nworkers + 1);
    S.trees[a][0] = S.nworkers + a;
    for (int i = 0; i < S.nworkers; i++)
      S.trees[a][i + 1] = i;
  }
  WS = g_new0(struct wstate, S.nworkers);
  S.recs = g_new0(struct iter_rec, (size_t)p->iterations * S.nworkers);
  int shards = S.naggr ? S.naggr : 1;
  for (int i = 0; i < S.nworkers; i++) {
    struct worker *w = &S.workers[i];
    w->rank = i;
    w->sim = &S;
    w->host = whosts[i];
    w->gpu = sg_mutex_init();
    w->slowdown = p->slowdown ? p->slowdown[i] : 1.0;
    w->spans = g_array_new(FALSE, FALSE, sizeof(struct span));
    w->cstate = g_new0(void *, S.nbuckets);
    struct wstate *ws = &WS[i];
    ws->w = w;
    ws->vecs = g_new0(struct vec, S.nbuckets);
    for (size_t b = 0; b < S.nbuckets; b++)
      vec_init(&ws->vecs[b], S.buckets[b].n, held_of(p, S.buckets[b].n),
               oracle);
    if (p->local_steps > 1) {
      ws->accum = g_new0(float *, S.nbuckets);
      for (size_t b = 0; b < S.nbuckets; b++)
        ws->accum[b] = g_new0(float, ws->vecs[b].m + 1);
    }
    if (S.codec && codec_is_stateful(S.codec)) {
      /* One error-feedback stream per bucket (and aggregator shard). */
      w->states = g_new0(codec_state_t *, S.nbuckets * (size_t)shards);
      for (size_t b = 0; b < S.nbuckets; b++)
        for (int a = 0; a < shards; a++) {
          struct vec tmp = ws->vecs[b];
          size_t lo, hi;
          uint64_t n = tmp.n;
          vec_held(&tmp, n * (uint64_t)a / (uint64_t)shards,
                   n * (uint64_t)(a + 1) / (uint64_t)shards, &lo, &hi);
          codec_state_create(S.codec, hi - lo,
                             p->grad.seed * 1000003u + (uint64_t)i,
                             &w->states[b * (size_t)shards + (size_t)a]);
        }
    }
    ws->jobs = g_queue_new();
    ws->job_sem = sg_sem_init(0);
    ws->done_sem = sg_sem_init(0);
  }
  /* Aggregators: one shard of every bucket each. */
  AS = g_new0(struct astate, S.naggr ? S.naggr : 1);
  if (S.naggr && S.codec && codec_is_stateful(S.codec))
    S.aggr_states = g_new0(codec_state_t *, S.nbuckets * (size_t)S.naggr);
  for (int a = 0; a < S.naggr; a++) {
    AS[a].a = a;
    AS[a].vecs = g_new0(struct vec, S.nbuckets);
    for (size_t b = 0; b < S.nbuckets; b++) {
      /* The shard holds what the workers' vectors hold of it. */
      uint64_t n = S.buckets[b].n;
      uint64_t lo = n * (uint64_t)a / (uint64_t)S.naggr,
               hi = n * (uint64_t)(a + 1) / (uint64_t)S.naggr;
      size_t hl, hh;
      vec_held(&WS[0].vecs[b], lo, hi, &hl, &hh);
      vec_init(&AS[a].vecs[b], hi - lo, hh - hl, oracle);
      if (S.aggr_states)
        codec_state_create(S.codec, hh - hl, p->grad.seed * 7919u + (uint64_t)a,
                           &S.aggr_states[b * (size_t)S.naggr + (size_t)a]);
    }
  }

  /* Actors. */
  sg_actor_create_("links", whosts[0], track_links, 0, NULL);
  for (int i = 0; i < S.nworkers; i++) {
    char idx[16];
    snprintf(idx, sizeof idx, "%d", i);
    const char *av[] = {"worker", idx};
    char name[32];
    snprintf(name, sizeof name, "worker%d", i);
    xbt_main_func_t main_fn = p->mode == MODE_SYNC      ? worker_sync
                              : p->mode == MODE_OVERLAP ? worker_overlap
                                                        : worker_pipe;
    sg_actor_create_(name, whosts[i], main_fn, 2, av);
    if (p->mode != MODE_SYNC) {
      snprintf(name, sizeof name, "comm%d", i);
      sg_actor_create_(name, whosts[i], worker_comm, 2, av);
    }
  }
  for (int a = 0; a < S.naggr; a++) {
    char idx[16], name[32];
    snprintf(idx, sizeof idx, "%d", a);
    snprintf(name, sizeof name, "aggregator%d", a);
    const char *av[] = {"aggregator", idx};
    sg_actor_create_(name, ahosts[a], aggregator_actor, 2, av);
  }
  simgrid_run();
  /* SimGrid keeps copies of what it takes from its command line. */
  g_free(argv);
  g_ptr_array_free(args, TRUE);
  if (S.fatal) {
    *err = g_strdup(S.fatal);
    return -1;
  }
  summarize(r);
  if (S.trace) {
    char *tpath = g_build_filename(workdir, "trace.paje", NULL);
    if (sim_trace_write(&S, tpath) != 0) {
      *err = g_strdup_printf("cannot write %s", tpath);
      g_free(tpath);
      return -1;
    }
    g_free(tpath);
  }
  g_free(whosts);
  g_free(ahosts);
  return 0;
}
