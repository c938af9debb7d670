/* sim/collectives/hierarchical.c: GradientFlow's hierarchical allreduce
 * (seeds/003 Section 2.4, Fig. 7b): the N = p/G groups of G workers (the
 * GPUs of a machine) each reduce to their master (a ring reduce-scatter,
 * then the reduced blocks gathered at the master), the masters run a
 * ring allreduce, and each master broadcasts down a binomial tree in its
 * group. */
#include "common.h"

#include <simgrid/comm.h>

static int group_size(const struct point *p) {
  if (p->group > 0)
    return p->group;
  return topology_node_size(p);
}

/* Before anything runs (run_check). */
static int hier_check(const struct point *p, char *err, size_t errlen) {
  int g = group_size(p);
  if (g <= 0) {
    snprintf(err, errlen,
             "[exchange] algorithm = hierarchical needs [exchange] group = "
             "workers per node (on gpu-cluster and nvswitch it defaults to gpus_per_node)");
    return -1;
  }
  if (p->nodes % g) {
    snprintf(err, errlen,
             "[exchange] group = %d must divide [platform] nodes = %d", g,
             p->nodes);
    return -1;
  }
  return 0;
}

static void hier_worker(struct coll_call *c) {
  struct sim *s = c->sim;
  int g = group_size(s->p), p = s->nworkers, nodes = p / g;
  int node = c->rank / g, local = c->rank % g;
  uint64_t n = c->v->n;
  int *grp = g_new(int, g);
  for (int i = 0; i < g; i++)
    grp[i] = node * g + i;
  /* 1. Reduce to the master: reduce-scatter, then gather the blocks. */
  if (g > 1) {
    ring_reduce_scatter(c, grp, g, local, 0, n);
    int mine = (local + 1) % g;
    if (local != 0) {
      struct msg *m = sim_pack(c, c->v, block_lo(0, n, g, mine),
                               block_lo(0, n, g, mine + 1), NULL);
      sim_wait_send(c, sim_send(c, grp[0], m));
    } else {
      /* The master takes the other g - 1 blocks at once. */
      struct msg **ms = g_new(struct msg *, g - 1);
      sim_recv_all(c, grp + 1, g - 1, ms);
      for (int i = 1; i < g; i++) {
        int b = (i + 1) % g;
        sim_unpack(c, ms[i - 1], c->v, block_lo(0, n, g, b),
                   block_lo(0, n, g, b + 1), false);
        msg_free(ms[i - 1]);
      }
      g_free(ms);
    }
  }
  /* 2. Ring allreduce across the masters. */
  if (local == 0 && nodes > 1) {
    int *masters = g_new(int, nodes);
    for (int i = 0; i < nodes; i++)
      masters[i] = i * g;
    ring_allreduce(c, masters, nodes, node, 0, n, RING_ENCODE_ONCE, false);
    g_free(masters);
  }
  /* 3. Broadcast inside the group. */
  if (g > 1)
    tree_broadcast(c, grp, g, local, 0, n, NULL);
  g_free(grp);
}

static void hier_formula(const struct sim *s, struct formula_in *in) {
  in->v[FP_GROUP] = group_size(s->p);
  struct node_net nn = topology_node_net(s->p);
  in->v[FP_ALPHA_IN] = nn.size ? nn.alpha_in : s->p->latency_s;
  in->v[FP_BETA_IN] = nn.size ? nn.beta_in : 1.0 / s->p->bandwidth_Bps;
  if (nn.size) {
    in->v[FP_ALPHA] = nn.alpha;
    in->v[FP_BETA] = nn.beta;
  }
}

const struct collective coll_hierarchical = {
    .name = "hierarchical",
    .description = "reduce inside each group of G workers, ring across the "
                   "groups' masters, broadcast inside (GradientFlow Fig. 7b)",
    .formula = "hierarchical",
    .check_point = hier_check,
    .worker = hier_worker,
    .formula_params = hier_formula,
    .formula_nodes = "hierarchical",
    /* the group's vectors at its master: 15 */
    .oracle_value_bytes = 16,
    .ring_legs = true,
};
