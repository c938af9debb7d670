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
static void generate(const struct sim *s, int w, size_t b, int it,
                     float *out, size_t m) {
  const struct bucket *bk = &s->buckets[b];
  size_t done = 0;
  for (size_t t = bk->first; t < bk->first + bk->count && done < m; t++) {
    uint64_t n = s->model->tensors[t].elements;
    size_t take = m == bk->n ? (size_t)n
                             : (size_t)((long double)n * m / bk->n + 0.5);
    if (t == bk->first + bk->count - 1 || done + take > m)
      take = m - done;
    gradgen_fill(&s->p->grad, (uint32_t)w, (uint32_t)t, (uint64_t)it, 1.0, 0,
                 out + done, take);
    done += take;
  }
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
