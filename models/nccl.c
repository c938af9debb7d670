/* models/nccl.c: NCCL's cost model and choice (nccl.h). The constants
 * and the order of the refinements are NCCL's (NVIDIA/nccl 5067397c,
 * v2.30.7, src/graph/tuning.cc: ncclTunerConstantsDefaults,
 * ncclTopoTuneModel, treeCorrectionFactor, ncclTopoGetAlgoTime;
 * src/enqueue.cc: topoGetAlgoInfo, calcCollChunking; src/include/
 * device.h, comm.h, topo.h), and where an older release is asked for,
 * its ncclTopoTuneModel (tags v2.18.5-1, v2.20.3-1, v2.26.2-1,
 * v2.28.7-1). PAT (reduce-scatter and allgather with one GPU per node)
 * is not modelled. */
#include "nccl.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

enum nccl_arch nccl_arch_of(int cc) {
  if (cc >= 100)
    return NCCL_ARCH_BLACKWELL;
  if (cc >= 90)
    return NCCL_ARCH_HOPPER;
  if (cc >= 80)
    return NCCL_ARCH_AMPERE;
  return NCCL_ARCH_VOLTA;
}

/* ---- constants (tuning.cc) ------------------------------------------- */

/* Each release's baseLatencies [algorithm][protocol] and hwLatencies
 * [hw][algorithm][protocol], us: v2.30.7's (ncclTunerConstantsDefaults),
 * v2.20.3's and v2.18.5's (tuning.cc at tags v2.20.3-1 and v2.18.5-1). */
struct lat_table {
  double base[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
  double hw[NCCL_HW_COUNT][NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
};
static const struct lat_table
    lat_tables[NCCL_VERSION_COUNT] =
        {
            [NCCL_V2_30] =
                {.base = {[NCCL_ALGO_TREE] = {6.8, 14.0, 8.4},
                          [NCCL_ALGO_RING] = {6.6, 14.0, 8.4}},
                 .hw =
                     {
                         [NCCL_HW_NVLINK] =
                             {
                                 [NCCL_ALGO_TREE] = {0.6, 1.25, 4.0},
                                 [NCCL_ALGO_RING] = {0.6, 1.9, 3.4},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 3.7},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 2.8},
                                 [NCCL_ALGO_NVLS] = {0, 0, 25},
                                 [NCCL_ALGO_NVLS_TREE] = {0, 0, 25},
                             },
                         [NCCL_HW_PCI] =
                             {
                                 [NCCL_ALGO_TREE] = {1.0, 1.9, 4.0},
                                 [NCCL_ALGO_RING] = {1.0, 2.5, 5.7},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 3.7},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 2.8},
                             },
                         [NCCL_HW_NET] =
                             {
                                 [NCCL_ALGO_TREE] = {5.0, 8.5, 14},
                                 [NCCL_ALGO_RING] = {2.7, 4.0, 14.0},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 31},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 30},
                                 [NCCL_ALGO_NVLS] = {0, 0, 18},
                                 [NCCL_ALGO_NVLS_TREE] = {0, 0, 20.9},
                             },
                     }},
            /* 2.19 to 2.22 charge a tree's Simple step 28 us everywhere, its
             * call nothing (2.23 went back to 8.4 and 4, 4, 14). */
            [NCCL_V2_20] =
                {.base = {[NCCL_ALGO_TREE] = {6.8, 14.0, 0},
                          [NCCL_ALGO_RING] = {6.6, 14.0, 8.4}},
                 .hw =
                     {
                         [NCCL_HW_NVLINK] =
                             {
                                 [NCCL_ALGO_TREE] = {0.6, 1.25, 28},
                                 [NCCL_ALGO_RING] = {0.6, 1.9, 3.4},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 3.7},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 2.8},
                                 [NCCL_ALGO_NVLS] = {0, 0, 23},
                                 [NCCL_ALGO_NVLS_TREE] = {0, 0, 23},
                             },
                         [NCCL_HW_PCI] =
                             {
                                 [NCCL_ALGO_TREE] = {1.0, 1.9, 28},
                                 [NCCL_ALGO_RING] = {1.0, 2.5, 5.7},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 3.7},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 2.8},
                             },
                         [NCCL_HW_NET] =
                             {
                                 [NCCL_ALGO_TREE] = {5.0, 8.5, 28},
                                 [NCCL_ALGO_RING] = {2.7, 4.0, 14.0},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 31},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 30},
                                 [NCCL_ALGO_NVLS] = {0, 0, 18},
                                 [NCCL_ALGO_NVLS_TREE] = {0, 0, 14},
                             },
                     }},
            /* 2.18's NVLS latency is a base of 23 us, none over NVLink. */
            [NCCL_V2_18] =
                {.base = {[NCCL_ALGO_TREE] = {6.8, 14.0, 0},
                          [NCCL_ALGO_RING] = {6.6, 14.0, 8.4},
                          [NCCL_ALGO_NVLS] = {0, 0, 23},
                          [NCCL_ALGO_NVLS_TREE] = {0, 0, 23}},
                 .hw =
                     {
                         [NCCL_HW_NVLINK] =
                             {
                                 [NCCL_ALGO_TREE] = {0.6, 1.25, 4},
                                 [NCCL_ALGO_RING] = {0.6, 1.9, 3.4},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 8.0},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 4.75},
                             },
                         [NCCL_HW_PCI] =
                             {
                                 [NCCL_ALGO_TREE] = {1.0, 1.9, 6},
                                 [NCCL_ALGO_RING] = {1.0, 2.5, 5.7},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 8.0},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 8.0},
                             },
                         [NCCL_HW_NET] =
                             {
                                 [NCCL_ALGO_TREE] = {5.0, 8.5, 14},
                                 [NCCL_ALGO_RING] = {2.7, 4.0, 14.0},
                                 [NCCL_ALGO_COLLNET_DIRECT] = {0, 0, 10.7},
                                 [NCCL_ALGO_COLLNET_CHAIN] = {0, 0, 14},
                                 [NCCL_ALGO_NVLS] = {0, 0, 18},
                                 [NCCL_ALGO_NVLS_TREE] = {0, 0, 19},
                             },
                     }},
};

/* [LL index: GPU class on one node, else CPU vendor][nodes: 1, 2, more],
 * GB/s. */
static const double ll_max_bw[NCCL_ARCH_COUNT][3] = {
    {39.0, 39.0, 20.4},
    {87.7, 22.5, 19.0},
    {141.0, 45.0, 35.0},
    {2 * 141.0, 2 * 45.0, 2 * 35.0},
};
/* The per-channel ceilings, [table][architecture][nodes: 1, 2, more],
 * GB/s per channel, v2.30.7's (cap gives other releases'). */
enum cap_table {
  CAP_RING_LL128,
  CAP_TREE_LL128,
  CAP_TREE,
  CAP_NVLS_TREE,
  CAP_COUNT
};
static const double caps[CAP_COUNT][NCCL_ARCH_COUNT][3] = {
    [CAP_RING_LL128] = {{20.0, 20.0, 20.0},
                        {20.0, 20.0, 20.0},
                        {36.7, 36.7, 36.7},
                        {40.0, 40.0, 40.0}},
    [CAP_TREE_LL128] = {{20.0, 20.0, 20.0},
                        {20.0, 20.0, 20.0},
                        {36.7, 36.7, 29.0},
                        {55.6, 31.67, 20.0}},
    [CAP_TREE] = {{26.5, 18.5, 10.0},
                  {24.0, 23.6, 17.8},
                  {38.7, 41.4, 36.0},
                  {70.0, 42.8, 24.0}},
    [CAP_NVLS_TREE] = {{26.5, 18.5, 10.0},
                       {24.0, 23.6, 17.8},
                       {0.0, 57.7, 45.5},
                       {0.0, 96.0, 80.0}},
};
/* NVLS's efficiency per architecture. */
static const double nvls_efficiency[NCCL_ARCH_COUNT] = {0, 0, 0.85, 0.74};

/* Trees off the model at medium sizes: NCCL's correction, by
 * log2(bytes / 64), [protocol][0 .. 23]. */
static const double tree_correction[NCCL_PROTO_COUNT][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
     .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
     .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};

/* comm.h, device.h, topo.h. */
#define LL_THREAD_THRESHOLD 8
#define LL128_THREAD_THRESHOLD 8
#define SIMPLE_THREAD_THRESHOLD 64
#define MAX_NTHREADS 640
#define SIMPLE_MAX_NTHREADS 512
#define LL_MAX_NTHREADS 512
#define LL128_MAX_NTHREADS 640
#define PCI_BW 12.0

/* Release V's latencies: v2.26.2's and v2.28.7's are v2.30.7's but for
 * NVLS's tree's network step, 14 us (20.9 from v2.28.9). */
static bool v230_but_nvls_tree(enum nccl_version v) {
  return v == NCCL_V2_26 || v == NCCL_V2_28;
}

double nccl_hw_latency(enum nccl_version v, enum nccl_hw hw, enum nccl_algo a,
                       enum nccl_proto p) {
  if (v230_but_nvls_tree(v) && hw == NCCL_HW_NET && a == NCCL_ALGO_NVLS_TREE)
    return p == NCCL_PROTO_SIMPLE ? 14 : 0;
  return lat_tables[v230_but_nvls_tree(v) ? NCCL_V2_30 : v].hw[hw][a][p];
}

double nccl_base_latency(enum nccl_version v, enum nccl_algo a,
                         enum nccl_proto p) {
  return lat_tables[v230_but_nvls_tree(v) ? NCCL_V2_30 : v].base[a][p];
}

enum nccl_version nccl_kernel_tables(enum nccl_version v, enum nccl_algo a,
                                     enum nccl_proto p) {
  return v == NCCL_V2_20 && a == NCCL_ALGO_TREE && p == NCCL_PROTO_SIMPLE
             ? NCCL_V2_18
             : v;
}

double nccl_hw_floor(enum nccl_version v, enum nccl_hw hw) {
  double f = 0;
  for (int a = 0; a < NCCL_ALGO_COUNT; a++)
    for (int p = 0; p < NCCL_PROTO_COUNT; p++) {
      double l = nccl_hw_latency(v, hw, (enum nccl_algo)a, (enum nccl_proto)p);
      if (l > 0 && (f == 0 || l < f))
        f = l;
    }
  return f;
}

double nccl_nvls_efficiency(int cc) { return nvls_efficiency[nccl_arch_of(cc)]; }

/* ---- protocols -------------------------------------------------------- */

double nccl_proto_wire(enum nccl_proto p) {
  switch (p) {
  case NCCL_PROTO_LL:
    return 2.0;
  case NCCL_PROTO_LL128:
    return 128.0 / 120.0;
  case NCCL_PROTO_SIMPLE:
  case NCCL_PROTO_COUNT:
    break;
  }
  return 1.0;
}

uint64_t nccl_proto_chunk(enum nccl_algo a, enum nccl_proto p) {
  /* Buffer sizes (device.h, init.cc): LL: NCCL_LL_LINES_PER_THREAD x
   * NCCL_LL_MAX_NTHREADS x NCCL_STEPS lines of 16 bytes; LL128:
   * NCCL_LL128_ELEMS_PER_THREAD x NCCL_LL128_MAX_NTHREADS x NCCL_STEPS
   * 8-byte elements; Simple: NCCL_BUFFSIZE. */
  switch (p) {
  case NCCL_PROTO_LL:
    return (uint64_t)8 * 512 * NCCL_STEPS * 16 / NCCL_STEPS / 2;
  case NCCL_PROTO_LL128:
    return (uint64_t)120 * 640 * NCCL_STEPS * 8 / NCCL_STEPS / 16 * 15;
  case NCCL_PROTO_SIMPLE:
  case NCCL_PROTO_COUNT:
    break;
  }
  uint64_t step = NCCL_SIMPLE_BUFFSIZE / NCCL_STEPS;
  return a == NCCL_ALGO_RING ? step * NCCL_RING_CHUNKSTEPS : step;
}

/* ---- the model -------------------------------------------------------- */

static int log2down(double x) {
  if (!(x >= 1))
    return -1;
  int l = 0;
  while (x >= 2) {
    x /= 2;
    l++;
  }
  return l;
}

/* The node-count index of NCCL's tables: 1, 2, more. */
static int node_index(int nnodes) { return nnodes <= 2 ? nnodes - 1 : 2; }

/* Ceiling T on architecture X over N (node_index) as release V has it:
 * v2.26.2's Blackwell rows are twice Hopper's; v2.28.7's ring LL128 on
 * Blackwell is twice Hopper's but 34.6 on two machines, its NVLS tree on
 * more than two 43.1. */
static double cap(enum cap_table t, enum nccl_version v, enum nccl_arch x,
                  int n) {
  if (x == NCCL_ARCH_BLACKWELL && v == NCCL_V2_26)
    return 2 * caps[t][NCCL_ARCH_HOPPER][n];
  if (x == NCCL_ARCH_BLACKWELL && v == NCCL_V2_28 && t == CAP_RING_LL128)
    return n == 1 ? 34.6 : 2 * caps[t][NCCL_ARCH_HOPPER][n];
  if (x == NCCL_ARCH_BLACKWELL && v == NCCL_V2_28 && t == CAP_NVLS_TREE &&
      n == 2)
    return 43.1;
  return caps[t][x][n];
}

/* Whether release V models NVLS's bandwidth as before 2.28.3 (no
 * efficiency, no ceiling on its tree). */
static bool old_nvls(enum nccl_version v) {
  return v != NCCL_V2_30 && v != NCCL_V2_28;
}

double nccl_channel_cap(const struct nccl_comm *c, enum nccl_algo a,
                        enum nccl_proto p) {
  enum nccl_arch x = nccl_arch_of(c->cc);
  enum nccl_version v = c->version;
  int n = node_index(c->nnodes);
  if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128)
    return cap(CAP_RING_LL128, v, x, n);
  if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128)
    return cap(CAP_TREE_LL128, v, x, n);
  if (a == NCCL_ALGO_TREE)
    return cap(CAP_TREE, v, x, n);
  if (a == NCCL_ALGO_NVLS_TREE && !old_nvls(v))
    return cap(CAP_NVLS_TREE, v, x, n);
  return 0;
}

static bool masked(unsigned mask, int bit) {
  return mask && !(mask & (1u << bit));
}

/* Whether algorithm A runs here at all (ncclTopoTuneModel's algoEnable
 * and updateCollCostTable's skips). */
static bool algo_enabled(const struct nccl_comm *c, enum nccl_coll coll,
                         enum nccl_algo a) {
  if (masked(c->algo_mask, a) || c->graph[a].nchannels < 1)
    return false;
  switch (a) {
  case NCCL_ALGO_TREE:
  case NCCL_ALGO_COLLNET_CHAIN:
  case NCCL_ALGO_NVLS_TREE:
    if (coll != NCCL_COLL_ALLREDUCE)
      return false;
    break;
  case NCCL_ALGO_RING:
  case NCCL_ALGO_COLLNET_DIRECT:
  case NCCL_ALGO_NVLS:
  case NCCL_ALGO_COUNT:
    break;
  }
  bool collnet = a == NCCL_ALGO_COLLNET_DIRECT ||
                 a == NCCL_ALGO_COLLNET_CHAIN;
  if (collnet && !c->collnet)
    return false;
  /* CollNet Direct needs an NVSwitch, NCCL's proxy for which here is
   * NVLink inside the machine. */
  if (a == NCCL_ALGO_COLLNET_DIRECT && !c->graph[a].nvlink)
    return false;
  if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) && !c->nvls)
    return false;
  if (a == NCCL_ALGO_NVLS_TREE && c->nnodes == 1)
    return false;
  /* NVLS across nodes is NVLS with CollNet (SHARP) only. */
  if (a == NCCL_ALGO_NVLS && c->nnodes > 1 && !c->collnet)
    return false;
  /* Reduce-scatter and allgather with NVLS or CollNet across nodes need
   * one GPU per NIC head and the network's own collectives: not
   * modelled, so not offered. */
  if (coll != NCCL_COLL_ALLREDUCE && c->nnodes > 1 &&
      (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_COLLNET_DIRECT))
    return false;
  return true;
}

static bool proto_enabled(const struct nccl_comm *c, enum nccl_algo a,
                          enum nccl_proto p) {
  if (masked(c->proto_mask, p))
    return false;
  if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE ||
       a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN) &&
      p != NCCL_PROTO_SIMPLE)
    return false;
  /* LL128 by default only where every path inside a machine is NVLink
   * (typeIntra <= PATH_NVB) and the GPUs are Volta or later; the NIC
   * paths of the platforms modelled are PXB (or PXN on Hopper), which
   * NCCL allows. Forced (NCCL_PROTO), it runs anywhere. */
  if (p == NCCL_PROTO_LL128 && !(c->proto_mask & (1u << p)))
    return c->graph[a].nvlink && c->cc >= 70;
  return true;
}

/* ncclTopoTuneModel for one collective. */
static void tune_coll(struct nccl_model *m, enum nccl_coll coll) {
  const struct nccl_comm *c = &m->comm;
  enum nccl_arch x = nccl_arch_of(c->cc);
  int n2 = node_index(c->nnodes);
  int n1 = c->nnodes == 1 ? (int)x : c->amd_cpu ? 1 : 0;
  /* v2.18.5 and v2.20.3 know no GPU after Hopper, whose LL row was
   * Ampere's. */
  enum nccl_version v = c->version;
  bool v218 = v == NCCL_V2_18;
  bool old = v218 || v == NCCL_V2_20;
  bool v_old_nvls = old_nvls(v);
  if (old && n1 > NCCL_ARCH_AMPERE)
    n1 = NCCL_ARCH_AMPERE;
  double llmax = ll_max_bw[n1][n2];
  double ppn = (double)c->nranks / c->nnodes;
  int nsteps = coll == NCCL_COLL_ALLREDUCE ? 2 * (c->nranks - 1)
                                           : c->nranks - 1;
  for (int a = 0; a < NCCL_ALGO_COUNT; a++) {
    const struct nccl_graph *g = &c->graph[a];
    bool on = algo_enabled(c, coll, (enum nccl_algo)a);
    int intra_hw = g->nvlink ? NCCL_HW_NVLINK : NCCL_HW_PCI;
    for (int p = 0; p < NCCL_PROTO_COUNT; p++) {
      m->bw[coll][a][p] = 0;
      m->lat[coll][a][p] = 0;
      if (!on || !proto_enabled(c, (enum nccl_algo)a, (enum nccl_proto)p))
        continue;
      bool collnet =
          a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
      double bw = c->nnodes <= 2 || collnet ? g->bw_intra : g->bw_inter;
      /* v2.20.3 to v2.27: NVLS at its links' least, its tree at the
       * network's (half of it over more than two machines). */
      if (v_old_nvls && !v218 && a == NCCL_ALGO_NVLS)
        bw = fmin(g->bw_intra, g->bw_inter);
      if (v_old_nvls && !v218 && a == NCCL_ALGO_NVLS_TREE)
        bw = fmin(g->bw_intra, c->nnodes <= 2 ? g->bw_inter : g->bw_inter / 2);
      if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) && !v_old_nvls) {
        if (g->nchannels < 2)
          continue;
        double intra = g->bw_intra * nvls_efficiency[x] *
                       (g->nchannels - 1) / g->nchannels;
        intra *= coll == NCCL_COLL_ALLREDUCE ? 2.0 : (ppn - 1) / ppn;
        double inter =
            g->bw_inter *
            (c->nnodes <= 2 && a == NCCL_ALGO_NVLS_TREE ? 2 : 1);
        bw = fmin(intra, inter);
        if (a == NCCL_ALGO_NVLS_TREE)
          bw = fmin(bw, cap(CAP_NVLS_TREE, v, x, n2));
      }
      double bus = g->nchannels * bw;
      if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL)
        bus = fmin(llmax, bus * (!old ? .5
                                 : c->nnodes > 1 || coll == NCCL_COLL_ALLREDUCE
                                     ? 1.0 / 4
                                     : 1.0 / 3));
      if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128)
        bus = fmin(bus * 0.92,
                   g->nchannels * cap(CAP_RING_LL128, v, x, n2));
      if (a == NCCL_ALGO_TREE && coll == NCCL_COLL_ALLREDUCE)
        bus = fmin(bus * .92, g->nchannels * cap(CAP_TREE, v, x, n2));
      if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL)
        bus = fmin(bus * 1.0 / 3.8, llmax);
      if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128)
        bus = fmin(bus * (c->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   g->nchannels * cap(CAP_TREE_LL128, v, x, n2));
      if (a == NCCL_ALGO_COLLNET_DIRECT) {
        if (coll != NCCL_COLL_ALLREDUCE) {
          bus = ppn * fmin(g->bw_intra, g->bw_inter * 0.9);
        } else {
          /* All GPUs need a local NIC for full speed. */
          double f = ppn / (1.0 * g->nchannels);
          f -= (f - 1) / 2;
          bus /= f;
          if (c->cc >= 90)
            bus *= .85;
        }
      }
      /* Bus bandwidth to the call's bandwidth. */
      if (!(a != NCCL_ALGO_RING && coll != NCCL_COLL_ALLREDUCE)) {
        double ratio = a == NCCL_ALGO_RING || a == NCCL_ALGO_NVLS ||
                               a == NCCL_ALGO_NVLS_TREE
                           ? (1.0 * c->nranks) / nsteps
                           : .5;
        if (v_old_nvls && (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE))
          ratio = 5.0 / 6;
        if (v218 && a == NCCL_ALGO_NVLS_TREE)
          ratio = .70 * c->nnodes / (2 * (c->nnodes - 1));
        bus *= ratio;
      }
      m->bw[coll][a][p] = bus;
      enum nccl_algo al = (enum nccl_algo)a;
      enum nccl_proto pr = (enum nccl_proto)p;
      double lat = nccl_base_latency(v, al, pr);
      double intra_lat = nccl_hw_latency(v, intra_hw, al, pr);
      /* The network's step as the table has it (v2.18.5's NVLS charges
       * it bare), and with the graph's latency. */
      double net_lat = nccl_hw_latency(v, NCCL_HW_NET, al, pr);
      double inter_lat =
          ppn == 1 && !old ? nccl_hw_latency(v, NCCL_HW_NET, NCCL_ALGO_TREE, pr)
                           : net_lat;
      inter_lat += g->latency_inter;
      if (p == NCCL_PROTO_SIMPLE)
        inter_lat += g->latency_inter;
      if (a == NCCL_ALGO_RING) {
        /* Inter-node rings still launch nsteps x the network's post
         * overhead (Intel 1 us, AMD 2 us; Simple three times that). */
        double net = 0;
        if (c->nnodes > 1) {
          net = c->amd_cpu ? 2.0 : 1.0;
          if (p == NCCL_PROTO_SIMPLE)
            net *= 3;
        }
        intra_lat = fmax(intra_lat, net);
        /* v2.18.5 and v2.20.3 count 2 x nodes network steps in an
         * allreduce's ring, v2.30.7 2 x (nodes - 1). */
        int ninter = c->nnodes == 1 ? 0
                     : coll == NCCL_COLL_ALLREDUCE
                         ? 2 * (c->nnodes - (old ? 0 : 1))
                         : c->nnodes - 1;
        lat += (nsteps - ninter) * intra_lat + ninter * inter_lat;
      } else if (a == NCCL_ALGO_TREE) {
        lat += 2 * ((c->nranks / c->nnodes - 1) * intra_lat +
                    log2down(c->nnodes) * inter_lat);
      } else if (a == NCCL_ALGO_COLLNET_DIRECT) {
        lat += 2 * (fmin(1, ppn - 1) * intra_lat + (ppn - 1) * 0.4) +
               inter_lat;
      } else if (a == NCCL_ALGO_COLLNET_CHAIN) {
        lat += 2 * (ppn - 1) * intra_lat + inter_lat;
      } else if (v218 && a == NCCL_ALGO_NVLS) {
        lat += c->nnodes > 1 ? net_lat : 0;
      } else if (v218 && a == NCCL_ALGO_NVLS_TREE) {
        lat += 2 * (c->nnodes - 1) * net_lat;
      } else if (a == NCCL_ALGO_NVLS) {
        lat = intra_lat + (c->nnodes > 1 ? inter_lat : 0);
      } else if (a == NCCL_ALGO_NVLS_TREE) {
        lat += intra_lat + 2 * log2down(c->nnodes) * inter_lat;
      }
      m->lat[coll][a][p] = lat;
    }
  }
}

int nccl_model_init(struct nccl_model *m, const struct nccl_comm *c) {
  memset(m, 0, sizeof *m);
  if (c->nranks < 1 || c->nnodes < 1 || c->nranks % c->nnodes ||
      c->graph[NCCL_ALGO_RING].nchannels < 1 || c->nchannels < 1)
    return -EINVAL;
  m->comm = *c;
  const struct nccl_graph *ring = &c->graph[NCCL_ALGO_RING];
  int simple_ring = ring->bw_intra * ring->nchannels <= PCI_BW
                        ? 256
                        : SIMPLE_MAX_NTHREADS;
  for (int a = 0; a < NCCL_ALGO_COUNT; a++) {
    m->max_threads[a][NCCL_PROTO_SIMPLE] = MAX_NTHREADS;
    m->max_threads[a][NCCL_PROTO_LL] = LL_MAX_NTHREADS;
    m->max_threads[a][NCCL_PROTO_LL128] = LL128_MAX_NTHREADS;
    m->thread_threshold[a][NCCL_PROTO_LL] = LL_THREAD_THRESHOLD;
    m->thread_threshold[a][NCCL_PROTO_LL128] = LL128_THREAD_THRESHOLD;
    m->thread_threshold[a][NCCL_PROTO_SIMPLE] = SIMPLE_THREAD_THRESHOLD;
  }
  m->max_threads[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = simple_ring;
  m->max_threads[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = SIMPLE_MAX_NTHREADS;
  m->thread_threshold[NCCL_ALGO_RING][NCCL_PROTO_LL] *= c->nranks;
  m->thread_threshold[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE] = 512;
  m->thread_threshold[NCCL_ALGO_COLLNET_CHAIN][NCCL_PROTO_SIMPLE] = 512;
  for (int coll = 0; coll < NCCL_COLL_COUNT; coll++)
    tune_coll(m, (enum nccl_coll)coll);
  return 0;
}

double nccl_model_time(const struct nccl_model *m, enum nccl_coll coll,
                       enum nccl_algo a, enum nccl_proto p, double bytes) {
  double bw = m->bw[coll][a][p], lat = m->lat[coll][a][p];
  if (!(bw > 0))
    return -1;
  const struct nccl_comm *c = &m->comm;
  int log_size = log2down(floor(bytes / 64));
  if (a == NCCL_ALGO_TREE && coll == NCCL_COLL_ALLREDUCE && log_size >= 0 &&
      log_size < 23)
    bw *= tree_correction[p][log_size];
  /* NVLS trees take the correction on Blackwell (on x86 hosts, which the
   * platforms modelled are). */
  if (a == NCCL_ALGO_NVLS_TREE && coll == NCCL_COLL_ALLREDUCE &&
      log_size >= 0 && log_size < 24 && c->cc >= 100)
    bw *= tree_correction[p][log_size];
  /* The ring's plateau across nodes. */
  if (a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE && c->nnodes > 1 &&
      coll == NCCL_COLL_ALLREDUCE &&
      bytes / ((double)c->nchannels * c->nranks) >= 64)
    lat *= c->cc < 80 ? 1.9 : 1.4;
  return 1e-6 * (lat + bytes / (1000 * bw));
}

/* topoGetAlgoInfo's channels for a call of BYTES by A and P. */
static int call_channels(const struct nccl_model *m, enum nccl_algo a,
                         enum nccl_proto p, double bytes) {
  const struct nccl_comm *c = &m->comm;
  if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) {
    if (c->nnodes > 1 && a == NCCL_ALGO_NVLS)
      return c->nvls_channels < c->nchannels ? c->nvls_channels
                                             : c->nchannels;
    return c->nvls_channels;
  }
  int nc = c->nchannels;
  if (a == NCCL_ALGO_COLLNET_DIRECT)
    return nc;
  double nt = m->max_threads[a][p], th = m->thread_threshold[a][p];
  while (bytes < nc * nt * th && nc >= 2)
    nc--;
  return nc;
}

int nccl_model_choose(const struct nccl_model *m, enum nccl_coll coll,
                      double bytes, enum nccl_algo force_a,
                      enum nccl_proto force_p, struct nccl_choice *out) {
  if (nccl_tuner_pick(m, coll, bytes, force_a, force_p, out) == 0) {
    out->nchannels = call_channels(m, out->algo, out->proto, bytes);
    return 0;
  }
  double best = DBL_MAX;
  int ba = -1, bp = -1;
  for (int a = 0; a < NCCL_ALGO_COUNT; a++) {
    if (force_a != NCCL_ALGO_AUTO && a != (int)force_a)
      continue;
    for (int p = 0; p < NCCL_PROTO_COUNT; p++) {
      if (force_p != NCCL_PROTO_AUTO && p != (int)force_p)
        continue;
      double t = nccl_model_time(m, coll, (enum nccl_algo)a,
                                 (enum nccl_proto)p, bytes);
      if (t >= 0 && t < best) {
        best = t;
        ba = a;
        bp = p;
      }
    }
  }
  if (ba < 0)
    return -ENOENT;
  out->algo = (enum nccl_algo)ba;
  out->proto = (enum nccl_proto)bp;
  out->time_s = best;
  out->nchannels = call_channels(m, out->algo, out->proto, bytes);
  return 0;
}
