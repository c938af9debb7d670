/* sim/collectives/common.c: ring phases and the binomial broadcast. */
#include "common.h"
#include "../ffwd/steps.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <xbt/asserts.h>

/* Whether NC channels' blocks over G members make a uniform run of
 * steps (steps.h): equal on every channel, and G dividing them. */
static bool uniform_blocks(const struct ring_chan *ch, int nc, int g) {
  bool uniform = true;
  for (int k = 0; k < nc && uniform; k++)
    uniform = (ch[k].hi - ch[k].lo) % (uint64_t)g == 0 &&
              ch[k].hi - ch[k].lo == ch[0].hi - ch[0].lo;
  return uniform;
}

/* One step of NC rings at once: OUT[k] to channel k's next member, the
 * channels' messages from their previous members into IN. One ring:
 * sim_sendrecv (send posted first, then the receive). */
static void rings_step(struct coll_call *c, const struct ring_chan *ch,
                       int nc, struct msg **out, struct msg **in) {
  if (nc == 1) {
    in[0] = sim_sendrecv(c, ch[0].next, out[0], ch[0].prev);
    return;
  }
  sg_comm_t comms[RING_CHANNELS_MAX];
  int prevs[RING_CHANNELS_MAX] = {0};
  for (int k = 0; k < nc; k++) {
    comms[k] = sim_send(c, ch[k].next, out[k]);
    prevs[k] = ch[k].prev;
  }
  sim_recv_all(c, prevs, nc, in);
  for (int k = 0; k < nc; k++)
    sim_wait_send(c, comms[k]);
}

/* The reduce-scatter's steps 1 .. G - 1, numbered alike in ST's run:
 * the run's step to go on from (G: the allgather's first; later: steps
 * jumped over into the allgather). */
static int reduce_scatter_steps(struct coll_call *c,
                                const struct ring_chan *ch, int nc, int g,
                                struct steps *st) {
  struct msg *out[RING_CHANNELS_MAX], *in[RING_CHANNELS_MAX];
  int s = 1;
  for (; s < g; s++) {
    int skipped = steps_at(c, st, s);
    if (skipped) {
      s += skipped - 1;
      continue;
    }
    if (nc > 1)
      sim_batch_begin(c);
    for (int k = 0; k < nc; k++) {
      int sb = (ch[k].me - s + 1 + g) % g;
      out[k] = sim_pack(c, c->v, block_lo(ch[k].lo, ch[k].hi, g, sb),
                        block_lo(ch[k].lo, ch[k].hi, g, sb + 1), NULL);
    }
    rings_step(c, ch, nc, out, in);
    uint64_t summed = 0;
    for (int k = 0; k < nc; k++) {
      int rb = (ch[k].me - s + g) % g;
      uint64_t a = block_lo(ch[k].lo, ch[k].hi, g, rb),
               b = block_lo(ch[k].lo, ch[k].hi, g, rb + 1);
      sim_unpack(c, in[k], c->v, a, b, true);
      msg_free(in[k]);
      summed += b - a;
    }
    sim_batch_end(c);
    sim_reduce(c->w, c->sim, summed);
  }
  return s;
}

/* The allgather's steps FROM .. 2G - 2 (G: all of them), numbered from
 * FIRST for step G in ST's run. */
static void allgather_steps(struct coll_call *c, const struct ring_chan *ch,
                            int nc, int g, enum ring_codec mode,
                            struct steps *st, int first, int from) {
  /* RING_ENCODE_ONCE: what each channel passes on. After steps jumped
   * over (steps_at), the last step taken's: as many bytes as theirs (the
   * contract jumps only over steps alike). */
  struct msg *carry[RING_CHANNELS_MAX] = {NULL};
  struct msg *out[RING_CHANNELS_MAX], *in[RING_CHANNELS_MAX];
  for (int s = from; s <= 2 * g - 2; s++) {
    int skipped = steps_at(c, st, s - g + first);
    if (skipped) {
      s += skipped - 1;
      continue;
    }
    if (nc > 1)
      sim_batch_begin(c);
    for (int k = 0; k < nc; k++) {
      int sb = (ch[k].me - s + 1 + 2 * g) % g;
      if (carry[k]) {
        out[k] = msg_share(carry[k]);
        msg_free(carry[k]);
        carry[k] = NULL;
      } else {
        out[k] = sim_pack(c, c->v, block_lo(ch[k].lo, ch[k].hi, g, sb),
                          block_lo(ch[k].lo, ch[k].hi, g, sb + 1), NULL);
      }
    }
    rings_step(c, ch, nc, out, in);
    for (int k = 0; k < nc; k++) {
      int rb = (ch[k].me - s + 2 * g) % g;
      sim_unpack(c, in[k], c->v, block_lo(ch[k].lo, ch[k].hi, g, rb),
                 block_lo(ch[k].lo, ch[k].hi, g, rb + 1), false);
      if (mode == RING_ENCODE_ONCE && c->sim->codec && s < 2 * g - 2)
        carry[k] = in[k];
      else
        msg_free(in[k]);
    }
    sim_batch_end(c);
  }
  for (int k = 0; k < nc; k++)
    msg_free(carry[k]);
}

void rings_reduce_scatter(struct coll_call *c, const struct ring_chan *ch,
                          int nc, int g) {
  struct steps st;
  if (steps_begin(c, &st, g, g - 1, uniform_blocks(ch, nc, g)))
    return;
  reduce_scatter_steps(c, ch, nc, g, &st);
  steps_end(c, &st);
}

/* The allgather; TAIL: what follows shares its links (steps_keep_tail). */
static void allgather_leg(struct coll_call *c, const struct ring_chan *ch,
                          int nc, int g, enum ring_codec mode, bool tail) {
  struct steps st;
  if (steps_begin(c, &st, g, g - 1, uniform_blocks(ch, nc, g)))
    return;
  if (tail)
    steps_keep_tail(&st);
  allgather_steps(c, ch, nc, g, mode, &st, 1, g);
  steps_end(c, &st);
}

void rings_allgather(struct coll_call *c, const struct ring_chan *ch, int nc,
                     int g, enum ring_codec mode) {
  allgather_leg(c, ch, nc, g, mode, false);
}

/* An allgather step is then a reduce-scatter step less its sum: the same
 * blocks, with no codec the same bytes, between the same neighbours. When
 * the sum takes no time ([exchange] reduce_rate = fused), the two are
 * alike, and the legs are one run of 2(G - 1) uniform steps (steps.h):
 * the allgather goes on in the reduce-scatter's periodic regime, and a
 * jump decided in the reduce-scatter goes over the allgather too. */
static bool legs_alike(const struct coll_call *c) {
  return sim_plain(c) && c->sim->gamma == 0;
}

void rings_allreduce(struct coll_call *c, const struct ring_chan *ch, int nc,
                     int g, enum ring_codec mode, bool tail) {
  if (!legs_alike(c)) {
    rings_reduce_scatter(c, ch, nc, g);
    allgather_leg(c, ch, nc, g, mode, tail);
    return;
  }
  struct steps st;
  if (steps_begin(c, &st, g, 2 * (g - 1), uniform_blocks(ch, nc, g)))
    return;
  if (tail)
    steps_keep_tail(&st);
  int next = reduce_scatter_steps(c, ch, nc, g, &st);
  allgather_steps(c, ch, nc, g, mode, &st, g, next);
  steps_end(c, &st);
}

/* One ring over GROUP (ME my index): its channel. */
static struct ring_chan group_chan(const int *group, int g, int me,
                                   uint64_t lo, uint64_t hi) {
  return (struct ring_chan){lo, hi, me, group[(me + 1) % g],
                            group[(me + g - 1) % g]};
}

void ring_reduce_scatter(struct coll_call *c, const int *group, int g, int me,
                         uint64_t lo, uint64_t hi) {
  struct ring_chan ch = group_chan(group, g, me, lo, hi);
  rings_reduce_scatter(c, &ch, 1, g);
}

void ring_allgather(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, enum ring_codec mode) {
  struct ring_chan ch = group_chan(group, g, me, lo, hi);
  rings_allgather(c, &ch, 1, g, mode);
}

void ring_allreduce(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, enum ring_codec mode,
                    bool tail) {
  struct ring_chan ch = group_chan(group, g, me, lo, hi);
  rings_allreduce(c, &ch, 1, g, mode, tail);
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
  /* What the children get: the payload received (or the root's CARRY),
   * else the values, packed once; shared by them all (msg_share). */
  struct msg *own = NULL;
  for (mask /= 2; mask >= 1; mask /= 2) {
    if (me + mask >= g)
      continue;
    if (!held && !own)
      own = sim_pack_raw(c, c->v, lo, hi);
    struct msg *out = msg_share(held ? held : own);
    sim_wait_send(c, sim_send(c, group[me + mask], out));
  }
  msg_free(own);
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
  /* Over every worker, the broadcast may repeat an earlier one
   * (steps.h). */
  bool world = group == c->sim->ranks && g == c->sim->nworkers;
  if (steps_gather(c, world, me == 0))
    return;
  struct msg *carry = me == 0 && !sim_plain(c)
                          ? sim_pack(c, c->v, lo, hi, NULL)
                          : NULL;
  tree_broadcast(c, group, g, me, lo, hi, carry);
  msg_free(carry);
  steps_gather_end(c, world);
}

void gather_start(const struct coll_call *c, int p, struct msg *mine,
                  struct msg **all) {
  for (int r = 0; r < p; r++)
    all[r] = NULL;
  mine->src = c->rank;
  all[c->rank] = mine;
}

/* ---- MPICH's recursive-doubling allgather (common.h, gather_rdb) ------ */

/* A bundle of the messages HAVE[A, B) that are present: references, its
 * size their sum. */
static struct msg *bundle(struct msg **have, int a, int b) {
  struct msg *m = g_new0(struct msg, 1);
  m->refs = 1;
  for (int i = a; i < b; i++)
    if (have[i])
      msg_bundle_add(m, have[i]);
  return m;
}

/* The messages IN carries into HAVE (by their origin: parts keep it, a
 * bundle's own src being set by sim_send); how many. */
static int take(struct msg *in, struct msg **have) {
  int k = (int)in->nparts;
  for (size_t i = 0; i < in->nparts; i++) {
    struct msg *part = in->parts[i];
    xbt_assert(!have[part->src], "rank %d's message gathered twice", part->src);
    have[part->src] = msg_ref(part);
  }
  msg_free(in);
  return k;
}

/* Binomial completion of step I (mask 2^I) for a subtree whose partner
 * subtree is cut short by p: DONE of its ranks hold the partner's LAST
 * messages from OFFSET; the others get them (SMPI's tree_root, k and
 * num_procs_completed). Returns the count last received. */
static int complete_subtree(struct coll_call *c, struct msg **have, int i,
                            int mask, int done, int offset, int last) {
  int rank = c->rank;
  int k = i;
  for (int tmp = mask >> 1; tmp; tmp >>= 1, k--) {
    int dst = rank ^ tmp;
    int root = rank >> k << k;
    if (dst > rank && rank < root + done && dst >= root + done) {
      sim_wait_send(c, sim_send(c, dst, bundle(have, offset, offset + last)));
    } else if (dst < rank && dst < root + done && rank >= root + done) {
      last = take(sim_recv(c, dst), have);
    }
  }
  return last;
}

void gather_rdb(struct coll_call *c, struct msg *mine, struct msg **all) {
  int p = c->sim->nworkers, rank = c->rank;
  gather_start(c, p, mine, all);
  int last = 0;
  for (int mask = 1, i = 0; mask < p; mask <<= 1, i++) {
    int dst = rank ^ mask;
    int dst_root = dst >> i << i, my_root = rank >> i << i;
    /* What the caller's subtree holds (ranks past p are none). */
    int held_end = my_root + mask < p ? my_root + mask : p;
    if (dst < p)
      last = take(sim_sendrecv(c, dst, bundle(all, my_root, held_end), dst),
                  all);
    if (dst_root + mask > p)
      last = complete_subtree(c, all, i, mask, p - my_root - mask,
                              my_root + mask, last);
  }
}
