/* sim/collectives/ring.c: ring allreduce, reduce-scatter then allgather
 * (INCEPTIONN seeds/000 Algorithm 1; Thakur et al. 2005), and the
 * INCEPTIONN variant with the codec on every hop of both legs.
 *
 * With a codec, `ring` decodes, sums and re-encodes on every hop of the
 * reduce-scatter (a partial sum cannot be summed compressed), then encodes
 * each reduced block once and forwards those bytes unchanged around the
 * allgather; `inceptionn` re-encodes on every allgather hop too, as the
 * paper's NIC engines compress every gradient packet they send and
 * decompress every one they receive (Section VI). */
#include "common.h"

static void run(struct coll_call *c, enum ring_codec mode) {
  int p = c->sim->nworkers;
  ring_reduce_scatter(c, c->sim->ranks, p, c->rank, 0, c->v->n);
  ring_allgather(c, c->sim->ranks, p, c->rank, 0, c->v->n, mode);
}

static void ring_worker(struct coll_call *c) { run(c, RING_ENCODE_ONCE); }
static void inceptionn_worker(struct coll_call *c) { run(c, RING_EVERY_HOP); }

const struct collective coll_ring = {
    .name = "ring",
    .description = "ring reduce-scatter then allgather (INCEPTIONN Alg. 1); "
                   "a codec re-encodes every reduce-scatter hop, then each "
                   "reduced block once",
    .formula = "ring",
    .worker = ring_worker,
};

const struct collective coll_inceptionn = {
    .name = "inceptionn",
    .description = "the same ring with the codec on every hop of both legs: "
                   "decompress, sum, compress (INCEPTIONN Sec. IV, VI)",
    .formula = "inceptionn-ring",
    .worker = inceptionn_worker,
};
