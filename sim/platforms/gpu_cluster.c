/* sim/platforms/gpu_cluster.c: GradientFlow's machines (seeds/003
 * Section 2.3.2): G GPUs per node, S under each PCIe switch, the switches
 * under the node's root complex, one NIC per node into a switched
 * fabric. Workers are the GPUs w0..wN-1, aggregators a0.. hang off the
 * fabric like a node. `latency` is GPU to GPU between machines: a PCIe
 * hop out, the two NIC links, a PCIe hop in. */
#include "generator.h"

/* The routes of GPU A of node N: to every other GPU of the node (through
 * the PCIe switches when they differ) and to and from the root. */
static void write_gpu_routes(FILE *f, const struct point *p, int n, int a) {
  int g = p->gpus_per_node, s = p->gpus_per_switch;
  for (int b = 0; b < g; b++) {
    if (a == b)
      continue;
    fprintf(f,
            "      <route src=\"w%d\" dst=\"w%d\" symmetrical=\"NO\">"
            "<link_ctn id=\"n%d-g%d\" direction=\"UP\"/>",
            n * g + a, n * g + b, n, a);
    if (a / s != b / s)
      fprintf(f,
              "<link_ctn id=\"n%d-s%d\" direction=\"UP\"/>"
              "<link_ctn id=\"n%d-s%d\" direction=\"DOWN\"/>",
              n, a / s, n, b / s);
    fprintf(f, "<link_ctn id=\"n%d-g%d\" direction=\"DOWN\"/></route>\n", n,
            b);
  }
  fprintf(f,
          "      <route src=\"w%d\" dst=\"n%d-root\" symmetrical=\"NO\">"
          "<link_ctn id=\"n%d-g%d\" direction=\"UP\"/>"
          "<link_ctn id=\"n%d-s%d\" direction=\"UP\"/></route>\n",
          n * g + a, n, n, a, n, a / s);
  fprintf(f,
          "      <route src=\"n%d-root\" dst=\"w%d\" symmetrical=\"NO\">"
          "<link_ctn id=\"n%d-s%d\" direction=\"DOWN\"/>"
          "<link_ctn id=\"n%d-g%d\" direction=\"DOWN\"/></route>\n",
          n, n * g + a, n, a / s, n, a);
}

/* Node N's zone: its GPUs, root complex, PCIe links and routes. */
static void write_node(FILE *f, const struct point *p, int n) {
  int g = p->gpus_per_node, s = p->gpus_per_switch;
  double pl = p->pcie_latency_s / 2;
  fprintf(f, "    <zone id=\"n%d\" routing=\"Full\">\n", n);
  for (int i = 0; i < g; i++)
    fprintf(f, "      <host id=\"w%d\" speed=\"%df\"/>\n", n * g + i,
            PLATFORM_SPEED);
  fprintf(f, "      <router id=\"n%d-root\"/>\n", n);
  for (int i = 0; i < g; i++)
    fprintf(f,
            "      <link id=\"n%d-g%d\" bandwidth=\"%.17gBps\" "
            "latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
            n, i, p->pcie_Bps, pl);
  for (int i = 0; i < g / s; i++)
    fprintf(f,
            "      <link id=\"n%d-s%d\" bandwidth=\"%.17gBps\" "
            "latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
            n, i, p->pcie_Bps);
  for (int a = 0; a < g; a++)
    write_gpu_routes(f, p, n, a);
  fprintf(f, "    </zone>\n");
}

/* The NIC links of the nodes and aggregators. */
static void write_nics(FILE *f, const struct point *p, int nodes) {
  double nic_lat = (p->latency_s - p->pcie_latency_s) / 2;
  nic_lat = nic_lat > 0 ? nic_lat : 0;
  for (int n = 0; n < nodes; n++)
    fprintf(f,
            "    <link id=\"nic%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
            "sharing_policy=\"SPLITDUPLEX\"/>\n",
            n, p->bandwidth_Bps, nic_lat);
  for (int a = 0; a < p->aggregators; a++)
    fprintf(f,
            "    <link id=\"nica%d\" bandwidth=\"%.17gBps\" "
            "latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
            a, p->bandwidth_Bps, nic_lat);
}

/* The fabric's routes: node to node through both NICs; aggregators
 * straight to the nodes' roots. */
static void write_fabric_routes(FILE *f, const struct point *p, int nodes) {
  for (int a = 0; a < nodes; a++)
    for (int b = 0; b < nodes; b++)
      if (a != b)
        fprintf(f,
                "    <zoneRoute src=\"n%d\" dst=\"n%d\" gw_src=\"n%d-root\" "
                "gw_dst=\"n%d-root\" symmetrical=\"NO\"><link_ctn "
                "id=\"nic%d\" direction=\"UP\"/><link_ctn id=\"nic%d\" "
                "direction=\"DOWN\"/></zoneRoute>\n",
                a, b, a, b, a, b);
  for (int a = 0; a < p->aggregators; a++)
    for (int n = 0; n < nodes; n++) {
      fprintf(f,
              "    <zoneRoute src=\"aggr\" dst=\"n%d\" gw_src=\"a%d\" "
              "gw_dst=\"n%d-root\" symmetrical=\"NO\"><link_ctn id=\"nica%d\" "
              "direction=\"UP\"/><link_ctn id=\"nic%d\" direction=\"DOWN\"/>"
              "</zoneRoute>\n",
              n, a, n, a, n);
      fprintf(f,
              "    <zoneRoute src=\"n%d\" dst=\"aggr\" gw_src=\"n%d-root\" "
              "gw_dst=\"a%d\" symmetrical=\"NO\"><link_ctn id=\"nic%d\" "
              "direction=\"UP\"/><link_ctn id=\"nica%d\" direction=\"DOWN\"/>"
              "</zoneRoute>\n",
              n, n, a, n, a);
    }
}

static int gpu_write(FILE *f, const struct point *p, double link_lat_s,
                     char **err) {
  (void)link_lat_s;
  if (p->aggregators > 1) {
    *err = g_strdup("[platform] gpu-cluster takes at most one aggregator");
    return -1;
  }
  int nodes = p->nodes / p->gpus_per_node;
  fprintf(f, "  <zone id=\"fabric\" routing=\"Full\">\n");
  for (int n = 0; n < nodes; n++)
    write_node(f, p, n);
  if (p->aggregators) {
    fprintf(f, "    <zone id=\"aggr\" routing=\"Full\">\n");
    for (int a = 0; a < p->aggregators; a++)
      fprintf(f, "      <host id=\"a%d\" speed=\"%df\"/>\n", a,
              PLATFORM_SPEED);
    fprintf(f, "    </zone>\n");
  }
  write_nics(f, p, nodes);
  write_fabric_routes(f, p, nodes);
  fprintf(f, "  </zone>\n");
  return 0;
}

int platform_gpu_hosts(const struct point *p) {
  return p->nodes + p->aggregators;
}

void platform_gpu_host(const struct point *p, int i, char *name, size_t len) {
  if (i < p->nodes)
    snprintf(name, len, "w%d", i);
  else
    snprintf(name, len, "a%d", i - p->nodes);
}

/* Whole machines of whole PCIe switches. */
static int gpu_check(const struct point *p, char *err, size_t errlen) {
  if (p->gpus_per_node % p->gpus_per_switch) {
    snprintf(err, errlen,
             "[platform] gpus_per_node = %d must be a multiple of "
             "gpus_per_switch = %d",
             p->gpus_per_node, p->gpus_per_switch);
    return -1;
  }
  if (p->nodes % p->gpus_per_node) {
    snprintf(err, errlen,
             "[platform] nodes = %d (workers, one per GPU) must be a "
             "multiple of gpus_per_node = %d on gpu-cluster",
             p->nodes, p->gpus_per_node);
    return -1;
  }
  return 0;
}

/* GPU to GPU inside a machine through the PCIe switches; across, through
 * the machine's one NIC. */
static void gpu_node_net(const struct point *p, struct node_net *n) {
  n->size = p->gpus_per_node;
  n->nics = 1;
  n->alpha_in = p->pcie_latency_s;
  n->beta_in = 1.0 / p->pcie_Bps;
  n->alpha = p->latency_s;
  n->beta = 1.0 / p->bandwidth_Bps;
}

const struct platform_gen platform_gpu_cluster = {
    .name = "gpu-cluster",
    .topology = TOPO_GPU,
    .check = gpu_check,
    .node_net = gpu_node_net,
    .host_count = platform_gpu_hosts,
    .host_name = platform_gpu_host,
    .write = gpu_write,
    .links = -1,
};
