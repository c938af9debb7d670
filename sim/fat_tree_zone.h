/* sim/fat_tree_zone.h: the generated two-level fat tree built in SimGrid
 * directly (fat_tree_zone.cpp), in time linear in its size. */
#ifndef GRADSIM_SIM_FAT_TREE_ZONE_H
#define GRADSIM_SIM_FAT_TREE_ZONE_H

#ifdef __cplusplus
extern "C" {
#endif

/* What <cluster id="CLUSTER" prefix="PREFIX" radical="0-(LEAF x LEAVES -
 * 1)" speed bw lat sharing_policy="SPLITDUPLEX" [limiter_link]
 * topology="FAT_TREE" topo_parameters="2;LEAF,LEAVES;1,UP;1,1"> says. */
struct sim_fat_tree {
  const char *cluster, *prefix;
  int leaf, leaves, up;
  double speed_flops, bandwidth_Bps, latency_s;
  double limiter_Bps; /* 0: no limiter links */
};

/* Build T as SimGrid's root zone, in place of simgrid_load_platform of
 * its <cluster>: the same hosts, links, names and routes. After
 * simgrid_init, once per process. */
void sim_fat_tree_build(const struct sim_fat_tree *t);

#ifdef __cplusplus
}
#endif
#endif
