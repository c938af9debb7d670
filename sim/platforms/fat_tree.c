/* sim/platforms/fat_tree.c: a two-level fat tree (SimGrid's FAT_TREE
 * cluster): leaf switches of `leaf` hosts, each with U uplinks (one per
 * spine) so that its down/up capacity ratio is the oversubscription;
 * every spine reaches every leaf. The latency is spread over the links of
 * the longest route. */
#include "generator.h"

#include <math.h>

/* Hosts per leaf and leaves. */
static void shape(const struct point *p, int *leaf, int *leaves) {
  int h = p->nodes + p->aggregators;
  *leaf = p->leaf < h ? p->leaf : h;
  *leaves = (h + *leaf - 1) / *leaf;
}

static int fat_tree_hosts(const struct point *p) {
  int leaf, leaves;
  shape(p, &leaf, &leaves);
  return leaf * leaves;
}

static int fat_tree_write(FILE *f, const struct point *p, double link_lat_s,
                          char **err) {
  (void)err;
  int leaf, leaves;
  shape(p, &leaf, &leaves);
  int up = (int)lround(leaf / p->oversubscription);
  up = up < 1 ? 1 : up;
  char attrs[160];
  snprintf(attrs, sizeof attrs,
           " topology=\"FAT_TREE\" topo_parameters=\"2;%d,%d;1,%d;1,1\"",
           leaf, leaves, up);
  platform_write_cluster(f, p, leaf * leaves, link_lat_s, attrs);
  return 0;
}

/* SimGrid's FAT_TREE routes up to the nearest common ancestor and down:
 * host, leaf and back on one leaf (2 links), through a spine otherwise
 * (4). Checked against SimGrid's routes (test fat_tree/links_of). */
static int fat_tree_links(const struct point *p) {
  int leaf, leaves;
  shape(p, &leaf, &leaves);
  return leaves > 1 ? 4 : 2;
}

const struct platform_gen platform_fat_tree = {
    .name = "fat-tree",
    .topology = TOPO_FAT_TREE,
    .host_count = fat_tree_hosts,
    .host_name = platform_cluster_host,
    .write = fat_tree_write,
    .host_stack = true,
    .links = 0,
    .links_of = fat_tree_links,
};
