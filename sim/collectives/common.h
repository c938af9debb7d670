/* sim/collectives/common.h: building blocks shared by the collectives:
 * block partitions and the ring phases over a group of ranks. */
#ifndef GRADSIM_SIM_COLLECTIVES_COMMON_H
#define GRADSIM_SIM_COLLECTIVES_COMMON_H

#include "../sim.h"

#include <stdio.h>
#include <string.h>

/* Block I of G blocks of [LO, HI): [lo + len i / g, lo + len (i+1) / g). */
static inline uint64_t block_lo(uint64_t lo, uint64_t hi, int g, int i) {
  return lo + (hi - lo) * (uint64_t)i / (uint64_t)g;
}

/* How a ring treats a codec in its allgather leg. */
enum ring_codec {
  RING_ENCODE_ONCE, /* encode the reduced block once, forward it as is */
  RING_EVERY_HOP,   /* decode and re-encode on every hop (INCEPTIONN) */
};

/* Several rings at once (NCCL's channels), in lockstep: ring K moves
 * [lo, hi) of the vector in G blocks, its members in ring order, the
 * caller at index ME between NEXT and PREV (ranks). */
#define RING_CHANNELS_MAX 64
struct ring_chan {
  uint64_t lo, hi;
  int me, next, prev;
};
/* The reduce-scatter and allgather below on NC rings of G members each
 * (NC <= RING_CHANNELS_MAX): every step sends one block on every ring at
 * once and sums what arrives (NC = 1: exactly the functions below). */
void rings_reduce_scatter(struct coll_call *c, const struct ring_chan *ch,
                          int nc, int g);
void rings_allgather(struct coll_call *c, const struct ring_chan *ch, int nc,
                     int g, enum ring_codec mode);
/* The reduce-scatter, then the allgather: declared one sequence of
 * steps (steps.h) where the two legs' steps are alike (common.c). TAIL:
 * what the caller does next shares the ring's links (steps_keep_tail). */
void rings_allreduce(struct coll_call *c, const struct ring_chan *ch, int nc,
                     int g, enum ring_codec mode, bool tail);

/* Ring reduce-scatter over GROUP[0..G) (ring order; ME my index) on
 * V[lo, hi): G - 1 steps; afterwards I hold the full sum of block
 * (ME + 1) % G (INCEPTIONN Algorithm 1, lines 9-13). */
void ring_reduce_scatter(struct coll_call *c, const int *group, int g, int me,
                         uint64_t lo, uint64_t hi);

/* Ring allgather of the blocks left by ring_reduce_scatter (lines 14-18):
 * G - 1 steps, after which every member holds every block. */
void ring_allgather(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, enum ring_codec mode);
/* ring_reduce_scatter, then ring_allgather (rings_allreduce). */
void ring_allreduce(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, enum ring_codec mode,
                    bool tail);

/* SimGrid SMPI 3.32's default allreduce (allreduce__default: its
 * default reduce, then its default broadcast), of V[lo, hi) over
 * GROUP[0..G): every other member sends its values to GROUP[0] at once,
 * which receives them all at once and sums them (a linear reduce), then
 * the sum goes down MPICH's binomial tree from GROUP[0]. lr takes it for
 * the values that do not fill a ring block. With a codec each reduce
 * message is encoded, and the sum once, its bytes forwarded down the
 * tree. */
void default_allreduce(struct coll_call *c, const int *group, int g, int me,
                       uint64_t lo, uint64_t hi);

/* An allgather's start at C's rank: ALL's P slots empty but the caller's
 * own, MINE, marked as its. */
void gather_start(const struct coll_call *c, int p, struct msg *mine,
                  struct msg **all);
/* MPICH's recursive-doubling allgather (MPIR_Allgather_intra_recursive_
 * doubling, as SMPI's allgather__rdb runs it), any p: MINE to every
 * worker, ALL[r] worker r's message (references the caller frees);
 * allgather-rdb's gather, and rdb's and rabenseifner's allgather. */
void gather_rdb(struct coll_call *c, struct msg *mine, struct msg **all);

/* Binomial-tree broadcast of V[lo, hi) over GROUP from GROUP[0]: ceil(lg
 * G) rounds. When CARRY is not NULL the root sends that message (a payload
 * encoded once, forwarded unchanged down the tree) and receivers decode
 * it; otherwise the root's V as raw fp32 values. */
void tree_broadcast(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, struct msg *carry);

#endif
