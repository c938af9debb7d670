/* sim/collectives/csc.c: GradientFlow's coarse-grained sparse
 * communication (seeds/003 Section 3.5, Figs. 17-18). The vector is cut
 * into chunks of `chunk` values (32000 in the paper: AlexNet's pool makes
 * 1903 chunks); the chunks selected at the previous iteration are packed
 * and summed by a ring allreduce (with the codec, fp16 in the paper); the
 * other chunks stay local and are added to the next iteration's gradient.
 * Then every worker takes the L1 norm of each chunk (those just summed
 * divided by p), the norms are summed by a ring allreduce of plain fp32,
 * and the top csc_ratio of chunks by norm (ties to the lower index) are
 * the selection for the next iteration. The first iteration selects from
 * its own norms first. */
#include "common.h"

#include <math.h>

struct csc {
  float *residual; /* held values of the chunks kept local */
  uint32_t *sel;   /* selected chunks, increasing */
  size_t nsel;
};

static void csc_free(void *p) {
  struct csc *s = p;
  if (!s)
    return;
  g_free(s->residual);
  g_free(s->sel);
  g_free(s);
}

static uint64_t chunk_lo(uint64_t n, uint64_t chunk, size_t i) {
  uint64_t lo = chunk * i;
  return lo < n ? lo : n;
}

static int cmp_norm(const void *a, const void *b, void *norms) {
  const float *nm = norms;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (nm[x] != nm[y])
    return nm[x] > nm[y] ? -1 : 1;
  return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Ring allreduce of V over all workers (the codec unless RAW). */
static void ring_all(struct coll_call *c, struct vec *v, bool raw) {
  int p = c->sim->nworkers;
  const int *g = c->sim->ranks;
  struct coll_call cc = *c;
  cc.v = v;
  cc.raw = raw;
  ring_reduce_scatter(&cc, g, p, c->rank, 0, v->n);
  ring_allgather(&cc, g, p, c->rank, 0, v->n, RING_ENCODE_ONCE);
}

/* Norms of the chunks, summed over the workers, and the selection. */
static void select_chunks(struct coll_call *c, struct csc *st, size_t nc,
                          const bool *was_sel) {
  struct sim *s = c->sim;
  struct vec *v = c->v;
  uint64_t chunk = (uint64_t)s->p->chunk;
  float *norm = g_new0(float, nc);
  /* A pass over the values (the norms), timed as one summation. */
  sim_reduce(c->w, s, v->n);
  for (size_t i = 0; i < nc && v->m; i++) {
    size_t a, b;
    vec_held(v, chunk_lo(v->n, chunk, i), chunk_lo(v->n, chunk, i + 1), &a,
             &b);
    double l1 = 0;
    for (size_t j = a; j < b; j++)
      l1 += fabs(v->x[j]) + fabs(st->residual[j]);
    norm[i] = (float)(was_sel && was_sel[i] ? l1 / s->nworkers : l1);
  }
  struct vec nv = {nc, v->m ? nc : 0, v->m ? norm : NULL, NULL};
  ring_all(c, &nv, true);
  size_t k = (size_t)ceil(s->p->csc_ratio * (double)nc - 1e-9);
  k = k < 1 ? 1 : k > nc ? nc : k;
  uint32_t *order = g_new(uint32_t, nc);
  for (size_t i = 0; i < nc; i++)
    order[i] = (uint32_t)i;
  /* Without values (payload = none) every norm is zero: the first k
   * chunks, which costs the same. */
  if (v->m)
    g_qsort_with_data(order, (gint)nc, sizeof *order, cmp_norm, norm);
  qsort(order, k, sizeof *order, cmp_u32);
  g_free(st->sel);
  st->sel = g_renew(uint32_t, order, k);
  st->nsel = k;
  g_free(norm);
}

static void csc_worker(struct coll_call *c) {
  struct sim *s = c->sim;
  struct vec *v = c->v;
  uint64_t chunk = (uint64_t)s->p->chunk;
  size_t nc = (size_t)((v->n + chunk - 1) / chunk);
  struct csc *st = c->w->cstate[c->bucket];
  if (!st) {
    st = c->w->cstate[c->bucket] = g_new0(struct csc, 1);
    st->residual = g_new0(float, v->m ? v->m : 1);
  }
  /* The chunks kept local last time join this iteration's gradient. */
  for (size_t j = 0; j < v->m; j++)
    v->x[j] += st->residual[j];
  memset(st->residual, 0, v->m * sizeof(float));
  if (!st->sel)
    select_chunks(c, st, nc, NULL);

  /* Pack the selected chunks, allreduce them, unpack. */
  uint64_t nsel = 0;
  size_t msel = 0;
  for (size_t i = 0; i < st->nsel; i++) {
    size_t a, b;
    uint64_t lo = chunk_lo(v->n, chunk, st->sel[i]),
             hi = chunk_lo(v->n, chunk, st->sel[i] + 1);
    vec_held(v, lo, hi, &a, &b);
    nsel += hi - lo;
    msel += b - a;
  }
  struct vec sv = {nsel, msel, msel ? g_new(float, msel) : NULL, NULL};
  bool *was = g_new0(bool, nc);
  for (size_t i = 0, o = 0; i < st->nsel; i++) {
    size_t a, b;
    vec_held(v, chunk_lo(v->n, chunk, st->sel[i]),
             chunk_lo(v->n, chunk, st->sel[i] + 1), &a, &b);
    memcpy(sv.x + o, v->x + a, (b - a) * sizeof(float));
    o += b - a;
    was[st->sel[i]] = true;
  }
  ring_all(c, &sv, false);
  for (size_t i = 0, o = 0; i < st->nsel; i++) {
    size_t a, b;
    vec_held(v, chunk_lo(v->n, chunk, st->sel[i]),
             chunk_lo(v->n, chunk, st->sel[i] + 1), &a, &b);
    memcpy(v->x + a, sv.x + o, (b - a) * sizeof(float));
    o += b - a;
  }
  g_free(sv.x);
  /* The other chunks stay local: not applied now, summed next time. */
  for (size_t i = 0; i < nc; i++)
    if (!was[i]) {
      size_t a, b;
      vec_held(v, chunk_lo(v->n, chunk, i), chunk_lo(v->n, chunk, i + 1), &a,
               &b);
      memcpy(st->residual + a, v->x + a, (b - a) * sizeof(float));
      memset(v->x + a, 0, (b - a) * sizeof(float));
    }
  select_chunks(c, st, nc, was);
  g_free(was);
}

static int csc_check(const struct sim *s, char *err, size_t errlen) {
  if (s->codec && codec_is_stateful(s->codec)) {
    snprintf(err, errlen,
             "[exchange] algorithm = csc runs a ring: codec %s keeps an "
             "error-feedback state, use a stateless codec (fp16 in "
             "GradientFlow) or none",
             codec_spec(s->codec));
    return -1;
  }
  return 0;
}

const struct collective coll_csc = {
    .name = "csc",
    .description = "GradientFlow's coarse-grained sparse communication: "
                   "the top csc_ratio of chunks by L1 norm, ring allreduced",
    .check = csc_check,
    .worker = csc_worker,
    .no_oracle = true,
    .free_state = csc_free,
};
