/* sim/platforms/fat_tree.c: a two-level fat tree (SimGrid's FAT_TREE
 * cluster): leaf switches of `leaf` hosts, each with U uplinks (one per
 * spine) so that its down/up capacity ratio is the oversubscription;
 * every spine reaches every leaf. The latency is spread over the links of
 * the longest route. */
#include "generator.h"

#include "../fat_tree_zone.h"

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

/* Uplinks per leaf: one per spine. */
static int spines(const struct point *p, int leaf) {
  int up = (int)lround(leaf / p->oversubscription);
  return up < 1 ? 1 : up;
}

static int fat_tree_write(FILE *f, const struct point *p, double link_lat_s,
                          char **err) {
  if (p->host_stack_Bps > 0) {
    *err = g_strdup(
        "[platform] host_stack on a fat tree has no platform file: "
        "SimGrid's <cluster topology=\"FAT_TREE\" limiter_link> would "
        "limit every switch to one host's stack as well (gradsim's run "
        "builds it with the hosts' limiters only)");
    return -1;
  }
  int leaf, leaves;
  shape(p, &leaf, &leaves);
  int up = spines(p, leaf);
  char attrs[160];
  snprintf(attrs, sizeof attrs,
           " topology=\"FAT_TREE\" topo_parameters=\"2;%d,%d;1,%d;1,1\"",
           leaf, leaves, up);
  platform_write_cluster(f, p, leaf * leaves, link_lat_s, attrs);
  return 0;
}

/* What fat_tree_write's <cluster> describes (platform_write_cluster's
 * attributes), built by fat_tree_zone.cpp: SimGrid's own FatTreeZone
 * takes a minute to build 65,536 hosts. With host_stack, limiters on the
 * hosts only (fat_tree_zone.cpp says why). */
static void fat_tree_build(const struct point *p, double link_lat_s) {
  int leaf, leaves;
  shape(p, &leaf, &leaves);
  struct sim_fat_tree t = {
      .cluster = PLATFORM_CLUSTER_ID,
      .prefix = PLATFORM_CLUSTER_PREFIX,
      .leaf = leaf,
      .leaves = leaves,
      .up = spines(p, leaf),
      .speed_flops = PLATFORM_SPEED,
      .bandwidth_Bps = p->bandwidth_Bps,
      .latency_s = link_lat_s,
      .limiter_Bps = p->host_stack_Bps > 0 ? p->host_stack_Bps : 0,
  };
  sim_fat_tree_build(&t);
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
    .build = fat_tree_build,
    .host_stack = true,
    .links = 0,
    .links_of = fat_tree_links,
};
