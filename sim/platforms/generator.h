/* sim/platforms/generator.h: a platform generator: the SimGrid platform
 * XML of a [platform] topology, and the names of the hosts that workers
 * and aggregators take on it. One file per generator, one registry
 * (registry.c); platform.c dispatches to them. */
#ifndef GRADSIM_SIM_PLATFORMS_GENERATOR_H
#define GRADSIM_SIM_PLATFORMS_GENERATOR_H

#include "../platform.h"

#include <stdio.h>

struct platform_gen {
  const char *name;
  /* Write the platform's zones, hosts and links (between <platform> and
   * </platform>) for P into F; -1 with *ERR when P cannot be built. */
  int (*write)(FILE *f, const struct point *p, char **err);
  /* Worker I's host (AGGREGATOR: aggregator I's) into NAME. */
  void (*host_name)(const struct point *p, bool aggregator, int i,
                    char *name, size_t len);
  /* After SimGrid loaded the platform: what the XML could not say (may
   * be NULL). */
  void (*loaded)(const struct point *p);
};

/* The generator of P's topology (NULL for topology = file). */
const struct platform_gen *platform_gen_of(const struct point *p);

/* The <cluster> of hosts h0..h(HOSTS-1) (workers first), split-duplex
 * links of P's bandwidth and latency LAT_S, with TOPO_ATTRS (topology and
 * topo_parameters attributes, or ""). Shared by the cluster topologies. */
void platform_write_cluster(FILE *f, const struct point *p, int hosts,
                            double lat_s, const char *topo_attrs);
/* Host names h<I> of the cluster topologies: workers, then aggregators. */
void platform_cluster_host(const struct point *p, bool aggregator, int i,
                           char *name, size_t len);
/* Spread `latency` over the links of the longest route of a generated
 * multi-hop topology: every link gets latency / L, where L is the number
 * of links from the first host to the last. */
void platform_spread_latency(const struct point *p);

#endif
