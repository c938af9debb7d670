/* sim/platforms/dragonfly.c: the Cray Cascade shape (SimGrid's DRAGONFLY
 * cluster): N hosts per router, 4 routers per chassis, 4 chassis per
 * group, as many groups as needed, one link between each pair of routers
 * and groups. The latency is spread over the links of the longest
 * route. */
#include "generator.h"

enum { ROUTERS = 4, CHASSIS = 4 };

static int groups_of(const struct point *p) {
  int h = p->nodes + p->aggregators, per = p->group_size * ROUTERS * CHASSIS;
  int groups = (h + per - 1) / per;
  return groups < 1 ? 1 : groups;
}

static int dragonfly_hosts(const struct point *p) {
  return groups_of(p) * CHASSIS * ROUTERS * p->group_size;
}

static int dragonfly_write(FILE *f, const struct point *p, double link_lat_s,
                           char **err) {
  (void)err;
  char attrs[160];
  snprintf(attrs, sizeof attrs,
           " topology=\"DRAGONFLY\" topo_parameters=\"%d,1;%d,1;%d,1;%d\"",
           groups_of(p), CHASSIS, ROUTERS, p->group_size);
  platform_write_cluster(f, p, dragonfly_hosts(p), link_lat_s, attrs);
  return 0;
}

const struct platform_gen platform_dragonfly = {
    .name = "dragonfly",
    .topology = TOPO_DRAGONFLY,
    .host_count = dragonfly_hosts,
    .host_name = platform_cluster_host,
    .write = dragonfly_write,
    /* No host_stack: SimGrid's DRAGONFLY cluster gives every router a
     * limiter at that rate too, in every route through it
     * (DragonflyZone::generate_routers), a router's traffic throttled to
     * one host's stack. */
    .host_stack = false,
    .links = 0,
};
