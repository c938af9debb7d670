/* sim/collectives/nccl_kernel.h: one GPU's NCCL kernel for one call, as
 * NCCL runs it (NVIDIA/nccl src/device/all_reduce.h, prims_*.h;
 * docs/collectives.md, "NCCL's algorithms"): each channel an
 * independent program (a CTA in NCCL), its steps driven by the data, not
 * by a common clock.
 *
 * A step sends when what it forwards has arrived and its protocol's
 * per-step cost has passed (NCCL's per-step latency where the step runs,
 * beyond the wire's own latency, which the platform's links give); its
 * message flows into the receiver's buffer at once (a FIFO slot always
 * posted) and its sender does not wait for it. A message carries the
 * protocol's wire bytes per data byte (LL's flags, LL128's) and streams
 * at most at the channel's rate for the protocol. The call begins with
 * the protocol's launch latency. Channels share the links as SimGrid
 * shares them.
 *
 * What a call declares to kff.h's contract: each channel's steps are a
 * stream of events of their own over the GPUs of its ring or tree, whose
 * period is a ring's steps over one machine (its hops repeat machine by
 * machine) or a tree's chunk, and how the channel's counters move when
 * whole periods are skipped (its bytes still counted on their links). */
#ifndef GRADSIM_SIM_COLLECTIVES_NCCL_KERNEL_H
#define GRADSIM_SIM_COLLECTIVES_NCCL_KERNEL_H

#include "common.h"

/* The periods a call's streams declare they repeat over before they
 * count as periodic (the kff.h contract): a ring's (and a ring
 * allgather's) macro steps, a tree's or NVLS's chunks, over a FIFO's
 * slots and two more (the estimate's count, nccl.c, declares the same). */
enum { NK_RING_REPS = 3, NK_CHUNK_REPS = NCCL_STEPS + 2 };

/* What a protocol costs (the caller derives it from NCCL's model and the
 * point's keys). */
struct nk_cost {
  double launch_s;             /* once, at the call's start */
  double step_s[NCCL_HW_COUNT]; /* a step's cost beyond its wire latency */
  double chan_Bps;             /* data bytes a second a channel streams at
                                * most over a link (0: the links' rate) */
  double wire;                 /* wire bytes per data byte */
};

/* One channel's place in its tree (NCCL's tree for the channel). */
struct nk_tree {
  uint64_t lo, hi; /* its share of the vector */
  int up;          /* parent rank, -1 at the root */
  int kids[3], nkids;
  int depth, reach; /* the caller's depth, the tree's deepest */
  /* Each stream's fixed share of its route, bytes/s of wire, up and to
   * each child (0: the links shared as SimGrid shares them; given in a
   * call of TREE_FIXED_CHUNKS chunks a channel or more). */
  double share_up, share_kid[3];
};

/* A tree's streams keep their fixed shares of their links (nk_tree's) in
 * a call of this many chunks a channel or more; in a shorter one they
 * share the links as SimGrid shares them. Shared so, streams that stop
 * and start at their own pace drift against one another and the call
 * never repeats itself, so no period is found (docs/performance.md gives
 * the cost); at fixed shares it does, and where every stream sends, each
 * gets what SimGrid's sharing gives it. But while a pipeline fills and drains
 * the streams sending take up what the waiting ones leave, which fixed shares
 * do not: a tree of a few chunks a channel came out up to 17% slower at fixed
 * shares (two p4de, 1 to 8 MiB), 10% at 128 chunks (1 GiB over two DGX
 * H100), 2.6% at 512 (4 GiB) and 0.4% at 512 over eight machines. A call this
 * long is long enough to jump. */
#define TREE_FIXED_CHUNKS 256

/* What a ring call runs: the allreduce, or one of its legs apart as
 * NCCL's ReduceScatter and AllGather run them (sharded data parallel:
 * NVIDIA/nccl src/device/reduce_scatter.h and all_gather.h, runRing),
 * rank r's shard the r-th of the vector's P parts (block_lo). */
enum nk_leg { NK_ALLREDUCE, NK_REDUCE_SCATTER, NK_ALLGATHER };

/* A call's plan. */
struct nk_plan {
  int nc;              /* channels */
  uint64_t chunk;      /* values per channel and step at most (ring: its
                        * chunk per loop and rank; tree: its chunk) */
  struct nk_cost cost;
  bool split;          /* tree: reduce and broadcast at once (the split
                        * threads of Simple and LL128), else one after
                        * the other (LL) */
  int slices;          /* ring: messages a step is sent in, each forwarded
                        * on its own (Simple: its 2 slices a chunk) */
  int macro;           /* ring: steps after which its sends repeat (a
                        * machine's G hops, the last to the next
                        * machine; 1 on one machine) */
  int window;          /* messages a stream may have in flight (NCCL's
                        * FIFO slots a message takes: NCCL_STEPS, or
                        * over Simple's slices of two slots) */
  /* The wire's latency (s) and a GPU's link rate (bytes/s) where a step
   * runs: what a stream's window covers. */
  double lat_hw[NCCL_HW_COUNT], link_Bps[NCCL_HW_COUNT];
  /* Where a message from rank A to rank B runs (NVLink, PCIe, network). */
  enum nccl_hw (*hw)(const struct sim *s, int a, int b);
  /* ring: the legs it runs; for one leg apart, the rank at position POS
   * of channel CHAN's ring (whose shard that position's blocks are),
   * asked with CTX. */
  enum nk_leg leg;
  int (*rank_at)(const void *ctx, int chan, int pos);
  const void *ctx;
  /* ring: channel q's sends to another machine at SHARE[q] bytes/s at
   * most (0, or SHARE NULL: as the links share them). */
  const double *share;
};

/* The ring allreduce on NC channels (CH[k]: channel k's share and its
 * neighbours; CH[k].me the caller's index in the ring of P members), or
 * one of its legs (PL->leg): then every channel carries its part of
 * every shard (CH[k].lo and hi unused), as NCCL's ReduceScatter (rank r
 * left the sum of its shard) and AllGather (every rank every shard). */
void nccl_kernel_ring(struct coll_call *c, const struct nk_plan *pl,
                      const struct ring_chan *ch, int p);
/* The tree allreduce on NC channels (TREE[k]: channel k's tree), or
 * CollNet's chain: a parent of rank P or more is SHARPS[k], the switches
 * of channel k's rail (NULL: a tree of GPUs). */
struct nk_sharp;
void nccl_kernel_tree(struct coll_call *c, const struct nk_plan *pl,
                      const struct nk_tree *tree, int p,
                      struct nk_sharp *const *sharps);

/* A rail's SHARP switches serving CollNet's chain on channel Q (NCCL's
 * CollNet, all_reduce.h runCollNetChain: the network sums): rank RANK,
 * HEADS the heads of the NM machines' chains on the channel (their
 * ranks, machine order). A chunk's total leaves as its last part comes
 * in. */
struct nk_sharp *nccl_sharp_new(struct sim *s, int rank, int q,
                                const int *heads, int nm);
/* Its actor's body: sums the heads' chunks for every call on its channel,
 * for ever (a daemon). */
void nccl_sharp_serve(struct nk_sharp *w);

/* NCCL's ring allgather (NCCL_ALGO=Ring) on PL->nc channels of P ranks:
 * MINE (the caller's message, kept: ALL[me] is it) to every rank, ALL[r]
 * rank r's message, its payload and size as sent (references the caller
 * frees). */
void nccl_kernel_allgather(struct coll_call *c, const struct nk_plan *pl,
                           const struct ring_chan *ch, int p,
                           struct msg *mine, struct msg **all);

/* A machine's NVSwitch serving NVLS on channel Q: rank RANK, the G GPUs
 * GPUS (their ranks, machine order); it forwards each message at the
 * rate its senders' channels send at (struct msg's rate_Bps). */
struct nk_switch;
struct nk_switch *nccl_switch_new(struct sim *s, int rank, int q,
                                  const int *gpus, int g);
/* Its actor's body: forwards what every NVLS call sends it on its
 * channel, for ever (a daemon). */
void nccl_switch_serve(struct nk_switch *w);
/* NVLS inside one machine of G GPUs on PL->nc channels (NCCL_ALGO=NVLS),
 * through the machine's NVSwitch of rank SW (SWITCHES[q]: its channel
 * q); with TREE (TREE[q]: channel q's tree over the machines, its up
 * and kids the caller's counterparts there), NVLS's tree across P ranks
 * (NCCL_ALGO=NVLSTree); NULL: one machine. */
void nccl_kernel_nvls(struct coll_call *c, const struct nk_plan *pl, int g,
                      int p, int sw, struct nk_switch *const *switches,
                      const struct nk_tree *tree);

#endif
