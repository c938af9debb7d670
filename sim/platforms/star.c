/* sim/platforms/star.c: every host on its own link to one switch (a
 * SimGrid <cluster> without topology); the latency between two workers
 * is split over the two host links of their route. */
#include "generator.h"

static int star_hosts(const struct point *p) {
  return p->nodes + p->aggregators;
}

static int star_write(FILE *f, const struct point *p, double link_lat_s,
                      char **err) {
  (void)err;
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
    .links = 2,
};
