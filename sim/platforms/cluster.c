/* sim/platforms/cluster.c: what the <cluster> topologies (star, fat-tree,
 * dragonfly, torus) share (generator.h). */
#include "generator.h"

/* [platform] host_stack: SimGrid's limiter link, one per host, shared
 * (one capacity for both ways) and in every route that starts or ends at
 * the host, so that its sends and receives together stay under the rate
 * while each way still has the link's. INCEPTIONN's hosts are the case
 * (seeds/000 around lines 1024-1037, 1424: a kernel network stack, "the
 * network stack overhead", and a NIC driver that reaches ~2.1 Gb of 10). */
void platform_write_cluster(FILE *f, const struct point *p, int hosts,
                            double lat_s, const char *topo_attrs) {
  char limiter[64] = "";
  if (p->host_stack_Bps > 0)
    snprintf(limiter, sizeof limiter, " limiter_link=\"%.17gBps\"",
             p->host_stack_Bps);
  fprintf(f,
          "  <cluster id=\"" PLATFORM_CLUSTER_ID "\" prefix=\""
          PLATFORM_CLUSTER_PREFIX "\" suffix=\"\" "
          "radical=\"0-%d\" speed=\"%df\" bw=\"%.17gBps\" lat=\"%.17gs\" "
          "sharing_policy=\"SPLITDUPLEX\"%s%s/>\n",
          hosts - 1, PLATFORM_SPEED, p->bandwidth_Bps, lat_s, limiter,
          topo_attrs);
}

void platform_cluster_host(const struct point *p, int i, char *name,
                           size_t len) {
  (void)p;
  snprintf(name, len, PLATFORM_CLUSTER_PREFIX "%d", i);
}
