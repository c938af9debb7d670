/* sim/payload.c: the gradient values a run carries (payload = full or
 * sampled), local steps, and the oracle that checks every aggregated
 * gradient against the exact sum (sim.h; docs/run.md, "Payloads and the
 * oracle"). */
#include "sim.h"

#include "gradgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values held per bucket: everything, a sample of at least 64 per worker
 * (so that every ring block holds some), or nothing. */
size_t payload_held(const struct point *p, uint64_t n) {
  if (p->payload == PAYLOAD_NONE)
    return 0;
  if (p->payload == PAYLOAD_FULL)
    return (size_t)n;
  uint64_t s = (uint64_t)p->sample;
  uint64_t floor64 = 64 * (uint64_t)(p->nodes + p->aggregators);
  s = s > floor64 ? s : floor64;
  return (size_t)(n < s ? n : s);
}

/* The oracle's books of one bucket's linear exchange in one iteration
 * ("the oracle of a linear codec's exchange", below). */
struct lin_books {
  double *shift, *bound; /* per value: what workers kept back, its bound */
  double *acc;           /* codec_lin_acc_len() doubles */
  double *truth[2];      /* per round: the exact sum of the factors */
  size_t acc_len;
  bool acc_ready;
};

void payload_init_truth(struct sim *s, bool oracle) {
  s->truth_slots = s->p->mode == MODE_PIPE ? s->p->k + 1 : 2;
  s->truth = g_new0(double *, (size_t)s->truth_slots * s->nbuckets);
  s->checked = g_new0(int, s->truth_slots);
  /* At most 2^24 values (128 MB) of the persistent component are kept:
   * every sampled payload, and a full one up to about 16M parameters. */
  if (s->p->payload != PAYLOAD_NONE && s->p->grad.persist > 0)
    s->gcache = gradgen_cache_new((size_t)1 << 24);
  if (oracle && s->linear)
    s->lin = g_new0(struct lin_books, (size_t)s->truth_slots * s->nbuckets);
  if (oracle)
    for (int t = 0; t < s->truth_slots; t++)
      for (size_t b = 0; b < s->nbuckets; b++)
        s->truth[(size_t)t * s->nbuckets + b] =
            g_new0(double, payload_held(s->p, s->buckets[b].n) + 1);
}

/* The exact sums of bucket B of iteration IT. */
static double *truth_of(const struct sim *s, int it, size_t b) {
  return s->truth[(size_t)(it % s->truth_slots) * s->nbuckets + b];
}

/* Fill bucket B of worker W at iteration IT with its gradient: each
 * tensor's values, or, sampled, a prefix of each tensor in proportion. */
void payload_gradient(const struct sim *s, int w, size_t b, uint64_t it,
                      float *out, size_t m) {
  const struct bucket *bk = &s->buckets[b];
  size_t done = 0;
  for (size_t t = bk->first; t < bk->first + bk->count && done < m; t++) {
    uint64_t n = s->model->tensors[t].elements;
    size_t take = m == bk->n ? (size_t)n
                             : (size_t)((long double)n * m / bk->n + 0.5);
    if (t == bk->first + bk->count - 1 || done + take > m)
      take = m - done;
    gradgen_fill_cached(&s->p->grad, s->gcache, (uint32_t)w, (uint32_t)t, it,
                        1.0, 0, out + done, take);
    done += take;
  }
}

/* [exchange] warmup_steps: error feedback reaches its steady state only
 * after many steps (3LC's residual grows until the quantizer's zeros and
 * the error it carries balance; 40 steps from a zero residual are a
 * transient), so the codec streams start from the state that many
 * untimed steps leave them in. At each step every worker encodes a fresh
 * gradient (iteration 2^40 + k of the generator, which no timed iteration
 * draws) with each of its push streams, and ps-shared's aggregators
 * encode the sum of the pushes they decode with their pull streams, as
 * the exchange does. No simulated time passes. */

static void warm_bucket(struct sim *s, size_t b, uint64_t it, float *x,
                        float **sums, void *buf, size_t cap) {
  int shards = s->naggr ? s->naggr : 1;
  uint64_t n = s->buckets[b].n;
  for (int w = 0; w < s->nworkers; w++) {
    const struct vec *v = &s->ws[w].vecs[b];
    payload_gradient(s, w, b, it, x, v->m);
    for (int a = 0; a < shards; a++) {
      size_t lo, hi;
      vec_held(v, n * (uint64_t)a / (uint64_t)shards,
               n * (uint64_t)(a + 1) / (uint64_t)shards, &lo, &hi);
      codec_state_t *st = s->ws[w].w->states[b * (size_t)shards + (size_t)a];
      ptrdiff_t len = codec_encode(st, x + lo, hi - lo, buf, cap);
      if (len >= 0 && sums && hi > lo)
        codec_decode_add(s->codec, buf, (size_t)len, sums[a], hi - lo);
    }
  }
  for (int a = 0; sums && a < s->naggr; a++) {
    size_t m = s->as[a].vecs[b].m, k = b * (size_t)s->naggr + (size_t)a;
    server_pull(s->aggr_states[k], sums[a],
                s->aggr_vel ? s->aggr_vel[k] : NULL, m,
                s->p->server_momentum, buf, cap);
  }
}

void payload_warm_up(struct sim *s) {
  if (!s->p->warmup_steps || !s->codec || !codec_is_stateful(s->codec))
    return;
  size_t most = 1;
  for (size_t b = 0; b < s->nbuckets; b++)
    most = MAX(most, s->ws[0].vecs[b].m);
  float *x = g_new0(float, most);
  size_t cap = codec_bound(s->codec, most);
  void *buf = g_malloc(cap ? cap : 1);
  float **sums = NULL;
  if (s->aggr_states) {
    sums = g_new0(float *, s->naggr);
    for (int a = 0; a < s->naggr; a++)
      sums[a] = g_new0(float, most);
  }
  for (int k = 0; k < s->p->warmup_steps; k++)
    for (size_t b = 0; b < s->nbuckets; b++)
      if (s->ws[0].vecs[b].m && !sim_uncompressed(s, b))
        warm_bucket(s, b, PAYLOAD_WARMUP_ITERATION + (uint64_t)k, x, sums, buf,
                    cap);
  for (int a = 0; sums && a < s->naggr; a++)
    g_free(sums[a]);
  g_free(sums);
  g_free(buf);
  g_free(x);
}

/* The worker's vector of bucket B for the exchange of iteration IT. */
void payload_prepare(struct wstate *ws, size_t b, int it) {
  const struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  if (!v->m)
    return;
  payload_gradient(s, ws->w->rank, b, it, v->x, v->m);
  if (ws->accum) {
    for (size_t i = 0; i < v->m; i++)
      v->x[i] += ws->accum[b][i];
    memset(ws->accum[b], 0, v->m * sizeof(float));
  }
  if (v->exact) {
    double *truth = truth_of(s, it, b);
    for (size_t i = 0; i < v->m; i++) {
      v->exact[i] = v->x[i];
      truth[i] += v->x[i];
    }
    memset(v->offset, 0, v->m * sizeof(double));
    memset(v->bound, 0, v->m * sizeof(double));
  }
}

/* A local step without exchange: keep the gradient for later. It is
 * generated aside, not in the bucket's vector, which an exchange of an
 * earlier iteration may still be using (overlap, pipe). */
void payload_accumulate(struct wstate *ws, int it) {
  const struct sim *s = ws->w->sim;
  for (size_t b = 0; b < s->nbuckets; b++) {
    struct vec *v = &ws->vecs[b];
    if (!v->m)
      continue;
    float *g = g_new(float, v->m);
    payload_gradient(s, ws->w->rank, b, it, g, v->m);
    for (size_t i = 0; i < v->m; i++)
      ws->accum[b][i] += g[i];
    g_free(g);
  }
}

/* V (what RANK holds) against TRUTH, the exact sums: its shadow must be
 * that sum (the dataflow), and each value within its ledger's bound of
 * the sum plus its known offset. A value whose shadow is NAN was kept
 * local by design (csc) and is skipped. WHAT names V in the message. */
/* Values [LO, HI) of V (those it holds) against TRUTH. */
static void check_vec_range(struct sim *s, const char *what, int rank,
                            const struct vec *v, const double *truth, int it,
                            size_t b, size_t lo, size_t hi) {
  hi = hi < v->m ? hi : v->m;
  double tmax = 0;
  for (size_t i = 0; i < v->m; i++)
    tmax = fmax(tmax, fabs(truth[i]));
  /* The shadow sums doubles in another order than the truth: 2^-40 of
   * p times the largest sum is far above its rounding. */
  double flow_tol = tmax * s->nworkers * 0x1p-40 + 1e-300;
  for (size_t i = lo; i < hi; i++) {
    if (isnan(v->exact[i]))
      continue;
    double flow = fabs(v->exact[i] - truth[i]);
    double want = truth[i] + v->offset[i];
    double loss = fabs((double)v->x[i] - want);
    /* The ledger's own double sums round too: 2^-40 of the magnitudes. */
    double allowed = v->bound[i] * (1 + 0x1p-40) +
                     (fabs(truth[i]) + fabs(v->offset[i])) * 0x1p-40;
    bool bad = !(flow <= flow_tol) || !isfinite(v->x[i]) || !(loss <= allowed);
    if (loss > 0 && allowed > 0 && isfinite(allowed))
      s->oracle_worst = fmax(s->oracle_worst, loss / allowed);
    if (bad) {
      s->oracle_ok = false;
      if (!s->oracle_msg->len)
        g_string_printf(
            s->oracle_msg,
            "iteration %d, bucket %zu%s, worker %d, value %zu: got %.9g, "
            "the exact sum is %.9g%s (dataflow %.9g), expected %.9g within "
            "%.3g (its encodes' error bounds and the sums' rounding)",
            it, b, what, rank, i, (double)v->x[i], truth[i],
            v->offset[i] != 0 ? " plus what error feedback kept back" : "",
            v->exact[i], want, allowed);
      return;
    }
  }
  s->oracle_run = true;
}

static void check_vec(struct sim *s, const char *what, int rank,
                      const struct vec *v, const double *truth, int it,
                      size_t b) {
  check_vec_range(s, what, rank, v, truth, it, b, 0, v->m);
}

void payload_check_range(struct wstate *ws, size_t b, int it, uint64_t lo,
                         uint64_t hi) {
  struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  /* Values held at their own positions only (payload = full). */
  if (v->exact && v->m == v->n)
    check_vec_range(s, " (its shard)", ws->w->rank, v, truth_of(s, it, b), it,
                    b, lo, hi);
}

void payload_check(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  if (v->exact)
    check_vec(s, "", ws->w->rank, v, truth_of(s, it, b), it, b);
}

/* ---- the oracle of a linear codec's exchange (linear.c) ------------------
 * Its values never travel as values, so the books are kept on what does:
 * each round's factors (their dataflow and sums checked like any vector's
 * against the exact sum of every worker's factors), what each worker kept
 * back (its residual before and after) and the codec's bound of the
 * aggregation (codec_lin_bounds), collected from every worker before any
 * of them can finish. */

static struct lin_books *books_of(const struct sim *s, int it, size_t b) {
  return &s->lin[(size_t)(it % s->truth_slots) * s->nbuckets + b];
}

/* Books allocated on first use: the factors' lengths are the codec's. */
static struct lin_books *books(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  struct lin_books *k = books_of(s, it, b);
  if (!k->shift) {
    size_t m = ws->vecs[b].m;
    codec_state_t *st = ws->lin_states[b];
    size_t n;
    struct codec_shape *sh = linear_shapes(s, b, &n);
    k->shift = g_new0(double, m + 1);
    k->bound = g_new0(double, m + 1);
    for (int r = 0; r < 2; r++)
      k->truth[r] = g_new0(double, codec_lin_len(s->codec, sh, n, r) + 1);
    k->acc_len = codec_lin_acc_len(st);
    k->acc = g_new0(double, k->acc_len + 1);
    g_free(sh);
  }
  if (!k->acc_ready) {
    codec_lin_acc_init(ws->lin_states[b], k->acc);
    k->acc_ready = true;
  }
  return k;
}

void payload_lin_factors(struct wstate *ws, size_t b, int it, int round,
                         struct vec *fv) {
  struct lin_books *k = books(ws, b, it);
  for (size_t i = 0; i < fv->m; i++) {
    fv->exact[i] = fv->x[i];
    k->truth[round][i] += fv->x[i];
  }
  /* An empty round has no ledger (NULL), and memset(NULL, 0, 0) is
   * undefined. */
  if (fv->m) {
    memset(fv->offset, 0, fv->m * sizeof(double));
    memset(fv->bound, 0, fv->m * sizeof(double));
  }
}

void payload_lin_check(struct wstate *ws, size_t b, int it, int round,
                       const struct vec *fv) {
  struct sim *s = ws->w->sim;
  check_vec(s, round ? " (second factors)" : " (first factors)", ws->w->rank,
            fv, books(ws, b, it)->truth[round], it, b);
}

void payload_lin_keep(struct wstate *ws, size_t b, int it, const float *rb) {
  struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  codec_state_t *st = ws->lin_states[b];
  struct lin_books *k = books(ws, b, it);
  const float *ra = codec_state_residual(st);
  double *e = g_new(double, v->m + 1);
  codec_error_bounds(s->codec, v->x, rb, ra, v->m, e);
  for (size_t i = 0; i < v->m; i++) {
    if (ra) /* a codec without a residual keeps nothing back */
      k->shift[i] += (double)rb[i] - (double)ra[i];
    k->bound[i] += e[i];
  }
  g_free(e);
  codec_lin_acc_add(st, k->acc);
}

void payload_lin_settle(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  struct lin_books *k = books(ws, b, it);
  codec_lin_bounds(ws->lin_states[b], k->acc, (size_t)s->nworkers, v->bound);
  /* The values' dataflow is their factors' (checked on them): the shadow
   * is the exact sum, the ledger what the workers kept back. */
  const double *truth = truth_of(s, it, b);
  for (size_t i = 0; i < v->m; i++) {
    v->exact[i] = truth[i];
    v->offset[i] = k->shift[i];
    v->bound[i] += k->bound[i];
  }
}

void payload_release(struct sim *s, int it) {
  int slot = it % s->truth_slots;
  if (++s->checked[slot] < s->nworkers)
    return;
  s->checked[slot] = 0;
  for (size_t b = 0; s->lin && b < s->nbuckets; b++) {
    struct lin_books *k = books_of(s, it, b);
    if (!k->shift)
      continue;
    size_t m = s->ws[0].vecs[b].m;
    size_t n;
    struct codec_shape *sh = linear_shapes(s, b, &n);
    memset(k->shift, 0, m * sizeof(double));
    memset(k->bound, 0, m * sizeof(double));
    for (int r = 0; r < 2; r++)
      memset(k->truth[r], 0,
             codec_lin_len(s->codec, sh, n, r) * sizeof(double));
    g_free(sh);
    k->acc_ready = false;
  }
  for (size_t b = 0; b < s->nbuckets; b++)
    if (s->truth[(size_t)slot * s->nbuckets + b])
      memset(s->truth[(size_t)slot * s->nbuckets + b], 0,
             s->ws[0].vecs[b].m * sizeof(double));
}
