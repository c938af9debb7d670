/* sim/collectives/nccl.c: NCCL's allreduce algorithms, as NCCL runs them
 * on machines of G GPUs with K NICs (docs/collectives.md, "NCCL's
 * algorithms"; read in NVIDIA/nccl: src/graph/rings.cc, trees.cc,
 * connect.cc, tuning.cc, src/device/all_reduce.h, src/enqueue.cc):
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
 * - nccl: NCCL's tuner (below): ring, tree, NVLS on one machine or
 *   NVLS's tree across machines, as NCCL's own cost model picks them.
 *
 * How a call runs (nccl_kernel.c): NCCL's tuner (models/nccl.h, NCCL's
 * own cost model) picks the algorithm, protocol and channels of every
 * call, as NCCL does, unless [exchange] nccl_algo and nccl_proto force
 * them (NCCL_ALGO, NCCL_PROTO); the call then runs as NCCL's kernel, each
 * channel on its own, each step paying its protocol's cost where it runs
 * and its wire bytes, each channel at most its protocol's rate. A codec
 * on every hop ([exchange] compression = per-hop with a codec) is no
 * NCCL: those calls run the rings and trees below in lockstep, a step of
 * every channel at once. nccl-rail is gradsim's, in lockstep. */
#include "common.h"
#include "nccl_kernel.h"

#include <errno.h>
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/asserts.h>

/* Machines and channels of a point. */
struct geo {
  int p;     /* workers */
  int g;     /* GPUs per machine */
  int nodes; /* machines */
  int nics;  /* NICs per machine */
  int nc;    /* channels */
};

static struct geo geo_of_point(const struct point *p) {
  struct node_net nn = topology_node_net(p);
  struct geo g = {.p = p->nodes};
  g.g = nn.size > 0 ? nn.size : p->group > 0 ? p->group : 1;
  g.nics = nn.size > 0 ? nn.nics : 1;
  g.nodes = g.p / g.g;
  g.nc = p->channels > 0 ? p->channels : g.nodes > 1 ? g.nics : 1;
  return g;
}

static struct geo geo_of(const struct sim *s) { return geo_of_point(s->p); }

/* The machines fit the workers, before anything runs (run_check: a
 * sweep's point found wrong only as it ran left the others' results). */
static int nccl_check(const struct point *p, char *err, size_t errlen) {
  struct geo g = geo_of_point(p);
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
        struct msg *out = got && c->sim->codec ? msg_share(got)
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

/* ---- NCCL's view of the point, and its choice per call --------------- */

/* What NCCL would see of the point (its communicator for the tuner) and
 * what its protocols cost here, computed once a run. */
struct nccl_run {
  struct geo g;
  struct nccl_model model;
  /* The tuner for allgathers: nccl_algo forces the allreduce's algorithm
   * alone (NCCL_ALGO=allreduce:X, NCCL 2.24's form), an allgather keeps
   * NCCL's ring (the only one simulated for it). */
  struct nccl_model gather;
  /* The links' own latency of a step inside a machine and across (a
   * protocol's step cost is NCCL's per-step latency beyond it), and
   * their rates (a paced channel's share of them). */
  double lat_hw[NCCL_HW_COUNT], link_Bps[NCCL_HW_COUNT];
  bool nvswitch; /* inside a machine over NVLink, else PCIe */
  /* NVLS: each machine's NVSwitch, per NVLS channel ([machine][q]), or
   * NULL. */
  struct nk_switch **switches;
  /* CollNet: the SHARP switches of each channel's rail ([q], up to the
   * communicator's channels), or NULL; rail 0's rank (rail r's: + r) and
   * the fabric's rails (one on a fat tree: platforms/nvswitch.c). */
  struct nk_sharp **sharps;
  int sharp_rank, sharp_rails;
  /* The trees' streams on each link, by channel count (tree_streams),
   * and every GPU's rings' shares of the network, by channel count
   * (ring_shares). */
  GHashTable *tree_streams[RING_CHANNELS_MAX + 1];
  double *ring_share[RING_CHANNELS_MAX + 1];
  /* The calls on NCCL's kernels (nccl.csv): one struct call_row for each
   * collective, size and choice, in the order first made; each call's
   * span over every worker (struct call_span), by its place in the
   * sequence every worker makes, and each worker's next place. */
  GArray *calls, *spans;
  int *seq;
};

/* The calls of one collective, size and choice: how many (worker 0's),
 * NCCL's model's time for one and their simulated time. */
struct call_row {
  enum nccl_coll coll;
  double bytes;
  struct nccl_choice ch;
  long n;
};

/* One call: from its first start on any worker to its last end, and its
 * row. */
struct call_span {
  double start, end;
  int row;
};

/* C's call of BYTES as CH chose it, begun at T0 and ended now: its span
 * widened, and on worker 0 its row counted. Every worker makes the same
 * calls in the same order (struct collective). */
static void log_call(struct coll_call *c, struct nccl_run *r,
                     enum nccl_coll coll, double bytes,
                     const struct nccl_choice *ch, double t0) {
  if (!c->w)
    return;
  guint k = (guint)r->seq[c->rank]++;
  if (k == r->spans->len) {
    struct call_span x = {t0, sim_now(), -1};
    g_array_append_val(r->spans, x);
  }
  struct call_span *sp = &g_array_index(r->spans, struct call_span, k);
  sp->start = fmin(sp->start, t0);
  sp->end = fmax(sp->end, sim_now());
  if (c->rank != 0)
    return;
  guint i = 0;
  for (; i < r->calls->len; i++) {
    const struct call_row *x = &g_array_index(r->calls, struct call_row, i);
    if (x->coll == coll && x->bytes == bytes && x->ch.algo == ch->algo &&
        x->ch.proto == ch->proto && x->ch.nchannels == ch->nchannels)
      break;
  }
  if (i == r->calls->len) {
    struct call_row x = {.coll = coll, .bytes = bytes, .ch = *ch};
    g_array_append_val(r->calls, x);
  }
  g_array_index(r->calls, struct call_row, i).n++;
  sp->row = (int)i;
}

/* nccl.csv's rows of S (collective calls, without the point's index):
 * one row for each collective, size and choice, its calls' mean span. */
static void nccl_calls(const struct sim *s, GString *out) {
  static const char *const coll[NCCL_COLL_COUNT] = {
      [NCCL_COLL_ALLREDUCE] = "allreduce",
      [NCCL_COLL_REDUCE_SCATTER] = "reduce-scatter",
      [NCCL_COLL_ALLGATHER] = "allgather"};
  const struct nccl_run *r = s->coll_run;
  if (!r)
    return;
  double *time_s = g_new0(double, r->calls->len + 1);
  for (guint k = 0; k < r->spans->len; k++) {
    const struct call_span *sp = &g_array_index(r->spans, struct call_span, k);
    if (sp->row >= 0)
      time_s[sp->row] += sp->end - sp->start;
  }
  for (guint i = 0; i < r->calls->len; i++) {
    const struct call_row *x = &g_array_index(r->calls, struct call_row, i);
    g_string_append_printf(out, "%s,%.0f,%s,%s,%d,%ld,%.9g,%.9g\n",
                           coll[x->coll], x->bytes, nccl_algo_names[x->ch.algo],
                           nccl_proto_names[x->ch.proto], x->ch.nchannels, x->n,
                           1e6 * x->ch.time_s, 1e6 * time_s[i] / (double)x->n);
  }
  g_free(time_s);
}

/* NCCL's default channels (comm->nChannels) where [exchange] channels is
 * auto: two per NIC across machines (a ring's graph channel on each NIC,
 * duplicated), inside one machine two per NVLink's worth of 20 GB/s
 * (NCCL's per-link rate for Volta to Hopper: 12 links and 24 channels
 * on an A100, 18 and 32 on an H100, at most MAXCHANNELS / 2), two on a
 * flat network. */
static int default_channels(const struct point *p, const struct geo *g,
                            bool nvswitch) {
  if (g->nodes > 1)
    return g->nics * 2 > 64 ? 64 : g->nics * 2;
  if (nvswitch) {
    int links = (int)floor(p->nvlink_Bps / 20e9 + 0.5);
    int nc = 2 * (links > 0 ? links : 1);
    return nc > 32 ? 32 : nc;
  }
  return 2;
}

/* The tuner's communicator for point P on machines G (NCCL's graphs:
 * half the channels, duplicated as NCCL does, each moving its share of
 * the GPU's NVLink or PCIe inside a machine, and of the machine's NICs
 * across; across machines a graph's speed is one for both, as NCCL's
 * search finds it). CC: the GPUs' compute capability. */
static struct nccl_comm comm_of(const struct point *p, const struct geo *g,
                                bool nvswitch, int cc) {
  struct node_net nn = topology_node_net(p);
  struct nccl_comm c = {.version = p->nccl_version,
                        .tuner = p->nccl_tuner,
                        .nranks = g->p,
                        .nnodes = g->nodes,
                        .cc = cc,
                        .nvls = p->nvls && nvswitch && cc >= 90,
                        .collnet = p->sharp};
  c.nchannels = g->nc;
  c.nvls_channels = 16;
  c.algo_mask = p->nccl_algo == NCCL_ALGO_AUTO ? 0 : 1u << p->nccl_algo;
  c.proto_mask = p->nccl_proto == NCCL_PROTO_AUTO ? 0 : 1u << p->nccl_proto;
  int gch = g->nc / 2 > 0 ? g->nc / 2 : 1;
  double intra = nn.size > 0 ? 1.0 / nn.beta_in : p->bandwidth_Bps;
  double nic = nn.size > 0 ? 1.0 / nn.beta : p->bandwidth_Bps;
  double bi = intra / gch / 1e9;
  double be = fmin(nic, g->nics * nic / gch) / 1e9;
  double both = g->nodes > 1 ? fmin(bi, be) : bi;
  /* The network plugin's latency, in every graph that crosses machines
   * (search.cc: graph->latencyInter = net->net.latency). */
  double lat_inter = g->nodes > 1 ? 1e6 * p->nccl_net_latency_s : 0;
  for (int a = 0; a < NCCL_ALGO_COUNT; a++)
    c.graph[a] = (struct nccl_graph){gch, both, g->nodes > 1 ? both : bi,
                                     nvswitch, lat_inter};
  /* A tree's chain inside a machine runs at NVLink's speed, its edges
   * between machines at the NICs': NCCL's search keeps the two apart
   * (and its tuner takes the inside's on two machines, where a tree's
   * bus bandwidth exceeds the NICs': nccl-tests issue 22). */
  c.graph[NCCL_ALGO_TREE].bw_intra = bi;
  c.graph[NCCL_ALGO_TREE].bw_inter = g->nodes > 1 ? be : bi;
  c.graph[NCCL_ALGO_NVLS].nchannels = c.nvls_channels;
  c.graph[NCCL_ALGO_NVLS].bw_intra = intra / c.nvls_channels / 1e9;
  c.graph[NCCL_ALGO_NVLS].bw_inter =
      g->nodes > 1 ? g->nics * nic / c.nvls_channels / 1e9
                   : c.graph[NCCL_ALGO_NVLS].bw_intra;
  /* NVLS's tree across machines: every GPU the head of its part, its
   * rail's NIC the tree's edges (a head for each GPU needs a NIC for
   * each: NCCL's nHeads is the machine's NICs, which gradsim's kernel
   * does not split further). */
  c.graph[NCCL_ALGO_NVLS_TREE] = c.graph[NCCL_ALGO_NVLS];
  c.graph[NCCL_ALGO_NVLS_TREE].bw_inter = g->nics * nic / c.nvls_channels / 1e9;
  if (g->nodes < 2 || g->nics != g->g)
    c.graph[NCCL_ALGO_NVLS_TREE].nchannels = 0;
  /* CollNet's chain across machines whose network sums (sharp): its
   * graph is the tree's (NCCL searches both with the tree's pattern: a
   * chain inside each machine from the channel's rail GPU, whose head
   * the network takes instead of a tree between machines); NCCL allows it
   * up to 8 GPUs a machine (enqueue.cc, NCCL_MAX_DIRECT_ARITY + 1). Not
   * simulated: CollNet Direct and NVLS with SHARP across machines; NCCL's
   * tuner is not offered them. */
  c.graph[NCCL_ALGO_COLLNET_CHAIN] = c.graph[NCCL_ALGO_TREE];
  if (!(p->sharp && nvswitch && g->nodes > 1 && g->g <= 8))
    c.graph[NCCL_ALGO_COLLNET_CHAIN].nchannels = 0;
  c.graph[NCCL_ALGO_COLLNET_DIRECT].nchannels = 0;
  if (g->nodes > 1)
    c.graph[NCCL_ALGO_NVLS].nchannels = 0;
  return c;
}

/* The compute capability of P's device, for NCCL's tables (0 with *ERR
 * when devices.conf has none). */
static int device_cc(const struct point *p, char *err, size_t errlen) {
  struct model_opts o = point_model_opts(p);
  struct device_info d;
  char e[160];
  if (model_device_info(p->device, &o, &d, e, sizeof e) != 0) {
    snprintf(err, errlen, "[model] device = %s: %s", p->device, e);
    return 0;
  }
  if (d.cc <= 0) {
    snprintf(err, errlen,
             "[model] device = %s has no compute capability in "
             "models/devices.conf (a 'cc' line), which NCCL's tuning "
             "needs",
             p->device);
    return 0;
  }
  return d.cc;
}

static bool on_nvswitch(const struct point *p) {
  return p->topology == TOPO_NVSWITCH;
}

/* Where a message from rank A to rank B runs. */
static enum nccl_hw hop_of(const struct sim *s, int a, int b) {
  const struct nccl_run *r = s->coll_run;
  if (r->g.g > 1 && a < r->g.p && b < r->g.p && a / r->g.g == b / r->g.g)
    return r->nvswitch ? NCCL_HW_NVLINK : NCCL_HW_PCI;
  return NCCL_HW_NET;
}

static struct nccl_run *run_of(struct sim *s) {
  struct nccl_run *r = s->coll_run;
  if (r)
    return r;
  r = g_new0(struct nccl_run, 1);
  r->calls = g_array_new(FALSE, FALSE, sizeof(struct call_row));
  r->spans = g_array_new(FALSE, FALSE, sizeof(struct call_span));
  r->seq = g_new0(int, s->nworkers);
  r->g = geo_of(s);
  r->nvswitch = on_nvswitch(s->p);
  if (s->p->channels == 0)
    r->g.nc = default_channels(s->p, &r->g, r->nvswitch);
  char e[256];
  int cc = device_cc(s->p, e, sizeof e);
  xbt_assert(cc > 0, "%s (run_check lets no such point through)", e);
  struct nccl_comm comm = comm_of(s->p, &r->g, r->nvswitch, cc);
  xbt_assert(nccl_model_init(&r->model, &comm) == 0,
             "NCCL's model of %d ranks on %d machines", comm.nranks,
             comm.nnodes);
  comm.algo_mask = 0;
  xbt_assert(nccl_model_init(&r->gather, &comm) == 0,
             "NCCL's model of %d ranks on %d machines", comm.nranks,
             comm.nnodes);
  struct node_net nn = topology_node_net(s->p);
  double net = nn.size > 0 ? nn.alpha : s->p->latency_s;
  r->lat_hw[NCCL_HW_NVLINK] = r->lat_hw[NCCL_HW_PCI] =
      nn.size > 0 ? nn.alpha_in : net;
  r->lat_hw[NCCL_HW_NET] = net;
  r->link_Bps[NCCL_HW_NVLINK] = r->link_Bps[NCCL_HW_PCI] =
      nn.size > 0 ? 1.0 / nn.beta_in : s->p->bandwidth_Bps;
  r->link_Bps[NCCL_HW_NET] =
      nn.size > 0 ? 1.0 / nn.beta : s->p->bandwidth_Bps;
  r->sharp_rails = s->p->fabric == FABRIC_RAIL ? r->g.nics : 1;
  s->coll_run = r;
  return r;
}

/* What a step NCCL charges US microseconds for on link H costs beyond
 * the wire, which the simulation charges apart: US less the link's
 * latency; on a link slower than those NCCL measured its figures on, US
 * less NCCL's least step on H (nccl_hw_floor, which stands for their
 * wire). A slower wire (EFA's tens of microseconds, fitted) does not
 * make a protocol's flags, fences and flushes cheaper: charged beyond
 * the link's latency alone, a Simple step and an LL step over it would
 * cost alike, and NVLS's tree's 20.9 us between machines nothing. */
static double beyond_wire(const struct nccl_run *r, const struct nccl_comm *c,
                          enum nccl_hw h, double us) {
  return fmax(
      1e-6 * us - fmin(r->lat_hw[h], 1e-6 * nccl_hw_floor(c->version, h)), 0);
}

/* What the chosen algorithm and protocol cost on S's point
 * (nccl_kernel.h): NCCL's base latency at the call's start; each step
 * NCCL's per-step latency where it runs, beyond the wire (beyond_wire);
 * LL's and LL128's wire bytes; and a channel's rate at most NCCL's
 * model's bus bandwidth for the pair over its graph channels (LL's half
 * of the link and its ceiling, LL128's and the trees' per-channel
 * ceilings; a Simple ring streams at the links' rate). The point's
 * nccl_launch, nccl_step, nccl_ll_bw, nccl_ll128_bw and nvls_efficiency
 * set them as a calibration fits them. M: the tuner whose tables the
 * call's choice came from (the run's, or its allgathers'). */
static struct nk_cost cost_of(const struct sim *s, const struct nccl_run *r,
                              const struct nccl_model *m, enum nccl_algo a,
                              enum nccl_proto p, int nc) {
  const struct point *pt = s->p;
  const struct nccl_comm *c = &m->comm;
  enum nccl_version v = nccl_kernel_tables(c->version, a, p);
  struct nk_cost k = {.launch_s = 1e-6 * nccl_base_latency(v, a, p),
                      .wire = nccl_proto_wire(p)};
  for (int h = 0; h < NCCL_HW_COUNT; h++)
    k.step_s[h] = beyond_wire(r, c, (enum nccl_hw)h,
                              nccl_hw_latency(v, (enum nccl_hw)h, a, p));
  if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) {
    /* NVLS: NCCL's latency once (its NVLink figure is the call's, not a
     * step's); a chunk's step as a Simple ring step's (its loads and
     * stores synchronised alike); every flow at NCCL's NVLS efficiency
     * of its share of the NVLink (one channel of the NVLS graph's short
     * of it, as NCCL's model has it). */
    const struct nccl_graph *gr = &c->graph[a];
    k.launch_s = 1e-6 * (nccl_base_latency(v, a, p) +
                         nccl_hw_latency(v, NCCL_HW_NVLINK, a, p));
    for (int h = 0; h < NCCL_HW_COUNT; h++)
      k.step_s[h] =
          beyond_wire(r, c, (enum nccl_hw)h,
                      nccl_hw_latency(v, (enum nccl_hw)h, NCCL_ALGO_RING,
                                      NCCL_PROTO_SIMPLE));
    /* A step of the tree between machines: NCCL's NVLS tree's network
     * latency beyond the wire's. */
    k.step_s[NCCL_HW_NET] =
        beyond_wire(r, c, NCCL_HW_NET,
                    nccl_hw_latency(v, NCCL_HW_NET, NCCL_ALGO_NVLS_TREE, p));
    double eff = pt->nvls_efficiency > 0
                     ? pt->nvls_efficiency
                     : nccl_nvls_efficiency(c->cc) * (gr->nchannels - 1) /
                           gr->nchannels;
    k.chan_Bps = 1e9 * gr->bw_intra * eff;
  } else {
    double alg = m->bw[NCCL_COLL_ALLREDUCE][a][p];
    double ratio = a == NCCL_ALGO_RING ? (double)c->nranks /
                                             (2.0 * (c->nranks - 1))
                                       : 0.5;
    /* LL's and LL128's ceilings (llMaxBw; the graph's channels times
     * perChMaxRingLL128Bw or perChMaxTreeLL128Bw) are the call's bus
     * bandwidth, shared by all its channels, as NCCL's model times the
     * call whatever channels it runs: at a graph channel's ceiling on
     * each of the call's (twice the graph's), LL128 ran 15 to 58% fast
     * across machines (docs/nccl.md). The trees' Simple ceiling
     * (perChMaxTreeBw) is on each channel of the graph. */
    if (!(a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE) && alg > 0)
      k.chan_Bps = 1e9 * alg / ratio /
                   (p == NCCL_PROTO_SIMPLE ? c->graph[a].nchannels : nc);
    if (p == NCCL_PROTO_LL && pt->nccl_ll_Bps > 0)
      k.chan_Bps = pt->nccl_ll_Bps / nc;
    if (p == NCCL_PROTO_LL128 && pt->nccl_ll128_Bps > 0)
      k.chan_Bps = pt->nccl_ll128_Bps;
  }
  /* CollNet's chain: its network hop (the proxy's, the switches'
   * aggregation) a latency a chunk pipelines through, not a cost its
   * heads' copies wait for: once, with the call's (as NCCL's model counts
   * it, one inter_lat a call). Each of a channel's two streams (the
   * reduce's threads and the broadcast's, half each) at half the
   * channel's share of the model's bus bandwidth: the call's algorithm
   * bandwidth over its channels. */
  if (a == NCCL_ALGO_COLLNET_CHAIN) {
    k.launch_s += k.step_s[NCCL_HW_NET];
    k.step_s[NCCL_HW_NET] = 0;
    k.chan_Bps = 1e9 * m->bw[NCCL_COLL_ALLREDUCE][a][p] / nc;
  }
  /* The calibration's handles (engine.h). */
  k.launch_s += pt->nccl_launch_s;
  if (pt->nccl_step_s >= 0 && (p == NCCL_PROTO_SIMPLE || a == NCCL_ALGO_NVLS))
    k.step_s[NCCL_HW_NVLINK] = k.step_s[NCCL_HW_PCI] = pt->nccl_step_s;
  return k;
}

/* NCCL's calcCollChunking for trees and chains: CHUNK halved while the
 * call's BYTES make fewer chunks for each of its NC channels than a
 * step's LIMIT and the chunk is above the step's ABOVE, step by step. */
struct halve_step {
  double limit;
  uint64_t above;
};

static uint64_t halve_chunk(uint64_t chunk, double bytes, int nc,
                            const struct halve_step *st, int n) {
  for (int i = 0; i < n; i++)
    while (floor(bytes / (nc * (double)chunk)) < st[i].limit &&
           chunk > st[i].above)
      chunk /= 2;
  return chunk;
}

/* A tree's chunk under release V (calcCollChunking): the protocol's
 * slot, LL128's halved while the call is small for its depth; and in
 * v2.18.5 (and 2.19) Simple's halved while it is small for the tree's
 * depth (enqueue.cc computeColl; connect.cc connectTrees: a machine's
 * GPUs less one, plus log2 of the machines), which 2.20 dropped. */
static uint64_t tree_chunk_bytes_of(const struct geo *g, enum nccl_version v,
                                    enum nccl_proto p, int nc, double bytes) {
  uint64_t chunk = nccl_proto_chunk(NCCL_ALGO_TREE, p);
  int l = 0; /* log2 of the machines (log2i) */
  for (int x = g->nodes; x > 1; x >>= 1)
    l++;
  if (p == NCCL_PROTO_SIMPLE && v == NCCL_V2_18) {
    double d = g->g - 1 + l;
    const struct halve_step st[] = {
        {d * 8, 131072}, {d * 4, 65536}, {d, 32768}};
    chunk = halve_chunk(chunk, bytes, nc, st, 3);
  }
  if (p == NCCL_PROTO_LL128) {
    double ppn = (double)g->g, steps = 1 + l + 0.1 * ppn;
    const struct halve_step st[] = {{steps * 64 / ppn, 131072},
                                    {steps * 16 / ppn, 32768}};
    chunk = halve_chunk(chunk, bytes, nc, st, 2);
  }
  return chunk;
}

/* CollNet's chain's chunk (calcCollChunking, the same from v2.18.1 to
 * v2.30.7): 256 KiB (a Simple slot's half), halved while the call is
 * small for its channels and the chain's depth (the GPUs of a machine). */
static uint64_t chain_chunk_bytes(const struct geo *g, int nc, double bytes) {
  double d = g->g;
  const struct halve_step st[] = {{d * 64, 131072}, {d * 8, 65536}, {d, 32768}};
  return halve_chunk(256 << 10, bytes, nc, st, 3);
}

/* NCCL's calcCollChunking for NVLS: CHUNK halved to each step's size
 * while the call's BYTES are under its multiple of the OPS chunks the
 * channels' heads take at once. */
struct chunk_step {
  double mult;
  uint64_t to;
};

static uint64_t shrink_chunk(uint64_t chunk, double bytes, double ops,
                             const struct chunk_step *st, int n) {
  for (int i = 0; i < n; i++)
    if (bytes < st[i].mult * ops * (double)chunk && chunk > st[i].to)
      chunk = st[i].to;
  return chunk;
}

/* NVLS's chunk: NCCL_NVLS_CHUNKSIZE's 128 KiB a head, less while the call
 * is small for its channels' G heads. */
static uint64_t nvls_chunk_bytes(int nc, int g, double bytes) {
  static const struct chunk_step st[] = {
      {64, 65536}, {8, 32768}, {2, 16384}};
  return shrink_chunk(128 << 10, bytes, (double)nc * g, st, 3);
}

/* NVLS's tree's chunk under P's release: v2.30's (ncclNvlsTuning on
 * Hopper), v2.28's and v2.26's (NCCL_NVLS_CHUNKSIZE, computeCollChunkInfo
 * at v2.26.2-1) 128 KiB; v2.18's a Simple step's 512 KiB (calcCollChunking at
 * v2.18.5-1: buffSizes[SIMPLE] / NCCL_STEPS, on any number of machines);
 * v2.20's the same (computeCollChunkInfo at v2.20.3-1). From 2.20 on at
 * most NCCL_NVLSTREE_MAX_CHUNKSIZE ([exchange] nccl_nvlstree_max_chunk;
 * unset, 64 KiB from four machines on: AWS's plugin sets 512 KiB). Less
 * while the call is small for its channels' G heads. */
static uint64_t nvls_tree_chunk_bytes(const struct point *p, int nc, int g,
                                      int nodes, double bytes) {
  static const struct chunk_step st[] = {
      {32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}};
  enum nccl_version v = p->nccl_version;
  uint64_t start = v == NCCL_V2_18 || v == NCCL_V2_20
                       ? NCCL_SIMPLE_BUFFSIZE / NCCL_STEPS
                       : 128 << 10;
  if (v != NCCL_V2_18) {
    uint64_t max = p->nvlstree_max_chunk > 0 ? (uint64_t)p->nvlstree_max_chunk
                   : nodes >= 4              ? 65536
                                             : start;
    start = start < max ? start : max;
  }
  return shrink_chunk(start, bytes, (double)nc * g, st, 4);
}

/* PL's links: the run's latencies and rates, inside a machine and across. */
static void plan_links(struct nk_plan *pl, const struct nccl_run *r) {
  for (int h = 0; h < NCCL_HW_COUNT; h++) {
    pl->lat_hw[h] = r->lat_hw[h];
    pl->link_Bps[h] = r->link_Bps[h];
  }
}

/* The rings of the kernel at RANK: channel K over its share, in the
 * node-aware order of ring_worker. */
static void ring_chans_at(const struct coll_call *c, const struct geo *g,
                          int nc, int rank, struct ring_chan *ch) {
  uint64_t n = c->v->n;
  int node = rank / g->g, j = rank % g->g, gn = g->g;
  int after = (node + 1) % g->nodes, before = (node + g->nodes - 1) % g->nodes;
  for (int k = 0; k < nc; k++) {
    int e = ring_entry(g, k, node), x = ring_exit(g, k, node);
    int i = path_pos(gn, e, x, j);
    int next = i < gn - 1 ? node * gn + path_at(gn, e, x, i + 1)
                          : after * gn + ring_entry(g, k, after);
    int prev = i > 0 ? node * gn + path_at(gn, e, x, i - 1)
                     : before * gn + ring_exit(g, k, before);
    ch[k] = (struct ring_chan){block_lo(0, n, nc, k),
                               block_lo(0, n, nc, k + 1), node * gn + i,
                               next, prev};
  }
}

/* The trees of the kernel: channel K on NCCL's tree K mod 2 (the double
 * binary tree: ncclGetDtree), chained inside each machine from the
 * channel's rail GPU. */
static void tree_chans_at(const struct coll_call *c, const struct geo *g,
                          int nc, int rank, struct nk_tree *t) {
  uint64_t n = c->v->n;
  int node = rank / g->g;
  for (int k = 0; k < nc; k++) {
    int i = chan_pos(g, k, rank), up, d0, d1;
    dtree(g->nodes, k % 2, node, &up, &d0, &d1);
    t[k] = (struct nk_tree){.lo = block_lo(0, n, nc, k),
                            .hi = block_lo(0, n, nc, k + 1),
                            .depth = machine_depth(g->nodes, k % 2, node) + i,
                            .reach = tree_reach(g)};
    if (i > 0)
      t[k].up = chan_rank(g, k, node, i - 1);
    else
      t[k].up = up < 0 ? -1 : chan_rank(g, k, up, 0);
    if (i + 1 < g->g)
      t[k].kids[t[k].nkids++] = chan_rank(g, k, node, i + 1);
    if (i == 0 && d0 >= 0)
      t[k].kids[t[k].nkids++] = chan_rank(g, k, d0, 0);
    if (i == 0 && d1 >= 0)
      t[k].kids[t[k].nkids++] = chan_rank(g, k, d1, 0);
  }
}

/* The links from rank A to rank B into ROUTE (emptied first). */
static void route_of(const struct sim *s, int a, int b, xbt_dynar_t route) {
  xbt_dynar_reset(route);
  sg_host_get_route(s->workers[a].host, s->workers[b].host, route);
}

/* One stream more on every link from rank A to B (COUNT: a table of
 * sg_link_t to count). */
static void count_route(const struct sim *s, GHashTable *count, int a, int b,
                        xbt_dynar_t route) {
  route_of(s, a, b, route);
  unsigned i;
  sg_link_t l;
  xbt_dynar_foreach(route, i, l) {
    int m = GPOINTER_TO_INT(g_hash_table_lookup(count, l));
    g_hash_table_insert(count, l, GINT_TO_POINTER(m + 1));
  }
}

/* How many of the streams of NC channels' trees cross each link (a
 * table of sg_link_t to count), over every GPU of the call: its reduce
 * up and its broadcast to each child. */
static GHashTable *tree_streams(const struct coll_call *c, const struct geo *g,
                                int nc) {
  GHashTable *n = g_hash_table_new(NULL, NULL);
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  struct nk_tree t[RING_CHANNELS_MAX];
  for (int a = 0; a < g->p; a++) {
    tree_chans_at(c, g, nc, a, t);
    for (int k = 0; k < nc; k++)
      for (int j = -1; j < t[k].nkids; j++) {
        int b = j < 0 ? t[k].up : t[k].kids[j];
        if (b < 0)
          continue;
        count_route(c->sim, n, a, b, route);
      }
  }
  xbt_dynar_free(&route);
  return n;
}

/* The least share of a link on the route from rank A to B among the
 * streams COUNT has crossing it (a fat pipe's whole bandwidth). */
static double route_share(const struct sim *s, GHashTable *count, int a, int b,
                          xbt_dynar_t route) {
  route_of(s, a, b, route);
  double share = INFINITY;
  unsigned i;
  sg_link_t l;
  xbt_dynar_foreach(route, i, l) {
    int m = sg_link_is_shared(l)
                ? GPOINTER_TO_INT(g_hash_table_lookup(count, l))
                : 1;
    share = fmin(share, sg_link_get_bandwidth(l) / m);
  }
  return isfinite(share) && share > 0 ? share : 0;
}

/* The caller's trees of NC channels (NCCL's double binary trees across
 * machines, chains inside them), each stream's fixed share of its route:
 * every link's bandwidth shared equally among the call's streams that
 * cross it, whether they send or wait (a long tree's: TREE_FIXED_CHUNKS
 * says why). NVLS's tree keeps SimGrid's sharing: its network streams
 * wait between chunks, and at fixed shares two p5 machines did not
 * reach AWS's 16 GiB time even at their NICs' full 400 Gb/s. A shorter
 * call's trees, of CHUNK values a chunk, get no shares. */
static void tree_chans(const struct coll_call *c, struct nccl_run *r, int nc,
                       uint64_t chunk, struct nk_tree *t) {
  tree_chans_at(c, &r->g, nc, c->rank, t);
  if (nc < 1 || (t[0].hi - t[0].lo + chunk - 1) / chunk < TREE_FIXED_CHUNKS)
    return;
  if (!r->tree_streams[nc])
    r->tree_streams[nc] = tree_streams(c, &r->g, nc);
  GHashTable *count = r->tree_streams[nc];
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  for (int k = 0; k < nc; k++) {
    if (t[k].up >= 0)
      t[k].share_up = route_share(c->sim, count, c->rank, t[k].up, route);
    for (int j = 0; j < t[k].nkids; j++)
      t[k].share_kid[j] =
          route_share(c->sim, count, c->rank, t[k].kids[j], route);
  }
  xbt_dynar_free(&route);
}

/* Every GPU's rings of NC channels, each channel's send to another
 * machine at its fixed share of its route (SHARE[a * NC + k] for GPU a's
 * channel k; 0 inside the machine, where its CTA paces it): every link's
 * bandwidth shared equally among the call's rings that cross it between
 * machines. A step to another machine is the proxy's, the CTA going on
 * (nccl_kernel.c), so that a ring's pace is its slowest network hop's.
 * Shared as SimGrid shares them, two of eight DGX A100 machines' hops
 * ran 2.7 us a step slower than the rest (each NIC carrying one ring
 * each way); a ring of many machines reaches its slowest hop's pace
 * only after thousands of steps (each of its GPUs may run ahead of that
 * hop by as many steps as the ring is long), and 4 GiB over the eight
 * never settled into one period (30 s, no jump; 0.9 s at fixed shares,
 * the same time as step by step). At fixed shares every ring's network
 * hops run at one rate, as a NIC's arbiter gives its queues. */
static double *ring_shares(const struct coll_call *c, const struct geo *g,
                           int nc) {
  GHashTable *count = g_hash_table_new(NULL, NULL);
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  struct ring_chan ch[RING_CHANNELS_MAX];
  for (int a = 0; a < g->p; a++) {
    ring_chans_at(c, g, nc, a, ch);
    for (int k = 0; k < nc; k++)
      if (hop_of(c->sim, a, ch[k].next) == NCCL_HW_NET)
        count_route(c->sim, count, a, ch[k].next, route);
  }
  double *share = g_new(double, (size_t)g->p *nc);
  for (int a = 0; a < g->p; a++) {
    ring_chans_at(c, g, nc, a, ch);
    for (int k = 0; k < nc; k++)
      share[(size_t)a * nc + k] =
          hop_of(c->sim, a, ch[k].next) == NCCL_HW_NET
              ? route_share(c->sim, count, a, ch[k].next, route)
              : 0;
  }
  xbt_dynar_free(&route);
  g_hash_table_destroy(count);
  return share;
}

/* The caller's rings of NC channels (ring_chans_at), and their shares of
 * the network (ring_shares: the caller's NC of them). */
static const double *ring_chans(const struct coll_call *c, struct nccl_run *r,
                                int nc, struct ring_chan *ch) {
  ring_chans_at(c, &r->g, nc, c->rank, ch);
  if (!r->ring_share[nc])
    r->ring_share[nc] = ring_shares(c, &r->g, nc);
  return r->ring_share[nc] + (size_t)c->rank * nc;
}

/* The rank of the SHARP switches channel Q's chains hand their sums to:
 * those of the channel's rail (its heads' NICs'). */
static int sharp_of(const struct nccl_run *r, int q) {
  return r->sharp_rank + (q % r->g.nics) % r->sharp_rails;
}

/* CollNet's chains (connect.cc, collnetChain): channel K's inside each
 * machine from the channel's rail GPU, the head's parent the rail's
 * SHARP switches (sharp_of). */
static void chain_chans(const struct coll_call *c, const struct nccl_run *r,
                        int nc, struct nk_tree *t) {
  const struct geo *g = &r->g;
  uint64_t n = c->v->n;
  int node = c->rank / g->g;
  for (int k = 0; k < nc; k++) {
    int i = chan_pos(g, k, c->rank);
    t[k] = (struct nk_tree){.lo = block_lo(0, n, nc, k),
                            .hi = block_lo(0, n, nc, k + 1),
                            .depth = i,
                            .reach = g->g};
    t[k].up = i > 0 ? chan_rank(g, k, node, i - 1) : sharp_of(r, k);
    if (i + 1 < g->g)
      t[k].kids[t[k].nkids++] = chan_rank(g, k, node, i + 1);
  }
}

/* NVLS's trees across machines (NCCL's NVLS tree): channel K's over the
 * machines on NCCL's tree K mod 2, among the GPUs of the caller's index
 * (the heads of its part, on its rail). */
static void nvls_trees(const struct coll_call *c, const struct geo *g,
                       int nc, struct nk_tree *t) {
  int node = c->rank / g->g, local = c->rank % g->g;
  for (int k = 0; k < nc; k++) {
    int up, d0, d1;
    dtree(g->nodes, k % 2, node, &up, &d0, &d1);
    t[k] = (struct nk_tree){.up = up < 0 ? -1 : up * g->g + local};
    if (d0 >= 0)
      t[k].kids[t[k].nkids++] = d0 * g->g + local;
    if (d1 >= 0)
      t[k].kids[t[k].nkids++] = d1 * g->g + local;
  }
}

/* How many of a call's channels of algorithm A take distinct paths on
 * machines G (channel c and c + kinds alike): a ring's by its rail
 * across machines (rail_first), a tree's by its rail and which of the two
 * trees it is; inside one machine every channel's ring or chain is the
 * same cycle of the same NVSwitch from another start, and NVLS's the
 * same switch; NVLS's trees across machines by which of the two trees
 * theirs is. */
static int alike_kinds(const struct geo *g, enum nccl_algo a) {
  if (a == NCCL_ALGO_NVLS || g->nodes == 1)
    return 1;
  if (a == NCCL_ALGO_NVLS_TREE)
    return 2;
  int rails = railed(g) ? g->nics : 1;
  if (a == NCCL_ALGO_COLLNET_CHAIN)
    return rails;
  if (a == NCCL_ALGO_TREE)
    return rails % 2 ? 2 * rails : rails;
  return rails;
}

/* A codec on every hop of the call (no NCCL: the lockstep rings and trees
 * run it). */
static bool per_hop_codec(const struct coll_call *c) {
  return !sim_plain(c) && c->sim->p->compression == COMPRESS_PER_HOP;
}

/* The rank at position POS of channel CHAN's ring (ring_chans' order:
 * machine by machine, each from its entry to its exit). */
static int ring_rank_at(const void *ctx, int chan, int pos) {
  const struct geo *g = ctx;
  int gn = g->g, node = pos / gn;
  return node * gn + path_at(gn, ring_entry(g, chan, node),
                             ring_exit(g, chan, node), pos % gn);
}

/* Sharded data parallel: NCCL's ReduceScatter or AllGather of C's bucket
 * over every worker, rank r's shard the r-th of the bucket (FSDP's flat
 * parameter, padded to a multiple of the world, as NCCL's calls take
 * it). NCCL's rings (reduce_scatter.h, all_gather.h runRing: a loop's
 * p - 1 steps, its chunks and slices as the allreduce's), the protocol
 * and channels by NCCL's tuner for the call's bytes (the world's: NCCL
 * counts a reduce-scatter's or allgather's nBytes over every rank). Not
 * modelled: NVLS and CollNet reduce-scatters and allgathers, and PAT
 * (NCCL 2.23+, one GPU a machine). */
/* NCCL's collective for LEG, and into *FA the algorithm asked for:
 * FORCE (the collective's own), else the key's; rings for a sharded leg
 * (check_forced refuses the others). */
static enum nccl_coll call_of(const struct point *p, enum nccl_algo force,
                              enum nk_leg leg, enum nccl_algo *fa) {
  *fa = leg != NK_ALLREDUCE       ? NCCL_ALGO_RING
        : force != NCCL_ALGO_AUTO ? force
                                  : p->nccl_algo;
  return leg == NK_REDUCE_SCATTER ? NCCL_COLL_REDUCE_SCATTER
         : leg == NK_ALLGATHER    ? NCCL_COLL_ALLGATHER
                                  : NCCL_COLL_ALLREDUCE;
}

/* NCCL's call for C's bucket: its choice (FORCE: the collective's own
 * algorithm, or the key's), then the kernel. LEG: the allreduce, or
 * (sharded data parallel) NCCL's ReduceScatter or AllGather of the
 * bucket over every worker, rank r's shard the r-th of it (FSDP's flat
 * parameter, padded to a multiple of the world, as NCCL's calls take
 * it): NCCL's rings (reduce_scatter.h, all_gather.h runRing: a loop's
 * p - 1 steps, its chunks and slices as the allreduce's), the protocol
 * and channels by NCCL's tuner for the call's bytes (the world's: NCCL
 * counts a reduce-scatter's or allgather's nBytes over every rank; the
 * rates are the allreduce's, which NCCL's tables give a ring's
 * reduce-scatter and allgather too, but v2.18's LL on one machine, a
 * quarter against a third). Not modelled: NVLS and CollNet
 * reduce-scatters and allgathers, and PAT (NCCL 2.23+, one GPU a
 * machine). */
static void nccl_call(struct coll_call *c, enum nccl_algo force,
                      enum nk_leg leg) {
  struct nccl_run *r = run_of(c->sim);
  const struct point *p = c->sim->p;
  double t0 = sim_now();
  enum nccl_algo fa;
  enum nccl_coll coll = call_of(p, force, leg, &fa);
  xbt_assert(leg == NK_ALLREDUCE || !c->group,
             "nccl: no sharded call over a group (run_check refuses hsdp)");
  int vb = sim_value_bytes(c);
  double bytes = (double)c->v->n * vb;
  struct nccl_choice ch;
  if (per_hop_codec(c)) {
    /* Rings or trees, as NCCL would choose between them. */
    if (nccl_model_choose(&r->model, NCCL_COLL_ALLREDUCE, bytes,
                          fa == NCCL_ALGO_AUTO ? NCCL_ALGO_RING : fa,
                          p->nccl_proto, &ch) != 0 ||
        (fa == NCCL_ALGO_AUTO &&
         nccl_model_time(&r->model, NCCL_COLL_ALLREDUCE, NCCL_ALGO_TREE,
                         ch.proto, bytes) >= 0 &&
         nccl_model_time(&r->model, NCCL_COLL_ALLREDUCE, NCCL_ALGO_TREE,
                         ch.proto, bytes) < ch.time_s))
      tree_worker(c);
    else
      ring_worker(c);
    return;
  }
  xbt_assert(
      nccl_model_choose(&r->model, coll, bytes, fa, p->nccl_proto, &ch) == 0,
      "no NCCL algorithm for %.0f bytes (run_check lets no such "
      "point through)",
      bytes);
  /* Channels whose paths are alike run alike: they are simulated as one
   * carrying all their data, at all their rate. */
  int merge = ch.nchannels / alike_kinds(&r->g, ch.algo);
  if (merge < 1 || ch.nchannels % alike_kinds(&r->g, ch.algo))
    merge = 1;
  struct nk_plan pl = {
      .nc = ch.nchannels / merge,
      .cost = cost_of(c->sim, r, &r->model, ch.algo, ch.proto, ch.nchannels),
      /* all_reduce.h: Simple and LL128 trees run
       * runTreeSplit, LL runTreeUpDown. */
      .split = ch.proto != NCCL_PROTO_LL,
      .slices = ch.proto == NCCL_PROTO_SIMPLE ? NCCL_RING_CHUNKSTEPS / 2 : 1,
      .macro = r->g.nodes > 1 ? r->g.g : 1,
      .window = NCCL_STEPS,
      .hw = hop_of};
  plan_links(&pl, r);
  /* A ring's Simple slices take two of its eight slots each. */
  if (ch.algo == NCCL_ALGO_RING && ch.proto == NCCL_PROTO_SIMPLE)
    pl.window = NCCL_STEPS / 2;
  pl.cost.chan_Bps *= merge;
  if (ch.algo == NCCL_ALGO_NVLS || ch.algo == NCCL_ALGO_NVLS_TREE) {
    pl.chunk = merge *
               (ch.algo == NCCL_ALGO_NVLS
                    ? nvls_chunk_bytes(ch.nchannels, r->g.g, bytes)
                    : nvls_tree_chunk_bytes(p, ch.nchannels, r->g.g, r->g.nodes,
                                            bytes)) /
               (uint64_t)vb;
    int node = c->rank / r->g.g, nq = r->model.comm.nvls_channels;
    xbt_assert(pl.nc <= nq, "NVLS on %d channels of %d", pl.nc, nq);
    struct nk_tree t[RING_CHANNELS_MAX];
    if (ch.algo == NCCL_ALGO_NVLS_TREE)
      nvls_trees(c, &r->g, pl.nc, t);
    nccl_kernel_nvls(c, &pl, r->g.g, r->g.p,
                     c->sim->nworkers + c->sim->naggr + node,
                     r->switches + (size_t)node * nq,
                     ch.algo == NCCL_ALGO_NVLS_TREE ? t : NULL);
  } else if (ch.algo == NCCL_ALGO_TREE) {
    pl.chunk = merge *
               tree_chunk_bytes_of(&r->g, p->nccl_version, ch.proto,
                                   ch.nchannels, bytes) /
               (uint64_t)vb;
    struct nk_tree t[RING_CHANNELS_MAX];
    tree_chans(c, r, pl.nc, pl.chunk, t);
    nccl_kernel_tree(c, &pl, t, r->g.p, NULL);
  } else if (ch.algo == NCCL_ALGO_COLLNET_CHAIN) {
    pl.chunk =
        merge * chain_chunk_bytes(&r->g, ch.nchannels, bytes) / (uint64_t)vb;
    xbt_assert(r->sharps && pl.nc <= r->model.comm.nchannels,
               "CollNet on %d channels without its switches", pl.nc);
    struct nk_tree t[RING_CHANNELS_MAX];
    chain_chans(c, r, pl.nc, t);
    nccl_kernel_tree(c, &pl, t, r->g.p, r->sharps);
  } else {
    xbt_assert(ch.algo == NCCL_ALGO_RING, "NCCL algorithm %s not simulated",
               nccl_algo_names[ch.algo]);
    pl.chunk = merge * nccl_proto_chunk(NCCL_ALGO_RING, ch.proto) /
               (uint64_t)vb;
    pl.leg = leg;
    pl.rank_at = ring_rank_at;
    pl.ctx = &r->g;
    struct ring_chan rc[RING_CHANNELS_MAX];
    pl.share = ring_chans(c, r, pl.nc, rc);
    nccl_kernel_ring(c, &pl, rc, r->g.p);
  }
  log_call(c, r, coll, bytes, &ch, t0);
}

static void switch_actor(int argc, char **argv) {
  (void)argc, (void)argv;
  nccl_switch_serve(sg_actor_self_get_data());
}

static void sharp_actor(int argc, char **argv) {
  (void)argc, (void)argv;
  nccl_sharp_serve(sg_actor_self_get_data());
}

/* Where CollNet may run, each channel's rail's SHARP switches get an
 * actor for the channel (daemons), on the rail's host r<R>-sharp
 * (platforms/nvswitch.c), the hosts' ranks after the NVSwitches'. */
static void sharp_spawn(struct sim *s, struct nccl_run *r, int first) {
  const struct nccl_comm *c = &r->model.comm;
  int nm = r->g.nodes;
  r->sharp_rank = s->nworkers + s->naggr + first;
  for (int i = 0; i < r->sharp_rails; i++) {
    char name[32];
    snprintf(name, sizeof name, "r%d-sharp", i);
    s->extra_hosts[first + i] = sg_host_by_name(name);
    xbt_assert(s->extra_hosts[first + i], "no host %s with sharp", name);
  }
  r->sharps = g_new(struct nk_sharp *, (size_t)c->nchannels);
  int *heads = g_new(int, nm);
  for (int q = 0; q < c->nchannels; q++) {
    int rail = sharp_of(r, q) - r->sharp_rank;
    for (int n = 0; n < nm; n++)
      heads[n] = chan_rank(&r->g, q, n, 0);
    r->sharps[q] = nccl_sharp_new(s, sharp_of(r, q), q, heads, nm);
    char name[32];
    snprintf(name, sizeof name, "sharp%d.%d", rail, q);
    sg_actor_t a = sg_actor_init(name, s->extra_hosts[first + rail]);
    sg_actor_set_data(a, r->sharps[q]);
    sg_actor_start_(a, sharp_actor, 0, NULL);
    sg_actor_daemonize(a);
  }
  g_free(heads);
}

/* Where NVLS may run, each machine's NVSwitch gets an actor a channel NVLS
 * may use (daemons: they serve until the workers end), on the platform's
 * switch host (platforms/nvswitch.c), rank nworkers + naggr + machine;
 * where CollNet may, the SHARP switches theirs (sharp_spawn). */
static void nccl_spawn(struct sim *s) {
  struct nccl_run *r = run_of(s);
  bool nvls = (r->model.comm.graph[NCCL_ALGO_NVLS].nchannels >= 1 ||
               r->model.comm.graph[NCCL_ALGO_NVLS_TREE].nchannels >= 1) &&
              r->model.comm.nvls;
  bool sharp = r->model.comm.graph[NCCL_ALGO_COLLNET_CHAIN].nchannels >= 1;
  int nm = r->g.nodes, nq = r->model.comm.nvls_channels;
  int nsw = nvls ? nm : 0;
  if (!nsw && !sharp)
    return;
  s->nextra = nsw + (sharp ? r->sharp_rails : 0);
  s->extra_hosts = g_new(sg_host_t, s->nextra);
  if (sharp)
    sharp_spawn(s, r, nsw);
  if (!nvls)
    return;
  r->switches = g_new(struct nk_switch *, (size_t)nm * nq);
  int *gpus = g_new(int, r->g.g);
  for (int n = 0; n < nm; n++) {
    char name[32];
    snprintf(name, sizeof name, "n%d-nvls", n);
    s->extra_hosts[n] = sg_host_by_name(name);
    xbt_assert(s->extra_hosts[n], "no host %s on an nvswitch with nvls",
               name);
    for (int i = 0; i < r->g.g; i++)
      gpus[i] = n * r->g.g + i;
    for (int q = 0; q < nq; q++) {
      struct nk_switch *w =
          nccl_switch_new(s, s->nworkers + s->naggr + n, q, gpus, r->g.g);
      r->switches[(size_t)n * nq + q] = w;
      snprintf(name, sizeof name, "nvswitch%d.%d", n, q);
      sg_actor_t a = sg_actor_init(name, s->extra_hosts[n]);
      sg_actor_set_data(a, w);
      sg_actor_start_(a, switch_actor, 0, NULL);
      sg_actor_daemonize(a);
    }
  }
  g_free(gpus);
}

/* NCCL's allgather of every worker's message (collective allgather):
 * its ring (NCCL's allgather on more than one machine per rank, PAT,
 * is not modelled), the protocol and channels by NCCL's tuner for the
 * gathered bytes. */
static void nccl_allgather(struct coll_call *c, struct msg *mine,
                           struct msg **all) {
  struct nccl_run *r = run_of(c->sim);
  const struct point *p = c->sim->p;
  double t0 = sim_now();
  double bytes = (double)mine->bytes * r->g.p;
  struct nccl_choice ch;
  xbt_assert(nccl_model_choose(&r->gather, NCCL_COLL_ALLGATHER, bytes,
                               NCCL_ALGO_RING, p->nccl_proto, &ch) == 0,
             "no NCCL ring allgather of %.0f bytes", bytes);
  int kinds = alike_kinds(&r->g, NCCL_ALGO_RING);
  int merge = ch.nchannels % kinds ? 1 : ch.nchannels / kinds;
  struct nk_plan pl = {.nc = ch.nchannels / merge,
                       .cost = cost_of(c->sim, r, &r->gather, NCCL_ALGO_RING,
                                       ch.proto, ch.nchannels),
                       .slices = 1,
                       .macro = 1,
                       .window = NCCL_STEPS,
                       .hw = hop_of};
  pl.cost.chan_Bps *= merge;
  plan_links(&pl, r);
  struct ring_chan rc[RING_CHANNELS_MAX];
  pl.share = ring_chans(c, r, pl.nc, rc);
  nccl_kernel_allgather(c, &pl, rc, r->g.p, mine, all);
  log_call(c, r, NCCL_COLL_ALLGATHER, bytes, &ch, t0);
}

static void nccl_reduce_scatter(struct coll_call *c) {
  nccl_call(c, NCCL_ALGO_RING, NK_REDUCE_SCATTER);
}
static void nccl_shard_allgather(struct coll_call *c) {
  nccl_call(c, NCCL_ALGO_RING, NK_ALLGATHER);
}

/* Rank ME's shard: the ME-th of the G parts. */
static int nccl_shard_ranges(int me, int g, uint64_t n, uint64_t lo[2],
                             uint64_t hi[2]) {
  lo[0] = block_lo(0, n, g, me);
  hi[0] = block_lo(0, n, g, me + 1);
  return 1;
}

static void nccl_worker(struct coll_call *c) {
  nccl_call(c, NCCL_ALGO_AUTO, NK_ALLREDUCE);
}
static void nccl_ring_worker(struct coll_call *c) {
  nccl_call(c, NCCL_ALGO_RING, NK_ALLREDUCE);
}
static void nccl_tree_worker(struct coll_call *c) {
  nccl_call(c, NCCL_ALGO_TREE, NK_ALLREDUCE);
}

/* P's machines (their channels NCCL's default where auto) and the
 * tuner's model of them: 0; -1 with ERR when the device has no compute
 * capability; 1 when the machines do not divide the workers (nccl_check
 * says so); 2 when NCCL's model has nothing for them. */
static int point_model(const struct point *p, struct geo *g,
                       struct nccl_model *m, char *err, size_t errlen) {
  int cc = device_cc(p, err, errlen);
  if (!cc)
    return -1;
  *g = geo_of_point(p);
  if (p->nodes % g->g)
    return 1;
  bool nvswitch = on_nvswitch(p);
  if (p->channels == 0)
    g->nc = default_channels(p, g, nvswitch);
  struct nccl_comm comm = comm_of(p, g, nvswitch, cc);
  return nccl_model_init(m, &comm) != 0 ? 2 : 0;
}

/* Before anything runs: the device's compute capability is known, and a
 * forced algorithm and protocol exist here (as NCCL refuses NCCL_ALGO
 * and NCCL_PROTO it cannot honour). FORCE: the collective's own. */
static int check_forced(const struct point *p, enum nccl_algo force,
                        char *err, size_t errlen) {
  if (nccl_check(p, err, errlen) != 0)
    return -1;
  struct geo g;
  struct nccl_model m;
  int rc = point_model(p, &g, &m, err, errlen);
  if (rc == -1 || rc == 1)
    return rc < 0 ? -1 : 0;
  if (force != NCCL_ALGO_AUTO && p->nccl_algo != NCCL_ALGO_AUTO &&
      p->nccl_algo != force) {
    snprintf(err, errlen,
             "[exchange] nccl_algo = %s contradicts algorithm = nccl-%s "
             "(use algorithm = nccl to choose by nccl_algo)",
             nccl_algo_names[p->nccl_algo], nccl_algo_names[force]);
    return -1;
  }
  enum nccl_algo fa = force != NCCL_ALGO_AUTO ? force : p->nccl_algo;
  if (p->sharding != SHARD_NONE && fa != NCCL_ALGO_AUTO &&
      fa != NCCL_ALGO_RING) {
    snprintf(err, errlen,
             "[training] sharding = %s with NCCL's %s: NCCL's "
             "reduce-scatter and allgather are simulated on rings only "
             "(set nccl_algo = auto or ring, or take algorithm = "
             "nccl-ring)",
             sharding_names[p->sharding], nccl_algo_names[fa]);
    return -1;
  }
  if (fa == NCCL_ALGO_COLLNET_CHAIN && run_has_codec(p) &&
      p->compression == COMPRESS_PER_HOP) {
    snprintf(err, errlen,
             "[exchange] nccl_algo = collnet-chain with codec = %s per hop: "
             "CollNet sums in the network's switches, where no codec runs "
             "(take compression = per-bucket, or nccl_algo = ring or tree)",
             p->codec);
    return -1;
  }
  struct nccl_choice ch;
  if (rc == 2 || nccl_model_choose(&m, NCCL_COLL_ALLREDUCE, 1 << 20, fa,
                                   p->nccl_proto, &ch) != 0) {
    snprintf(err, errlen,
             "[exchange] nccl_algo = %s with nccl_proto = %s: no such "
             "algorithm and protocol here (NVLS needs [platform] nvls = "
             "true on an nvswitch of compute capability 9.0 or later: nvls "
             "on one machine, nvls-tree across machines with a NIC per "
             "GPU; collnet-chain needs [platform] sharp = true across "
             "machines of at most 8 GPUs; NVLS with SHARP and collnet-direct "
             "are not simulated; NVLS and CollNet run Simple only; LL128 by "
             "default only over NVLink)",
             nccl_algo_names[fa], nccl_proto_names[p->nccl_proto]);
    return -1;
  }
  (void)ch;
  return 0;
}

static int nccl_point(const struct point *p, char *err, size_t errlen) {
  return check_forced(p, NCCL_ALGO_AUTO, err, errlen);
}
static int nccl_ring_point(const struct point *p, char *err, size_t errlen) {
  return check_forced(p, NCCL_ALGO_RING, err, errlen);
}
static int nccl_tree_point(const struct point *p, char *err, size_t errlen) {
  return check_forced(p, NCCL_ALGO_TREE, err, errlen);
}

/* The chunk from which a long tree's streams repeat, the last of a
 * call's to settle (its pipeline filled at fixed shares), as measured in
 * 4 GiB trees at the default channels: inside one DGX H100 from chunk
 * 16, over two from 19; over 4, 5, 6, 10 and 16 of them from 131 (and at
 * 16 GiB over 8); over 8 DGX A100 from 102. Over three machines their
 * reduce and broadcast settle at rates of no common period: never. Not
 * measured on the 4 GiB tree over 8 DGX H100 that bench/estimate.sh
 * scores. */
#define TREE_REPEATS_NEAR 20
#define TREE_REPEATS_FAR 131

/* What one rank of NCCL's kernel sends for a call of N values of VB
 * bytes on the machines G under the tuner M, FORCE the algorithm asked
 * for and LEG the call (the estimate's count, struct collective
 * messages): as nccl_call plans the call from the tuner's choice, each
 * channel's chunks through its steps (a ring's 2 (p - 1) steps a loop,
 * a reduce-scatter's or allgather's p - 1, each in its slices; a tree's
 * or NVLS's chunk up and down, with a tree's credit back). */
static bool call_messages(const struct point *p, const struct geo *g,
                          const struct nccl_model *m, uint64_t n, int vb,
                          enum nccl_algo force, enum nk_leg leg,
                          struct coll_messages *out) {
  double bytes = (double)n * vb;
  struct nccl_choice ch;
  enum nccl_algo fa;
  enum nccl_coll coll = call_of(p, force, leg, &fa);
  if (nccl_model_choose(m, coll, bytes, fa, p->nccl_proto, &ch) != 0)
    return false;
  int kinds = alike_kinds(g, ch.algo);
  int merge = ch.nchannels / kinds;
  if (merge < 1 || ch.nchannels % kinds)
    merge = 1;
  double nc = ch.nchannels / merge, per_chan = ceil((double)n / nc), chunk;
  /* A stream's events (a channel's messages at one rank) and its period
   * (nk_join): a ring's period a macro step of slices, compared over 3;
   * a tree's a chunk (up, down and a credit) and NVLS's a chunk it
   * heads, over NK_CHUNK_REPS. */
  double events, per, credits = 0, credit_window = 0;
  int reps;
  if (ch.algo == NCCL_ALGO_RING) {
    chunk = (double)(merge * nccl_proto_chunk(NCCL_ALGO_RING, ch.proto) /
                     (uint64_t)vb);
    /* A leg's channel carries its part of each of the p shards
     * (nccl_kernel_ring). */
    if (leg != NK_ALLREDUCE)
      per_chan = g->p * ceil(ceil((double)n / g->p) / nc);
    double loops = ceil(per_chan / (g->p * chunk));
    int slices = ch.proto == NCCL_PROTO_SIMPLE ? NCCL_RING_CHUNKSTEPS / 2 : 1;
    events = loops * (leg == NK_ALLREDUCE ? 2.0 : 1.0) * (g->p - 1) * slices;
    per = (g->nodes > 1 ? g->g : 1) * slices;
    reps = NK_RING_REPS;
    /* A credit a slice at the rank after each machine's last, but the
     * window's last (nk_ring). */
    if (g->nodes > 1) {
      credits = (double)g->nodes / g->p;
      credit_window = slices > 1 ? NCCL_STEPS / 2 : NCCL_STEPS;
    }
  } else if (ch.algo == NCCL_ALGO_TREE || ch.algo == NCCL_ALGO_COLLNET_CHAIN) {
    chunk = (double)(merge *
                     (ch.algo == NCCL_ALGO_TREE
                          ? tree_chunk_bytes_of(g, p->nccl_version, ch.proto,
                                                ch.nchannels, bytes)
                          : chain_chunk_bytes(g, ch.nchannels, bytes)) /
                     (uint64_t)vb);
    events = ceil(per_chan / fmax(chunk, 1)) * 3.0;
    per = 3;
    reps = NK_CHUNK_REPS;
  } else {
    /* NVLS: each of a machine's G GPUs heads a G-th of the chunks, four
     * messages each through the switch (counted as the run counts them);
     * NVLS's tree adds its edges between machines, about two more. */
    chunk = (double)(merge *
                     (ch.algo == NCCL_ALGO_NVLS
                          ? nvls_chunk_bytes(ch.nchannels, g->g, bytes)
                          : nvls_tree_chunk_bytes(p, ch.nchannels, g->g,
                                                  g->nodes, bytes)) /
                     (uint64_t)vb);
    per = ch.algo == NCCL_ALGO_NVLS ? 4 : 6;
    events = ceil(ceil(per_chan / fmax(chunk, 1)) / g->g) * per;
    reps = NK_CHUNK_REPS;
  }
  /* A tree's streams settle into one period at their fixed shares
   * (TREE_FIXED_CHUNKS), never in the shorter trees measured (nothing
   * skipped: 256 MiB over one and two DGX A100 and two DGX H100), and
   * not over three machines; on one or two from about chunk
   * TREE_REPEATS_NEAR, over more from TREE_REPEATS_FAR. */
  bool tree = ch.algo == NCCL_ALGO_TREE;
  *out = (struct coll_messages){
      .streams = nc,
      .events = events,
      .period = per,
      .reps = reps,
      .settles = !tree || (events / per >= TREE_FIXED_CHUNKS && g->nodes != 3),
      .settle =
          !tree ? 0
                : per * (g->nodes > 2 ? TREE_REPEATS_FAR : TREE_REPEATS_NEAR),
      /* A tree's NCCL_STEPS chunks in flight on a connection. */
      .window = tree ? per * NCCL_STEPS : 0,
      .credits = credits,
      .credit_window = credit_window};
  return true;
}

/* A bucket's calls (call_messages): its allreduce, or sharded its
 * reduce-scatter and allgather (zero3's unit: two allgathers), counted
 * per call at the calls' mean channels, the period the allgather's;
 * false where the lockstep rings and trees of a codec per hop run it. */
static bool kernel_messages(const struct point *p, uint64_t n, int vb,
                            enum nccl_algo force, struct coll_messages *out) {
  if (run_has_codec(p) && p->compression == COMPRESS_PER_HOP)
    return false;
  struct geo g;
  struct nccl_model m;
  char e[256];
  if (point_model(p, &g, &m, e, sizeof e) != 0)
    return false;
  if (p->sharding == SHARD_NONE)
    return call_messages(p, &g, &m, n, vb, force, NK_ALLREDUCE, out);
  struct coll_messages rs, ag;
  if (!call_messages(p, &g, &m, n, vb, force, NK_REDUCE_SCATTER, &rs) ||
      !call_messages(p, &g, &m, n, vb, force, NK_ALLGATHER, &ag))
    return false;
  double w = run_units(p) ? 2 : 1, calls = 1 + w;
  double streams = rs.streams + w * ag.streams;
  *out = (struct coll_messages){
      .streams = streams / calls,
      .events = (rs.events * rs.streams + w * ag.events * ag.streams) / streams,
      .period = ag.period,
      .reps = NK_RING_REPS,
      .settles = true,
      .calls = calls,
      .credits = ag.credits,
      .credit_window = ag.credit_window};
  return true;
}

static bool nccl_messages(const struct point *p, uint64_t n, int vb,
                          struct coll_messages *out) {
  return kernel_messages(p, n, vb, NCCL_ALGO_AUTO, out);
}
static bool nccl_ring_messages(const struct point *p, uint64_t n, int vb,
                               struct coll_messages *out) {
  return kernel_messages(p, n, vb, NCCL_ALGO_RING, out);
}
static bool nccl_tree_messages(const struct point *p, uint64_t n, int vb,
                               struct coll_messages *out) {
  return kernel_messages(p, n, vb, NCCL_ALGO_TREE, out);
}

/* NCCL's kernel runs its channels on their own; a codec per hop runs on
 * the lockstep rings and trees. */
static bool nccl_lockstep(const struct point *p) {
  return run_has_codec(p) && p->compression == COMPRESS_PER_HOP;
}

const struct collective coll_nccl_ring = {
    .name = "nccl-ring",
    .description = "NCCL's rings (NCCL_ALGO=Ring): a channel each, "
                   "node-aware, the protocol by NCCL's tuner or "
                   "nccl_proto",
    .formula = "nccl-ring",
    .formula_nodes = "nccl-rings",
    .check_point = nccl_ring_point,
    .lockstep = nccl_lockstep,
    .allgather = nccl_allgather,
    .reduce_scatter = nccl_reduce_scatter,
    .shard_allgather = nccl_shard_allgather,
    .shard_ranges = nccl_shard_ranges,
    .shard_plain = true,
    .worker = nccl_ring_worker,
    .formula_params = nccl_formula,
    .messages = nccl_ring_messages,
    .calls = nccl_calls,
    .ring_legs = true,
};

const struct collective coll_nccl_tree = {
    .name = "nccl-tree",
    .description = "NCCL's double binary tree across machines, chains "
                   "inside (NCCL_ALGO=Tree), chunk by chunk",
    .formula = "nccl-tree",
    .formula_nodes = "nccl-tree",
    .check_point = nccl_tree_point,
    .lockstep = nccl_lockstep,
    .allgather = nccl_allgather,
    .worker = nccl_tree_worker,
    .formula_params = nccl_formula,
    .messages = nccl_tree_messages,
    .calls = nccl_calls,
    .ring_legs = true,
};

const struct collective coll_nccl_rail = {
    .name = "nccl-rail",
    .description = "reduce-scatter in each machine, a ring allreduce per "
                   "rail across machines, allgather in each machine",
    .formula = "nccl-rail",
    .formula_nodes = "nccl-rail",
    .check_point = nccl_check,
    .worker = rail_worker,
    .formula_params = nccl_formula,
    .ring_legs = true,
};

const struct collective coll_nccl = {
    .name = "nccl",
    .description = "NCCL's tuner: per call the algorithm, protocol and "
                   "channels of least time in NCCL's own cost model "
                   "(nccl_algo, nccl_proto force them)",
    .check_point = nccl_point,
    .lockstep = nccl_lockstep,
    .spawn = nccl_spawn,
    .allgather = nccl_allgather,
    .reduce_scatter = nccl_reduce_scatter,
    .shard_allgather = nccl_shard_allgather,
    .shard_ranges = nccl_shard_ranges,
    .shard_plain = true,
    .worker = nccl_worker,
    .formula_params = nccl_formula,
    .messages = nccl_messages,
    .calls = nccl_calls,
    .ring_legs = true,
};
