/* sim/collectives/ring.c: ring allreduces, reduce-scatter then allgather
 * (INCEPTIONN seeds/000 Algorithm 1; Thakur et al. 2005).
 *
 * `ring` is SMPI's `lr` (SimGrid src/smpi/colls/allreduce/allreduce-lr.cpp,
 * a logical ring in neighbour order): blocks of floor(n/p) values, p - 1
 * reduce-scatter steps and p - 1 allgather steps in which rank r sends to
 * r + 1 and receives from r - 1; the n mod p values left over (all n when
 * n < p) are then reduced by SMPI's default allreduce, a linear reduce to
 * rank 0 and a binomial broadcast from it. `inceptionn` differs on
 * purpose: its p blocks differ in size by at most one value, so that
 * every value takes the ring, as INCEPTIONN's Algorithm 1 partitions the
 * gradient into N blocks (and as `nccl-ring` splits a buffer: nccl.c).
 * For n divisible by p they move the same bytes in the same steps.
 *
 * With a codec, `ring` decodes, sums and re-encodes on every
 * hop of the reduce-scatter (a partial sum cannot be summed compressed),
 * then encode each reduced block once and forward those bytes unchanged
 * around the allgather; `inceptionn` re-encodes on every allgather hop
 * too, as the paper's NIC engines compress every gradient packet they
 * send and decompress every one they receive (Section VI). */
#include "common.h"

#include <xbt/asserts.h>

/* The allgather of every worker's message ([exchange] compression =
 * per-bucket with a codec that does not sum): MPICH's ring allgather
 * (MPIR_Allgather_intra_ring), on the neighbours `ring` allreduces over:
 * p - 1 steps, step i sending to r + 1 the message received at step i - 1
 * (its own first) and receiving rank r - i's from r - 1, a sendrecv each.
 * SMPI runs the same messages as allgather__NTSLR (SimGrid 3.32,
 * src/smpi/colls/allgather/allgather-NTSLR.cpp); its allgather__ring is
 * Faraj and Yuan's other ring, step i straight to r + i. A message goes
 * on as it arrived, shared (msg_share), so that the payload encoded once
 * is not copied at each of the p - 1 hops (p copies at each worker). */
static void ring_gather(struct coll_call *c, struct msg *mine,
                        struct msg **all) {
  int p = c->sim->nworkers, me = c->rank;
  gather_start(c, p, mine, all);
  int right = (me + 1) % p, left = (me + p - 1) % p;
  for (int i = 1, j = me; i < p; i++) {
    struct msg *in = sim_sendrecv(c, right, msg_share(all[j]), left);
    j = (me + p - i) % p;
    xbt_assert(in->nparts == 1 && !all[j], "ring allgather: step %d", i);
    all[j] = msg_ref(in->parts[0]);
    msg_free(in);
  }
}

/* lr on [LO, HI) over the call's group (every worker's whole vector:
 * the allreduce; HSDP's shard across machines): its body's ring, then
 * the rest by SMPI's default (the remainder's linear reduce into rank 0
 * follows the ring at once). */
static void lr_range_allreduce(struct coll_call *c, uint64_t lo, uint64_t hi) {
  int p, me;
  const int *grp = coll_group(c, &p, &me);
  uint64_t body = (hi - lo) / (uint64_t)p * (uint64_t)p;
  if (body > 0)
    ring_allreduce(c, grp, p, me, lo, lo + body, RING_ENCODE_ONCE,
                   lo + body < hi);
  default_allreduce(c, grp, p, me, lo + body, hi);
}

/* lr's reduce-scatter of [LO, HI) over the call's group (its body's
 * ring, the rest allreduced by SMPI's default), as lr_shard_ranges says
 * for HI - LO values shifted by LO (qgz's across machines). */
static void lr_range_reduce_scatter(struct coll_call *c, uint64_t lo,
                                    uint64_t hi) {
  int p, me;
  const int *grp = coll_group(c, &p, &me);
  uint64_t body = (hi - lo) / (uint64_t)p * (uint64_t)p;
  if (body > 0)
    ring_reduce_scatter(c, grp, p, me, lo, lo + body);
  default_allreduce(c, grp, p, me, lo + body, hi);
}

static void lr_worker(struct coll_call *c) {
  lr_range_allreduce(c, 0, c->v->n);
}

/* Sharded (sim.h, reduce_scatter): the ring's reduce-scatter of the
 * body, leaving member i the sum of block (i + 1) mod p, and the
 * remainder allreduced whole at once by SMPI's default; later the body's
 * allgather, each block encoded once (MPICH's ring allgather moves the
 * same blocks in the same steps). */
static void lr_reduce_scatter(struct coll_call *c) {
  lr_range_reduce_scatter(c, 0, c->v->n);
}

static void lr_shard_allgather(struct coll_call *c) {
  int p, me;
  const int *grp = coll_group(c, &p, &me);
  uint64_t body = c->v->n / (uint64_t)p * (uint64_t)p;
  if (body > 0)
    ring_allgather(c, grp, p, me, 0, body, RING_ENCODE_ONCE);
}

/* Where the reduce-scatter leaves the sums (ring_reduce_scatter: block
 * (i + 1) mod p); lr's remainder is summed whole everywhere. */
static int lr_shard_ranges(int me, int p, uint64_t n, uint64_t lo[2],
                           uint64_t hi[2]) {
  int k = (me + 1) % p;
  uint64_t body = n / (uint64_t)p * (uint64_t)p;
  lo[0] = block_lo(0, body, p, k);
  hi[0] = block_lo(0, body, p, k + 1);
  lo[1] = body;
  hi[1] = n;
  return 2;
}

static int inceptionn_shard_ranges(int me, int p, uint64_t n, uint64_t lo[2],
                                   uint64_t hi[2]) {
  int k = (me + 1) % p;
  lo[0] = block_lo(0, n, p, k);
  hi[0] = block_lo(0, n, p, k + 1);
  return 1;
}

/* The balanced ring on [LO, HI) over the call's group: its
 * reduce-scatter (qgz's across machines), its allreduce (every worker's
 * whole vector; HSDP's shard across machines). */
static void inceptionn_range_reduce_scatter(struct coll_call *c,
                                            uint64_t lo, uint64_t hi) {
  int p, me;
  const int *grp = coll_group(c, &p, &me);
  ring_reduce_scatter(c, grp, p, me, lo, hi);
}

static void inceptionn_range_allreduce(struct coll_call *c, uint64_t lo,
                                       uint64_t hi) {
  int p, me;
  const int *grp = coll_group(c, &p, &me);
  ring_allreduce(c, grp, p, me, lo, hi, RING_EVERY_HOP, false);
}

static void inceptionn_worker(struct coll_call *c) {
  inceptionn_range_allreduce(c, 0, c->v->n);
}

/* Sharded: the balanced ring's two legs apart. */
static void inceptionn_reduce_scatter(struct coll_call *c) {
  inceptionn_range_reduce_scatter(c, 0, c->v->n);
}

static void inceptionn_shard_allgather(struct coll_call *c) {
  int p, me;
  const int *grp = coll_group(c, &p, &me);
  ring_allgather(c, grp, p, me, 0, c->v->n, RING_EVERY_HOP);
}

const struct collective coll_ring = {
    .name = "ring",
    .description = "SMPI's lr: ring reduce-scatter then allgather over "
                   "blocks of floor(n/p) values, the rest by SMPI's default "
                   "allreduce (linear reduce, binomial broadcast)",
    .formula = "ring-lr",
    .worker = lr_worker,
    .allgather = ring_gather,
    .reduce_scatter = lr_reduce_scatter,
    .shard_allgather = lr_shard_allgather,
    .shard_ranges = lr_shard_ranges,
    .range_allreduce = lr_range_allreduce,
    .range_reduce_scatter = lr_range_reduce_scatter,
    .ring_legs = true,
};

const struct collective coll_inceptionn = {
    .name = "inceptionn",
    .description = "the balanced ring with the codec on every hop of both "
                   "legs: decompress, sum, compress (INCEPTIONN Sec. IV, VI)",
    .formula = "inceptionn-ring",
    .balanced_blocks = true,
    .worker = inceptionn_worker,
    .reduce_scatter = inceptionn_reduce_scatter,
    .shard_allgather = inceptionn_shard_allgather,
    .shard_ranges = inceptionn_shard_ranges,
    .range_allreduce = inceptionn_range_allreduce,
    .range_reduce_scatter = inceptionn_range_reduce_scatter,
    .ring_legs = true,
};
