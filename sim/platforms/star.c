/* sim/platforms/star.c: every host on its own link to one switch (a
 * SimGrid <cluster> without topology); the latency between two workers
 * is split over the two host links of their route. */
#include "generator.h"

#include <stdio.h>

static int star_hosts(const struct point *p) {
  return p->nodes + p->aggregators;
}

/* [platform] ingress_bandwidth: a <cluster>'s host link has one rate
 * both ways, so the star is written as a zone of its own: each host's
 * egress link (`bandwidth`) and ingress link to and from one router,
 * routed by Dijkstra over those one-way routes, each host's limiter
 * (host_stack) in both. Linux traffic control shapes a host's egress
 * (3LC's 10 Mbps, seeds/004 Section 5.1, "tc"), so a shaped host still
 * receives at its NIC's rate. */
static void star_write_oneway(FILE *f, const struct point *p, double lat_s) {
  int n = star_hosts(p);
  fprintf(f, "  <zone id=\"star\" routing=\"DijkstraCache\">\n");
  for (int i = 0; i < n; i++)
    fprintf(f, "    <host id=\"h%d\" speed=\"%df\"/>\n", i, PLATFORM_SPEED);
  fprintf(f, "    <router id=\"switch\"/>\n");
  for (int i = 0; i < n; i++) {
    fprintf(f,
            "    <link id=\"h%d_out\" bandwidth=\"%.17gBps\" "
            "latency=\"%.17gs\"/>\n    <link id=\"h%d_in\" "
            "bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n",
            i, p->bandwidth_Bps, lat_s, i, p->ingress_Bps, lat_s);
    if (p->host_stack_Bps > 0)
      fprintf(f,
              "    <link id=\"h%d_stack\" bandwidth=\"%.17gBps\" "
              "latency=\"0s\"/>\n",
              i, p->host_stack_Bps);
  }
  for (int i = 0; i < n; i++) {
    char stack[64] = "";
    if (p->host_stack_Bps > 0)
      snprintf(stack, sizeof stack, "<link_ctn id=\"h%d_stack\"/>", i);
    fprintf(f,
            "    <route src=\"h%d\" dst=\"switch\" symmetrical=\"NO\">%s"
            "<link_ctn id=\"h%d_out\"/></route>\n    <route src=\"switch\" "
            "dst=\"h%d\" symmetrical=\"NO\"><link_ctn id=\"h%d_in\"/>%s"
            "</route>\n",
            i, stack, i, i, i, stack);
  }
  fprintf(f, "  </zone>\n");
}

static int star_write(FILE *f, const struct point *p, double link_lat_s,
                      char **err) {
  (void)err;
  if (p->ingress_Bps > 0)
    star_write_oneway(f, p, link_lat_s);
  else
    platform_write_cluster(f, p, star_hosts(p), link_lat_s, "");
  return 0;
}

const struct platform_gen platform_star = {
    .name = "star",
    .topology = TOPO_STAR,
    .flat = true,
    .host_count = star_hosts,
    .host_name = platform_cluster_host,
    .write = star_write,
    .host_stack = true,
    .ingress = true,
    .links = 2,
};
