/* sim/platforms/fat_tree.c: a two-level fat tree (SimGrid's FAT_TREE
 * cluster): leaf switches of `leaf` hosts, each with U uplinks (one per
 * spine) so that its down/up capacity ratio is the oversubscription;
 * every spine reaches every leaf. The latency is spread over the longest
 * route after loading. */
#include "generator.h"

#include <math.h>

static int fat_tree_write(FILE *f, const struct point *p, char **err) {
  (void)err;
  int h = p->nodes + p->aggregators;
  int leaf = p->leaf < h ? p->leaf : h;
  int leaves = (h + leaf - 1) / leaf;
  int up = (int)lround(leaf / p->oversubscription);
  up = up < 1 ? 1 : up;
  char attrs[160];
  snprintf(attrs, sizeof attrs,
           " topology=\"FAT_TREE\" topo_parameters=\"2;%d,%d;1,%d;1,1\"",
           leaf, leaves, up);
  platform_write_cluster(f, p, leaf * leaves, 0, attrs);
  return 0;
}

const struct platform_gen platform_fat_tree = {
    .name = "fat-tree",
    .write = fat_tree_write,
    .host_name = platform_cluster_host,
    .loaded = platform_spread_latency,
};
