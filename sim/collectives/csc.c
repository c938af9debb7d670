/* sim/collectives/csc.c: GradientFlow's coarse-grained sparse
 * communication (seeds/003 Section 3.5, Figs. 17-18).
 *
 * Each bucket's values are cut into chunks of `chunk` values (32000 in
 * the paper: AlexNet's pool makes 1903 chunks). The chunks selected at
 * the previous iteration are packed and summed by a ring allreduce (with
 * the codec, fp16 in the paper); the other chunks stay local and are
 * added to the next iteration's gradient. A bucket is the paper's lazy
 * buffer of selected chunks: [training] fusion_bytes thresholds the bytes
 * of selected chunks it sends ("When the buffer size is greater than a
 * given threshold, CSC starts an allreduce operation", seeds/003 line
 * 220), so run.c fuses the tensors into buckets of fusion_bytes /
 * csc_ratio values' bytes (csc_ratio of them selected on average).
 *
 * Once per iteration, after the last bucket's allreduce, every worker
 * takes the L1 norm of each chunk of every bucket (those just summed
 * divided by p), the norms of all chunks are summed by one ring allreduce
 * of plain fp32 (line 249: "CSC next performs an allreduce operation for
 * GPUs to exchange and accumulate these L1 norm values"), and the top
 * csc_ratio of all chunks by norm (ties to the lower index) are the
 * selection of the next iteration. Without values (payload = none) every
 * norm is zero, and each bucket selects its first csc_ratio of chunks, the
 * count uniform norms would select on average.
 *
 * The first iteration's selection is that of the dense warm-up that
 * precedes CSC ("warm-up dense training", Section 3.5), which gradsim
 * does not simulate: each bucket's first csc_ratio of chunks, chosen
 * without communication. */
#include "common.h"

#include <math.h>

struct csc {
  float *residual; /* held values of the chunks kept local */
  uint32_t *sel;   /* this iteration's selected chunks, increasing */
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

static int cmp_u32_key(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static uint64_t chunk_lo(uint64_t n, uint64_t chunk, size_t i) {
  uint64_t lo = chunk * i;
  return lo < n ? lo : n;
}

static size_t chunks_of(const struct sim *s, uint64_t n) {
  uint64_t chunk = (uint64_t)s->p->chunk;
  return (size_t)((n + chunk - 1) / chunk);
}

/* The held values [*A, *B) of chunk I of V. */
static void chunk_held(const struct sim *s, const struct vec *v, size_t i,
                       size_t *a, size_t *b) {
  uint64_t chunk = (uint64_t)s->p->chunk;
  vec_held(v, chunk_lo(v->n, chunk, i), chunk_lo(v->n, chunk, i + 1), a, b);
}

/* Ring allreduce of V over all workers (the codec unless RAW). */
static void ring_all(struct coll_call *c, struct vec *v, bool raw) {
  int p = c->sim->nworkers;
  const int *g = c->sim->ranks;
  struct coll_call cc = *c;
  cc.v = v;
  cc.raw = raw;
  ring_allreduce(&cc, g, p, c->rank, 0, v->n, RING_ENCODE_ONCE, false);
}

/* The first csc_ratio of a bucket's NC chunks (at least one). */
static void select_first(const struct sim *s, struct csc *st, size_t nc) {
  size_t k = (size_t)ceil(s->p->csc_ratio * (double)nc - 1e-9);
  k = k < 1 ? 1 : k > nc ? nc : k;
  g_free(st->sel);
  st->sel = g_new(uint32_t, k);
  for (size_t i = 0; i < k; i++)
    st->sel[i] = (uint32_t)i;
  st->nsel = k;
}

static struct csc *state_of(struct coll_call *c) {
  struct csc *st = c->w->cstate[c->bucket];
  if (!st) {
    st = c->w->cstate[c->bucket] = g_new0(struct csc, 1);
    st->residual = g_new0(float, c->v->m ? c->v->m : 1);
    select_first(c->sim, st, chunks_of(c->sim, c->v->n));
  }
  return st;
}

/* Pack the selected chunks of C's bucket, allreduce them, unpack; WAS[i]
 * is set for every selected chunk i. */
static void exchange_selected(struct coll_call *c, const struct csc *st,
                              bool *was) {
  const struct sim *s = c->sim;
  struct vec *v = c->v;
  uint64_t chunk = (uint64_t)s->p->chunk, nsel = 0;
  size_t msel = 0, a, b;
  for (size_t i = 0; i < st->nsel; i++) {
    chunk_held(s, v, st->sel[i], &a, &b);
    nsel += chunk_lo(v->n, chunk, st->sel[i] + 1) -
            chunk_lo(v->n, chunk, st->sel[i]);
    msel += b - a;
    was[st->sel[i]] = true;
  }
  struct vec sv = {.n = nsel, .m = msel};
  vec_alloc(&sv, v->exact != NULL);
  for (size_t i = 0, o = 0; i < st->nsel; i++, o += b - a) {
    chunk_held(s, v, st->sel[i], &a, &b);
    if (b > a) /* payload none holds no values (and x is NULL) */
      vec_copy(&sv, o, v, a, b - a);
  }
  ring_all(c, &sv, false);
  for (size_t i = 0, o = 0; i < st->nsel; i++, o += b - a) {
    chunk_held(s, v, st->sel[i], &a, &b);
    if (b > a)
      vec_copy(v, a, &sv, o, b - a);
  }
  vec_release(&sv);
}

/* The chunks not selected stay local: not applied now, summed next time. */
static void keep_local(struct coll_call *c, struct csc *st, size_t nc,
                       const bool *was) {
  for (size_t i = 0; i < nc; i++)
    if (!was[i]) {
      size_t a, b;
      chunk_held(c->sim, c->v, i, &a, &b);
      if (b == a)
        continue;
      memcpy(st->residual + a, c->v->x + a, (b - a) * sizeof(float));
      memset(c->v->x + a, 0, (b - a) * sizeof(float));
      /* Not a sum: the oracle skips it (payload_check). */
      for (size_t j = a; c->v->exact && j < b; j++)
        c->v->exact[j] = NAN;
    }
}

/* Chunk J of the whole pool and its norm, for the global selection. */
struct pool_chunk {
  float norm;
  uint32_t bucket, chunk;
};

static int cmp_norm(const void *pa, const void *pb) {
  const struct pool_chunk *x = pa, *y = pb;
  if (x->norm != y->norm)
    return x->norm > y->norm ? -1 : 1;
  if (x->bucket != y->bucket)
    return x->bucket < y->bucket ? -1 : 1;
  return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

/* The L1 norm of chunk I of bucket B of worker C->w: its values and its
 * kept residuals, divided by p where it was just summed. */
static float chunk_norm(const struct coll_call *c, size_t b, size_t i) {
  const struct sim *s = c->sim;
  const struct vec *v = &s->ws[c->rank].vecs[b];
  const struct csc *st = c->w->cstate[b];
  size_t lo, hi;
  chunk_held(s, v, i, &lo, &hi);
  double l1 = 0;
  for (size_t j = lo; j < hi; j++)
    l1 += fabs(v->x[j]) + fabs(st->residual[j]);
  bool summed = bsearch(&(uint32_t){(uint32_t)i}, st->sel, st->nsel,
                        sizeof *st->sel, cmp_u32_key) != NULL;
  return (float)(summed ? l1 / s->nworkers : l1);
}

/* The next iteration's selection of every bucket, from the pool's norms
 * summed by one allreduce (run after the last bucket's exchange). */
static void select_next(struct coll_call *c) {
  struct sim *s = c->sim;
  size_t total = 0, held = 0;
  for (size_t b = 0; b < s->nbuckets; b++) {
    total += chunks_of(s, s->buckets[b].n);
    held += s->ws[c->rank].vecs[b].m;
  }
  struct pool_chunk *pool = g_new(struct pool_chunk, total);
  float *norm = g_new0(float, total);
  uint64_t values = 0;
  for (size_t b = 0, j = 0; b < s->nbuckets; b++) {
    values += s->buckets[b].n;
    for (size_t i = 0; i < chunks_of(s, s->buckets[b].n); i++, j++) {
      pool[j] = (struct pool_chunk){0, (uint32_t)b, (uint32_t)i};
      norm[j] = held ? chunk_norm(c, b, i) : 0;
    }
  }
  /* A pass over the values (the norms), timed as one summation. */
  sim_reduce(c->w, s, values);
  struct vec nv = {.n = total, .m = held ? total : 0, .x = held ? norm : NULL};
  ring_all(c, &nv, true);
  if (held) {
    for (size_t j = 0; j < total; j++)
      pool[j].norm = norm[j];
    qsort(pool, total, sizeof *pool, cmp_norm);
    size_t k = (size_t)ceil(s->p->csc_ratio * (double)total - 1e-9);
    k = k < 1 ? 1 : k > total ? total : k;
    for (size_t b = 0; b < s->nbuckets; b++)
      ((struct csc *)c->w->cstate[b])->nsel = 0;
    for (size_t j = 0; j < k; j++) {
      struct csc *st = c->w->cstate[pool[j].bucket];
      st->sel = g_renew(uint32_t, st->sel, st->nsel + 1);
      st->sel[st->nsel++] = pool[j].chunk;
    }
    for (size_t b = 0; b < s->nbuckets; b++) {
      struct csc *st = c->w->cstate[b];
      qsort(st->sel, st->nsel, sizeof *st->sel, cmp_u32_key);
    }
  } else {
    for (size_t b = 0; b < s->nbuckets; b++)
      select_first(s, c->w->cstate[b], chunks_of(s, s->buckets[b].n));
  }
  g_free(norm);
  g_free(pool);
}

static void csc_worker(struct coll_call *c) {
  struct sim *s = c->sim;
  struct vec *v = c->v;
  size_t nc = chunks_of(s, v->n);
  struct csc *st = state_of(c);
  /* The chunks kept local last time join this iteration's gradient (the
   * oracle's ledger: known to be added). */
  for (size_t j = 0; j < v->m; j++) {
    v->x[j] += st->residual[j];
    if (v->exact)
      payload_ledger_add(v, j, st->residual[j]);
  }
  memset(st->residual, 0, v->m * sizeof(float));
  bool *was = g_new0(bool, nc);
  /* Every worker holds the same selection: all skip an empty one. */
  if (st->nsel > 0)
    exchange_selected(c, st, was);
  keep_local(c, st, nc, was);
  g_free(was);
  if (c->bucket == s->nbuckets - 1)
    select_next(c);
}

const struct collective coll_csc = {
    .name = "csc",
    .description = "GradientFlow's coarse-grained sparse communication: "
                   "the top csc_ratio of chunks by L1 norm, ring allreduced "
                   "in buffers of fusion_bytes of selected chunks, one norm "
                   "allreduce per iteration",
    .worker = csc_worker,
    .fuse_selected = true,
    .free_state = csc_free,
    .bucket_state = true,
    .ring_legs = true,
};
