/* models/nccl.h: NCCL's own cost model, its choice of algorithm,
 * protocol and channels, and its protocols' constants, as NCCL has them
 * (NVIDIA/nccl at 5067397c, v2.30.7: src/graph/tuning.cc,
 * ncclTopoTuneModel and ncclTopoGetAlgoTime; src/enqueue.cc,
 * topoGetAlgoInfo and calcCollChunking; src/include/device.h). Read
 * there, written anew.
 *
 * What it is for: NCCL picks, for every collective call, the algorithm
 * (ring, tree, NVLS, ...) and protocol (LL, LL128, Simple) of least time
 * in this model, then the channels and threads by the call's size. The
 * simulator asks it the same question to take the same choice; the
 * simulated time is the simulation's, not this model's (NCCL's model is
 * only what NCCL believes, and it misses measured times by tens of per
 * cent at some sizes: its choice is what gradsim needs from it).
 *
 * The inputs are what NCCL's topology search hands its tuner: per
 * algorithm a graph of N channels, each moving BW_INTRA GB/s inside a
 * machine and BW_INTER GB/s across machines. The caller derives them
 * from the platform (sim/collectives/nccl.c says how).
 *
 * Units: latencies in microseconds and bandwidths in GB/s (1e9 B/s) as
 * in NCCL's tables; times returned in seconds. No state beyond the
 * caller's struct; nothing prints. */
#ifndef GRADSIM_MODELS_NCCL_H
#define GRADSIM_MODELS_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NCCL's algorithms and protocols, in NCCL's order (src/include/
 * device.h), as NCCL_ALGO and NCCL_PROTO name them; _AUTO: the tuner's
 * choice. */
enum nccl_algo {
  NCCL_ALGO_TREE, NCCL_ALGO_RING, NCCL_ALGO_COLLNET_DIRECT,
  NCCL_ALGO_COLLNET_CHAIN, NCCL_ALGO_NVLS, NCCL_ALGO_NVLS_TREE,
  NCCL_ALGO_COUNT, NCCL_ALGO_AUTO = NCCL_ALGO_COUNT
};
enum nccl_proto {
  NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE, NCCL_PROTO_COUNT,
  NCCL_PROTO_AUTO = NCCL_PROTO_COUNT
};
/* The collectives the model times. */
enum nccl_coll {
  NCCL_COLL_ALLREDUCE, NCCL_COLL_REDUCE_SCATTER, NCCL_COLL_ALLGATHER,
  NCCL_COLL_COUNT
};
/* Where a step runs: NCCL's hwLatencies index. */
enum nccl_hw { NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET, NCCL_HW_COUNT };

/* NCCL's compute capability classes (tuning.cc's *_COMPCAP_IDX). */
enum nccl_arch {
  NCCL_ARCH_VOLTA, NCCL_ARCH_AMPERE, NCCL_ARCH_HOPPER, NCCL_ARCH_BLACKWELL,
  NCCL_ARCH_COUNT
};
/* The class of compute capability CC (70, 80, 90, 100: major x 10 +
 * minor; below 70 counts as Volta, as NCCL's tables start there). */
enum nccl_arch nccl_arch_of(int cc);

/* ---- the protocols (src/include/device.h, enqueue.cc) ---------------- */

/* NCCL_STEPS: slots of a connection's FIFO. */
#define NCCL_STEPS 8
/* Simple's buffer (NCCL_BUFFSIZE's default, 4 MiB) and a ring's chunk
 * of it per step (ALLREDUCE_CHUNKSTEPS = NCCL_STEPS / 2 slots). */
#define NCCL_SIMPLE_BUFFSIZE (4u << 20)
#define NCCL_RING_CHUNKSTEPS (NCCL_STEPS / 2)

/* What a protocol puts on the wire per byte of data: LL sends 8-byte
 * lines of 4 data bytes and a 4-byte flag (2x); LL128 128-byte lines of
 * 120 data bytes and an 8-byte flag (128/120); Simple the data alone,
 * its flags in separate small writes. */
double nccl_proto_wire(enum nccl_proto p);
/* Data bytes one channel moves per step of algorithm A with protocol P
 * (calcCollChunking's chunkSize before its size-driven reductions):
 * Simple: a 512 KiB slot, a ring's four of them (2 MiB); LL: half of its
 * 64 KiB slot of lines (32 KiB); LL128: 15/16 of its 600 KiB slot. */
uint64_t nccl_proto_chunk(enum nccl_algo a, enum nccl_proto p);

/* ---- the tuner's model ------------------------------------------------ */

/* One algorithm's graph, as NCCL's topology search leaves it. */
struct nccl_graph {
  int nchannels;     /* 0: the algorithm has no graph here */
  double bw_intra;   /* GB/s per channel inside a machine */
  double bw_inter;   /* GB/s per channel across machines */
  bool nvlink;       /* inside a machine over NVLink (else PCIe) */
  /* us added to a network step: the network plugin's latency
   * (graph->latencyInter, search.cc; 0 from NCCL's InfiniBand and
   * socket transports, 75 from aws-ofi-nccl on p4d, p4de and p5) */
  double latency_inter;
};

/* The tuner's tables by NCCL release: v2.30.7's (the default, for 2.28.9
 * and later), v2.28.7's (for 2.28.3 and 2.28.7), v2.26.2's (for 2.23 to
 * 2.27, and the nearest for 2.21 and 2.22, whose tuner charged a tree's
 * Simple step 28 us and gave a ring 2 x nodes network steps), v2.20.3's
 * (for 2.19 and 2.20) or v2.18.5's (for 2.18).
 *
 * The older two differ from v2.30.7 in what is modelled here by ring
 * LL's bus bandwidth (a quarter of the links' rather than half), Hopper's
 * LL ceilings (Ampere's), the ring's network steps (2 x nodes), NVLS's
 * bandwidth (5/6 of its links, no efficiency or NVLS tree ceiling) and
 * the latencies (nccl_hw_latency); v2.20.3's NVLS and its tree take the
 * least of their links, and its trees' Simple steps are charged 28 us in
 * the tuner. v2.26.2 is v2.30.7 but for NVLS's bandwidth, which is
 * v2.20.3's (2.28.3 brought the efficiency and ceiling), its tree's
 * network step (14 us, as to 2.28.7; 20.9 from 2.28.9) and Blackwell's
 * per-channel ceilings (twice Hopper's). v2.28.7 is v2.30.7 but for that
 * 14 us and two of Blackwell's ceilings. */
enum nccl_version {
  NCCL_V2_30,
  NCCL_V2_18,
  NCCL_V2_20,
  NCCL_V2_26,
  NCCL_V2_28,
  NCCL_VERSION_COUNT
};

/* A tuner plugin (NCCL_TUNER_PLUGIN) that overrides NCCL's choice where
 * its tables cover a call: none, or AWS's region tuner for p5 and p5e
 * (aws-ofi-nccl v1.16.3; nccl_tuner.c). */
enum nccl_tuner { NCCL_TUNER_INTERNAL, NCCL_TUNER_AWS_P5, NCCL_TUNER_COUNT };

/* What the tuner sees of a communicator. */
struct nccl_comm {
  enum nccl_version version;
  enum nccl_tuner tuner;
  int nranks, nnodes;
  int cc;            /* the GPUs' compute capability (70, 80, 90, ...) */
  bool amd_cpu;      /* the hosts' CPUs are AMD's (NCCL's LL limits and
                      * network overhead differ by CPU vendor) */
  bool nvls;         /* the NVSwitches reduce (NVLink SHARP) */
  bool collnet;      /* the network's switches reduce (SHARP) */
  struct nccl_graph graph[NCCL_ALGO_COUNT];
  /* Channels a call may use (comm->nChannels; NVLS: nvlsChannels). */
  int nchannels, nvls_channels;
  /* Algorithms and protocols allowed (NCCL_ALGO, NCCL_PROTO): a bit per
   * enum value; 0 means all. */
  unsigned algo_mask, proto_mask;
};

/* The tuner's tables for one communicator (ncclTopoTuneModel). */
struct nccl_model {
  struct nccl_comm comm;
  /* Per collective, algorithm and protocol: latency (us) and bandwidth
   * (GB/s of the call's bytes; 0: not available). */
  double lat[NCCL_COLL_COUNT][NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
  double bw[NCCL_COLL_COUNT][NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
  /* Threads per channel and bytes per thread before a call takes more
   * channels (maxThreads, threadThresholds). */
  int max_threads[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
  double thread_threshold[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
};

/* Fill M from C. Returns 0, or -EINVAL when C is not a communicator
 * NCCL could form (fewer than one rank per node, nodes not dividing
 * ranks, no ring graph). */
int nccl_model_init(struct nccl_model *m, const struct nccl_comm *c);

/* NCCL's estimate of a call moving BYTES (seconds; a negative number
 * when the pair is not available): ncclTopoGetAlgoTime, one operation
 * in flight. */
double nccl_model_time(const struct nccl_model *m, enum nccl_coll coll,
                       enum nccl_algo a, enum nccl_proto p, double bytes);

/* NCCL's choice for a call of BYTES: the communicator's tuner plugin's
 * pick where it makes one (nccl_tuner_pick), else the available pair of
 * least time (ties to the lower algorithm, then protocol, as NCCL's loop
 * keeps the first); and the channels it runs on (topoGetAlgoInfo's reduction for
 * small calls). FORCE_A and FORCE_P restrict the choice (NCCL_ALGO_AUTO
 * and NCCL_PROTO_AUTO: none). Returns 0, or -ENOENT when nothing is
 * available (a forced pair the communicator cannot run). */
struct nccl_choice {
  enum nccl_algo algo;
  enum nccl_proto proto;
  int nchannels;
  double time_s; /* the model's estimate */
};
int nccl_model_choose(const struct nccl_model *m, enum nccl_coll coll,
                      double bytes, enum nccl_algo force_a,
                      enum nccl_proto force_p, struct nccl_choice *out);

/* The communicator's tuner plugin's pick for a call of BYTES: its
 * algorithm, protocol and NCCL's model's time for them (channels left
 * unset: NCCL's). Only pairs the model can run and FORCE_A and FORCE_P
 * allow are picked. Returns 0, or -ENOENT where the plugin leaves the
 * call to NCCL's own choice (no plugin, no table for the call's
 * collective or communicator, no region holding it). nccl_model_choose
 * asks it first. */
int nccl_tuner_pick(const struct nccl_model *m, enum nccl_coll coll,
                    double bytes, enum nccl_algo force_a,
                    enum nccl_proto force_p, struct nccl_choice *out);

/* NCCL's per-step latency (us) of algorithm A with protocol P where the
 * step runs (hwLatencies) in release V, and the latency a call starts
 * with (baseLatencies). */
double nccl_hw_latency(enum nccl_version v, enum nccl_hw hw, enum nccl_algo a,
                       enum nccl_proto p);
double nccl_base_latency(enum nccl_version v, enum nccl_algo a,
                         enum nccl_proto p);

/* The release whose latencies stand for what A with P costs as it runs
 * under release V: V's own, but for v2.20.3's tree Simple v2.18.5's.
 * 2.19 to 2.22 charge a tree's Simple step 28 us on every link in the
 * tuner (2.18 charged 4 over NVLink; 2.23 went back to it) with no
 * change to the tree's kernel: a figure that steers the tuner to the
 * ring, not what the step costs (28 us a step would make an 8-byte
 * tree on one machine take 400 us). */
enum nccl_version nccl_kernel_tables(enum nccl_version v, enum nccl_algo a,
                                     enum nccl_proto p);

/* The least per-step latency (us) release V's tables charge on HW (LL's
 * ring's: 0.6 over NVLink, 1 over PCIe, 2.7 across the network): NCCL's
 * figures are a step's whole cost on the links NCCL measured them on,
 * whose wire is therefore no slower than this; what a protocol's step
 * costs beyond it is its flags, fences and flushes. */
double nccl_hw_floor(enum nccl_version v, enum nccl_hw hw);

/* NVLS's efficiency on architecture CC (0 where NVLS does not run). */
double nccl_nvls_efficiency(int cc);

/* The per-channel bandwidth ceilings NCCL's model gives a protocol (GB/s
 * per channel; 0: none beyond the links): LL128 on rings and trees,
 * trees' own, for C's architecture and node count. */
double nccl_channel_cap(const struct nccl_comm *c, enum nccl_algo a,
                        enum nccl_proto p);

#endif
