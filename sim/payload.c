/* sim/payload.c: the gradient values a run carries (payload = full or
 * sampled), local steps, and the oracle that checks every aggregated
 * gradient against the exact sum (sim.h; the README's "Payloads and the
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

void payload_init_truth(struct sim *s, bool oracle) {
  s->truth_slots = s->p->mode == MODE_PIPE ? s->p->k + 1 : 2;
  s->truth = g_new0(double *, (size_t)s->truth_slots * s->nbuckets);
  s->checked = g_new0(int, s->truth_slots);
  /* At most 2^24 values (128 MB) of the persistent component are kept:
   * every sampled payload, and a full one up to about 16M parameters. */
  if (s->p->payload != PAYLOAD_NONE && s->p->grad.persist > 0)
    s->gcache = gradgen_cache_new((size_t)1 << 24);
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
static void generate(const struct sim *s, int w, size_t b, uint64_t it,
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
#define WARMUP_ITERATION ((uint64_t)1 << 40)

void payload_momentum(const struct sim *s, float *vel, const float *sum,
                      size_t m) {
  float mom = (float)s->p->server_momentum;
  for (size_t i = 0; i < m; i++)
    vel[i] = mom * vel[i] + sum[i];
}

static void warm_bucket(struct sim *s, size_t b, uint64_t it, float *x,
                        float **sums, void *buf, size_t cap) {
  int shards = s->naggr ? s->naggr : 1;
  uint64_t n = s->buckets[b].n;
  for (int w = 0; w < s->nworkers; w++) {
    const struct vec *v = &s->ws[w].vecs[b];
    generate(s, w, b, it, x, v->m);
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
    const float *pull = sums[a];
    if (s->aggr_vel) {
      payload_momentum(s, s->aggr_vel[k], sums[a], m);
      pull = s->aggr_vel[k];
    }
    codec_encode(s->aggr_states[k], pull, m, buf, cap);
    memset(sums[a], 0, m * sizeof(float));
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
      if (s->ws[0].vecs[b].m && !schedule_uncompressed(s, b))
        warm_bucket(s, b, WARMUP_ITERATION + (uint64_t)k, x, sums, buf,
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
  generate(s, ws->w->rank, b, it, v->x, v->m);
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
    generate(s, ws->w->rank, b, it, g, v->m);
    for (size_t i = 0; i < v->m; i++)
      ws->accum[b][i] += g[i];
    g_free(g);
  }
}

/* Per-value error bound of one encode of a value of magnitude up to A. */
static double codec_bound_abs(const struct sim *s, double a) {
  if (!s->codec)
    return 0;
  const char *n = codec_name(s->codec), *spec = codec_spec(s->codec);
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
void payload_check(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  if (!v->exact || s->coll->no_oracle)
    return;
  double *truth = truth_of(s, it, b);
  double amax = 0, tmax = 0;
  for (size_t i = 0; i < v->m; i++) {
    tmax = fmax(tmax, fabs(truth[i]));
    amax = fmax(amax, fabs(v->exact[i]));
  }
  /* A bound on any partial sum's magnitude: p times the largest input. */
  double a = tmax * s->nworkers + amax;
  int hops = 2 * s->nworkers + 2;
  double lossy = codec_bound_abs(s, a) * hops + a * s->nworkers * 0x1p-23;
  /* With server_momentum the workers receive the model delta, not the
   * sum: only the dataflow (the exact shadow) is checked. */
  if (s->aggr_vel)
    lossy = INFINITY;
  for (size_t i = 0; i < v->m; i++) {
    double flow = fabs(v->exact[i] - truth[i]);
    double loss = fabs((double)v->x[i] - truth[i]);
    bool bad = flow > 1e-9 * (a + 1e-30) || !isfinite(v->x[i]) ||
               (isfinite(lossy) && loss > lossy);
    if (bad) {
      s->oracle_ok = false;
      if (!s->oracle_msg->len)
        g_string_printf(s->oracle_msg,
                        "iteration %d, bucket %zu, worker %d, value %zu: "
                        "got %.9g, the exact sum is %.9g (dataflow %.9g, "
                        "allowed codec error %.3g)",
                        it, b, ws->w->rank, i, (double)v->x[i], truth[i],
                        v->exact[i], lossy);
      return;
    }
  }
  s->oracle_run = true;
}

void payload_release(struct sim *s, int it) {
  int slot = it % s->truth_slots;
  if (++s->checked[slot] < s->nworkers)
    return;
  s->checked[slot] = 0;
  for (size_t b = 0; b < s->nbuckets; b++)
    if (s->truth[(size_t)slot * s->nbuckets + b])
      memset(s->truth[(size_t)slot * s->nbuckets + b], 0,
             s->ws[0].vecs[b].m * sizeof(double));
}
