/* sim/platforms/dragonfly.c: the Cray Cascade shape (SimGrid's DRAGONFLY
 * cluster): N hosts per router, 4 routers per chassis, 4 chassis per
 * group, as many groups as needed, one link between each pair of routers
 * and groups. The latency is spread over the longest route after
 * loading. */
#include "generator.h"

static int dragonfly_write(FILE *f, const struct point *p, char **err) {
  (void)err;
  int h = p->nodes + p->aggregators;
  int n = p->group_size, routers = 4, chassis = 4;
  int groups = (h + n * routers * chassis - 1) / (n * routers * chassis);
  groups = groups < 1 ? 1 : groups;
  char attrs[160];
  snprintf(attrs, sizeof attrs,
           " topology=\"DRAGONFLY\" topo_parameters=\"%d,1;%d,1;%d,1;%d\"",
           groups, chassis, routers, n);
  platform_write_cluster(f, p, groups * chassis * routers * n, 0, attrs);
  return 0;
}

const struct platform_gen platform_dragonfly = {
    .name = "dragonfly",
    .write = dragonfly_write,
    .host_name = platform_cluster_host,
    .loaded = platform_spread_latency,
};
