/* sim/platforms/cluster.c: what the <cluster> topologies (star, fat-tree,
 * dragonfly) share (generator.h). */
#include "generator.h"

#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(gs_platform, gradsim, "platforms");

void platform_write_cluster(FILE *f, const struct point *p, int hosts,
                            double lat_s, const char *topo_attrs) {
  fprintf(f,
          "  <cluster id=\"cluster\" prefix=\"h\" suffix=\"\" "
          "radical=\"0-%d\" speed=\"%df\" bw=\"%.17gBps\" lat=\"%.17gs\" "
          "sharing_policy=\"SPLITDUPLEX\"%s/>\n",
          hosts - 1, PLATFORM_SPEED, p->bandwidth_Bps, lat_s, topo_attrs);
}

void platform_cluster_host(const struct point *p, bool aggregator, int i,
                           char *name, size_t len) {
  snprintf(name, len, "h%d", aggregator ? p->nodes + i : i);
}

void platform_spread_latency(const struct point *p) {
  sg_host_t *all = sg_host_list();
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(all[0], all[sg_host_count() - 1], route);
  unsigned long len = xbt_dynar_length(route);
  xbt_dynar_free(&route);
  xbt_free(all);
  if (len == 0)
    return;
  double lat = p->latency_s / (double)len;
  sg_link_t *links = sg_link_list();
  for (size_t i = 0; i < sg_link_count(); i++)
    sg_link_set_latency(links[i], lat);
  xbt_free(links);
  XBT_VERB("latency %g s over %lu links of the longest route", p->latency_s,
           len);
}
