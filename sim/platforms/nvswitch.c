/* sim/platforms/nvswitch.c: GPU machines of today (docs/collectives.md,
 * "Machines of today"):
 * G GPUs per machine on an NVSwitch (each GPU its NVLink, each way at
 * nvlink_bandwidth), K NICs per machine, GPU i reaching NIC i K / G
 * through PCIe (its own x16 link and the NIC's: GPUDirect RDMA, no host
 * memory), and the NICs on leaf switches: rail-optimized (fabric = rail:
 * NIC k of `leaf` machines on the leaf of rail k) or a plain fat tree
 * (fabric = fat-tree: every NIC of leaf / K machines on one leaf). Each
 * leaf has one uplink of leaf x bandwidth / oversubscription to a core
 * that stands for the spines; aggregators hang off the core.
 *
 * Routing: SimGrid's Dijkstra over the graph of GPUs, switches and NICs
 * (cached per source), where a route's cost is its count of links.
 * Zero-latency links of unbounded rate, pads, weigh edges so that the
 * cheapest routes are the ones NCCL takes:
 *   - GPU to GPU inside a machine over NVLink (cost 4), never through a
 *     shared NIC's PCIe (6);
 *   - across machines on one rail through the rail's NICs (8);
 *   - across machines between rails, PXN (NCCL 2.12's "PCI x NVLink"):
 *     over NVLink to the GPU of the destination's rail, which hands the
 *     data to its NIC (10), rather than through the destination machine's
 *     NVLink or the spines (12 each): a GPU's transit vertex (px) takes
 *     the NVSwitch's side of its NVLink and its PCIe to the NIC, so that
 *     its own, padded edges are only ever a route's ends.
 * Each pad is split-duplex and one edge's alone (a GPU has one for its
 * NVLink and one for its PCIe), so that only flows that share a real
 * link share a pad (but the NVLS host's: its flows share it, as they do
 * the switch; SimGrid takes no route without a link). A pad shared more
 * widely (one a GPU, both ways, for its NVLink's flows and its NIC's)
 * ties flows that share nothing into one system, and SimGrid 3.32's lazy
 * update then gave flows more than their links have: on four DGX H100
 * machines, NVLS's tree, seven of eight rails pushed two 512 KiB parts
 * into a GPU's 48 GB/s PCIe at 28 GB/s apiece (21.2 us), the eighth, as
 * those two flows alone, at 24 (24.5 us); the rails drifted apart and
 * the call never repeated itself (tests/test_sim.c,
 * nvls_tree_four_machines_jumps).
 * `latency` is GPU to GPU across machines on one leaf: half the PCIe
 * latency on each GPU's link and the rest split over the two NIC ports;
 * `nvlink_latency` is GPU to GPU inside, half on each NVLink. Switch
 * hops add no latency.
 *
 * SHARP (sharp = true): each rail's switches reduce what the machines'
 * NICs on the rail send them (NCCL's CollNet; on a fat tree, one rail).
 * The reduction is a host of its own per rail, r<R>-sharp, joined by a
 * padding link to the rail's leaf where one leaf holds every machine,
 * else to the core: the top of SHARP's aggregation tree, its leaves'
 * partial sums not modelled (each machine's stream crosses its leaf's
 * uplink, which only an oversubscribed uplink would feel). */
#include "generator.h"

#include <math.h>
#include <string.h>

/* Machines per leaf group: on a rail fabric each leaf takes one NIC of
 * `leaf` machines, on a fat tree all K NICs of leaf / K. */
static int group_nodes(const struct point *p) {
  if (p->fabric == FABRIC_RAIL)
    return p->leaf;
  return p->leaf / p->nics_per_node;
}

static int machines(const struct point *p) {
  return p->nodes / p->gpus_per_node;
}

static int nv_check(const struct point *p, char *err, size_t errlen) {
  int g = p->gpus_per_node, k = p->nics_per_node;
  if (p->nodes % g) {
    snprintf(err, errlen,
             "[platform] nodes = %d (workers, one per GPU) must be a "
             "multiple of gpus_per_node = %d on nvswitch",
             p->nodes, g);
    return -1;
  }
  if (g % k) {
    snprintf(err, errlen,
             "[platform] nics_per_node = %d must divide gpus_per_node = %d "
             "(GPU i uses NIC i x nics / gpus)",
             k, g);
    return -1;
  }
  if (p->fabric == FABRIC_FAT_TREE && p->leaf < k) {
    snprintf(err, errlen,
             "[platform] leaf = %d ports cannot take a machine's %d NICs "
             "(fabric = fat-tree puts a machine's NICs on one leaf)",
             p->leaf, k);
    return -1;
  }
  return 0;
}

static void nv_node_net(const struct point *p, struct node_net *n) {
  n->size = p->gpus_per_node;
  n->nics = p->nics_per_node;
  n->alpha_in = p->nvlink_latency_s;
  n->beta_in = 1.0 / p->nvlink_Bps;
  n->alpha = p->latency_s;
  n->beta = 1.0 / fmin(p->bandwidth_Bps, p->pcie_Bps);
}

static void link(FILE *f, const char *id, double bw, double lat) {
  fprintf(f,
          "    <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
          "sharing_policy=\"SPLITDUPLEX\"/>\n",
          id, bw, lat);
}

static void pad(FILE *f, const char *id) {
  fprintf(f,
          "    <link id=\"%s\" bandwidth=\"1e18Bps\" latency=\"0s\" "
          "sharing_policy=\"SPLITDUPLEX\"/>\n",
          id);
}

/* An edge SRC -> DST over the links of LINKS ("id:UP id:DOWN"). */
static void edge(FILE *f, const char *src, const char *dst,
                 const char *links) {
  fprintf(f, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", src,
          dst);
  char **ls = g_strsplit(links, " ", -1);
  for (char **l = ls; *l; l++) {
    char *colon = strchr(*l, ':');
    if (colon) {
      *colon = '\0';
      fprintf(f, "<link_ctn id=\"%s\" direction=\"%s\"/>", *l, colon + 1);
    } else {
      fprintf(f, "<link_ctn id=\"%s\"/>", *l);
    }
  }
  g_strfreev(ls);
  fprintf(f, "</route>\n");
}

/* The edges A -> B and B -> A over the split-duplex links LINKS
 * (NULL-terminated, in A's order: each UP from A, each DOWN in reverse
 * from B; none: the pad alone), then the PAD when there is one (UP from
 * A, DOWN from B). */
static void both_ways(FILE *f, const char *a, const char *b,
                      const char *const *links, const char *pad) {
  GString *up = g_string_new(NULL), *down = g_string_new(NULL);
  size_t n = 0;
  while (links[n])
    n++;
  for (size_t i = 0; i < n; i++) {
    g_string_append_printf(up, "%s%s:UP", i ? " " : "", links[i]);
    g_string_append_printf(down, "%s%s:DOWN", i ? " " : "", links[n - 1 - i]);
  }
  if (pad) {
    g_string_append_printf(up, "%s%s:UP", n ? " " : "", pad);
    g_string_append_printf(down, "%s%s:DOWN", n ? " " : "", pad);
  }
  edge(f, a, b, up->str);
  edge(f, b, a, down->str);
  g_string_free(up, TRUE);
  g_string_free(down, TRUE);
}

/* Machine N's GPUs, NVSwitch, transit vertices and NICs, and their
 * links (SimGrid wants a zone's routes after all of these). */
static void write_machine(FILE *f, const struct point *p, int n) {
  int g = p->gpus_per_node, k = p->nics_per_node;
  double nvl = p->nvlink_latency_s / 2, pl = p->pcie_latency_s / 2;
  char a[64];
  for (int i = 0; i < g; i++)
    fprintf(f, "    <host id=\"w%d\" speed=\"%df\"/>\n", n * g + i,
            PLATFORM_SPEED);
  fprintf(f, "    <router id=\"n%d-sw\"/>\n", n);
  for (int i = 0; i < g; i++)
    fprintf(f, "    <router id=\"n%d-px%d\"/>\n", n, i);
  for (int j = 0; j < k; j++)
    fprintf(f, "    <router id=\"n%d-nic%d\"/>\n", n, j);
  for (int i = 0; i < g; i++) {
    snprintf(a, sizeof a, "n%d-nv%d", n, i);
    link(f, a, p->nvlink_Bps, nvl);
    snprintf(a, sizeof a, "n%d-pcie%d", n, i);
    link(f, a, p->pcie_Bps, pl);
    snprintf(a, sizeof a, "n%d-pad%d", n, i);
    pad(f, a);
    snprintf(a, sizeof a, "n%d-nvpad%d", n, i);
    pad(f, a);
  }
  for (int j = 0; j < k; j++) {
    snprintf(a, sizeof a, "n%d-pcienic%d", n, j);
    link(f, a, p->pcie_Bps, 0);
  }
  /* NVLink SHARP: the NVSwitch's reduction and multicast as a host of its
   * own beside the switch (its actor: collectives/nccl_kernel.c), so
   * that what a GPU sends it crosses that GPU's NVLink up only, and what
   * it sends a GPU that GPU's NVLink down only. */
  if (p->nvls) {
    fprintf(f, "    <host id=\"n%d-nvls\" speed=\"%df\"/>\n", n,
            PLATFORM_SPEED);
    snprintf(a, sizeof a, "n%d-nvlspad", n);
    pad(f, a);
  }
}

/* Machine N's edges. */
static void write_machine_edges(FILE *f, const struct point *p, int n) {
  int g = p->gpus_per_node, k = p->nics_per_node;
  char a[64], b[64], l[256], nv[48], pcie[48], pcienic[48], padi[48], nvpad[48];
  for (int i = 0; i < g; i++) {
    int j = i * k / g;
    snprintf(a, sizeof a, "w%d", n * g + i);
    snprintf(nv, sizeof nv, "n%d-nv%d", n, i);
    snprintf(pcie, sizeof pcie, "n%d-pcie%d", n, i);
    snprintf(pcienic, sizeof pcienic, "n%d-pcienic%d", n, j);
    snprintf(padi, sizeof padi, "n%d-pad%d", n, i);
    snprintf(nvpad, sizeof nvpad, "n%d-nvpad%d", n, i);
    snprintf(b, sizeof b, "n%d-sw", n);
    both_ways(f, a, b, (const char *const[]){nv, NULL}, nvpad);
    snprintf(b, sizeof b, "n%d-nic%d", n, j);
    both_ways(f, a, b, (const char *const[]){pcie, pcienic, NULL}, padi);
    /* PXN: the NVSwitch's side of GPU i's NVLink, then its PCIe. */
    snprintf(a, sizeof a, "n%d-sw", n);
    snprintf(b, sizeof b, "n%d-px%d", n, i);
    snprintf(l, sizeof l, "n%d-nv%d:DOWN", n, i);
    edge(f, a, b, l);
    snprintf(a, sizeof a, "n%d-nic%d", n, j);
    snprintf(l, sizeof l, "n%d-pcie%d:UP n%d-pcienic%d:UP", n, i, n, j);
    edge(f, b, a, l);
  }
  if (p->nvls) {
    snprintf(a, sizeof a, "n%d-nvls", n);
    snprintf(b, sizeof b, "n%d-sw", n);
    snprintf(l, sizeof l, "n%d-nvlspad", n);
    both_ways(f, a, b, (const char *const[]){NULL}, l);
  }
}

/* Leaf R-GRP's (or GRP's) name. */
static void leaf_name(const struct point *p, int r, int grp, char *name,
                      size_t len) {
  if (p->fabric == FABRIC_RAIL)
    snprintf(name, len, "leaf%d-%d", r, grp);
  else
    snprintf(name, len, "leaf%d", grp);
}

static int nv_write(FILE *f, const struct point *p, double link_lat_s,
                    char **err) {
  (void)link_lat_s;
  (void)err;
  int nm = machines(p), k = p->nics_per_node;
  int per = group_nodes(p), groups = (nm + per - 1) / per;
  int rails = p->fabric == FABRIC_RAIL ? k : 1;
  double nic_lat = fmax((p->latency_s - p->pcie_latency_s) / 2, 0);
  double up_bw = p->leaf * p->bandwidth_Bps / p->oversubscription;
  char a[48], b[64], l[256];
  fprintf(f, "  <zone id=\"fabric\" routing=\"DijkstraCache\">\n");
  /* Vertices and links. */
  for (int n = 0; n < nm; n++)
    write_machine(f, p, n);
  for (int i = 0; i < p->aggregators; i++) {
    fprintf(f, "    <host id=\"a%d\" speed=\"%df\"/>\n", i, PLATFORM_SPEED);
    snprintf(a, sizeof a, "a%d-net", i);
    link(f, a, p->bandwidth_Bps, nic_lat);
  }
  fprintf(f, "    <router id=\"core\"/>\n");
  for (int r = 0; r < rails; r++)
    for (int grp = 0; grp < groups; grp++) {
      leaf_name(p, r, grp, a, sizeof a);
      fprintf(f, "    <router id=\"%s\"/>\n", a);
      snprintf(b, sizeof b, "%s-up", a);
      link(f, b, up_bw, 0);
      snprintf(b, sizeof b, "%s-uppad", a);
      pad(f, b);
    }
  for (int n = 0; n < nm; n++)
    for (int j = 0; j < k; j++) {
      snprintf(a, sizeof a, "n%d-net%d", n, j);
      link(f, a, p->bandwidth_Bps, nic_lat);
    }
  for (int r = 0; p->sharp && r < rails; r++) {
    fprintf(f, "    <host id=\"r%d-sharp\" speed=\"%df\"/>\n", r,
            PLATFORM_SPEED);
    snprintf(a, sizeof a, "r%d-sharppad", r);
    pad(f, a);
  }
  /* Edges. */
  for (int n = 0; n < nm; n++)
    write_machine_edges(f, p, n);
  for (int r = 0; r < rails; r++)
    for (int grp = 0; grp < groups; grp++) {
      leaf_name(p, r, grp, a, sizeof a);
      snprintf(b, sizeof b, "%s-up", a);
      snprintf(l, sizeof l, "%s-uppad", a);
      both_ways(f, a, "core", (const char *const[]){b, NULL}, l);
    }
  for (int n = 0; n < nm; n++)
    for (int j = 0; j < k; j++) {
      snprintf(a, sizeof a, "n%d-nic%d", n, j);
      leaf_name(p, p->fabric == FABRIC_RAIL ? j : 0, n / per, b, sizeof b);
      snprintf(l, sizeof l, "n%d-net%d", n, j);
      both_ways(f, a, b, (const char *const[]){l, NULL}, NULL);
    }
  for (int i = 0; i < p->aggregators; i++) {
    snprintf(a, sizeof a, "a%d", i);
    snprintf(l, sizeof l, "a%d-net", i);
    both_ways(f, a, "core", (const char *const[]){l, NULL}, NULL);
  }
  for (int r = 0; p->sharp && r < rails; r++) {
    snprintf(a, sizeof a, "r%d-sharp", r);
    if (groups == 1)
      leaf_name(p, r, 0, b, sizeof b);
    else
      snprintf(b, sizeof b, "core");
    snprintf(l, sizeof l, "r%d-sharppad", r);
    both_ways(f, a, b, (const char *const[]){NULL}, l);
  }
  fprintf(f, "  </zone>\n");
  return 0;
}

/* SimGrid's DijkstraCache keeps, for every host that sends, a
 * predecessor (8 bytes) per vertex of the graph. */
static double nv_route_bytes(const struct point *p) {
  int nm = machines(p), k = p->nics_per_node;
  int per = group_nodes(p), groups = (nm + per - 1) / per;
  double vertices = (double)nm * (2.0 * p->gpus_per_node + 1 + k) +
                    (double)(p->fabric == FABRIC_RAIL ? k : 1) *
                        (groups + (p->sharp ? 1 : 0)) +
                    1 + p->aggregators;
  return 8.0 * vertices * (double)(p->nodes + p->aggregators);
}

const struct platform_gen platform_nvswitch = {
    .name = "nvswitch",
    .topology = TOPO_NVSWITCH,
    .check = nv_check,
    .node_net = nv_node_net,
    .route_bytes = nv_route_bytes,
    .host_count = platform_gpu_hosts,
    .host_name = platform_gpu_host,
    .write = nv_write,
    .links = -1,
    .sharp = true,
};
