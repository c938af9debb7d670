/* sim/platforms/torus.c: a torus (SimGrid's TORUS cluster: every host a
 * node of a 1-, 2- or 3-D torus, linked to its two neighbours along each
 * axis, routed dimension by dimension), `torus_dims` hosts along each
 * axis; without them a 2-D torus as square as the hosts allow. The
 * latency is spread over the links of the longest route. */
#include "generator.h"

#include <math.h>

/* The dimensions of P's torus (a 0 ends them). */
static void dims_of(const struct point *p, int d[3]) {
  if (p->torus_dims[0] > 0) {
    for (int i = 0; i < 3; i++)
      d[i] = p->torus_dims[i];
    return;
  }
  int h = p->nodes + p->aggregators;
  int x = (int)ceil(sqrt((double)h));
  d[0] = x;
  d[1] = (h + x - 1) / x;
  d[2] = 0;
}

static int torus_hosts(const struct point *p) {
  int d[3], n = 1;
  dims_of(p, d);
  for (int i = 0; i < 3 && d[i] > 0; i++)
    n *= d[i];
  return n;
}

static int torus_write(FILE *f, const struct point *p, double link_lat_s,
                       char **err) {
  (void)err;
  int d[3];
  dims_of(p, d);
  char attrs[160];
  if (d[1] <= 0)
    snprintf(attrs, sizeof attrs, " topology=\"TORUS\" topo_parameters=\"%d\"",
             d[0]);
  else if (d[2] <= 0)
    snprintf(attrs, sizeof attrs,
             " topology=\"TORUS\" topo_parameters=\"%d,%d\"", d[0], d[1]);
  else
    snprintf(attrs, sizeof attrs,
             " topology=\"TORUS\" topo_parameters=\"%d,%d,%d\"", d[0], d[1],
             d[2]);
  platform_write_cluster(f, p, torus_hosts(p), link_lat_s, attrs);
  return 0;
}

const struct platform_gen platform_torus = {
    .name = "torus",
    .topology = TOPO_TORUS,
    .host_count = torus_hosts,
    .host_name = platform_cluster_host,
    .write = torus_write,
    .host_stack = true,
    .links = 0,
};
