/* sim/platforms/cluster.c: what the <cluster> topologies (star, fat-tree,
 * dragonfly, torus) share (generator.h). */
#include "generator.h"

void platform_write_cluster(FILE *f, const struct point *p, int hosts,
                            double lat_s, const char *topo_attrs) {
  fprintf(f,
          "  <cluster id=\"cluster\" prefix=\"h\" suffix=\"\" "
          "radical=\"0-%d\" speed=\"%df\" bw=\"%.17gBps\" lat=\"%.17gs\" "
          "sharing_policy=\"SPLITDUPLEX\"%s/>\n",
          hosts - 1, PLATFORM_SPEED, p->bandwidth_Bps, lat_s, topo_attrs);
}

void platform_cluster_host(const struct point *p, int i, char *name,
                           size_t len) {
  (void)p;
  snprintf(name, len, "h%d", i);
}
