/* sim/platforms/registry.c: the one list of platform generators, by the
 * [platform] topology that names them, and what the engine asks of a
 * topology (engine.h, sim.h). */
#include "generator.h"

#include <string.h>

extern const struct platform_gen platform_star, platform_fat_tree,
    platform_dragonfly, platform_gpu_cluster, platform_torus,
    platform_nvswitch;

static const struct platform_gen *const registry[] = {
    &platform_star,  &platform_fat_tree, &platform_dragonfly,
    &platform_gpu_cluster, &platform_torus, &platform_nvswitch,
};

static const struct platform_gen *gen_of(enum topology t) {
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    if (registry[i]->topology == t)
      return registry[i];
  return NULL;
}

const struct platform_gen *platform_gen_of(const struct point *p) {
  return gen_of(p->topology);
}

const char *topology_name(enum topology t) {
  const struct platform_gen *g = gen_of(t);
  return g ? g->name : "file";
}

int topology_find(const char *name, enum topology *out) {
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    if (!strcmp(registry[i]->name, name)) {
      *out = registry[i]->topology;
      return 0;
    }
  return -1;
}

char *topology_names(void) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", registry[i]->name);
  return g_string_free(s, FALSE);
}

/* [platform] KEY, which applies to WHERE only, set for G's topology (NULL:
 * a platform file, where FILE_HINT says how to have it). */
static int not_here(const struct platform_gen *g, const char *key,
                    const char *where, const char *file_hint, char *err,
                    size_t errlen) {
  snprintf(err, errlen, "[platform] %s applies to %s, not to %s%s%s%s", key,
           where, g ? g->name : "a platform file", g ? "" : " (",
           g ? "" : file_hint, g ? "" : ")");
  return -1;
}

int topology_check(const struct point *p, char *err, size_t errlen) {
  const struct platform_gen *g = platform_gen_of(p);
  if (p->host_stack_Bps > 0 && !(g && g->host_stack))
    return not_here(g, "host_stack",
                    "the star, fat-tree and torus topologies",
                    "give its hosts a shared limiter link there", err,
                    errlen);
  if (p->ingress_Bps > 0 && !(g && g->ingress))
    return not_here(g, "ingress_bandwidth", "the star topology",
                    "give its hosts separate links each way there", err,
                    errlen);
  if (p->sharp && !(g && g->sharp))
    return not_here(g, "sharp = true",
                    "the nvswitch topology (machines on "
                    "an InfiniBand fabric of rails or a fat tree)",
                    "SHARP's switches are not described there", err, errlen);
  return g && g->check ? g->check(p, err, errlen) : 0;
}

struct node_net topology_node_net(const struct point *p) {
  struct node_net n = {0};
  const struct platform_gen *g = platform_gen_of(p);
  if (g && g->node_net)
    g->node_net(p, &n);
  return n;
}

int topology_node_size(const struct point *p) {
  return topology_node_net(p).size;
}

double topology_route_bytes(const struct point *p) {
  const struct platform_gen *g = platform_gen_of(p);
  return g && g->route_bytes ? g->route_bytes(p) : 0;
}

bool topology_flat(const struct point *p) {
  const struct platform_gen *g = platform_gen_of(p);
  /* A host stack or a slower way in or out is not the formulas' network
   * of one bandwidth between any two workers. */
  return g && g->flat && !(p->host_stack_Bps > 0) && !(p->ingress_Bps > 0);
}
