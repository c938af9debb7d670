/* sim/collectives/registry.c: the one list of collectives. */
#include "../sim.h"

#include <string.h>

extern const struct collective coll_ring, coll_nccl_ring, coll_inceptionn,
    coll_rdb,
    coll_rabenseifner, coll_allgather, coll_ps, coll_ps_shared,
    coll_hierarchical, coll_csc, coll_nccl, coll_nccl_tree, coll_nccl_rail;

static const struct collective *const registry[] = {
    &coll_ring,      &coll_nccl_ring, &coll_inceptionn, &coll_rdb,
    &coll_rabenseifner, &coll_allgather, &coll_ps,
    &coll_ps_shared, &coll_hierarchical, &coll_csc, &coll_nccl,
    &coll_nccl_tree, &coll_nccl_rail,
};

/* Collectives a test program adds (tests/faulty.c: one that loses a
 * block, which the oracle must catch), NULL-terminated: found by name,
 * never listed. A weak reference, absent in gradsim itself. */
extern const struct collective *const coll_registry_extra[]
    __attribute__((weak));

const struct collective *coll_find(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    if (!strcmp(registry[i]->name, name))
      return registry[i];
  for (size_t i = 0; coll_registry_extra && coll_registry_extra[i]; i++)
    if (!strcmp(coll_registry_extra[i]->name, name))
      return coll_registry_extra[i];
  return NULL;
}

bool collective_shares_pull(const char *algorithm) {
  const struct collective *c = coll_find(algorithm);
  return c && c->shared_pull;
}

size_t coll_count(void) { return G_N_ELEMENTS(registry); }

const struct collective *coll_at(size_t i) {
  return i < G_N_ELEMENTS(registry) ? registry[i] : NULL;
}

char *coll_names(void) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(registry); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", registry[i]->name);
  return g_string_free(s, FALSE);
}
