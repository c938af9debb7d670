/* sim/platforms/generator.h: a platform generator: the SimGrid platform
 * XML of a [platform] topology, and the names of the hosts that workers
 * and aggregators take on it. One file per generator, one registry
 * (registry.c); platform.c dispatches to them. Also the probe of a
 * platform by SimGrid itself (probe.c). */
#ifndef GRADSIM_SIM_PLATFORMS_GENERATOR_H
#define GRADSIM_SIM_PLATFORMS_GENERATOR_H

#include "../platform.h"
#include "../sim.h"

#include <stdio.h>

struct platform_gen {
  const char *name; /* [platform] topology = NAME */
  enum topology topology;
  /* What P cannot build, beyond each key's own range (NULL: nothing). */
  int (*check)(const struct point *p, char *err, size_t errlen);
  /* The machines of several workers, when the topology has them (NULL:
   * none): their size and network (sim.h, struct node_net). */
  void (*node_net)(const struct point *p, struct node_net *out);
  /* Any two workers are one latency and one bandwidth apart, on links of
   * their own (star): the formulas' network, whatever the collective. */
  bool flat;
  /* It honours [platform] host_stack (the <cluster> topologies). */
  bool host_stack;
  /* It honours [platform] ingress_bandwidth (star). */
  bool ingress;
  /* It has SHARP's reducing switches where [platform] sharp is true (a
   * host per rail beside the fabric's switches: NCCL's CollNet). */
  bool sharp;
  /* Bytes of SimGrid's routing beyond hosts and links (NULL: none). */
  double (*route_bytes)(const struct point *p);
  /* Hosts the platform has for P (at least P's workers and aggregators:
   * some topologies round up to whole switches or groups). */
  int (*host_count)(const struct point *p);
  /* Host I's name into NAME (I < host_count: workers take the first
   * ones, aggregators the next, unless [platform] hosts says otherwise). */
  void (*host_name)(const struct point *p, int i, char *name, size_t len);
  /* Write the platform's zones, hosts and links (between <platform> and
   * </platform>) for P into F, every network link with latency LINK_LAT_S
   * where the generator spreads the latency (see LINKS); -1 with *ERR
   * when P cannot be built. */
  int (*write)(FILE *f, const struct point *p, double link_lat_s,
               char **err);
  /* Build in SimGrid directly (after simgrid_init) the platform WRITE
   * describes, the same hosts, links, names and routes, faster than
   * SimGrid loads that XML (NULL: gradsim's runs load the XML). Needs
   * LINKS or LINKS_OF (no probe). */
  void (*build)(const struct point *p, double link_lat_s);
  /* The latency `latency` is split evenly over the links of the longest
   * route between two hosts: LINKS of them, or 0 when the platform is
   * probed for it (multi-hop topologies: SimGrid's routing decides);
   * -1: the generator places its latencies itself. */
  int links;
  /* The same count for P when the generator knows it (NULL: LINKS);
   * spares loading the platform once more to probe it, which costs as
   * much as the run's own load at tens of thousands of hosts. */
  int (*links_of)(const struct point *p);
};

/* The generator of P's topology (NULL for topology = file). */
const struct platform_gen *platform_gen_of(const struct point *p);

/* The cluster topologies' <cluster id> and host name prefix. */
#define PLATFORM_CLUSTER_ID "cluster"
#define PLATFORM_CLUSTER_PREFIX "h"

/* The <cluster> of hosts h0..h(HOSTS-1), split-duplex links of P's
 * bandwidth and latency LAT_S, with TOPO_ATTRS (topology and
 * topo_parameters attributes, or ""). Shared by the cluster topologies. */
void platform_write_cluster(FILE *f, const struct point *p, int hosts,
                            double lat_s, const char *topo_attrs);
/* Host names h<I> of the cluster topologies. */
void platform_cluster_host(const struct point *p, int i, char *name,
                           size_t len);
/* The hosts of the machine topologies (gpu-cluster, nvswitch): the GPUs
 * w0..w(N-1), machine by machine, then the aggregators a0.. */
int platform_gpu_hosts(const struct point *p);
void platform_gpu_host(const struct point *p, int i, char *name, size_t len);

/* What SimGrid makes of a platform file, learnt by loading it in a child
 * process (SimGrid starts once per process and aborts on a platform it
 * rejects). */
struct platform_probe {
  char **names; /* every host, in the natural order of the names */
  /* Links of the longest route from the first host (natural order) to
   * any other: on the symmetric topologies gradsim generates, the longest
   * route of the platform. 0 with fewer than two hosts. */
  int links;
};
/* Probe XML (a file); -1 with *ERR, a line naming the file and SimGrid's
 * complaint. */
int platform_probe(const char *xml, struct platform_probe *out, char **err);
void platform_probe_clear(struct platform_probe *pr);

/* Natural order of host names: runs of digits compare as numbers (h2
 * before h10), the rest byte by byte. */
int platform_name_cmp(const char *a, const char *b);

#endif
