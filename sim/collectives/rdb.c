/* sim/collectives/rdb.c: recursive doubling (butterfly) and Rabenseifner's
 * allreduce (recursive halving reduce-scatter, recursive doubling
 * allgather), after Thakur, Rabenseifner and Gropp (2005), the papers the
 * seeds cite (RedSync Section 2.3; GradientFlow's MPI baseline), step for
 * step as MPICH and SimGrid SMPI's rdb and rab_rdb do them.
 *
 * A number of workers p that is not a power of two is folded first: of
 * the first 2r ranks (r = p - p', p' the largest power of two <= p) the
 * even ones send their vector to the next odd one, which sums it and
 * takes part; at the end the odd ones send the result back.
 *
 * Message for message as SMPI runs them (SimGrid 3.32, src/smpi/colls/
 * allreduce/allreduce-rdb.cpp and allreduce-rab-rdb.cpp): the fold's
 * messages are blocking sends (MPI_Send: above the eager threshold the
 * sender waits for the transfer), every later step a sendrecv (the send
 * posted first, then the receive, both in flight at once). rdb's opening
 * sendrecv of a rank to itself sends nothing (SMPI turns a sendrecv to
 * oneself into a copy), nor does rab_rdb's opening Datatype::copy.
 * tests/parity holds both to SMPI's times to 1e-6 on SimGrid's example
 * torus (12 ranks, 8 folded) and dragonfly (120, 112 folded). */
#include "common.h"

#include <simgrid/comm.h>

struct fold {
  int q;     /* p' */
  int rem;   /* r */
  int newrank; /* -1 for a rank folded away */
};

static struct fold fold_of(int p, int rank) {
  struct fold f = {1, 0, -1};
  while (f.q * 2 <= p)
    f.q *= 2;
  f.rem = p - f.q;
  if (rank < 2 * f.rem)
    f.newrank = rank % 2 ? rank / 2 : -1;
  else
    f.newrank = rank - f.rem;
  return f;
}

static int real_rank(const struct fold *f, int newrank) {
  return newrank < f->rem ? 2 * newrank + 1 : newrank + f->rem;
}

/* Before: even ranks of the first 2r give their vector to the next one. */
static void fold_in(struct coll_call *c, const struct fold *f) {
  if (c->rank >= 2 * f->rem)
    return;
  if (f->newrank < 0) {
    sim_wait_send(c, sim_send(c, c->rank + 1,
                              sim_pack(c, c->v, 0, c->v->n, NULL)));
  } else {
    struct msg *in = sim_recv(c, c->rank - 1);
    sim_unpack(c, in, c->v, 0, c->v->n, true);
    sim_reduce(c->w, c->sim, c->v->n);
    msg_free(in);
  }
}

static void fold_out(struct coll_call *c, const struct fold *f) {
  if (c->rank >= 2 * f->rem)
    return;
  if (f->newrank < 0) {
    struct msg *in = sim_recv(c, c->rank + 1);
    sim_unpack(c, in, c->v, 0, c->v->n, false);
    msg_free(in);
  } else {
    sim_wait_send(c, sim_send(c, c->rank - 1,
                              sim_pack(c, c->v, 0, c->v->n, NULL)));
  }
}

static void rdb_worker(struct coll_call *c) {
  struct fold f = fold_of(c->sim->nworkers, c->rank);
  fold_in(c, &f);
  if (f.newrank >= 0)
    for (int mask = 1; mask < f.q; mask *= 2) {
      int partner = real_rank(&f, f.newrank ^ mask);
      struct msg *out = sim_pack(c, c->v, 0, c->v->n, NULL);
      struct msg *in = sim_sendrecv(c, partner, out, partner);
      sim_unpack(c, in, c->v, 0, c->v->n, true);
      sim_reduce(c->w, c->sim, c->v->n);
      msg_free(in);
    }
  fold_out(c, &f);
}

/* Rabenseifner's allreduce as MPICH's MPIR_Allreduce_redscat_allgather
 * does it, step for step as SMPI's rab_rdb (SimGrid src/smpi/colls/
 * allreduce/allreduce-rab-rdb.cpp): the vector is cut into p' blocks of
 * floor(n/p') values, the last taking the rest; the reduce-scatter halves
 * recursively starting with the nearest partner (mask 1: the neighbour
 * gets the half it keeps), the allgather doubles back starting with the
 * farthest. INDEX windows of blocks [send_idx, last_idx) follow MPICH's
 * bookkeeping. */
struct rab {
  uint64_t n;
  unsigned q;
  unsigned send_idx, recv_idx, last_idx;
};

/* The first value of block I. */
static uint64_t disp(const struct rab *r, unsigned i) {
  return i >= r->q ? r->n : r->n / r->q * i;
}

/* Send blocks [SA, SB) to PARTNER and receive [RA, RB) from it, summed
 * into V (SUM) or copied. */
static void rab_step(struct coll_call *c, int partner, const struct rab *r,
                     unsigned sa, unsigned sb, unsigned ra, unsigned rb,
                     bool sum) {
  uint64_t slo = disp(r, sa), shi = disp(r, sb);
  uint64_t rlo = disp(r, ra), rhi = disp(r, rb);
  struct msg *out = sim_pack(c, c->v, slo, shi, NULL);
  struct msg *in = sim_sendrecv(c, partner, out, partner);
  sim_unpack(c, in, c->v, rlo, rhi, sum);
  if (sum)
    sim_reduce(c->w, c->sim, rhi - rlo);
  msg_free(in);
}

/* The reduce-scatter's halving over GROUP (ranks by index); with C NULL
 * only its bookkeeping, which leaves R as the exchange would (the
 * sharded allgather's start). */
static void rab_reduce_scatter(struct coll_call *c, const struct fold *f,
                               struct rab *r, const int *group) {
  unsigned mask = 1;
  r->send_idx = r->recv_idx = 0;
  r->last_idx = r->q;
  while (mask < r->q) {
    int newdst = f->newrank ^ (int)mask;
    int partner = c ? group[real_rank(f, newdst)] : -1;
    unsigned half = r->q / (mask * 2);
    if (f->newrank < newdst) {
      r->send_idx = r->recv_idx + half;
      if (c)
        rab_step(c, partner, r, r->send_idx, r->last_idx, r->recv_idx,
                 r->send_idx, true);
    } else {
      r->recv_idx = r->send_idx + half;
      if (c)
        rab_step(c, partner, r, r->send_idx, r->recv_idx, r->recv_idx,
                 r->last_idx, true);
    }
    r->send_idx = r->recv_idx;
    mask <<= 1;
    /* last_idx is kept in the last step: the allgather needs it. */
    if (mask < r->q)
      r->last_idx = r->recv_idx + r->q / mask;
  }
}

static void rab_allgather(struct coll_call *c, const struct fold *f,
                          struct rab *r, const int *group) {
  for (unsigned mask = r->q / 2; mask > 0; mask >>= 1) {
    int newdst = f->newrank ^ (int)mask;
    int partner = group[real_rank(f, newdst)];
    unsigned half = r->q / (mask * 2);
    if (f->newrank < newdst) {
      if (mask != r->q / 2)
        r->last_idx += half;
      r->recv_idx = r->send_idx + half;
      rab_step(c, partner, r, r->send_idx, r->recv_idx, r->recv_idx,
               r->last_idx, false);
    } else {
      r->recv_idx = r->send_idx - half;
      rab_step(c, partner, r, r->send_idx, r->last_idx, r->recv_idx,
               r->send_idx, false);
      r->send_idx = r->recv_idx;
    }
  }
}

static void rabenseifner_worker(struct coll_call *c) {
  struct fold f = fold_of(c->sim->nworkers, c->rank);
  fold_in(c, &f);
  if (f.newrank >= 0) {
    struct rab r = {c->v->n, (unsigned)f.q, 0, 0, 0};
    rab_reduce_scatter(c, &f, &r, c->sim->ranks);
    rab_allgather(c, &f, &r, c->sim->ranks);
  }
  fold_out(c, &f);
}

/* Sharded (sim.h, reduce_scatter): Rabenseifner's two halves apart, over
 * the call's group, whose size is a power of two (run_check: shard_pow2,
 * so nothing is folded): member i is left the sum of block recv_idx of
 * MPICH's bookkeeping, and the allgather starts from there. */
static void rab_shard_reduce_scatter(struct coll_call *c) {
  int g, me;
  const int *grp = coll_group(c, &g, &me);
  struct fold f = fold_of(g, me);
  struct rab r = {c->v->n, (unsigned)f.q, 0, 0, 0};
  rab_reduce_scatter(c, &f, &r, grp);
}

static void rab_shard_allgather(struct coll_call *c) {
  int g, me;
  const int *grp = coll_group(c, &g, &me);
  struct fold f = fold_of(g, me);
  struct rab r = {c->v->n, (unsigned)f.q, 0, 0, 0};
  rab_reduce_scatter(NULL, &f, &r, grp);
  rab_allgather(c, &f, &r, grp);
}

static int rab_shard_ranges(int me, int g, uint64_t n, uint64_t lo[2],
                            uint64_t hi[2]) {
  struct fold f = fold_of(g, me);
  struct rab r = {n, (unsigned)f.q, 0, 0, 0};
  rab_reduce_scatter(NULL, &f, &r, NULL);
  lo[0] = disp(&r, r.recv_idx);
  hi[0] = disp(&r, r.recv_idx + 1);
  return 1;
}

const struct collective coll_rdb = {
    .name = "rdb",
    .description = "recursive doubling (butterfly) allreduce, the MPI "
                   "baseline; non-powers of two folded",
    .formula = "rdb",
    .worker = rdb_worker,
    /* [exchange] compression = per-bucket with a codec that does not
     * sum: MPICH's recursive doubling, allgather-rdb's (common.c). */
    .allgather = gather_rdb,
    /* the whole vector sent and received at each step: 17.2 and 18.6 */
    .oracle_value_bytes = 19,
};

const struct collective coll_rabenseifner = {
    .name = "rabenseifner",
    .description = "MPICH's reduce-scatter by recursive halving (nearest "
                   "partner first) and allgather by recursive doubling "
                   "(SMPI's rab_rdb; RedSync Eq. 2); non-powers of two "
                   "folded",
    .formula = "rabenseifner",
    .worker = rabenseifner_worker,
    .allgather = gather_rdb,
    /* Sharded: recursive halving's reduce-scatter and recursive
     * doubling's allgather apart (SMPI's rab_rdb is the two together:
     * tests/parity), over a power of two. */
    .reduce_scatter = rab_shard_reduce_scatter,
    .shard_allgather = rab_shard_allgather,
    .shard_ranges = rab_shard_ranges,
    .shard_pow2 = true,
    /* halves, quarters: 5.5 */
    .oracle_value_bytes = 6,
};
