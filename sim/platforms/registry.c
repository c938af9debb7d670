/* sim/platforms/registry.c: the one list of platform generators, by the
 * [platform] topology that names them. */
#include "generator.h"

extern const struct platform_gen platform_star, platform_fat_tree,
    platform_dragonfly, platform_gpu_cluster, platform_torus;

const struct platform_gen *platform_gen_of(const struct point *p) {
  switch (p->topology) {
  case TOPO_STAR:
    return &platform_star;
  case TOPO_FAT_TREE:
    return &platform_fat_tree;
  case TOPO_DRAGONFLY:
    return &platform_dragonfly;
  case TOPO_GPU:
    return &platform_gpu_cluster;
  case TOPO_TORUS:
    return &platform_torus;
  case TOPO_FILE:
    return NULL;
  }
  return NULL;
}
