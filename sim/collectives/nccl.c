/* sim/collectives/nccl.c: NCCL's allreduce algorithms, as NCCL runs them
 * on machines of G GPUs with K NICs (README, "NCCL's algorithms"; read
 * in NVIDIA/nccl: src/graph/rings.cc, trees.cc, connect.cc, tuning.cc,
 * src/device/all_reduce.h, src/enqueue.cc):
 *
 * - nccl-ring: C rings ("channels") at once, each over its share of the
 *   buffer, in p balanced blocks (every value takes the ring: NCCL's
 *   split, also GradientFlow's and INCEPTIONN's). Ring c is node-aware:
 *   it visits each machine's GPUs in a row over NVLink, and with one NIC
 *   per machine it runs in rank order. With several, each step between
 *   machines stays on one rail: ring c enters a machine at a GPU of rail
 *   c mod K and leaves it from the GPU whose counterpart is the next
 *   machine's entry (alternating between two GPUs of the rail where it has
 *   two, else between rails c and c + 1 mod K; a third GPU closes an odd
 *   count of machines). NCCL instead enters and leaves every machine
 *   through rail c, the last GPU handing its data over NVLink to the
 *   rail's GPU (PXN); both put one channel on each NIC each way. gradsim
 *   keeps NVLink for steps inside machines because SimGrid shares a link
 *   between flows in inverse proportion to their latency: a PXN step
 *   (network and NVLink latency) would get a small share of the NVLinks
 *   the other channels' steps use, which NVLink's round-robin arbitration
 *   does not do. One channel on a flat topology is the balanced ring in
 *   rank order.
 * - nccl-tree: 2C trees: per channel NCCL's binary tree over the
 *   machines (ncclGetBtree) and its mirror, or its shift by one for an
 *   odd count (ncclGetDtree), each carrying half the channel's share; in
 *   each machine a chain of its GPUs from the channel's rail GPU, the
 *   machine's head. Reduce up and broadcast down at once, pipelined in
 *   chunks of tree_chunk bytes (NCCL's Simple protocol moves a step of
 *   its 4 MiB buffer's eight, 512 KiB, per tree step). Each GPU handles
 *   its up-chunk (R - d) W steps and its down-chunk (R + d) W steps after
 *   the first (d its depth, R the deepest, W = TREE_WINDOW), so that every
 *   message is taken W steps after it is sent, its receive posted when it
 *   is (W chunks in flight on every edge, as NCCL's FIFOs hold several);
 *   a GPU waits for its sends W steps later.
 * - nccl-rail: a ring reduce-scatter inside each machine, a ring
 *   allreduce of each GPU's block with the GPUs of its index in the other
 *   machines (its rail), a ring allgather inside.
 * - nccl: the tuner, per bucket the cheaper of nccl-ring and nccl-tree by
 *   their formulas (formula.h) on the point's network, as NCCL's tuner
 *   takes the least of its own cost model.
 *
 * Where gradsim departs from NCCL (README): one protocol (Simple's
 * whole-chunk steps; no LL or LL128), no NVLS or CollNet, channels from
 * the key rather than NCCL's search, and steps as gradsim's messages (a
 * step's latency and its bytes at the links' rates). With a codec the
 * reduce legs decode, sum and re-encode every hop; the gathering and
 * broadcasting legs forward the bytes encoded once. */
#include "common.h"

#include <math.h>
#include <simgrid/comm.h>

/* Machines and channels of a point. */
struct geo {
  int p;     /* workers */
  int g;     /* GPUs per machine */
  int nodes; /* machines */
  int nics;  /* NICs per machine */
  int nc;    /* channels */
};

static struct geo geo_of(const struct sim *s) {
  struct node_net nn = topology_node_net(s->p);
  struct geo g = {.p = s->nworkers};
  g.g = nn.size > 0 ? nn.size : s->p->group > 0 ? s->p->group : 1;
  g.nics = nn.size > 0 ? nn.nics : 1;
  g.nodes = g.p / g.g;
  g.nc = s->p->channels > 0 ? s->p->channels : g.nodes > 1 ? g.nics : 1;
  return g;
}

static int nccl_check(const struct sim *s, char *err, size_t errlen) {
  struct geo g = geo_of(s);
  if (g.p % g.g) {
    snprintf(err, errlen,
             "[exchange] group = %d must divide [platform] nodes = %d",
             g.g, g.p);
    return -1;
  }
  return 0;
}

/* The first GPU (local index) of channel C's rail, C mod K. */
static int rail_first(const struct geo *g, int c) {
  return (c % g->nics) * (g->g / g->nics);
}

/* The GPU of machine N at position I of channel C's order there (entry
 * at its rail's first GPU). */
static int chan_rank(const struct geo *g, int c, int n, int i) {
  return n * g->g + (rail_first(g, c) + i) % g->g;
}

/* RANK's position in channel C's order inside its machine. */
static int chan_pos(const struct geo *g, int c, int rank) {
  return (rank % g->g - rail_first(g, c) + g->g) % g->g;
}

/* ---- rings --------------------------------------------------------- */

/* Rings stay on one rail between machines (machines of several GPUs and
 * NICs, more than one machine); otherwise each is a cycle through the
 * machine from its entry. */
static bool railed(const struct geo *g) {
  return g->nics > 1 && g->g > 1 && g->nodes > 1;
}

/* The offset of machine N's entry GPU from its channel's first. */
static int entry_shift(const struct geo *g, int n) {
  if (!railed(g))
    return 0;
  if (n == g->nodes - 1 && g->nodes % 2 && g->g >= 3)
    return 2;
  return n % 2;
}

/* Channel C's entry and exit GPUs (local indices) in machine N. */
static int ring_entry(const struct geo *g, int c, int n) {
  return (rail_first(g, c) + entry_shift(g, n)) % g->g;
}
static int ring_exit(const struct geo *g, int c, int n) {
  int e = ring_entry(g, c, n);
  if (!railed(g))
    return (e + g->g - 1) % g->g;
  int x = ring_entry(g, c, (n + 1) % g->nodes);
  /* Two GPUs and an odd count of machines: the last step changes rail. */
  return x == e ? (e + 1) % g->g : x;
}

/* The machine's GPUs in ring order: entry E first, exit X last, the
 * others in between from E + 1 on. Position of local index J, and the
 * local index at position I. */
static int path_pos(int gn, int e, int x, int j) {
  if (j == e)
    return 0;
  if (j == x)
    return gn - 1;
  int t = (j - e + gn) % gn;
  return t < (x - e + gn) % gn ? t : t - 1;
}
static int path_at(int gn, int e, int x, int i) {
  if (i == 0)
    return e;
  if (i == gn - 1)
    return x;
  int t = i < (x - e + gn) % gn ? i : i + 1;
  return (e + t) % gn;
}

static void ring_worker(struct coll_call *c) {
  struct geo g = geo_of(c->sim);
  uint64_t n = c->v->n;
  int nc = g.nc, node = c->rank / g.g, j = c->rank % g.g, gn = g.g;
  int after = (node + 1) % g.nodes, before = (node + g.nodes - 1) % g.nodes;
  struct ring_chan ch[RING_CHANNELS_MAX];
  for (int k = 0; k < nc; k++) {
    int e = ring_entry(&g, k, node), x = ring_exit(&g, k, node);
    int i = path_pos(gn, e, x, j);
    int next = i < gn - 1 ? node * gn + path_at(gn, e, x, i + 1)
                          : after * gn + ring_entry(&g, k, after);
    int prev = i > 0 ? node * gn + path_at(gn, e, x, i - 1)
                     : before * gn + ring_exit(&g, k, before);
    ch[k] = (struct ring_chan){block_lo(0, n, nc, k),
                               block_lo(0, n, nc, k + 1), node * gn + i,
                               next, prev};
  }
  rings_allreduce(c, ch, nc, g.p, RING_ENCODE_ONCE, false);
}

/* ---- trees --------------------------------------------------------- */

/* NCCL's binary tree over M ranks rooted at 0 (trees.cc, ncclGetBtree):
 * the parent of R (-1 for the root) and its children (-1: none). */
static void btree(int m, int r, int *up, int *d0, int *d1) {
  int bit;
  for (bit = 1; bit < m; bit <<= 1)
    if (bit & r)
      break;
  if (r == 0) {
    *up = -1;
    *d0 = -1;
    *d1 = m > 1 ? bit >> 1 : -1;
    return;
  }
  *up = (r ^ bit) | (bit << 1);
  if (*up >= m)
    *up = r ^ bit;
  int low = bit >> 1;
  *d0 = low == 0 ? -1 : r - low;
  *d1 = low == 0 ? -1 : r + low;
  while (*d1 >= m) {
    *d1 = low == 0 ? -1 : r + low;
    low >>= 1;
  }
}

/* Tree T (0, or 1: the mirror for an even M, the shift by one for an odd
 * one; ncclGetDtree) over M machines: machine R's parent and children. */
static void dtree(int m, int t, int r, int *up, int *d0, int *d1) {
  if (t == 0) {
    btree(m, r, up, d0, d1);
    return;
  }
  if (m % 2) {
    btree(m, (r - 1 + m) % m, up, d0, d1);
    *up = *up < 0 ? -1 : (*up + 1) % m;
    *d0 = *d0 < 0 ? -1 : (*d0 + 1) % m;
    *d1 = *d1 < 0 ? -1 : (*d1 + 1) % m;
  } else {
    btree(m, m - 1 - r, up, d0, d1);
    *up = *up < 0 ? -1 : m - 1 - *up;
    *d0 = *d0 < 0 ? -1 : m - 1 - *d0;
    *d1 = *d1 < 0 ? -1 : m - 1 - *d1;
  }
}

/* The depth of machine R in tree T over M machines. */
static int machine_depth(int m, int t, int r) {
  int d = 0, up, d0, d1;
  for (dtree(m, t, r, &up, &d0, &d1); up >= 0; dtree(m, t, up, &up, &d0,
                                                      &d1))
    d++;
  return d;
}

/* One worker's place in one tree. */
struct tree_role {
  uint64_t lo, hi; /* the tree's share of the vector */
  uint64_t cv;     /* values per chunk */
  int m;           /* chunks */
  int up;          /* parent rank, -1 at the root */
  int kids[3], nkids;
  int depth;
  struct msg *down; /* the root's encoded chunk, passed down as is */
};

static void tree_role(const struct coll_call *c, const struct geo *g, int q,
                      struct tree_role *r) {
  uint64_t n = c->v->n;
  int ntrees = 2 * g->nc, chan = q % g->nc, t = q / g->nc;
  r->lo = block_lo(0, n, ntrees, q);
  r->hi = block_lo(0, n, ntrees, q + 1);
  double cv = floor(c->sim->p->tree_chunk / c->sim->p->grad_bytes);
  r->cv = cv < 1 ? 1 : (uint64_t)cv;
  r->m = (int)((r->hi - r->lo + r->cv - 1) / r->cv);
  int node = c->rank / g->g, i = chan_pos(g, chan, c->rank);
  r->nkids = 0;
  r->down = NULL;
  int up, d0, d1;
  dtree(g->nodes, t, node, &up, &d0, &d1);
  if (i > 0)
    r->up = chan_rank(g, chan, node, i - 1);
  else
    r->up = up < 0 ? -1 : chan_rank(g, chan, up, 0);
  if (i + 1 < g->g)
    r->kids[r->nkids++] = chan_rank(g, chan, node, i + 1);
  if (i == 0 && d0 >= 0)
    r->kids[r->nkids++] = chan_rank(g, chan, d0, 0);
  if (i == 0 && d1 >= 0)
    r->kids[r->nkids++] = chan_rank(g, chan, d1, 0);
  r->depth = machine_depth(g->nodes, t, node) + i;
}

/* Chunk J of tree R: [a, b). */
static void chunk_of(const struct tree_role *r, int j, uint64_t *a,
                     uint64_t *b) {
  *a = r->lo + (uint64_t)j * r->cv;
  *b = *a + r->cv < r->hi ? *a + r->cv : r->hi;
}

/* The deepest GPU of the 2C trees: G - 1 down the chain below the
 * deepest machine. In btree() a machine's parent has a lowest set bit at
 * least twice its own, or is the root; so no machine lies deeper than
 * machine 1, whose chain 1, 2, 4, ..., top (the largest power of two
 * below M), 0 has bit_length(M - 1) steps. dtree()'s second tree only
 * renames the machines. (Closed, because every worker asks it at every
 * bucket: the walk over all machines it replaces made a 16,384-worker
 * nccl-tree quadratic, 54 s for 4 MB; it agreed with that walk for every
 * M below 3,000.) */
static int tree_reach(const struct geo *g) {
  int deepest = 0;
  for (unsigned x = (unsigned)(g->nodes - 1); x; x >>= 1)
    deepest++;
  return deepest + g->g - 1;
}

/* Steps between a tree message's send and its receipt: chunks in flight
 * on an edge. Four cover a step's latency with the chunks behind it
 * (latency over a chunk's time is below three on NVLink and InfiniBand
 * here) and are few enough that SimGrid's fair sharing between an edge's
 * messages in flight, which NCCL's in-order FIFO of NCCL_STEPS = 8 slots
 * does not have, slows the first chunk of a wave little. */
#define TREE_WINDOW 4
/* At most three children and a parent in each tree. */
#define TREE_IN_MAX (2 * RING_CHANNELS_MAX * 4)

/* The messages of one step: where they come from, the receives posted
 * for them (TREE_WINDOW steps ahead), and the sends it posted. */
struct tree_slot {
  int n;
  int srcs[TREE_IN_MAX];
  struct msg *in[TREE_IN_MAX];
  sg_comm_t gets[TREE_IN_MAX];
  GPtrArray *sent;
};

/* Chunks of step S in tree R: the up-chunk (or -1) and the down-chunk
 * (or -1). */
static void tree_chunks(const struct tree_role *r, int reach, int s, int *ju,
                        int *jd) {
  *ju = s - (reach - r->depth) * TREE_WINDOW;
  *jd = s - (reach + r->depth) * TREE_WINDOW;
  if (*ju >= r->m)
    *ju = -1;
  if (*jd >= r->m)
    *jd = -1;
}

/* Post the receives of step S into SLOT, tree by tree: up from the
 * children, down from the parent (the order the senders post them). */
static void tree_post(struct coll_call *c, const struct tree_role *roles,
                      int nt, int reach, int s, struct tree_slot *slot) {
  slot->n = 0;
  for (int q = 0; q < nt; q++) {
    int ju, jd;
    tree_chunks(&roles[q], reach, s, &ju, &jd);
    if (ju >= 0)
      for (int k = 0; k < roles[q].nkids; k++)
        slot->srcs[slot->n++] = roles[q].kids[k];
    if (jd >= 0 && roles[q].up >= 0)
      slot->srcs[slot->n++] = roles[q].up;
  }
  sim_recv_post(c, slot->srcs, slot->n, slot->in, slot->gets);
}

/* Step S of every tree: its messages (received into SLOT) summed or
 * stored, the sends of step S - TREE_WINDOW (SLOT's) waited for, the
 * step's own posted. */
static void tree_step(struct coll_call *c, struct tree_role *roles, int nt,
                      int reach, int s, struct tree_slot *slot) {
  if (slot->n)
    sim_recv_wait(c, slot->gets, slot->n, slot->in);
  for (guint i = 0; i < slot->sent->len; i++)
    sim_wait_send(c, g_ptr_array_index(slot->sent, i));
  g_ptr_array_set_size(slot->sent, 0);
  int at = 0;
  uint64_t summed = 0;
  sim_batch_begin(c);
  for (int q = 0; q < nt; q++) {
    struct tree_role *r = &roles[q];
    int ju, jd;
    tree_chunks(r, reach, s, &ju, &jd);
    uint64_t a, b;
    if (ju >= 0) {
      chunk_of(r, ju, &a, &b);
      for (int k = 0; k < r->nkids; k++, at++) {
        sim_unpack(c, slot->in[at], c->v, a, b, true);
        msg_free(slot->in[at]);
        summed += b - a;
      }
      if (r->up >= 0)
        g_ptr_array_add(slot->sent, sim_send(c, r->up,
                                             sim_pack(c, c->v, a, b, NULL)));
    }
    if (jd >= 0) {
      chunk_of(r, jd, &a, &b);
      struct msg *got = NULL;
      if (r->up >= 0) {
        got = slot->in[at++];
        sim_unpack(c, got, c->v, a, b, false);
      } else if (c->sim->codec && r->nkids) {
        got = sim_pack(c, c->v, a, b, NULL); /* encoded once, at the root */
      }
      for (int k = 0; k < r->nkids; k++) {
        struct msg *out = got && c->sim->codec ? sim_forward(got)
                                               : sim_pack(c, c->v, a, b, NULL);
        g_ptr_array_add(slot->sent, sim_send(c, r->kids[k], out));
      }
      msg_free(got);
    }
  }
  sim_batch_end(c);
  sim_reduce(c->w, c->sim, summed);
}

static void tree_worker(struct coll_call *c) {
  struct geo g = geo_of(c->sim);
  int nt = 2 * g.nc, reach = tree_reach(&g), m = 0;
  struct tree_role roles[2 * RING_CHANNELS_MAX];
  for (int q = 0; q < nt; q++) {
    tree_role(c, &g, q, &roles[q]);
    m = roles[q].m > m ? roles[q].m : m;
  }
  int steps = m + 2 * reach * TREE_WINDOW;
  struct tree_slot *slots = g_new(struct tree_slot, TREE_WINDOW);
  for (int w = 0; w < TREE_WINDOW; w++) {
    slots[w].sent = g_ptr_array_new();
    slots[w].n = 0;
    if (w < steps)
      tree_post(c, roles, nt, reach, w, &slots[w]);
  }
  for (int s = 0; s < steps; s++) {
    struct tree_slot *slot = &slots[s % TREE_WINDOW];
    tree_step(c, roles, nt, reach, s, slot);
    if (s + TREE_WINDOW < steps)
      tree_post(c, roles, nt, reach, s + TREE_WINDOW, slot);
    else
      slot->n = 0;
  }
  for (int w = 0; w < TREE_WINDOW; w++) {
    for (guint i = 0; i < slots[w].sent->len; i++)
      sim_wait_send(c, g_ptr_array_index(slots[w].sent, i));
    g_ptr_array_free(slots[w].sent, TRUE);
  }
  g_free(slots);
}

/* ---- rails --------------------------------------------------------- */

static void rail_worker(struct coll_call *c) {
  struct geo g = geo_of(c->sim);
  uint64_t n = c->v->n;
  int node = c->rank / g.g, local = c->rank % g.g;
  int *in = g_new(int, g.g), *across = g_new(int, g.nodes);
  for (int i = 0; i < g.g; i++)
    in[i] = node * g.g + i;
  for (int k = 0; k < g.nodes; k++)
    across[k] = k * g.g + local;
  /* After the reduce-scatter in the machine, this GPU holds block
   * local + 1 of G, summed over the machine. */
  int mine = (local + 1) % g.g;
  uint64_t lo = block_lo(0, n, g.g, mine), hi = block_lo(0, n, g.g, mine + 1);
  if (g.g > 1)
    ring_reduce_scatter(c, in, g.g, local, 0, n);
  if (g.nodes > 1) {
    ring_allreduce(c, across, g.nodes, node, lo, hi, RING_ENCODE_ONCE, false);
  }
  if (g.g > 1)
    ring_allgather(c, in, g.g, local, 0, n, RING_ENCODE_ONCE);
  g_free(in);
  g_free(across);
}

/* ---- formulas and the tuner ------------------------------------------ */

static void nccl_formula(const struct sim *s, struct formula_in *in) {
  struct geo g = geo_of(s);
  struct node_net nn = topology_node_net(s->p);
  in->v[FP_GROUP] = g.g;
  in->v[FP_NICS] = g.nics;
  in->v[FP_CHANNELS] = g.nc;
  in->v[FP_CHUNK] = s->p->tree_chunk;
  if (nn.size > 0) {
    in->v[FP_ALPHA_IN] = nn.alpha_in;
    in->v[FP_BETA_IN] = nn.beta_in;
    in->v[FP_ALPHA] = nn.alpha;
    in->v[FP_BETA] = nn.beta;
  } else {
    in->v[FP_ALPHA_IN] = s->p->latency_s;
    in->v[FP_BETA_IN] = 1.0 / s->p->bandwidth_Bps;
  }
}

/* The formula NAME's time for C's bucket on the point's network
 * (INFINITY when it cannot be evaluated: never the choice). */
static double model_time(const struct coll_call *c, const char *name) {
  double t = sim_formula_time(c->sim, formula_find(name), c->v->n);
  return isnan(t) ? INFINITY : t;
}

/* NCCL's choice (tuning.cc, enqueue.cc topoGetAlgoInfo): the least time
 * of its model; a tie goes to the ring. */
static void tuned_worker(struct coll_call *c) {
  if (model_time(c, "nccl-tree") < model_time(c, "nccl-rings"))
    tree_worker(c);
  else
    ring_worker(c);
}

const struct collective coll_nccl_ring = {
    .name = "nccl-ring",
    .description = "NCCL's rings: one per channel (channels = auto: one "
                   "per NIC across machines), node-aware, in lockstep over "
                   "p balanced blocks (one ring: GradientFlow's)",
    .formula = "nccl-ring",
    .formula_nodes = "nccl-rings",
    .check = nccl_check,
    .worker = ring_worker,
    .formula_params = nccl_formula,
};

const struct collective coll_nccl_tree = {
    .name = "nccl-tree",
    .description = "NCCL's double binary tree across machines, chains "
                   "inside, reduce and broadcast pipelined in tree_chunk "
                   "steps",
    .formula = "nccl-tree",
    .formula_nodes = "nccl-tree",
    .check = nccl_check,
    .worker = tree_worker,
    .formula_params = nccl_formula,
};

const struct collective coll_nccl_rail = {
    .name = "nccl-rail",
    .description = "reduce-scatter in each machine, a ring allreduce per "
                   "rail across machines, allgather in each machine",
    .formula = "nccl-rail",
    .formula_nodes = "nccl-rail",
    .check = nccl_check,
    .worker = rail_worker,
    .formula_params = nccl_formula,
};

const struct collective coll_nccl = {
    .name = "nccl",
    .description = "NCCL's tuner: per bucket nccl-ring or nccl-tree, "
                   "whichever their formulas make faster",
    .check = nccl_check,
    .worker = tuned_worker,
    .formula_params = nccl_formula,
};
