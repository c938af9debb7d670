/* config/presets.c: the machines [platform] preset names (presets.h).
 *
 * Link rates are the data rates NCCL's own topology model assigns
 * (NVIDIA/nccl src/graph/topo.h and topo.cc): an NVLink moves 20.0 GB/s
 * each way on Volta and Ampere and 20.6 on Hopper (SM70/SM80/SM90_NVLINK_BW;
 * the datasheets' 25 GB/s is the signalling rate), so an A100's 12 links
 * give 240 GB/s and an H100's 18 give 370.8; a PCIe x16 link moves
 * width x speed / 80 GB/s (kvDictPciGen: 12 on Gen3, 24 on Gen4, 48 on
 * Gen5); a NIC its port speed. The links' latencies are the wire's, the
 * fastest step NCCL's tuning model knows there (src/graph/tuning.cc,
 * hwLatencies: LL's ring step, 0.6 us over NVLink, 2.7 us over
 * InfiniBand); what a protocol's step costs beyond it is the NCCL
 * kernel's (sim/collectives/nccl.c). On EFA the network's is NCCL's
 * Simple step, 14 us, as NCCL runs only Simple over it (aws-ofi-nccl).
 * InfiniBand and EFA are not TCP, so the network is SimGrid's ideal one
 * (no TCP calibration). NCCL's kernels add what they receive as they
 * copy it: reduce_rate = fused. NVLink SHARP (NVLS): on Hopper's
 * third-generation NVSwitch (DGX H100 datasheet). */
#include "presets.h"

#include <glib.h>
#include <string.h>

/* Eight GPUs on NVSwitch, one NIC each, rail-optimized leaves. */
#define EIGHT_GPUS_RAILS                                                      \
  {"platform", "topology", "nvswitch"}, {"platform", "gpus_per_node", "8"},  \
      {"platform", "nics_per_node", "8"}, {"platform", "fabric", "rail"},    \
      {"platform", "oversubscription", "1"}, {"platform", "ideal", "true"},  \
      {"platform", "nvlink_latency", "0.6us"}, {"platform", "latency", "2.7us"}, \
      {"exchange", "reduce_rate", "fused"}

/* Eight GPUs on NVSwitch (or modelled as on one) in a cloud instance
 * whose fabric its provider does not publish: a plain fat tree of
 * 64-port leaves, non-blocking. */
#define EIGHT_GPUS_FAT_TREE                                                    \
  {"platform", "topology", "nvswitch"}, {"platform", "gpus_per_node", "8"},    \
      {"platform", "fabric", "fat-tree"}, {"platform", "leaf", "64"},          \
      {"platform", "oversubscription", "1"}, {"platform", "ideal", "true"},    \
      {"platform", "nvlink_latency", "0.6us"}, {                               \
    "exchange", "reduce_rate", "fused"                                         \
  }

/* DGX A100 (NVIDIA DGX A100 datasheet and System Architecture): 8 A100
 * SXM4 80GB on six NVSwitches, 12 NVLink3 links per GPU; 8 single-port
 * ConnectX-6 HDR 200 Gb/s for compute, PCIe Gen4. DGX SuperPOD (A100
 * reference architecture): scalable units of 20 nodes, each rail a leaf
 * of 40-port HDR switches, 20 ports down and 20 up. */
static const struct preset_value dgx_a100[] = {
    EIGHT_GPUS_RAILS,
    {"platform", "nvlink_bandwidth", "240GBps"},
    {"platform", "bandwidth", "200Gbps"},
    {"platform", "pcie_bandwidth", "24GBps"},
    {"platform", "leaf", "20"},
    {"model", "device", "A100-80GB"},
    {NULL, NULL, NULL}};

/* DGX H100 (NVIDIA DGX H100 datasheet): 8 H100 SXM5 80GB on four
 * NVSwitches, 18 NVLink4 links per GPU (900 GB/s both ways); 8
 * single-port ConnectX-7 400 Gb/s NDR, PCIe Gen5. DGX SuperPOD (H100
 * reference architecture): scalable units of 32 nodes, each rail a leaf
 * of 64-port NDR switches, 32 ports down and 32 up. HGX H100 servers
 * built the same way (one 400 Gb/s NIC per GPU: Azure ND H100 v5) take
 * the same values. */
static const struct preset_value dgx_h100[] = {
    EIGHT_GPUS_RAILS,
    {"platform", "nvlink_bandwidth", "370.8GBps"},
    {"platform", "bandwidth", "400Gbps"},
    {"platform", "pcie_bandwidth", "48GBps"},
    {"platform", "leaf", "32"},
    {"platform", "nvls", "true"},
    {"model", "device", "H100"},
    {NULL, NULL, NULL}};

/* AWS p4d.24xlarge (AWS EC2 P4 instance page): 8 A100 40GB on NVSwitch,
 * 400 Gb/s of EFA as four 100 Gb/s adapters, PCIe Gen4. AWS does not
 * publish its fabric's layout: a plain fat tree, non-blocking. NCCL runs
 * Simple alone: AWS's network plugin sets NCCL_PROTO=simple on p4d,
 * p4de and p3dn, where LL and LL128 are not safe over EFA
 * (aws/aws-ofi-nccl src/platform-aws.c, force_proto_simple). The plugin
 * reports EFA's latency to NCCL's tuner as 75 us on p4d, p4de and p5
 * (platform-aws.c's platform table, v1.7.0 to v1.9 at least; 150 us on
 * p3dn and, in v1.2 to v1.5, on every instance; none before v1.2). */
static const struct preset_value p4d[] = {
    EIGHT_GPUS_FAT_TREE,
    {"platform", "nics_per_node", "4"},
    {"platform", "nvlink_bandwidth", "240GBps"},
    {"platform", "bandwidth", "100Gbps"},
    {"platform", "latency", "14us"},
    {"platform", "pcie_bandwidth", "24GBps"},
    {"exchange", "nccl_proto", "simple"},
    {"exchange", "nccl_net_latency", "75us"},
    {"model", "device", "A100-40GB"},
    {NULL, NULL, NULL}};

/* AWS p5.48xlarge (AWS EC2 P5 instance page): 8 H100 SXM5 80GB on
 * NVSwitch (NVLink SHARP), 3200 Gb/s of EFA as 32 x 100 Gb/s adapters,
 * four a GPU: 8 NICs here, PCIe Gen5; the fabric as p4d's. Each NIC
 * runs at 335 Gb/s, what EFA delivers to NCCL a GPU on p5 (84% of 400):
 * an all-to-all of 2 GiB a GPU is bound by the adapters, each GPU's
 * algorithm bandwidth times the share of its peers on other machines
 * (n - 8)/n giving 42.3, 41.9, 44.1, 41.8 and 39.7 GB/s on 2, 4, 8, 16
 * and 32 machines (crazyguitar/aws-gpu-communication-benchmark,
 * data/nccl_alltoall.csv; NCCL 2.28.7, aws-ofi-nccl 1.16.3); the median,
 * 41.9 GB/s. No allreduce gradsim scores was used for it.
 * EFA's latency: 20 us, AWS's own figure for two p5 (aws-ofi-nccl
 * src/tuner/nccl_ofi_model.cpp, net_lat "2 nodes, 8B RDMA w/imm lat").
 * AWS's plugin leaves NCCL_PROTO unset on p5 (its RDMA protocol),
 * reports 75 us of latency to NCCL's tuner and sets
 * NCCL_NVLSTREE_MAX_CHUNKSIZE to 512 KiB (platform-aws.c, v1.8.0 on). */
static const struct preset_value p5[] = {
    EIGHT_GPUS_FAT_TREE,
    {"platform", "nics_per_node", "8"},
    {"platform", "nvlink_bandwidth", "370.8GBps"},
    {"platform", "bandwidth", "335Gbps"},
    {"platform", "latency", "20us"},
    {"platform", "pcie_bandwidth", "48GBps"},
    {"platform", "nvls", "true"},
    {"exchange", "nccl_net_latency", "75us"},
    {"exchange", "nccl_nvlstree_max_chunk", "512KiB"},
    {"model", "device", "H100"},
    {NULL, NULL, NULL}};

/* AWS p3dn.24xlarge (AWS EC2 P3 instance page; Zhang et al. 2020's
 * machines): 8 V100 32GB on NVLink, one 100 Gb/s adapter, PCIe Gen3.
 * The V100s are linked as a hybrid cube-mesh, not through an NVSwitch:
 * modelled as a switch that gives each GPU the 6 links x 20 GB/s NCCL
 * assigns a V100's NVLink (an approximation of the mesh; across machines
 * the one 100 Gb/s adapter is the bottleneck). NCCL runs Simple alone, as
 * on p4d; AWS's plugin reports 150 us of latency to its tuner. */
static const struct preset_value p3dn[] = {
    EIGHT_GPUS_FAT_TREE,
    {"platform", "nics_per_node", "1"},
    {"platform", "nvlink_bandwidth", "120GBps"},
    {"platform", "bandwidth", "100Gbps"},
    {"platform", "latency", "14us"},
    {"platform", "pcie_bandwidth", "12GBps"},
    {"exchange", "nccl_proto", "simple"},
    {"exchange", "nccl_net_latency", "150us"},
    {"model", "device", "V100"},
    {NULL, NULL, NULL}};

static const struct preset presets[] = {
    {"dgx-a100", "DGX A100: 8 A100 80GB on NVSwitch, 8 x 200 Gb/s HDR, rails",
     "NVIDIA DGX A100 datasheet; DGX SuperPOD A100 reference architecture; "
     "NCCL topo.h and tuning.cc",
     dgx_a100},
    {"dgx-h100", "DGX H100: 8 H100 SXM5 on NVSwitch, 8 x 400 Gb/s NDR, rails",
     "NVIDIA DGX H100 datasheet; DGX SuperPOD H100 reference architecture; "
     "NCCL topo.h and tuning.cc",
     dgx_h100},
    {"hgx-h100",
     "an HGX H100 8-GPU server with one 400 Gb/s NIC per GPU "
     "(as Azure ND H100 v5): the values of dgx-h100",
     "as dgx-h100", dgx_h100},
    {"p4d", "AWS p4d.24xlarge: 8 A100 40GB on NVSwitch, 4 x 100 Gb/s EFA",
     "AWS EC2 P4 instance page; NCCL topo.h and tuning.cc", p4d},
    {"p5",
     "AWS p5.48xlarge: 8 H100 on NVSwitch, 32 x 100 Gb/s EFA (as 8 NICs "
     "at the 335 Gb/s an all-to-all measures)",
     "AWS EC2 P5 instance page; aws-ofi-nccl; NCCL topo.h and tuning.cc", p5},
    {"p3dn", "AWS p3dn.24xlarge: 8 V100 on NVLink (as a switch), 100 Gb/s",
     "AWS EC2 P3 instance page; NCCL topo.h and tuning.cc", p3dn},
};

const struct preset *preset_find(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
    if (!strcmp(presets[i].name, name))
      return &presets[i];
  return NULL;
}

unsigned preset_count(void) { return G_N_ELEMENTS(presets); }

const struct preset *preset_at(unsigned i) {
  return i < G_N_ELEMENTS(presets) ? &presets[i] : NULL;
}

char *preset_names(void) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", presets[i].name);
  return g_string_free(s, FALSE);
}
