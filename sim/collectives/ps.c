/* sim/collectives/ps.c: parameter servers. Workers push their gradient
 * (sharded over A aggregators) concurrently through the aggregators'
 * links; each aggregator sums the p shards in rank order and sends the
 * result back down a binomial tree rooted at it over the p workers
 * (INCEPTIONN seeds/000, Section II and VIII-D: gather, (p - 1) n gamma,
 * tree broadcast). With a codec, `ps` compresses the push only (the
 * paper's WA+C: "compression only on gradient communication"); `ps-shared`
 * also compresses the pull once at the server, with its own
 * error-feedback state, and every worker receives those same bytes
 * (3LC's shared compressed pull, seeds/004 Section 2).
 *
 * [exchange] pull = direct replaces the tree by what a TensorFlow
 * parameter server does: every worker pulls its copy from the aggregator
 * itself, the p copies sharing the aggregator's link, and no worker
 * forwards (3LC Section 2: "This point-to-point design preserves the
 * communication pattern of existing parameter server architectures. It
 * adds no extra communication channels between servers or workers"). */
#include "common.h"

#include <simgrid/comm.h>

static uint64_t shard_lo(uint64_t n, int a, int nshards) {
  return n * (uint64_t)a / (uint64_t)nshards;
}

/* The direct pull, aggregator side: V[lo, hi) (or CARRY, encoded once)
 * to the p workers at once, so that the copies share its link; one
 * payload, shared by the p messages (msg_share). */
static void direct_send(struct coll_call *c, uint64_t lo, uint64_t hi,
                        struct msg *carry) {
  int p = c->sim->nworkers;
  struct msg *own = carry ? NULL : sim_pack_raw(c, c->v, lo, hi);
  sg_comm_t *out = g_new(sg_comm_t, p);
  for (int w = 0; w < p; w++)
    out[w] = sim_send(c, w, msg_share(carry ? carry : own));
  for (int w = 0; w < p; w++)
    sim_wait_send(c, out[w]);
  g_free(out);
  msg_free(own);
}

/* The direct pull, worker side: every aggregator's shard at once. */
static void direct_recv(struct coll_call *c) {
  struct sim *s = c->sim;
  int p = s->nworkers, na = s->naggr;
  int *srcs = g_new(int, na);
  struct msg **in = g_new0(struct msg *, na);
  for (int a = 0; a < na; a++)
    srcs[a] = p + a;
  sim_recv_all(c, srcs, na, in);
  for (int a = 0; a < na; a++) {
    sim_unpack(c, in[a], c->v, shard_lo(c->v->n, a, na),
               shard_lo(c->v->n, a + 1, na), false);
    msg_free(in[a]);
  }
  g_free(in);
  g_free(srcs);
}

static void ps_worker(struct coll_call *c) {
  struct sim *s = c->sim;
  int p = s->nworkers, na = s->naggr;
  sg_comm_t *push = g_new(sg_comm_t, na);
  for (int a = 0; a < na; a++) {
    codec_state_t *st =
        c->w->states ? c->w->states[c->bucket * (size_t)na + (size_t)a] : NULL;
    struct msg *m = sim_pack(c, c->v, shard_lo(c->v->n, a, na),
                             shard_lo(c->v->n, a + 1, na), st);
    push[a] = sim_send(c, p + a, m);
  }
  for (int a = 0; a < na; a++)
    sim_wait_send(c, push[a]);
  g_free(push);
  if (s->p->pull_direct) {
    direct_recv(c);
    return;
  }
  for (int a = 0; a < na; a++) {
    tree_broadcast(c, s->trees[a], p + 1, c->rank + 1,
                   shard_lo(c->v->n, a, na), shard_lo(c->v->n, a + 1, na),
                   NULL);
  }
}

static void aggregator(struct coll_call *c) {
  struct sim *s = c->sim;
  int p = s->nworkers, a = c->rank - p;
  /* All pushes at once, so that they share the aggregator's link. */
  struct msg **in = g_new0(struct msg *, p);
  int *srcs = g_new(int, p);
  for (int w = 0; w < p; w++)
    srcs[w] = w;
  sim_recv_all(c, srcs, p, in);
  g_free(srcs);
  for (int w = 0; w < p; w++) {
    sim_unpack(c, in[w], c->v, 0, c->v->n, w > 0);
    msg_free(in[w]);
  }
  g_free(in);
  sim_reduce(NULL, s, (uint64_t)(p - 1) * c->v->n);
  const int *g = s->trees[a];
  struct msg *carry = NULL;
  if (s->coll->shared_pull && s->codec) {
    size_t k = c->bucket * (size_t)s->naggr + (size_t)a;
    codec_state_t *st = s->aggr_states ? s->aggr_states[k] : NULL;
    /* [exchange] server_momentum: the pull is the model delta after the
     * server's momentum, v = m v + sum (3LC's MomentumOptimizer on the
     * parameter server, seeds/004 Section 5.2; the learning rate left
     * out), compressed in place of the sum. The oracle's exact shadow
     * still carries the sum: the dataflow is the same; its ledger knows
     * the pull to differ from the sum by v - sum. */
    struct vec delta = *c->v;
    double *off = NULL;
    if (s->aggr_vel && c->v->x) {
      delta.x = s->aggr_vel[k];
      server_momentum(delta.x, c->v->x, c->v->m, s->p->server_momentum);
      if (c->v->offset) {
        off = g_new(double, c->v->m);
        for (size_t i = 0; i < c->v->m; i++)
          off[i] = c->v->offset[i] + ((double)delta.x[i] - (double)c->v->x[i]);
        delta.offset = off;
      }
    }
    carry = sim_pack(c, &delta, 0, c->v->n, st);
    g_free(off);
  }
  if (s->p->pull_direct)
    direct_send(c, 0, c->v->n, carry);
  else
    tree_broadcast(c, g, p + 1, 0, 0, c->v->n, carry);
  msg_free(carry);
}

static void ps_formula(const struct sim *s, struct formula_in *in) {
  in->v[FP_AGGR] = s->naggr;
}

const struct collective coll_ps = {
    .name = "ps",
    .description = "parameter server: push (codec on the push only, "
                   "INCEPTIONN's WA+C), sum, binomial-tree broadcast",
    .formula = "ps",
    .formula_direct = "ps-direct",
    .aggregators = true,
    .stateful = true,
    .worker = ps_worker,
    .aggregator = aggregator,
    .formula_params = ps_formula,
};

const struct collective coll_ps_shared = {
    .name = "ps-shared",
    .description = "parameter server whose pull is compressed once at the "
                   "server and shared by all workers (3LC)",
    .formula = "ps",
    .formula_direct = "ps-direct",
    .aggregators = true,
    .stateful = true,
    .shared_pull = true,
    .worker = ps_worker,
    .aggregator = aggregator,
    .formula_params = ps_formula,
};
