/* sim/collectives/common.c: ring phases and the binomial broadcast. */
#include "common.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <xbt/asserts.h>

/* Lockstep fast-forward. On a symmetric platform (a generated star, no
 * stragglers, sync schedule, payload none: run.c sets sim->ff_ok) a ring
 * over all workers with equal blocks is in lockstep: every worker starts
 * every step at the same time and every step moves the same bytes over
 * identical links, so every step lasts the same. Steps 1 and 2 of each
 * leg are simulated; the rest are the last simulated step again: the
 * worker sleeps their total and logs their spans and wire bytes as that
 * step's. (A step's time in SimGrid's models is fixed by its message size
 * and route, which are the same for all steps.) Anywhere else every
 * step is simulated. */
enum { FF_SIMULATED = 2 };

static bool ff_applies(const struct coll_call *c, int g, uint64_t lo,
                      uint64_t hi) {
  return c->sim->ff_ok && c->w && g == c->sim->nworkers &&
         g > FF_SIMULATED + 1 && (hi - lo) % (uint64_t)g == 0;
}

/* Where a worker's accounting stood when a step began. Fast-forward runs
 * in sync mode only, where a worker's spans are summed (worker.direct). */
struct ff_mark {
  double t0;
  double acc[ST_NSTATES];
};

static void ff_mark(const struct coll_call *c, struct ff_mark *m) {
  m->t0 = sim_now();
  if (c->w)
    memcpy(m->acc, c->w->acc, sizeof m->acc);
}

/* Skip STEPS steps shaped like the one just simulated since MK, which
 * sent BYTES: the step's time per state, STEPS more times (in the trace,
 * one interval per state), its bytes, and a sleep for their length. */
static void ff_skip(struct coll_call *c, int steps, const struct ff_mark *mk,
                    uint64_t bytes) {
  struct worker *w = c->w;
  double d = sim_now() - mk->t0;
  if (steps <= 0 || !(d > 0))
    return;
  xbt_assert(w->direct, "fast-forward needs summed spans (sync mode)");
  double at = sim_now();
  for (int st = 0; st < ST_NSTATES; st++) {
    double add = (w->acc[st] - mk->acc[st]) * steps;
    w->acc[st] += add;
    sim_trace(w->sim, w->rank, 1, at, at + add, st);
    at += add;
  }
  w->wire_bytes += (double)bytes * steps;
  if (c->rank == 0)
    c->sim->ff_steps += (uint64_t)steps;
  sg_actor_sleep_for(d * steps);
}

void ring_reduce_scatter(struct coll_call *c, const int *group, int g, int me,
                         uint64_t lo, uint64_t hi) {
  int next = group[(me + 1) % g], prev = group[(me + g - 1) % g];
  bool ff = ff_applies(c, g, lo, hi);
  for (int s = 1; s < g; s++) {
    struct ff_mark mk;
    ff_mark(c, &mk);
    int sb = (me - s + 1 + g) % g, rb = (me - s + g) % g;
    struct msg *out =
        sim_pack(c, c->v, block_lo(lo, hi, g, sb), block_lo(lo, hi, g, sb + 1),
                 NULL);
    struct msg *in = sim_sendrecv(c, next, out, prev);
    uint64_t a = block_lo(lo, hi, g, rb), b = block_lo(lo, hi, g, rb + 1);
    sim_unpack(c, in, c->v, a, b, true);
    sim_reduce(c->w, c->sim, b - a);
    uint64_t bytes = in->bytes;
    msg_free(in);
    if (ff && s == FF_SIMULATED) {
      ff_skip(c, g - 1 - s, &mk, bytes);
      break;
    }
  }
}

void ring_allgather(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, enum ring_codec mode) {
  int next = group[(me + 1) % g], prev = group[(me + g - 1) % g];
  struct msg *carry = NULL; /* RING_ENCODE_ONCE: what to pass on */
  bool ff = ff_applies(c, g, lo, hi);
  for (int s = g; s <= 2 * g - 2; s++) {
    struct ff_mark mk;
    ff_mark(c, &mk);
    int sb = (me - s + 1 + 2 * g) % g, rb = (me - s + 2 * g) % g;
    struct msg *out;
    if (carry) {
      out = sim_forward(carry);
      msg_free(carry);
      carry = NULL;
    } else {
      out = sim_pack(c, c->v, block_lo(lo, hi, g, sb),
                     block_lo(lo, hi, g, sb + 1), NULL);
    }
    struct msg *in = sim_sendrecv(c, next, out, prev);
    sim_unpack(c, in, c->v, block_lo(lo, hi, g, rb),
               block_lo(lo, hi, g, rb + 1), false);
    uint64_t bytes = in->bytes;
    if (mode == RING_ENCODE_ONCE && c->sim->codec && s < 2 * g - 2)
      carry = in;
    else
      msg_free(in);
    if (ff && s == g - 1 + FF_SIMULATED) {
      ff_skip(c, 2 * g - 2 - s, &mk, bytes);
      break;
    }
  }
  msg_free(carry);
}

void tree_broadcast(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, struct msg *carry) {
  /* Binomial tree, largest subtree first (MPICH's MPIR_Bcast_binomial;
   * Thakur et al. 2005): the parent of virtual rank v > 0 is v without its
   * lowest set bit; v sends to v + 2^k for every 2^k below that bit, the
   * highest first. The root's first child is the farthest rank (g/2 up),
   * so that when the group is laid out in blocks (GPUs under PCIe
   * switches, hosts under leaf switches) one copy crosses between blocks
   * and the rest stay inside: contention-free, ceil(lg g) rounds. */
  struct msg *held = carry;
  int mask;
  if (me > 0) {
    mask = me & -me;
    held = sim_recv(c, group[me - mask]);
    sim_unpack(c, held, c->v, lo, hi, false);
  } else {
    mask = 1;
    while (mask < g)
      mask *= 2;
  }
  /* One child per round, in order: round k reaches the ranks that are
   * multiples of g/2^k, so the children are sent to one after another
   * (sending them at once would share the sender's link and delay the
   * first). */
  for (mask /= 2; mask >= 1; mask /= 2) {
    if (me + mask >= g)
      continue;
    struct msg *out = held ? sim_forward(held) : sim_pack_raw(c, c->v, lo, hi);
    sim_wait_send(c, sim_send(c, group[me + mask], out));
  }
  if (me > 0)
    msg_free(held);
}

/* The linear reduce of default_allreduce(): the root receives every
 * member's values at once (they share its link), then sums them. */
static void linear_reduce(struct coll_call *c, const int *group, int g,
                          int me, uint64_t lo, uint64_t hi) {
  if (me != 0) {
    sim_wait_send(c, sim_send(c, group[0], sim_pack(c, c->v, lo, hi, NULL)));
    return;
  }
  struct msg **in = g_new0(struct msg *, g - 1);
  sim_recv_all(c, group + 1, g - 1, in);
  for (int i = 0; i < g - 1; i++) {
    sim_unpack(c, in[i], c->v, lo, hi, true);
    msg_free(in[i]);
  }
  g_free(in);
  sim_reduce(c->w, c->sim, (uint64_t)(g - 1) * (hi - lo));
}

void default_allreduce(struct coll_call *c, const int *group, int g, int me,
                       uint64_t lo, uint64_t hi) {
  if (g < 2 || hi <= lo)
    return;
  linear_reduce(c, group, g, me, lo, hi);
  struct msg *carry = me == 0 && c->sim->codec && !c->raw
                          ? sim_pack(c, c->v, lo, hi, NULL)
                          : NULL;
  tree_broadcast(c, group, g, me, lo, hi, carry);
  msg_free(carry);
}
