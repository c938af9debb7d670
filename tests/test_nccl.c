/* tests/test_nccl.c: NCCL's cost model and choice (models/nccl.h). The
 * expected figures are worked by hand from NCCL's formulas
 * (src/graph/tuning.cc at 5067397c), so that a wrong constant, a missed
 * refinement or a wrong channel count fails. */
#include "nccl.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

/* One DGX-like communicator: RANKS over NODES machines of GPUs of
 * compute capability CC, NCH graph channels of BW GB/s each (inside and
 * across machines alike), NCALL channels per call. */
static struct nccl_comm comm_of(int ranks, int nodes, int cc, int nch,
                                double bw, int ncall) {
  struct nccl_comm c = {.nranks = ranks, .nnodes = nodes, .cc = cc,
                        .nchannels = ncall, .nvls_channels = 16};
  for (int a = 0; a < NCCL_ALGO_COUNT; a++)
    c.graph[a] = (struct nccl_graph){nch, bw, bw, true, 0};
  return c;
}

static void near(double got, double want, const char *what) {
  cr_expect(fabs(got - want) <= 1e-9 + 1e-6 * fabs(want),
            "%s: %.9g, expected %.9g", what, got, want);
}

/* 8 A100 on NVSwitch: 12 graph channels of 20 GB/s (240 GB/s of NVLink),
 * 24 per call. */
Test(nccl, a100_node_tables) {
  struct nccl_comm c = comm_of(8, 1, 80, 12, 20, 24);
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  /* Ring: bus 240 (Simple), min(87.7, 120) (LL), min(220.8, 240)
   * (LL128), times 8/14; latency base + 14 NVLink steps. */
  near(m.bw[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 240.0 * 8 / 14, "ring simple bw");
  near(m.bw[ar][NCCL_ALGO_RING][NCCL_PROTO_LL], 87.7 * 8 / 14, "ring ll bw");
  near(m.bw[ar][NCCL_ALGO_RING][NCCL_PROTO_LL128], 220.8 * 8 / 14, "ring ll128 bw");
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 8.4 + 14 * 3.4, "ring simple lat");
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_LL], 6.6 + 14 * 0.6, "ring ll lat");
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_LL128], 14.0 + 14 * 1.9, "ring ll128 lat");
  /* Tree: min(240 x .92, 12 x 24.0) / 2; LL: that / 3.8, LL128 x 7/9
   * on one node; latency base + 2 x 7 chain steps. */
  near(m.bw[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 220.8 / 2, "tree simple bw");
  near(m.bw[ar][NCCL_ALGO_TREE][NCCL_PROTO_LL], 220.8 / 3.8 / 2, "tree ll bw");
  near(m.bw[ar][NCCL_ALGO_TREE][NCCL_PROTO_LL128],
       fmin(220.8 * 7 / 9, 12 * 20.0) / 2, "tree ll128 bw");
  near(m.lat[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 8.4 + 2 * 7 * 4.0, "tree simple lat");
  /* No NVLS, no CollNet, no NVLS tree on one node. */
  cr_expect_eq(m.bw[ar][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 0);
  cr_expect_eq(m.bw[ar][NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE], 0);
  /* Reduce-scatter: the ring's n - 1 steps, bus x 8/7. */
  near(m.bw[NCCL_COLL_REDUCE_SCATTER][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       240.0 * 8 / 7, "rs ring bw");
  cr_expect_eq(m.bw[NCCL_COLL_REDUCE_SCATTER][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 0);
}

/* The choice follows the least time: LL for small calls, LL128 in the
 * middle, Simple for large ones (16 MiB: 40.6 + 16777216 / 126171 =
 * 173.6 us for LL128 against 56 + 122.3 for Simple). */
Test(nccl, a100_node_choice) {
  struct nccl_comm c = comm_of(8, 1, 80, 12, 20, 24);
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  struct nccl_choice ch;
  cr_assert_eq(nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 65536,
                                 NCCL_ALGO_AUTO, NCCL_PROTO_AUTO, &ch), 0);
  cr_expect_eq(ch.algo, NCCL_ALGO_RING);
  cr_expect_eq(ch.proto, NCCL_PROTO_LL);
  near(ch.time_s, 1e-6 * (15.0 + 65536 / (1000 * 87.7 * 8 / 14)), "64 KiB");
  /* LL's ring threshold is 8 bytes x 8 ranks a thread: a channel of 512
   * threads wants 32 KiB, so 64 KiB takes two of the 24. */
  cr_expect_eq(ch.nchannels, 2);
  cr_assert_eq(nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 16 << 20,
                                 NCCL_ALGO_AUTO, NCCL_PROTO_AUTO, &ch), 0);
  cr_expect_eq(ch.proto, NCCL_PROTO_LL128);
  cr_expect_eq(ch.nchannels, 24);
  cr_assert_eq(nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 256 << 20,
                                 NCCL_ALGO_AUTO, NCCL_PROTO_AUTO, &ch), 0);
  cr_expect_eq(ch.algo, NCCL_ALGO_RING);
  cr_expect_eq(ch.proto, NCCL_PROTO_SIMPLE);
  /* Forced, as NCCL_ALGO=Tree NCCL_PROTO=Simple. */
  cr_assert_eq(nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 256 << 20,
                                 NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, &ch), 0);
  cr_expect_eq(ch.algo, NCCL_ALGO_TREE);
  /* NVLS is not there to force. */
  cr_expect_eq(nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 1 << 20,
                                 NCCL_ALGO_NVLS, NCCL_PROTO_AUTO, &ch),
               -ENOENT);
}

/* Across machines: the ring's latency charges the network only on the
 * 2 (nodes - 1) steps that cross (ring Simple on 4 H100 machines: 8.4 +
 * (62 - 6) x 3.4 + 6 x 14, the network's post overhead 3 us below the
 * NVLink step's 3.4), its plateau x 1.4 for large calls; the tree
 * climbs log2(nodes) network steps. */
Test(nccl, h100_nodes) {
  struct nccl_comm c = comm_of(32, 4, 90, 16, 25, 32);
  c.nvls = true;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       8.4 + (62 - 6) * 3.4 + 6 * 14.0, "ring simple lat");
  near(m.lat[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE],
       8.4 + 2 * (7 * 4.0 + 2 * 14.0), "tree simple lat");
  /* LL128 ring: 0.92 x 16 x 25 = 368 against 16 x 36.7. */
  near(m.bw[ar][NCCL_ALGO_RING][NCCL_PROTO_LL128], 368.0 * 32 / 62,
       "ring ll128 bw");
  /* NVLS across nodes needs CollNet; the NVLS tree runs: per channel
   * min(25 x 0.85 x 15/16 x 2, 25, 45.5) = 25, bus 400, x 32/62. */
  cr_expect_eq(m.bw[ar][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 0);
  near(m.bw[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 400.0 * 32 / 62,
       "nvls tree bw");
  /* 1 GiB: the plateau applies to the ring (1 GiB / (32 x 32) >= 64). */
  double lat = (8.4 + (62 - 6) * 3.4 + 6 * 14.0) * 1.4;
  near(nccl_model_time(&m, ar, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1 << 30),
       1e-6 * (lat + (1 << 30) / (1000 * 400.0 * 32 / 62)), "ring 1 GiB");
}

/* NVLS on one H100 machine: per channel 20.6 x 0.85 x 15/16 x 2 against
 * the graph's inter rate; its latency the NVLink step's 25 us. */
Test(nccl, h100_nvls_node) {
  struct nccl_comm c = comm_of(8, 1, 90, 16, 23.175, 32);
  c.nvls = true;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  double per = fmin(23.175 * 0.85 * 15 / 16 * 2, 23.175);
  near(m.bw[NCCL_COLL_ALLREDUCE][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE],
       16 * per * 8 / 14, "nvls bw");
  near(m.lat[NCCL_COLL_ALLREDUCE][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 25,
       "nvls lat");
  cr_expect_eq(m.bw[NCCL_COLL_ALLREDUCE][NCCL_ALGO_NVLS][NCCL_PROTO_LL], 0);
}

/* v2.18.5's tables (NCCL_V2_18): a ring's LL at a quarter of the links'
 * bus bandwidth (60 GB/s on 8 A100, not 87.7), so that 2 MiB goes by
 * LL128 (15 + 2 MiB / 34.3 GB/s = 76.2 us against 40.6 + 16.6) where
 * v2.30.7 keeps LL (15 + 41.9 = 56.9 us against 57.2); on one H100
 * machine LL's ceiling is Ampere's 87.7 and NVLS runs at 5/6 of its
 * links after 23 us; trees have no Simple base latency. */
Test(nccl, v2_18_tables) {
  struct nccl_comm c = comm_of(8, 1, 80, 12, 20, 24);
  c.version = NCCL_V2_18;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  near(m.bw[ar][NCCL_ALGO_RING][NCCL_PROTO_LL], 60.0 * 8 / 14, "ring ll bw");
  near(m.lat[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 2 * 7 * 4.0,
       "tree simple lat");
  struct nccl_choice ch;
  cr_assert_eq(nccl_model_choose(&m, ar, 2 << 20, NCCL_ALGO_AUTO,
                                 NCCL_PROTO_AUTO, &ch), 0);
  cr_expect_eq(ch.proto, NCCL_PROTO_LL128);
  c.version = NCCL_V2_30;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  cr_assert_eq(nccl_model_choose(&m, ar, 2 << 20, NCCL_ALGO_AUTO,
                                 NCCL_PROTO_AUTO, &ch), 0);
  cr_expect_eq(ch.proto, NCCL_PROTO_LL);
  struct nccl_comm h = comm_of(8, 1, 90, 16, 23.175, 32);
  h.nvls = true;
  h.version = NCCL_V2_18;
  cr_assert_eq(nccl_model_init(&m, &h), 0);
  near(m.bw[ar][NCCL_ALGO_RING][NCCL_PROTO_LL],
       fmin(87.7, 16 * 23.175 / 4) * 8 / 14, "h100 ring ll bw");
  near(m.bw[ar][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 16 * 23.175 * 5 / 6,
       "h100 nvls bw");
  near(m.lat[ar][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 23, "h100 nvls lat");
}

/* The algorithm M's tuner takes for an allreduce of BYTES. */
static enum nccl_algo chosen(const struct nccl_model *m, double bytes) {
  struct nccl_choice ch;
  cr_assert_eq(nccl_model_choose(m, NCCL_COLL_ALLREDUCE, bytes, NCCL_ALGO_AUTO,
                                 NCCL_PROTO_AUTO, &ch),
               0);
  return ch.algo;
}

/* v2.20.3's tables (NCCL_V2_20), on two machines of 8 A100 with Simple
 * alone (AWS's plugin on p4de): a tree's Simple step costs 28 us on
 * every link and its call nothing, 2 x (7 + 1) x 28 = 448 us, where the
 * ring's is 8.4 + 28 NVLink steps of 3.4 us and 2 x 2 network steps of
 * 14 (v2.18.5 and v2.20.3 count 2 x nodes of them, v2.30.7 2 x (nodes -
 * 1)); so 1 MiB goes by the ring, 1 GiB by the tree (v2.18.5: both by the
 * tree, its step 4 and 14 us). The kernel's tree Simple steps are
 * v2.18.5's (nccl_kernel_tables). On two H100 machines the NVLS tree
 * takes the least of its links, at 5/6, after 23 + 2 x 14 us. */
Test(nccl, v2_20_tables) {
  /* The ring at its NIC's 6.25 GB/s a channel, the tree's chain inside
   * at NVLink's 20 (comm_of in sim/collectives/nccl.c). */
  struct nccl_comm c = comm_of(16, 2, 80, 4, 6.25, 4);
  c.graph[NCCL_ALGO_TREE].bw_intra = 20;
  c.version = NCCL_V2_20;
  c.proto_mask = 1u << NCCL_PROTO_SIMPLE;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  near(m.lat[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 2 * (7 + 1) * 28.0,
       "2.20 tree simple lat");
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       8.4 + (30 - 4) * 3.4 + 4 * 14.0, "2.20 ring simple lat");
  cr_expect_eq(chosen(&m, 1 << 20), NCCL_ALGO_RING, "2.20, 1 MiB: ring");
  cr_expect_eq(chosen(&m, 1 << 30), NCCL_ALGO_TREE, "2.20, 1 GiB: tree");
  c.version = NCCL_V2_18;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       8.4 + (30 - 4) * 3.4 + 4 * 14.0, "2.18 ring simple lat");
  cr_expect_eq(chosen(&m, 1 << 20), NCCL_ALGO_TREE, "2.18, 1 MiB: tree");
  c.version = NCCL_V2_30;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       8.4 + (30 - 2) * 3.4 + 2 * 14.0, "2.30 ring simple lat");
  cr_expect_eq(
      nccl_kernel_tables(NCCL_V2_20, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE),
      NCCL_V2_18);
  cr_expect_eq(
      nccl_kernel_tables(NCCL_V2_20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE),
      NCCL_V2_20);
  near(nccl_hw_latency(NCCL_V2_20, NCCL_HW_NET, NCCL_ALGO_NVLS_TREE,
                       NCCL_PROTO_SIMPLE),
       14, "2.20 nvls tree net");
  struct nccl_comm h = comm_of(16, 2, 90, 16, 25, 32);
  h.nvls = true;
  h.version = NCCL_V2_20;
  h.graph[NCCL_ALGO_NVLS_TREE].bw_inter = 12;
  cr_assert_eq(nccl_model_init(&m, &h), 0);
  near(m.bw[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 16 * 12.0 * 5 / 6,
       "2.20 nvls tree bw");
  near(m.lat[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 23 + 2 * 14.0,
       "2.20 nvls tree lat");
}

/* v2.26.2's tables (NCCL_V2_26, for 2.21 to 2.27): v2.30.7's but for
 * NVLS. On four H100 machines its tree runs at the least of its links,
 * half the network's across more than two machines, at 5/6 (16 x 12.5 x
 * 5/6 GB/s, where v2.30.7 gives 16 x 25 x 32/62), after 25 us and 2 x
 * log2(4) network steps of 14 us (20.9 in v2.30.7); so 1 GiB goes by
 * the ring where v2.30.7 keeps NVLS's tree. Blackwell's per-channel ceilings
 * are twice Hopper's (a tree on one B200 machine: 16 x 77.4 where
 * v2.30.7 has 16 x 70). v2.28.7's (NCCL_V2_28) are v2.30.7's with
 * v2.26.2's latencies, and its ring LL128 on two B200 machines 34.6 GB/s
 * a channel (40 in v2.30.7). */
Test(nccl, v2_26_tables) {
  struct nccl_comm c = comm_of(32, 4, 90, 16, 25, 32);
  c.nvls = true;
  c.version = NCCL_V2_26;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  near(m.bw[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 16 * 12.5 * 5 / 6,
       "2.26 nvls tree bw");
  near(m.lat[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 25 + 4 * 14.0,
       "2.26 nvls tree lat");
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       8.4 + (62 - 6) * 3.4 + 6 * 14.0, "2.26 ring simple lat");
  cr_expect_eq(chosen(&m, 1 << 30), NCCL_ALGO_RING, "2.26, 1 GiB");
  c.version = NCCL_V2_30;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(m.lat[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 25 + 4 * 20.9,
       "2.30 nvls tree lat");
  cr_expect_eq(chosen(&m, 1 << 30), NCCL_ALGO_NVLS_TREE, "2.30, 1 GiB");
  /* v2.28.7: v2.30.7's NVLS bandwidth, v2.26.2's 14 us. */
  c.version = NCCL_V2_28;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(m.bw[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 400.0 * 32 / 62,
       "2.28 nvls tree bw");
  near(m.lat[ar][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 25 + 4 * 14.0,
       "2.28 nvls tree lat");
  struct nccl_comm b = comm_of(8, 1, 100, 16, 100, 32);
  b.version = NCCL_V2_26;
  cr_assert_eq(nccl_model_init(&m, &b), 0);
  near(m.bw[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 16 * 77.4 / 2,
       "2.26 b200 tree bw");
  b.version = NCCL_V2_30;
  cr_assert_eq(nccl_model_init(&m, &b), 0);
  near(m.bw[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 16 * 70.0 / 2,
       "2.30 b200 tree bw");
  b.version = NCCL_V2_28;
  cr_assert_eq(nccl_model_init(&m, &b), 0);
  near(nccl_channel_cap(&b, NCCL_ALGO_RING, NCCL_PROTO_LL128), 2 * 36.7,
       "2.28 b200 ring ll128 cap, one machine");
  b.nranks = 16;
  b.nnodes = 2;
  near(nccl_channel_cap(&b, NCCL_ALGO_RING, NCCL_PROTO_LL128), 34.6,
       "2.28 b200 ring ll128 cap, two machines");
}

/* The network plugin's latency (aws-ofi-nccl's 75 us on p4de) is the
 * tuner's: added to each network step, twice under Simple (tuning.cc,
 * latencyInter and its flush), it takes two p4de's 1 MiB call from the
 * ring (4 network steps) to the tree (2). */
Test(nccl, net_plugin_latency) {
  struct nccl_comm c = comm_of(16, 2, 80, 4, 6.25, 4);
  c.graph[NCCL_ALGO_TREE].bw_intra = 20;
  c.version = NCCL_V2_20;
  c.proto_mask = 1u << NCCL_PROTO_SIMPLE;
  for (int a = 0; a < NCCL_ALGO_COUNT; a++)
    c.graph[a].latency_inter = 75;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  near(m.lat[ar][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE],
       2 * (7 * 28.0 + (28.0 + 2 * 75)), "tree simple lat");
  near(m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
       8.4 + (30 - 4) * 3.4 + 4 * (14.0 + 2 * 75), "ring simple lat");
  cr_expect_eq(chosen(&m, 1 << 20), NCCL_ALGO_TREE, "75 us, 1 MiB: tree");
  /* LL pays it once a network step. */
  c.proto_mask = 0;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  double ll = m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_LL];
  for (int a = 0; a < NCCL_ALGO_COUNT; a++)
    c.graph[a].latency_inter = 0;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(ll - m.lat[ar][NCCL_ALGO_RING][NCCL_PROTO_LL], 4 * 75.0,
       "ring ll: 4 network steps");
}

/* AWS's region tuner for p5 (aws-ofi-nccl v1.16.3): the first region
 * of its table that holds a call's bytes and ranks names the pair, on
 * three machines or more of eight GPUs each; elsewhere NCCL chooses.
 * The regions' borders are worked by hand from the table's vertices. */
static int aws_pick(int ranks, bool nvls, enum nccl_proto force_p, double bytes,
                    struct nccl_choice *ch) {
  struct nccl_comm c = comm_of(ranks, ranks / 8, 90, 8, 46.35, 16);
  c.nvls = nvls;
  c.tuner = NCCL_TUNER_AWS_P5;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  return nccl_tuner_pick(&m, NCCL_COLL_ALLREDUCE, bytes, NCCL_ALGO_AUTO,
                         force_p, ch);
}

Test(nccl, aws_p5_regions) {
  struct nccl_choice ch;
  /* Four machines: the tree with LL128 to 36 MiB (its border runs from
   * 30 MiB at 16 ranks to 36 MiB at 32; 36 MiB itself, a vertex, is the
   * tree's, the first region), the ring with LL128 to 2 GiB less its
   * slope (1 GiB at 17 ranks, 2 GiB at 64), the ring with Simple
   * beyond. */
  struct {
    int ranks;
    double bytes;
    enum nccl_algo a;
    enum nccl_proto p;
  } want[] = {
      {32, 32 << 20, NCCL_ALGO_TREE, NCCL_PROTO_LL128},
      {32, 37748736, NCCL_ALGO_TREE, NCCL_PROTO_LL128},
      {32, 37748737, NCCL_ALGO_RING, NCCL_PROTO_LL128},
      {32, 1 << 30, NCCL_ALGO_RING, NCCL_PROTO_LL128},
      {32, 2147483648.0, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE},
      /* 16 machines: the tree to 256 MiB (its border 288 MiB at 128
       * ranks), the ring with LL128 to 2 GiB, NVLS's tree at 4 GiB, the
       * ring with Simple at 8 GiB. */
      {128, 256 << 20, NCCL_ALGO_TREE, NCCL_PROTO_LL128},
      {128, 512 << 20, NCCL_ALGO_RING, NCCL_PROTO_LL128},
      {128, 4294967296.0, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE},
      {128, 8589934592.0, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE},
      /* 32 machines: NVLS's tree from 512 MiB. */
      {256, 512 << 20, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cr_assert_eq(
        aws_pick(want[i].ranks, true, NCCL_PROTO_AUTO, want[i].bytes, &ch), 0,
        "%d ranks, %.0f B: no region", want[i].ranks, want[i].bytes);
    cr_expect(ch.algo == want[i].a && ch.proto == want[i].p,
              "%d ranks, %.0f B: %d/%d, expected %d/%d", want[i].ranks,
              want[i].bytes, ch.algo, ch.proto, want[i].a, want[i].p);
  }
  /* Without NVLink SHARP the NVLS regions are passed over: 4 GiB on 16
   * machines then lies in no region, and NCCL chooses. */
  cr_expect_eq(aws_pick(128, false, NCCL_PROTO_AUTO, 4294967296.0, &ch),
               -ENOENT);
  /* NCCL_PROTO=simple passes over the LL128 regions. */
  cr_expect_eq(aws_pick(32, true, NCCL_PROTO_SIMPLE, 64 << 20, &ch), -ENOENT);
  cr_expect_eq(aws_pick(32, true, NCCL_PROTO_SIMPLE, 4294967296.0, &ch), 0);
  cr_expect_eq(ch.algo, NCCL_ALGO_RING);
  /* Two machines are NCCL's; so are shapes without a table. */
  cr_expect_eq(aws_pick(16, true, NCCL_PROTO_AUTO, 1 << 20, &ch), -ENOENT);
  struct nccl_comm c = comm_of(24, 4, 90, 8, 46.35, 16);
  c.tuner = NCCL_TUNER_AWS_P5;
  struct nccl_model m;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  cr_expect_eq(nccl_tuner_pick(&m, NCCL_COLL_ALLREDUCE, 64 << 20,
                               NCCL_ALGO_AUTO, NCCL_PROTO_AUTO, &ch),
               -ENOENT, "6 GPUs a machine");
  /* nccl_model_choose takes the plugin's pick, with NCCL's channels. */
  c = comm_of(32, 4, 90, 8, 46.35, 16);
  c.tuner = NCCL_TUNER_AWS_P5;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  cr_assert_eq(nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 1 << 30,
                                 NCCL_ALGO_AUTO, NCCL_PROTO_AUTO, &ch),
               0);
  cr_expect(ch.algo == NCCL_ALGO_RING && ch.proto == NCCL_PROTO_LL128);
  cr_expect_eq(ch.nchannels, 16);
  near(ch.time_s,
       nccl_model_time(&m, NCCL_COLL_ALLREDUCE, NCCL_ALGO_RING,
                       NCCL_PROTO_LL128, 1 << 30),
       "the model's time of the pick");
}

/* CollNet's chain (the network's switches reduce): offered only where
 * they do, Simple only, at half the graph's bus bandwidth; its latency
 * 2 (ppn - 1) NVLink steps and one network step: v2.30.7's 2.8 and 30 us,
 * v2.18.5's 4.75 and 14. */
Test(nccl, collnet_chain) {
  struct nccl_comm c = comm_of(64, 8, 90, 8, 46.35, 16);
  struct nccl_model m;
  enum nccl_coll ar = NCCL_COLL_ALLREDUCE;
  enum nccl_algo a = NCCL_ALGO_COLLNET_CHAIN;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  cr_expect_eq(m.bw[ar][a][NCCL_PROTO_SIMPLE], 0, "no SHARP, no CollNet");
  c.collnet = true;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(m.bw[ar][a][NCCL_PROTO_SIMPLE], 8 * 46.35 * 0.5, "chain bw");
  cr_expect_eq(m.bw[ar][a][NCCL_PROTO_LL128], 0);
  near(m.lat[ar][a][NCCL_PROTO_SIMPLE], 2 * 7 * 2.8 + 30, "chain lat");
  near(nccl_hw_latency(NCCL_V2_30, NCCL_HW_NET, a, NCCL_PROTO_SIMPLE), 30,
       "2.30 net");
  c.version = NCCL_V2_18;
  cr_assert_eq(nccl_model_init(&m, &c), 0);
  near(m.lat[ar][a][NCCL_PROTO_SIMPLE], 2 * 7 * 4.75 + 14, "2.18 chain lat");
  near(nccl_hw_latency(NCCL_V2_18, NCCL_HW_NET, a, NCCL_PROTO_SIMPLE), 14,
       "2.18 net");
  near(nccl_hw_latency(NCCL_V2_18, NCCL_HW_NET, NCCL_ALGO_TREE,
                       NCCL_PROTO_SIMPLE),
       14, "2.18 tree net, as 2.30's");
  struct nccl_choice ch;
  cr_assert_eq(nccl_model_choose(&m, ar, 1 << 30, a, NCCL_PROTO_AUTO, &ch), 0);
  cr_expect_eq(ch.proto, NCCL_PROTO_SIMPLE);
}

Test(nccl, protocols) {
  near(nccl_proto_wire(NCCL_PROTO_LL), 2, "LL wire");
  near(nccl_proto_wire(NCCL_PROTO_LL128), 128.0 / 120, "LL128 wire");
  cr_expect_eq(nccl_proto_chunk(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE), 2u << 20);
  cr_expect_eq(nccl_proto_chunk(NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE), 512u << 10);
  cr_expect_eq(nccl_proto_chunk(NCCL_ALGO_RING, NCCL_PROTO_LL), 32768u);
  cr_expect_eq(nccl_proto_chunk(NCCL_ALGO_RING, NCCL_PROTO_LL128), 576000u);
  cr_expect_eq(nccl_arch_of(80), NCCL_ARCH_AMPERE);
  cr_expect_eq(nccl_arch_of(100), NCCL_ARCH_BLACKWELL);
}

/* The least step NCCL's tables charge on each link, the wire a slower
 * link's steps are charged beyond: LL's ring's, in every release. */
Test(nccl, step_floors) {
  enum nccl_version v[5] = {NCCL_V2_18, NCCL_V2_20, NCCL_V2_26, NCCL_V2_28,
                            NCCL_V2_30};
  for (int i = 0; i < 5; i++) {
    near(nccl_hw_floor(v[i], NCCL_HW_NVLINK), 0.6, "NVLink");
    near(nccl_hw_floor(v[i], NCCL_HW_PCI), 1.0, "PCIe");
    near(nccl_hw_floor(v[i], NCCL_HW_NET), 2.7, "network");
  }
}

Test(nccl, bad_comm) {
  struct nccl_comm c = comm_of(12, 5, 80, 12, 20, 24);
  struct nccl_model m;
  cr_expect_eq(nccl_model_init(&m, &c), -EINVAL);
}
