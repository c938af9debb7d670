/* sim/collectives/common.c: ring phases and the binomial broadcast. */
#include "common.h"

#include <simgrid/comm.h>

void ring_reduce_scatter(struct coll_call *c, const int *group, int g, int me,
                         uint64_t lo, uint64_t hi) {
  int next = group[(me + 1) % g], prev = group[(me + g - 1) % g];
  for (int s = 1; s < g; s++) {
    int sb = (me - s + 1 + g) % g, rb = (me - s + g) % g;
    struct msg *out =
        sim_pack(c, c->v, block_lo(lo, hi, g, sb), block_lo(lo, hi, g, sb + 1),
                 NULL);
    struct msg *in = sim_sendrecv(c, next, out, prev);
    uint64_t a = block_lo(lo, hi, g, rb), b = block_lo(lo, hi, g, rb + 1);
    sim_unpack(c, in, c->v, a, b, true);
    sim_reduce(c->w, c->sim, b - a);
    msg_free(in);
  }
}

void ring_allgather(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, enum ring_codec mode) {
  int next = group[(me + 1) % g], prev = group[(me + g - 1) % g];
  struct msg *carry = NULL; /* RING_ENCODE_ONCE: what to pass on */
  for (int s = g; s <= 2 * g - 2; s++) {
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
    if (mode == RING_ENCODE_ONCE && c->sim->codec && s < 2 * g - 2)
      carry = in;
    else
      msg_free(in);
  }
  msg_free(carry);
}

void tree_broadcast(struct coll_call *c, const int *group, int g, int me,
                    uint64_t lo, uint64_t hi, struct msg *carry) {
  /* Binomial tree (Thakur et al. 2005): the parent of virtual rank v > 0
   * is v without its highest set bit; v sends to v + 2^k for every 2^k
   * above its highest bit. */
  struct msg *held = carry;
  if (me > 0) {
    int high = 1;
    while (high * 2 <= me)
      high *= 2;
    held = sim_recv(c, group[me - high]);
    sim_unpack(c, held, c->v, lo, hi, false);
  }
  int mask = 1;
  while (me > 0 && mask <= me)
    mask *= 2;
  /* One child per round, in order: round k reaches the nodes below
   * 2^(k+1), so the children are sent to one after another (sending them
   * at once would share the sender's link and delay the first). */
  for (; me + mask < g; mask *= 2) {
    struct msg *out = held ? sim_forward(held) : sim_pack_raw(c, c->v, lo, hi);
    sim_wait_send(c, sim_send(c, group[me + mask], out));
  }
  if (me > 0)
    msg_free(held);
}
