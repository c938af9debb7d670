/* sim/collectives/registry.c: the one list of collectives. */
#include "../sim.h"

#include <string.h>

extern const struct collective coll_ring, coll_nccl_ring, coll_inceptionn,
    coll_rdb,
    coll_rabenseifner, coll_allgather, coll_ps, coll_ps_shared,
    coll_hierarchical, coll_csc;

static const struct collective *const registry[] = {
    &coll_ring,      &coll_nccl_ring, &coll_inceptionn, &coll_rdb,
    &coll_rabenseifner, &coll_allgather, &coll_ps,
    &coll_ps_shared, &coll_hierarchical, &coll_csc,
};

const struct collective *coll_find(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    if (!strcmp(registry[i]->name, name))
      return registry[i];
  return NULL;
}

char *coll_names(void) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", registry[i]->name);
  return g_string_free(s, FALSE);
}
