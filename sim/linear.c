/* sim/linear.c: the exchange of a linear compressor (codec.h, "linear
 * compressors": PowerSGD, Vogels et al. 2019, Algorithm 1). A codec whose
 * compression of a sum is the sum of the compressions exchanges a bucket
 * in rounds instead of one encoded message:
 *
 *   round 0     each worker's first factors of its gradient (P = M Q, with
 *               the bucket's uncompressed tensors appended)
 *   allreduce   of those factors, by the point's collective, as fp32
 *   round 1     each worker's second factors from the sum (orthogonalize,
 *               Q = M^T P^), and its residual
 *   allreduce   of the second factors
 *   finish      the decompressed sum (P^ Q^T)
 *
 * Any allreduce collective serves: it runs twice per bucket on vectors of
 * the factors' lengths, with raw messages (its aggregators too). Each
 * round's codec work is timed from the cost table on the bucket's tensor
 * shapes (codec_cost_linear_seconds): on the GPU the round's own products,
 * orthogonalizations and launches as the point's implementation makes
 * them; on the CPU the measured encode split over the rounds. A later
 * linear compressor reuses all of this through codec.h. */
#include "sim.h"

#include <xbt/asserts.h>

#include <string.h>

/* The lengths of bucket B's two rounds' messages. */
static void round_lengths(const struct sim *s, size_t b, uint64_t len[2]) {
  size_t k;
  struct codec_shape *sh = linear_shapes(s, b, &k);
  len[0] = codec_lin_len(s->codec, sh, k, 0);
  len[1] = codec_lin_len(s->codec, sh, k, 1);
  g_free(sh);
}

/* A round's result that a codec refuses (the gradient holds NaN or
 * infinity): the run stops with a message, as sim_pack does. */
static void check_rc(struct sim *s, int rc) {
  if (rc && !s->fatal)
    s->fatal = g_strdup_printf("codec %s: %s", codec_spec(s->codec),
                               codec_strerror(rc));
}

void linear_exchange(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  struct vec *v = &ws->vecs[b];
  codec_state_t *st = ws->lin_states ? ws->lin_states[b] : NULL;
  bool oracle = v->exact != NULL;
  uint64_t len[2];
  round_lengths(s, b, len);
  struct vec fv[2] = {{.n = len[0], .m = v->m ? len[0] : 0},
                      {.n = len[1], .m = v->m ? len[1] : 0}};
  vec_alloc(&fv[0], oracle);
  vec_alloc(&fv[1], oracle);
  const float *res = st ? codec_state_residual(st) : NULL;
  float *rb = oracle && res ? g_memdup2(res, v->m * sizeof(float)) : NULL;
  struct coll_call c = {
      .sim = s, .w = ws->w, .rank = ws->w->rank, .bucket = b, .raw = true};
  for (int round = 0; round < 2; round++) {
    c.lin_round = round;
    sim_codec_time(&c, true, v->n, 0, 1);
    if (st)
      check_rc(s, codec_lin_round(st, round, round ? fv[0].x : v->x,
                                  fv[round].x));
    /* What the worker kept back, before its last message with data
     * leaves: once that allreduce is done, any worker may finish and
     * settle the books, which must then hold every worker's part. With
     * an empty round 1 that is round 0's (codec.h: the residual is final
     * after round 0 then). */
    if (oracle && round == (len[1] ? 1 : 0))
      payload_lin_keep(ws, b, it, rb);
    if (oracle)
      payload_lin_factors(ws, b, it, round, &fv[round]);
    c.v = &fv[round];
    s->coll->worker(&c);
    if (oracle)
      payload_lin_check(ws, b, it, round, &fv[round]);
  }
  sim_codec_time(&c, false, v->n, 0, 1);
  if (st)
    check_rc(s, codec_lin_finish(st, fv[1].x, v->x));
  if (oracle)
    payload_lin_settle(ws, b, it);
  g_free(rb);
  vec_release(&fv[0]);
  vec_release(&fv[1]);
}

void linear_aggregate(struct astate *as, size_t b) {
  struct sim *s = as->sim;
  uint64_t len[2];
  round_lengths(s, b, len);
  bool held = s->ws[0].vecs[b].m > 0, oracle = s->ws[0].vecs[b].exact != NULL;
  for (int round = 0; round < 2; round++) {
    uint64_t lo = len[round] * (uint64_t)as->a / (uint64_t)s->naggr,
             hi = len[round] * (uint64_t)(as->a + 1) / (uint64_t)s->naggr;
    struct vec v = {.n = hi - lo, .m = held ? hi - lo : 0};
    vec_alloc(&v, oracle);
    struct coll_call c = {.sim = s, .rank = s->nworkers + as->a,
                          .bucket = b, .v = &v, .raw = true};
    s->coll->aggregator(&c);
    vec_release(&v);
  }
}

void linear_warm_up(struct sim *s) {
  if (!s->p->warmup_steps || !s->ws[0].lin_states)
    return;
  size_t most = 1;
  uint64_t len[2];
  for (size_t b = 0; b < s->nbuckets; b++)
    most = MAX(most, s->ws[0].vecs[b].m);
  float *x = g_new(float, most), *out = g_new(float, most);
  for (int k = 0; k < s->p->warmup_steps; k++)
    for (size_t b = 0; b < s->nbuckets; b++) {
      struct vec *v0 = &s->ws[0].vecs[b];
      if (!v0->m || sim_uncompressed(s, b))
        continue;
      round_lengths(s, b, len);
      float *sum[2] = {g_new0(float, len[0] + 1), g_new0(float, len[1] + 1)};
      float *f = g_new(float, MAX(len[0], len[1]) + 1);
      for (int round = 0; round < 2; round++)
        for (int w = 0; w < s->nworkers; w++) {
          codec_state_t *st = s->ws[w].lin_states[b];
          if (round == 0)
            payload_gradient(s, w, b, PAYLOAD_WARMUP_ITERATION + (uint64_t)k,
                             x, v0->m);
          check_rc(s, codec_lin_round(st, round, round ? sum[0] : x, f));
          for (uint64_t i = 0; i < len[round]; i++)
            sum[round][i] += f[i];
        }
      for (int w = 0; w < s->nworkers; w++)
        check_rc(s, codec_lin_finish(s->ws[w].lin_states[b], sum[1], out));
      g_free(f);
      g_free(sum[0]);
      g_free(sum[1]);
    }
  g_free(x);
  g_free(out);
}
