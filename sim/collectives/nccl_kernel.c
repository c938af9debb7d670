/* sim/collectives/nccl_kernel.c: NCCL's kernel, channel by channel
 * (nccl_kernel.h). One event loop per GPU and call: each channel's
 * program reacts to its messages' arrival and to its own timers (a
 * step's protocol cost), never to another channel's progress, so that a
 * channel's steps cost what their own hops cost (NCCL's tuning model:
 * the network's latency only on the steps that cross machines). */
#include "nccl_kernel.h"

#include "../comm_rate.h"
#include "../ffwd/kff.h"

#include <glib.h>
#include <limits.h>
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <stddef.h>
#include <xbt/asserts.h>

/* ---- the event loop ---------------------------------------------------- */

/* Messages from SRC on channel CHAN still to come (TAG: the program's
 * name for the stream), and the receive asked for. */
/* Receives asked for at once on a stream (NCCL's FIFO slots). */
#define NK_WINDOW NCCL_STEPS

struct nk_in {
  int chan, src, tag;
  int port; /* the mailbox's channel: CHAN, or CREDIT_PORT + CHAN */
  int remaining; /* messages still to come */
  int window;    /* receives asked for at once (nk_window) */
  double bytes;  /* wire bytes of its messages, as timed (0: tiny) */
  /* The receives asked for, oldest first (a ring of NK_WINDOW): the
   * stream's connection FIFO, as many slots as the program's window. */
  int head, posted;
  sg_comm_t get[NK_WINDOW];
  struct msg *m[NK_WINDOW];
};

struct nk;
struct nk_prog {
  /* Timer T is due. */
  void (*fire)(struct nk *k, int t);
  /* Message M arrived on IN. */
  void (*got)(struct nk *k, struct nk_in *in, struct msg *m);
  bool (*done)(const struct nk *k);
};

struct nk {
  struct coll_call *c;
  const struct nk_plan *pl;
  int p;
  const struct nk_prog *prog;
  void *st;          /* the program's channels */
  struct nk_in *in;
  int nin;
  double *at;        /* timers (INFINITY: none) */
  int nt;
  /* When each timer's stream may send again: a channel's CTA copies at
   * most at its rate (nk_cost.chan_Bps), however many of its messages
   * its receivers' windows let be in flight. */
  double *free_at;
  /* The spans: the first message sent and received. */
  double first_sent, first_posted;
  /* The call's streams as kff.h's contract has them, and how the
   * program's counters move over whole periods (apply). */
  struct kff_host ff;
  struct kff_stream *st_ff; /* channel Q's stream: st_ff[q] */
  void (*apply)(struct nk *k, int q, int periods);
  /* The network's proxy (NCCL's proxy thread: net.cc sendProxyProgress
   * posts a send once the CTA has written its slot's tail): messages to
   * another machine, each due the step's cost beyond the wire after its
   * CTA handed it over (struct nk_net), sent in order at NET_AT, the
   * CTA free meanwhile. */
  GQueue *net_q;
  double net_at; /* the first's due time (INFINITY: none) */
};

struct nk_net {
  double due;
  int dst, port;
  struct msg *m;
  double pace;
};

/* Queue M to DST on PORT (flow no faster than PACE) for DUE: the proxy's
 * queue in order of due time, those due alike in the order queued. */
static void nk_later(struct nk *k, double due, int dst, int port, struct msg *m,
                     double pace) {
  struct nk_net *x = g_new(struct nk_net, 1);
  *x = (struct nk_net){due, dst, port, m, pace};
  GList *l = k->net_q->tail;
  while (l && ((struct nk_net *)l->data)->due > due)
    l = l->prev;
  if (l)
    g_queue_insert_after(k->net_q, l, x);
  else
    g_queue_push_head(k->net_q, x);
  k->net_at = ((struct nk_net *)g_queue_peek_head(k->net_q))->due;
}

/* Send the proxy's messages due (at least its first: SimGrid's rounding
 * of a timer), and time the next. */
static void nk_net_fire(struct nk *k) {
  struct nk_net *x;
  bool first = true;
  while ((x = g_queue_peek_head(k->net_q)) && (first || x->due <= sim_now())) {
    g_queue_pop_head(k->net_q);
    sim_send_channel(k->c, x->dst, x->port, x->m, x->pace);
    g_free(x);
    first = false;
  }
  x = g_queue_peek_head(k->net_q);
  k->net_at = x ? x->due : INFINITY;
}

/* The program's counters of stream Q moved PERIODS periods on by a jump,
 * none past the receives already asked for. */
static void nk_apply(struct kff_host *h, int q, int periods) {
  struct nk *k = (struct nk *)(void *)((char *)h - offsetof(struct nk, ff));
  k->apply(k, q, periods);
  for (int j = 0; j < k->nin; j++)
    xbt_assert(k->in[j].remaining >= k->in[j].posted,
               "a jump past receives asked for");
}

/* K's NC streams ST declared to their call (kff.h): PER events a
 * period, REPS periods compared, TOTAL[q] events each. */
static void nk_join(struct nk *k, struct kff_stream *st, int nc, int per,
                    int reps, const long *total) {
  k->ff = (struct kff_host){.c = k->c, .apply = nk_apply};
  k->st_ff = st;
  kff_join(&k->ff, k->p, NCCL_STEPS, st, nc, per, reps, total);
}

/* The rate at which a channel's CTA copies a message over HW (bytes/s
 * of wire; 0: not paced): its protocol's ceiling, else over NVLink (and
 * PCIe) its share of the GPU's link, which every channel of the call
 * sends over; the network's sends are the proxy's, the CTA free. */
static double nk_pace(const struct nk *k, enum nccl_hw hw) {
  const struct nk_cost *cost = &k->pl->cost;
  if (cost->chan_Bps > 0)
    return cost->chan_Bps * cost->wire;
  return hw == NCCL_HW_NET ? 0 : k->pl->link_Bps[hw] / k->pl->nc;
}

/* The messages IN needs in flight to keep its link busy across the
 * link's latency (its bandwidth-delay product in messages, plus the one
 * arriving), at most the program's window (NCCL's FIFO slots). Fewer in
 * flight than NCCL allows change nothing on a busy link (it carries
 * them one after another either way), and spare SimGrid the sharing of
 * every link among all that NCCL's slots would let wait on it. */
static int nk_window(const struct nk *k, const struct nk_in *in) {
  enum nccl_hw hw = k->pl->hw(k->c->sim, in->src, k->c->rank);
  double rate = k->pl->cost.chan_Bps > 0 ? k->pl->cost.chan_Bps * k->pl->cost.wire
                                         : k->pl->link_Bps[hw] / k->pl->nc;
  double t = rate > 0 && in->bytes > 0 ? in->bytes / rate : 0;
  int w = t > 0 ? 1 + (int)ceil(k->pl->lat_hw[hw] / t) : k->pl->window;
  return w < 1 ? 1 : w > k->pl->window ? k->pl->window : w;
}

/* Ask for messages on IN while its window has room and more are to
 * come: their transfers start as soon as their senders post them. */
static void nk_ask(struct nk *k, struct nk_in *in) {
  if (!in->window)
    in->window = nk_window(k, in);
  while (in->posted < in->window && in->posted < in->remaining) {
    int i = (in->head + in->posted++) % NK_WINDOW;
    in->get[i] = sim_get_channel(k->c, in->src, in->port, &in->m[i]);
  }
}

/* The loop: timers due fire (in index order), then the next message or
 * timer is waited for, until the program is done. */
static void nk_loop(struct nk *k) {
  sg_comm_t *gets = g_new(sg_comm_t, k->nin > 0 ? k->nin : 1);
  int *of = g_new(int, k->nin > 0 ? k->nin : 1);
  for (int i = 0; i < k->nin; i++)
    nk_ask(k, &k->in[i]);
  for (;;) {
    sim_release_sends(k->c->sends);
    double now = sim_now();
    bool fired = true;
    while (fired) {
      fired = false;
      for (int t = 0; t < k->nt; t++)
        if (k->at[t] <= now) {
          k->at[t] = INFINITY;
          k->prog->fire(k, t);
          fired = true;
        }
      if (k->net_at <= now) {
        nk_net_fire(k);
        fired = true;
      }
    }
    if (k->prog->done(k) && g_queue_is_empty(k->net_q))
      break;
    /* Each stream's oldest receive: messages are taken in order. */
    int n = 0, soon = -1;
    for (int i = 0; i < k->nin; i++)
      if (k->in[i].posted) {
        gets[n] = k->in[i].get[k->in[i].head];
        of[n++] = i;
      }
    for (int t = 0; t < k->nt; t++)
      if (isfinite(k->at[t]) && (soon < 0 || k->at[t] < k->at[soon]))
        soon = t;
    /* The proxy's next send, if sooner than every timer. */
    bool net = k->net_at < (soon >= 0 ? k->at[soon] : INFINITY);
    double due = net ? k->net_at : soon >= 0 ? k->at[soon] : INFINITY;
    xbt_assert(n > 0 || isfinite(due), "NCCL kernel of rank %d stalled",
               k->c->rank);
    ssize_t r;
    if (n == 0) {
      sg_actor_sleep_for(fmax(due - now, 0));
      r = -1;
    } else if (isfinite(due)) {
      r = sim_wait_any_for(gets, (size_t)n, fmax(due - now, 0));
    } else {
      r = sg_comm_wait_any(gets, (size_t)n);
    }
    if (r < 0) {
      /* The earliest timer is due, to SimGrid's rounding of its time. */
      if (net) {
        nk_net_fire(k);
      } else {
        k->at[soon] = INFINITY;
        k->prog->fire(k, soon);
      }
      continue;
    }
    struct nk_in *in = &k->in[of[r]];
    struct msg *m = in->m[in->head];
    in->head = (in->head + 1) % NK_WINDOW;
    in->posted--;
    in->remaining--;
    nk_ask(k, in);
    sim_got_channel(k->c, m);
    /* A switch's (no GPU's) bytes count on the stream it serves. */
    if (in->src >= k->p)
      kff_received(&k->st_ff[in->chan], in->src,
                   (double)m->bytes + k->c->sim->p->envelope_bytes);
    if (!(k->first_posted >= 0) || m->posted < k->first_posted)
      k->first_posted = m->posted;
    k->prog->got(k, in, m);
  }
  for (int i = 0; i < k->nin; i++)
    xbt_assert(!k->in[i].posted && k->in[i].remaining == 0,
               "NCCL kernel of rank %d ended with %d messages to come",
               k->c->rank, k->in[i].remaining);
  g_free(gets);
  g_free(of);
}

/* K's TIMERS timers (none due) and free times, and room for INS streams
 * of receives; nk_free gives them back. */
static void nk_alloc(struct nk *k, int timers, int ins) {
  k->at = g_new(double, timers);
  k->free_at = g_new0(double, timers);
  k->in = g_new0(struct nk_in, ins);
}

static void nk_free(struct nk *k) {
  g_free(k->at);
  g_free(k->free_at);
  g_free(k->in);
}

/* The call: its launch, the loop, and the communication side's spans:
 * idle while its first message had not yet been posted when its own
 * first had (a peer not yet in the call), the rest transfer. */
static void nk_run(struct nk *k) {
  struct coll_call *c = k->c;
  double t0 = sim_now();
  if (k->pl->cost.launch_s > 0)
    sg_actor_sleep_for(k->pl->cost.launch_s);
  k->first_sent = k->first_posted = -1;
  k->net_q = g_queue_new();
  k->net_at = INFINITY;
  c->sends = sim_keep_sends(c->sim);
  nk_loop(k);
  sim_release_sends(c->sends);
  c->sends = NULL;
  g_queue_free(k->net_q);
  kff_pay(&k->ff);
  double t1 = sim_now(), idle = 0;
  if (k->first_sent >= 0 && k->first_posted > k->first_sent)
    idle = fmin(k->first_posted - k->first_sent, t1 - t0);
  sim_span(c->w, t0, t0 + idle, ST_IDLE);
  sim_span(c->w, t0 + idle, t1, ST_COMM);
}

/* K's call, its streams ST joined: counted among its worker's calls,
 * each of its NC channels armed by ARM, run, and its streams left. */
static void nk_go(struct nk *k, struct kff_stream *st, int nc,
                  void (*arm)(struct nk *k, int q)) {
  if (k->c->w)
    k->c->w->nccl_calls++;
  for (int q = 0; q < nc; q++)
    arm(k, q);
  nk_run(k);
  kff_leave(&k->ff, st, nc);
}

/* A message of values [A, B) of the vector, its bytes the protocol's
 * wire bytes for TIME_VALUES values (payload none: every block at the
 * call's uniform size, so that a channel's steps repeat exactly). */
static struct msg *nk_pack(struct nk *k, uint64_t a, uint64_t b,
                           uint64_t time_values) {
  struct coll_call *c = k->c;
  struct msg *m = sim_pack(c, c->v, a, b, NULL);
  double data = c->v->m ? (double)m->bytes
                        : (double)time_values * sim_value_bytes(c);
  m->bytes = (uint64_t)ceil(data * k->pl->cost.wire);
  return m;
}

/* Send M to DST on PORT from timer T's stream, its flow no faster than
 * PACE (0: as the links share it), the stream busy for its bytes at HOLD
 * (0: not held). */
static void nk_send_rate(struct nk *k, int t, int dst, int port, struct msg *m,
                         double pace, double hold) {
  double now = sim_now();
  if (k->first_sent < 0)
    k->first_sent = now;
  if (hold > 0)
    k->free_at[t] = fmax(k->free_at[t], now) + (double)m->bytes / hold;
  double d = k->pl->cost.step_s[NCCL_HW_NET];
  if (d > 0 && dst < k->p &&
      k->pl->hw(k->c->sim, k->c->rank, dst) == NCCL_HW_NET) {
    nk_later(k, now + d, dst, port, m, pace);
    return;
  }
  sim_send_channel(k->c, dst, port, m, pace);
}

/* Send M to DST on PORT from timer T's stream, which is busy copying it
 * for its bytes at the channel's rate, and M's flow no faster: the CTA's
 * copy is the transfer (a Simple channel alone on its GPU's NVLink takes
 * its share, not the link); ALSO: M goes out beside the stream's last
 * message of this instant, over another link (a tree's chunk to each of
 * its children, copied at once). */
static void nk_send_also(struct nk *k, int t, int dst, int port, struct msg *m,
                         bool also) {
  double pace = nk_pace(k, k->pl->hw(k->c->sim, k->c->rank, dst));
  nk_send_rate(k, t, dst, port, m, pace, also ? 0 : pace);
}

/* The caller's pace to DST at most SHARE (0: none). */
static double nk_pace_in(const struct nk *k, int dst, double share) {
  double pace = nk_pace(k, k->pl->hw(k->c->sim, k->c->rank, dst));
  return share > 0 && (pace <= 0 || share < pace) ? share : pace;
}

static void nk_send(struct nk *k, int t, int dst, int port, struct msg *m) {
  nk_send_also(k, t, dst, port, m, false);
}

/* A ring's send of M from channel Q to DST: as nk_send; to another
 * machine at the channel's fixed share of its route (nk_plan), its CTA
 * busy meanwhile: NCCL's CTA fills the proxy's FIFO of NCCL_STEPS slots,
 * which the NIC empties, and in a long call runs at the NIC's pace. */
static void nk_ring_send(struct nk *k, int q, int dst, struct msg *m) {
  double share = k->pl->share ? k->pl->share[q] : 0;
  if (share > 0) {
    double pace = nk_pace_in(k, dst, share);
    nk_send_rate(k, q, dst, q, m, pace, pace);
  } else {
    nk_send(k, q, dst, q, m);
  }
}

/* Timer T due DELAY after its stream is free: a step's cost is its
 * CTA's time (its flags, fences and waits), one after the other with
 * the copies it makes. */
static void nk_arm(struct nk *k, int t, double delay) {
  k->at[t] = fmax(sim_now(), k->free_at[t]) + delay;
}

/* A step's protocol cost from the caller to rank B on its CTA: none to
 * another machine, where it is the proxy's (nk_send_rate). */
static double nk_step(const struct nk *k, int b) {
  enum nccl_hw hw = k->pl->hw(k->c->sim, k->c->rank, b);
  return hw == NCCL_HW_NET ? 0 : k->pl->cost.step_s[hw];
}

/* ---- credits ----------------------------------------------------------- */

/* A connection's FIFO holds NCCL_STEPS chunks of a tree: a child sends
 * chunk j once its parent has taken chunk j - NCCL_STEPS, which the parent
 * tells it (NCCL's head pointer written back) on the credit port of the
 * channel (a ring's across machines alike: nk_ring): a signal of the wire's
 * latency that takes next to nothing from the data it meets on the way down
 * (sim_send_channel's least, one byte, under SimGrid's default 1 ns; 8 bytes a
 * chunk made the broadcast slower than the reduce, so that a tree whose links
 * carry both never repeated its state). */
#define CREDIT_PORT 64
#define CREDIT_BYTES 0

/* A credit to DST: a slot of its FIFO free again; ST: the sender's
 * stream, which counts its bytes (NULL: a switch's). */
static struct msg *credit_msg(struct coll_call *c, struct kff_stream *st,
                              int dst) {
  struct msg *cr = g_new0(struct msg, 1);
  cr->refs = 1;
  cr->bytes = CREDIT_BYTES;
  if (st)
    kff_sent(st, dst, CREDIT_BYTES + c->sim->p->envelope_bytes);
  return cr;
}

/* A credit to DST on PORT now, over the wire alone. */
static void nk_credit(struct coll_call *c, struct kff_stream *st, int dst,
                      int port) {
  sim_send_channel(c, dst, port, credit_msg(c, st, dst), 0);
}

/* K's credit to DST on PORT for a slot freed at AT (now or later), over
 * the wire alone. Across machines NCCL's net.cc has the receiver's proxy
 * post the slot's receive once the GPU has freed it (recvProxyProgress:
 * posted < done + NCCL_STEPS), which tells the sender's proxy that it may
 * send into it: the proxies' polling on that way no source times, and it
 * is not charged (docs/nccl.md: charged the network step's cost, as the
 * data's way is, it bounds the A100 ring's mid sizes from the other
 * side). */
static void nk_credit_at(struct nk *k, struct kff_stream *st, int dst, int port,
                         double at) {
  if (at <= sim_now())
    nk_credit(k->c, st, dst, port);
  else
    nk_later(k, at, dst, port, credit_msg(k->c, st, dst), 0);
}

/* A ring's FIFO across machines (nk_ring, nk_gather): the receiver
 * frees a message's slots once its CTA has copied the message on, or on
 * arrival where it keeps it; the sender sends at most the window
 * (NCCL's NCCL_STEPS slots) ahead of those credits. The call's last
 * window frees slots no send waits for: no credit (the call would
 * otherwise end with their way back). */
struct nk_credits {
  bool next, prev; /* the neighbours on other machines */
  int owed;        /* credits the sends wait for: a message's, but the
                    * last window's */
  int got;         /* from the next */
  int in;          /* their stream (k->in), or -1 */
};

/* CR of channel Q between PREV and NEXT, TOTAL messages each way: its
 * credits' stream added to K's (after every data stream: a program's
 * data stream of channel q is k->in[q]). */
static void credits_init(struct nk *k, struct nk_credits *cr, int q, int prev,
                         int next, int total) {
  int me = k->c->rank;
  *cr = (struct nk_credits){
      .next = k->pl->hw(k->c->sim, me, next) == NCCL_HW_NET,
      .prev = k->pl->hw(k->c->sim, prev, me) == NCCL_HW_NET,
      .owed = total > k->pl->window ? total - k->pl->window : 0,
      .in = -1};
  if (cr->next) {
    cr->in = k->nin;
    k->in[k->nin++] = (struct nk_in){
        .chan = q, .port = CREDIT_PORT + q, .src = next, .remaining = cr->owed};
  }
}

/* Whether message SENT may go: within the window of the credits. */
static bool credits_room(const struct nk *k, const struct nk_credits *cr,
                         int sent) {
  return !cr->next || sent < cr->got + k->pl->window;
}

/* Whether M, received on IN, is a credit (the credits' stream, port
 * CREDIT_PORT + q, not the data's, port q): counted, and M freed. */
static bool credits_take(struct nk_credits *cr, const struct nk_in *in,
                         struct msg *m) {
  if (in->port == in->chan)
    return false;
  msg_free(m);
  cr->got++;
  return true;
}

static bool credits_done(const struct nk_credits *cr) {
  return !cr->next || cr->got >= cr->owed;
}

/* Message MSG received on channel Q from PREV freed its slots at AT: its
 * credit, if one is owed. */
static void credits_free(struct nk *k, const struct nk_credits *cr,
                         struct kff_stream *st, int q, int prev, int msg,
                         double at) {
  if (cr->prev && msg < cr->owed)
    nk_credit_at(k, st, prev, CREDIT_PORT + q, at);
}

/* A jump of N messages each way. */
static void credits_apply(struct nk *k, struct nk_credits *cr, int n) {
  if (cr->in >= 0) {
    cr->got += n;
    k->in[cr->in].remaining -= n;
  }
}

/* ---- rings ------------------------------------------------------------- */

/* A ring's channel. Across machines its FIFO's credits are modelled
 * (struct nk_credits): a slice's slots free once the CTA has copied it on
 * (prims_simple.h posts the head with the tail, after the copy), or on
 * arrival at a loop's last step, which keeps it. Over NVLink the same loop (the
 * data's step, the receiver's, the link's latency back) is no longer than the
 * two steps the window spans: not modelled, as no message would wait for it. */
struct nk_ring {
  struct ring_chan ch;
  int q;         /* the channel */
  int loops;
  uint64_t bv;   /* values per slice, as timed */
  int total;     /* sends, and receives, over the loops */
  int sent, got;
  bool armed;
  struct nk_credits cr;
};

/* The rings' own: the channels and their streams. */
struct nk_rings {
  struct nk_ring *r;
  struct kff_stream *st;
};

/* Values [A, B) of slice I of loop L's block J of channel R: the
 * allreduce's block J of the loop's part of the channel's share; a leg's
 * the loop's part of the channel's part of the shard of the rank at
 * position J. */
static void ring_block(const struct nk *k, const struct nk_ring *r, int l,
                       int j, int i, uint64_t *a, uint64_t *b) {
  const struct nk_plan *pl = k->pl;
  int p = k->p, slices = pl->slices;
  uint64_t ba, bb;
  if (pl->leg == NK_ALLREDUCE) {
    uint64_t lo = block_lo(r->ch.lo, r->ch.hi, r->loops, l),
             hi = block_lo(r->ch.lo, r->ch.hi, r->loops, l + 1);
    ba = block_lo(lo, hi, p, j);
    bb = block_lo(lo, hi, p, j + 1);
  } else {
    uint64_t n = k->c->v->n;
    int rank = pl->rank_at(pl->ctx, r->q, j);
    uint64_t slo = block_lo(0, n, p, rank), shi = block_lo(0, n, p, rank + 1);
    uint64_t clo = block_lo(slo, shi, pl->nc, r->q),
             chi = block_lo(slo, shi, pl->nc, r->q + 1);
    ba = block_lo(clo, chi, r->loops, l);
    bb = block_lo(clo, chi, r->loops, l + 1);
  }
  *a = block_lo(ba, bb, slices, i);
  *b = block_lo(ba, bb, slices, i + 1);
}

/* A loop's steps: the allreduce's 2 (p - 1), a leg's p - 1. Step S (from
 * 1) of the loop sends the block at position ME - S + 1 and receives
 * ME - S's (the allreduce: its reduce-scatter leaves ME + 1's sum; NCCL's
 * AllGather sends its own first), one position earlier in NCCL's
 * ReduceScatter (whose last step leaves ME's own sum), summing in the
 * reduce-scatter's steps. */
static int ring_per(const struct nk *k) {
  return (k->pl->leg == NK_ALLREDUCE ? 2 : 1) * (k->p - 1);
}
static int ring_shift(const struct nk *k) {
  return k->pl->leg == NK_REDUCE_SCATTER ? 1 : 0;
}

/* Messages are slices: message q is slice q mod S of ring step q / S
 * (ring.c's numbering over the loops). The next send is armed once its
 * slice of what it forwards has arrived: slice i of step s forwards what
 * slice i of step s - 1 brought (NCCL's ring step, sliced as NCCL's
 * Simple protocol slices a chunk, so that a step forwards its first
 * slice while its second arrives). The step's cost is its first slice's:
 * NCCL's figure is a step's (the tuner charges nsteps of it), on the
 * way of every value through the ring, and a step's slices follow its
 * first through the same synchronisation (prims_simple.h posts them all,
 * the empty ones of a small call too). */
static void ring_arm(struct nk *k, int q) {
  struct nk_ring *r = &((struct nk_rings *)k->st)->r[q];
  int sl = k->pl->slices;
  if (!r->armed && r->sent < r->total && r->got >= r->sent - sl + 1 &&
      credits_room(k, &r->cr, r->sent)) {
    r->armed = true;
    nk_arm(k, q, r->sent % sl == 0 ? nk_step(k, r->ch.next) : 0);
  }
}

/* A jump: PERIODS periods of a machine's steps, every slice of them
 * sent and received. */
static void ring_apply(struct nk *k, int q, int periods) {
  struct nk_ring *r = &((struct nk_rings *)k->st)->r[q];
  int n = periods * k->pl->macro * k->pl->slices;
  r->sent += n;
  r->got += n;
  k->in[q].remaining -= n; /* the ring's stream in q: nccl_kernel_ring */
  credits_apply(k, &r->cr, n);
}

static void ring_fire(struct nk *k, int q) {
  struct nk_rings *x = k->st;
  struct nk_ring *r = &x->r[q];
  struct coll_call *c = k->c;
  int p = k->p, sl = k->pl->slices, per = ring_per(k);
  r->armed = false;
  int st = r->sent / sl, l = st / per, s = st % per + 1;
  uint64_t a, b;
  ring_block(k, r, l, (r->ch.me - s + 1 - ring_shift(k) + 2 * p) % p,
             r->sent % sl, &a, &b);
  struct msg *out = nk_pack(k, a, b, r->bv);
  kff_sent(&x->st[q], r->ch.next,
           (double)out->bytes + c->sim->p->envelope_bytes);
  nk_ring_send(k, q, r->ch.next, out);
  /* A step after a loop's first forwards the slice received a step ago:
   * its slots free once the copy is done. */
  if (s > 1)
    credits_free(k, &r->cr, &x->st[q], q, r->ch.prev, r->sent - sl,
                 fmax(k->free_at[q], sim_now()));
  r->sent++;
  kff_event(&x->st[q]);
  ring_arm(k, q);
}

static void ring_got(struct nk *k, struct nk_in *in, struct msg *msg) {
  struct nk_ring *r = &((struct nk_rings *)k->st)->r[in->chan];
  int p = k->p, sl = k->pl->slices, per = ring_per(k);
  if (credits_take(&r->cr, in, msg)) {
    ring_arm(k, in->chan);
    return;
  }
  int st = r->got / sl, l = st / per, s = st % per + 1;
  uint64_t a, b;
  ring_block(k, r, l, (r->ch.me - s - ring_shift(k) + 2 * p) % p,
             r->got % sl, &a, &b);
  sim_unpack(k->c, msg, k->c->v, a, b,
             k->pl->leg != NK_ALLGATHER && s <= p - 1);
  msg_free(msg);
  /* The loop's last step keeps what it receives: its slots free now. */
  if (s == per)
    credits_free(k, &r->cr, &((struct nk_rings *)k->st)->st[in->chan], in->chan,
                 r->ch.prev, r->got, sim_now());
  r->got++;
  kff_rx(&((struct nk_rings *)k->st)->st[in->chan]);
  ring_arm(k, in->chan);
}

static bool ring_done(const struct nk *k) {
  const struct nk_ring *r = ((const struct nk_rings *)k->st)->r;
  for (int q = 0; q < k->nt; q++)
    if (r[q].sent < r[q].total || r[q].got < r[q].total ||
        !credits_done(&r[q].cr))
      return false;
  return true;
}

static const struct nk_prog ring_prog = {ring_fire, ring_got, ring_done};

/* Values per block as timed: the channel's values over its loops and
 * ranks, rounded up to NCCL's 16-byte alignment. */
static uint64_t aligned_block(const struct coll_call *c, uint64_t values,
                              uint64_t blocks) {
  uint64_t v = (values + blocks - 1) / blocks;
  uint64_t align = 16 / (uint64_t)sim_value_bytes(c);
  return (v + align - 1) / align * align;
}

void nccl_kernel_ring(struct coll_call *c, const struct nk_plan *pl,
                      const struct ring_chan *ch, int p) {
  if (p < 2)
    return;
  int nc = pl->nc, sl = pl->slices;
  struct nk k = {.c = c, .pl = pl, .p = p, .prog = &ring_prog, .nt = nc,
                 .apply = ring_apply};
  struct nk_rings x = {g_new0(struct nk_ring, nc),
                       g_new0(struct kff_stream, nc)};
  k.st = &x;
  nk_alloc(&k, nc, 2 * nc);
  long *total = g_new(long, nc);
  for (int q = 0; q < nc; q++) {
    /* A leg's channel carries a part of each of the P shards: timed as
     * P of the largest part (shards and parts differ by a value at
     * most). */
    uint64_t v = c->v->n, n = pl->leg == NK_ALLREDUCE
                                  ? ch[q].hi - ch[q].lo
                                  : (uint64_t)p *
                                        (((v + p - 1) / p + nc - 1) / nc);
    struct nk_ring *r = &x.r[q];
    r->ch = ch[q];
    r->q = q;
    r->loops = n ? (int)((n + (uint64_t)p * pl->chunk - 1) /
                         ((uint64_t)p * pl->chunk))
                 : 0;
    r->total = r->loops * ring_per(&k) * sl;
    r->bv = n ? aligned_block(c, n, (uint64_t)r->loops * p * sl) : 0;
    total[q] = r->total;
    k.at[q] = INFINITY;
    k.in[k.nin++] = (struct nk_in){.chan = q,
                                   .port = q,
                                   .src = ch[q].prev,
                                   .bytes = (double)r->bv * sim_value_bytes(c) *
                                            pl->cost.wire,
                                   .remaining = r->total};
  }
  /* The credits' streams after the data's (ring_apply: data q in q). */
  for (int q = 0; q < nc; q++)
    credits_init(&k, &x.r[q].cr, q, ch[q].prev, ch[q].next, x.r[q].total);
  /* A ring's sends repeat machine by machine: its hops are a machine's
   * NVLinks then a network step. */
  nk_join(&k, x.st, nc, pl->macro * sl, NK_RING_REPS, total);
  nk_go(&k, x.st, nc, ring_arm);
  g_free(total);
  g_free(x.r);
  g_free(x.st);
  nk_free(&k);
}

/* ---- trees ------------------------------------------------------------- */

/* A channel's tree: its chunks, the reduce stream up (timer 2q) and the
 * broadcast stream down (timer 2q + 1). The events it declares (kff.h):
 * its sends up (the root: down), one a chunk. */
struct nk_treech {
  struct nk_tree t;
  uint64_t cv;   /* values per chunk, as timed */
  int m;         /* chunks */
  int up_sent, down_sent;
  int got_kid[3], got_par, credits;
  bool up_armed, down_armed;
};

struct nk_trees {
  struct nk_treech *t;
  struct kff_stream *st;
  bool chain; /* CollNet's chains (nccl_kernel_tree's SHARPS) */
  bool fixed; /* the streams at their fixed shares (given: nk_tree's) */
};

enum { TAG_PARENT = 3, TAG_CREDIT = 4 };

static int kids_min(const struct nk_treech *t) {
  int g = INT32_MAX;
  for (int i = 0; i < t->t.nkids; i++)
    g = t->got_kid[i] < g ? t->got_kid[i] : g;
  return g;
}

static bool up_ready(const struct nk_treech *t) {
  return t->t.up >= 0 && t->up_sent < t->m && kids_min(t) > t->up_sent &&
         t->up_sent < t->credits + NCCL_STEPS;
}

/* Chunks the broadcast may send: the root's reduced ones, or what the
 * parent sent; without split threads only once the reduce is done. */
static bool down_ready(const struct nk *k, const struct nk_treech *t) {
  if (!t->t.nkids || t->down_sent >= t->m)
    return false;
  bool root = t->t.up < 0;
  int avail = root ? kids_min(t) : t->got_par;
  if (!k->pl->split && (root ? kids_min(t) < t->m : t->up_sent < t->m))
    return false;
  return avail > t->down_sent;
}

static double down_step(const struct nk *k, const struct nk_treech *t) {
  double s = 0;
  for (int i = 0; i < t->t.nkids; i++)
    s = fmax(s, nk_step(k, t->t.kids[i]));
  return s;
}

/* Timer S due after a step's cost DELAY. At fixed shares (and on
 * CollNet's chains, paced apart) the delay of the chunk, its stream
 * sending the one before meanwhile (a step's latency is the chunk's way
 * down the tree or chain, as NVLS's: nvls_arm): a step that held the
 * stream would leave its share idle, where on links SimGrid shares the
 * other streams take it up. Else on the CTA after its stream is free
 * (nk_arm). */
static void tree_step(struct nk *k, int s, double delay) {
  const struct nk_trees *x = k->st;
  if (x->chain || x->fixed)
    k->at[s] = fmax(sim_now() + delay, k->free_at[s]);
  else
    nk_arm(k, s, delay);
}

static void tree_arm(struct nk *k, int q) {
  struct nk_treech *t = &((struct nk_trees *)k->st)->t[q];
  if (!t->up_armed && up_ready(t)) {
    t->up_armed = true;
    /* To SHARP's switches the step costs the head nothing: it hands its
     * chunk to the network's proxy and goes on (the hop's latency is the
     * call's: cost_of). */
    tree_step(k, 2 * q, t->t.up >= k->p ? 0 : nk_step(k, t->t.up));
  }
  if (!t->down_armed && down_ready(k, t)) {
    t->down_armed = true;
    tree_step(k, 2 * q + 1, down_step(k, t));
  }
}

static void chunk_range(const struct nk_treech *t, int j, uint64_t *a,
                        uint64_t *b) {
  *a = block_lo(t->t.lo, t->t.hi, t->m, j);
  *b = block_lo(t->t.lo, t->t.hi, t->m, j + 1);
}

/* The slot of one chunk taken from each child: a credit to each. */
static void tree_credit(struct nk *k, int q) {
  struct nk_trees *x = k->st;
  struct nk_treech *t = &x->t[q];
  for (int i = 0; i < t->t.nkids; i++)
    nk_credit(k->c, &x->st[q], t->t.kids[i], CREDIT_PORT + q);
}

/* A jump: PERIODS chunks of both streams, and their credits. */
static void tree_apply(struct nk *k, int q, int periods) {
  struct nk_treech *t = &((struct nk_trees *)k->st)->t[q];
  if (t->t.up >= 0) {
    t->up_sent += periods;
    t->got_par += periods;
    t->credits += periods;
  }
  for (int i = 0; i < t->t.nkids; i++)
    t->got_kid[i] += periods;
  if (t->t.nkids)
    t->down_sent += periods;
  for (int i = 0; i < k->nin; i++)
    if (k->in[i].chan == q)
      k->in[i].remaining -= periods;
}

static void tree_fire(struct nk *k, int s) {
  int q = s / 2;
  struct nk_trees *x = k->st;
  struct nk_treech *t = &x->t[q];
  uint64_t a, b;
  double env = k->c->sim->p->envelope_bytes;
  bool up = s % 2 == 0, root = t->t.up < 0;
  if (up) {
    t->up_armed = false;
    chunk_range(t, t->up_sent, &a, &b);
    struct msg *out = nk_pack(k, a, b, t->cv);
    kff_sent(&x->st[q], t->t.up, (double)out->bytes + env);
    double pace = nk_pace_in(k, t->t.up, x->fixed ? t->t.share_up : 0);
    nk_send_rate(k, s, t->t.up, q, out, pace, pace);
    t->up_sent++;
    tree_credit(k, q);
  } else {
    t->down_armed = false;
    chunk_range(t, t->down_sent, &a, &b);
    /* The chunk to every child at once, the stream held for the first
     * (at fixed shares: the slowest). */
    double pace[3], hold = INFINITY;
    for (int i = 0; i < t->t.nkids; i++) {
      pace[i] = nk_pace_in(k, t->t.kids[i], x->fixed ? t->t.share_kid[i] : 0);
      if (pace[i] > 0 && (x->fixed || i == 0))
        hold = fmin(hold, pace[i]);
    }
    for (int i = 0; i < t->t.nkids; i++) {
      struct msg *out = nk_pack(k, a, b, t->cv);
      kff_sent(&x->st[q], t->t.kids[i], (double)out->bytes + env);
      nk_send_rate(k, s, t->t.kids[i], q, out, pace[i],
                   i == 0 && isfinite(hold) ? hold : 0);
    }
    t->down_sent++;
  }
  if (up != root)
    kff_event(&x->st[q]);
  tree_arm(k, q);
}

static void tree_got(struct nk *k, struct nk_in *in, struct msg *msg) {
  int q = in->chan;
  struct nk_treech *t = &((struct nk_trees *)k->st)->t[q];
  uint64_t a, b;
  if (in->tag == TAG_CREDIT) {
    t->credits++;
  } else if (in->tag == TAG_PARENT) {
    chunk_range(t, t->got_par, &a, &b);
    /* SHARP's total comes as the machines' parts, summed here. */
    for (size_t i = 0; i < msg->nparts; i++)
      sim_unpack(k->c, msg->parts[i], k->c->v, a, b, i > 0);
    if (!msg->nparts)
      sim_unpack(k->c, msg, k->c->v, a, b, false);
    t->got_par++;
    kff_rx(&((struct nk_trees *)k->st)->st[q]);
  } else {
    chunk_range(t, t->got_kid[in->tag], &a, &b);
    sim_unpack(k->c, msg, k->c->v, a, b, true);
    int before = kids_min(t);
    t->got_kid[in->tag]++;
    /* The root reduces a chunk once its last part is in, freeing a slot
     * on every child. */
    if (t->t.up < 0 && kids_min(t) > before) {
      tree_credit(k, q);
      kff_rx(&((struct nk_trees *)k->st)->st[q]);
    }
  }
  msg_free(msg);
  tree_arm(k, q);
}

static bool tree_done(const struct nk *k) {
  const struct nk_treech *t = ((const struct nk_trees *)k->st)->t;
  for (int q = 0; q < k->nt / 2; q++) {
    if ((t[q].t.up >= 0 && (t[q].up_sent < t[q].m || t[q].got_par < t[q].m)) ||
        (t[q].t.nkids && t[q].down_sent < t[q].m) ||
        (t[q].t.nkids && kids_min(&t[q]) < t[q].m))
      return false;
  }
  return true;
}

static const struct nk_prog tree_prog = {tree_fire, tree_got, tree_done};

static void sharp_apply(void *state, int periods);

void nccl_kernel_tree(struct coll_call *c, const struct nk_plan *pl,
                      const struct nk_tree *tree, int p,
                      struct nk_sharp *const *sharps) {
  if (p < 2)
    return;
  int nc = pl->nc;
  struct nk k = {.c = c, .pl = pl, .p = p, .prog = &tree_prog, .nt = 2 * nc,
                 .apply = tree_apply};
  struct nk_trees x = {g_new0(struct nk_treech, nc),
                       g_new0(struct kff_stream, nc), sharps != NULL, false};
  k.st = &x;
  nk_alloc(&k, 2 * nc, 5 * nc);
  long *total = g_new(long, nc);
  for (int q = 0; q < nc; q++) {
    uint64_t n = tree[q].hi - tree[q].lo;
    struct nk_treech *t = &x.t[q];
    t->t = tree[q];
    t->m = n ? (int)((n + pl->chunk - 1) / pl->chunk) : 0;
    t->cv = n ? aligned_block(c, n, (uint64_t)t->m) : 0;
    /* Without split threads the reduce and the broadcast follow one
     * another at every GPU: not one periodic regime, no jump. */
    total[q] = pl->split ? t->m : 0;
    k.at[2 * q] = k.at[2 * q + 1] = INFINITY;
    double cb = (double)t->cv * sim_value_bytes(c) * pl->cost.wire;
    for (int i = 0; i < tree[q].nkids; i++)
      k.in[k.nin++] = (struct nk_in){.chan = q, .port = q,
                                     .src = tree[q].kids[i], .tag = i,
                                     .remaining = t->m, .bytes = cb};
    if (tree[q].up >= 0) {
      k.in[k.nin++] = (struct nk_in){.chan = q, .port = q,
                                     .src = tree[q].up, .tag = TAG_PARENT,
                                     .remaining = t->m, .bytes = cb};
      k.in[k.nin++] = (struct nk_in){.chan = q, .port = CREDIT_PORT + q,
                                     .src = tree[q].up, .tag = TAG_CREDIT,
                                     .remaining = t->m};
    }
  }
  x.fixed = nc > 0 && (tree[0].share_up > 0 || tree[0].share_kid[0] > 0);
  nk_join(&k, x.st, nc, 1, NK_CHUNK_REPS, total);
  /* SHARP's gathers jump with the GPUs. */
  for (int q = 0; sharps && q < nc; q++)
    kff_add_passive(k.ff.ff, sharp_apply, sharps[q]);
  nk_go(&k, x.st, nc, tree_arm);
  g_free(total);
  g_free(x.t);
  g_free(x.st);
  nk_free(&k);
}

/* ---- NVLink SHARP ------------------------------------------------------ */

/* NVLS inside one machine (NCCL's runNvls): per chunk, every GPU hands
 * the switch the whole chunk, in G parts (its NVLink up carries the
 * chunk); the switch reduces part k over the G GPUs and gives it to GPU
 * k (multimem.ld_reduce: NVLink down carries a part); GPU k stores the
 * reduced part back (up: a part), and the switch multicasts it to every
 * GPU (down: the chunk). A GPU's NVLink carries the chunk and one part
 * each way: (1 + 1/G) x the buffer, where a ring's carries 2 (G - 1)/G.
 * The switch's work is its actors', which only forward messages (its
 * reductions at line rate): the reduced part reaches GPU k as a bundle
 * of the G parts, which GPU k sums. The switch serves each channel
 * apart, as NCCL's NVLS channels are (an actor a channel). Ports: on
 * channel Q a GPU sends its chunks on NVLS_PORT + 2Q, its reduced parts
 * on NVLS_PORT + 2Q + 1; the switch sends the reduced parts on
 * NVLS_DOWN + 2Q and its multicasts on NVLS_DOWN + 2Q + 1.
 *
 * NVLS's tree across machines (NCCL's NVLS_TREE, all_reduce.h): GPU k of
 * every machine is the head of part k, and the heads of part k form the
 * channel's tree over the machines (NCCL's double binary tree, over the
 * GPUs of one rail). A head adds to its machine's sum of part k (the
 * switch's) its children's, which they send up on NVLS_NET + Q, sends
 * the sum to its parent (the reduce warps), and stores the total it gets
 * back (the root: its own) to the switch while sending it down to its
 * children (the broadcast warps). A parent credits each child on
 * NVLS_CREDIT + Q for every chunk it takes, NCCL_STEPS in flight.
 *
 * Timers: 3Q a chunk to the switch, 3Q + 1 a part stored (and sent
 * down), 3Q + 2 a part sent up. The events a GPU declares (kff.h): its
 * chunks sent, one a period. */
#define NVLS_PORT 128
#define NVLS_DOWN (NVLS_PORT + 2 * RING_CHANNELS_MAX)
#define NVLS_NET (NVLS_DOWN + 2 * RING_CHANNELS_MAX)
#define NVLS_CREDIT (NVLS_NET + RING_CHANNELS_MAX)

enum { NT_KID0 = 4, NT_PARENT = 8, NT_CREDIT = 9 };

struct nk_nvls {
  int m;          /* chunks */
  uint64_t lo, hi, cv;
  int p1, red, p2, mc; /* chunks sent, reduced parts in, parts stored,
                        * multicasts in */
  bool armed1, armed2;
  /* Across machines: the channel's tree, chunks sent up, credits from
   * the parent, totals from the parent, chunks from each child (held
   * until taken: a child's part may come before this machine's sum). */
  const struct nk_tree *tr;
  int up_sent, credits, got_par, got_kid[3], used_kid;
  struct msg *held[3][NK_WINDOW];
  bool armed_up;
};

/* The NVLS program's own: the machine's GPUs and its switch's rank. */
struct nk_nvls_ctx {
  struct nk_nvls *ch;
  struct kff_stream *st;
  int g, local, sw;
};

static void chunk_part(const struct nk_nvls *t, int g, int j, int k,
                       uint64_t *a, uint64_t *b) {
  uint64_t lo = block_lo(t->lo, t->hi, t->m, j),
           hi = block_lo(t->lo, t->hi, t->m, j + 1);
  *a = block_lo(lo, hi, g, k);
  *b = block_lo(lo, hi, g, k + 1);
}

static int held_min(const struct nk_nvls *t) {
  int m = INT32_MAX;
  for (int i = 0; t->tr && i < t->tr->nkids; i++)
    m = t->got_kid[i] < m ? t->got_kid[i] : m;
  return m;
}

/* Totals this head may store (and send down): its own sums of its
 * children's and its machine's at the root, else its parent's. */
static int nvls_totals(const struct nk_nvls *t) {
  if (!t->tr)
    return t->red;
  if (t->tr->up >= 0)
    return t->got_par;
  int h = held_min(t);
  return h < t->red ? h : t->red;
}

/* Chunks whose reduced parts this head has consumed, which frees their
 * slots to the scatter: on one machine the switch's multicast of the
 * chunk back; across machines the reduce warps' send of the part up the
 * tree (the root's store of the total), not the total's return (NCCL's
 * scatter writes into the heads' NVLS buffers, whose slots the heads'
 * reduce warps free as they read them: all_reduce.h, NVLS_TREE). The
 * heads of a machine sit at the same place in their rails' trees, so
 * this head's count stands for theirs. */
static int nvls_freed(const struct nk_nvls *t) {
  if (!t->tr)
    return t->mc;
  return t->tr->up >= 0 ? t->up_sent : t->p2;
}

static bool nvls_up_ready(const struct nk_nvls *t) {
  return t->tr && t->tr->up >= 0 && t->up_sent < t->m &&
         t->up_sent < t->red && held_min(t) > t->up_sent &&
         t->up_sent < t->credits + NCCL_STEPS;
}

/* NVLS's step cost delays a chunk without holding its stream: NCCL's
 * NVLS kernel gives its scatter, reduce and gather each their own warps,
 * so one chunk's synchronisation overlaps another's loads and stores
 * (a ring's CTA does both in turn: nk_arm). */
static void nvls_arm(struct nk *k, int q) {
  struct nk_nvls_ctx *x = k->st;
  struct nk_nvls *t = &x->ch[q];
  double o = k->pl->cost.step_s[NCCL_HW_NVLINK];
  if (!t->armed1 && t->p1 < t->m && t->p1 < nvls_freed(t) + NCCL_STEPS) {
    t->armed1 = true;
    k->at[3 * q] = fmax(sim_now() + o, k->free_at[3 * q]);
  }
  if (!t->armed2 && t->p2 < nvls_totals(t)) {
    t->armed2 = true;
    k->at[3 * q + 1] = fmax(sim_now() + o, k->free_at[3 * q]);
  }
  if (!t->armed_up && nvls_up_ready(t)) {
    t->armed_up = true;
    k->at[3 * q + 2] = fmax(sim_now(), k->free_at[3 * q + 2]);
  }
}

/* A jump: PERIODS chunks of every stage. */
static void nvls_apply(struct nk *k, int q, int periods) {
  struct nk_nvls_ctx *x = k->st;
  struct nk_nvls *t = &x->ch[q];
  t->p1 += periods;
  t->red += periods;
  t->p2 += periods;
  t->mc += periods;
  if (t->tr) {
    /* The tree's counts too, and the children's held parts renumbered:
     * a part held for chunk j now stands for chunk j + PERIODS (no values
     * travel where a call jumps). */
    if (t->tr->up >= 0) {
      t->up_sent += periods;
      t->credits += periods;
      t->got_par += periods;
    }
    t->used_kid += periods;
    for (int i = 0; i < t->tr->nkids; i++) {
      struct msg *h[NK_WINDOW];
      for (int j = 0; j < NK_WINDOW; j++)
        h[(j + periods) % NK_WINDOW] = t->held[i][j];
      memcpy(t->held[i], h, sizeof h);
      t->got_kid[i] += periods;
    }
  }
  for (int i = 0; i < k->nin; i++)
    if (k->in[i].chan == q)
      k->in[i].remaining -= periods;
}

/* Take the held parts of chunk J from the children into the vector, and
 * credit each child. */
static void nvls_take_kids(struct nk *k, int q, int j) {
  struct nk_nvls_ctx *x = k->st;
  struct nk_nvls *t = &x->ch[q];
  uint64_t a, b;
  chunk_part(t, x->g, j, x->local, &a, &b);
  for (int i = 0; i < t->tr->nkids; i++) {
    struct msg *m = t->held[i][j % NK_WINDOW];
    t->held[i][j % NK_WINDOW] = NULL;
    xbt_assert(m, "NVLS tree: child %d's chunk %d not held", i, j);
    sim_unpack(k->c, m, k->c->v, a, b, true);
    msg_free(m);
    nk_credit(k->c, &x->st[q], t->tr->kids[i], NVLS_CREDIT + q);
  }
  t->used_kid++;
}

static void nvls_fire(struct nk *k, int s) {
  struct nk_nvls_ctx *x = k->st;
  int q = s / 3;
  struct nk_nvls *t = &x->ch[q];
  uint64_t a, b;
  double env = k->c->sim->p->envelope_bytes;
  if (s % 3 == 0) {
    t->armed1 = false;
    struct msg *out = g_new0(struct msg, 1);
    out->refs = 1;
    out->tag = q;
    for (int i = 0; i < x->g; i++) {
      chunk_part(t, x->g, t->p1, i, &a, &b);
      struct msg *part = nk_pack(k, a, b, t->cv / (uint64_t)x->g);
      msg_bundle_add(out, part);
      msg_free(part);
    }
    out->rate_Bps = k->pl->cost.chan_Bps;
    kff_sent(&x->st[q], x->sw, (double)out->bytes + env);
    nk_send(k, s, x->sw, NVLS_PORT + 2 * q, out);
    /* The switch always takes it at once: the exchange has begun. */
    struct worker *w = k->c->w;
    if (w && (w->first_send < 0 || sim_now() < w->first_send))
      w->first_send = sim_now();
    t->p1++;
    kff_event(&x->st[q]);
  } else if (s % 3 == 1) {
    t->armed2 = false;
    /* The root adds its children's parts now; the others' totals came
     * from their parents. */
    if (t->tr && t->tr->up < 0)
      nvls_take_kids(k, q, t->p2);
    chunk_part(t, x->g, t->p2, x->local, &a, &b);
    struct msg *out = nk_pack(k, a, b, t->cv / (uint64_t)x->g);
    out->tag = q;
    out->rate_Bps = k->pl->cost.chan_Bps;
    kff_sent(&x->st[q], x->sw, (double)out->bytes + env);
    for (int i = 0; t->tr && i < t->tr->nkids; i++) {
      struct msg *down = nk_pack(k, a, b, t->cv / (uint64_t)x->g);
      down->tag = q;
      kff_sent(&x->st[q], t->tr->kids[i], (double)down->bytes + env);
      nk_send_also(k, 3 * q + 2, t->tr->kids[i], NVLS_NET + q, down, i > 0);
    }
    /* Both phases are one channel's copies: one rate. */
    nk_send(k, 3 * q, x->sw, NVLS_PORT + 2 * q + 1, out);
    t->p2++;
  } else {
    t->armed_up = false;
    nvls_take_kids(k, q, t->up_sent);
    chunk_part(t, x->g, t->up_sent, x->local, &a, &b);
    struct msg *out = nk_pack(k, a, b, t->cv / (uint64_t)x->g);
    out->tag = q;
    kff_sent(&x->st[q], t->tr->up, (double)out->bytes + env);
    nk_send(k, s, t->tr->up, NVLS_NET + q, out);
    t->up_sent++;
  }
  nvls_arm(k, q);
}

static void nvls_got(struct nk *k, struct nk_in *in, struct msg *msg) {
  struct nk_nvls_ctx *x = k->st;
  int q = in->chan;
  struct nk_nvls *t = &x->ch[q];
  uint64_t a, b;
  if (in->tag == 0) {
    /* Part `local` of the chunk from every GPU: their sum. */
    chunk_part(t, x->g, t->red, x->local, &a, &b);
    for (size_t i = 0; i < msg->nparts; i++)
      sim_unpack(k->c, msg->parts[i], k->c->v, a, b, i > 0);
    t->red++;
  } else if (in->tag == 1) {
    /* Every GPU's reduced part. */
    for (size_t i = 0; i < msg->nparts; i++) {
      chunk_part(t, x->g, t->mc, (int)i, &a, &b);
      sim_unpack(k->c, msg->parts[i], k->c->v, a, b, false);
    }
    t->mc++;
    kff_rx(&x->st[q]);
  } else if (in->tag == NT_PARENT) {
    /* The total of part `local` from the tree. */
    chunk_part(t, x->g, t->got_par, x->local, &a, &b);
    sim_unpack(k->c, msg, k->c->v, a, b, false);
    t->got_par++;
  } else if (in->tag == NT_CREDIT) {
    t->credits++;
  } else {
    int i = in->tag - NT_KID0, j = t->got_kid[i]++;
    xbt_assert(!t->held[i][j % NK_WINDOW], "NVLS tree: a child's window "
               "overrun");
    t->held[i][j % NK_WINDOW] = msg;
    msg = NULL;
  }
  if (msg)
    msg_free(msg);
  nvls_arm(k, q);
}

static bool nvls_done(const struct nk *k) {
  const struct nk_nvls_ctx *x = k->st;
  for (int q = 0; q < k->nt / 3; q++) {
    const struct nk_nvls *t = &x->ch[q];
    if (t->mc < t->m)
      return false;
    if (t->tr && t->tr->up >= 0 && (t->up_sent < t->m || t->credits < t->m))
      return false;
  }
  return true;
}

static const struct nk_prog nvls_prog = {nvls_fire, nvls_got, nvls_done};

/* ---- the NVSwitch ------------------------------------------------------ */

/* A chunk of one phase being gathered: its parts by GPU (SHARP: by
 * machine). */
struct sw_gather {
  int n;
  struct msg **part;
};

/* One phase's gathers: chunk BASE + i at index i. */
struct sw_phase {
  GPtrArray *open;
  int base;
  int *got; /* messages from each GPU */
};

struct nk_switch {
  struct sim *s;
  int rank, q, g;
  int *gpus;
  struct sw_phase ph[2];
};

/* A phase gathering from N senders. */
static struct sw_phase phase_new(int n) {
  return (struct sw_phase){g_ptr_array_new(), 0, g_new0(int, n)};
}

/* SP's N senders PERIODS chunks on, gathered and forwarded. */
static void phase_advance(struct sw_phase *sp, int n, int periods) {
  sp->base += periods;
  for (int h = 0; h < n; h++)
    sp->got[h] += periods;
}

/* Message M from sender FROM (of N) into SP's gathers: a sender sends
 * its chunks in order, so its n-th is chunk n. WHAT names the gatherer
 * (for the assertion). */
static void phase_add(struct sw_phase *sp, int from, int n, struct msg *m,
                      const char *what) {
  int j = sp->got[from]++ - sp->base;
  while ((int)sp->open->len <= j) {
    struct sw_gather *ng = g_new0(struct sw_gather, 1);
    ng->part = g_new0(struct msg *, n);
    g_ptr_array_add(sp->open, ng);
  }
  struct sw_gather *gth = g_ptr_array_index(sp->open, j);
  xbt_assert(!gth->part[from], "%s: a chunk gathered twice", what);
  gth->part[from] = m;
  gth->n++;
}

/* SP's oldest gather once all N parts are in (taken off), else NULL. */
static struct sw_gather *phase_full(struct sw_phase *sp, int n) {
  if (!sp->open->len ||
      ((struct sw_gather *)g_ptr_array_index(sp->open, 0))->n < n)
    return NULL;
  struct sw_gather *hd = g_ptr_array_index(sp->open, 0);
  g_ptr_array_remove_index(sp->open, 0);
  sp->base++;
  return hd;
}

/* A gather of N parts, forwarded: its parts and itself freed. */
static void gather_free(struct sw_gather *gth, int n) {
  for (int h = 0; h < n; h++)
    msg_free(gth->part[h]);
  g_free(gth->part);
  g_free(gth);
}

/* A switch actor's receives: from each of its N sources (rank SRC[i],
 * port PORT[i], which the actor fills before inbox_post) NK_WINDOW asked
 * for at once (a switch is always ready), each source's taken in order.
 * An actor serves for ever: nothing is freed. */
struct sw_inbox {
  struct coll_call *c;
  int n;
  int *src, *port;
  sg_comm_t *get, *heads;
  struct msg **in;
  int *head;
};

static void inbox_open(struct sw_inbox *b, struct coll_call *c, int n) {
  *b = (struct sw_inbox){.c = c,
                         .n = n,
                         .src = g_new(int, n),
                         .port = g_new(int, n),
                         .get = g_new(sg_comm_t, (size_t)n * NK_WINDOW),
                         .heads = g_new(sg_comm_t, n),
                         .in = g_new0(struct msg *, (size_t)n * NK_WINDOW),
                         .head = g_new0(int, n)};
}

static void inbox_post(struct sw_inbox *b) {
  for (int i = 0; i < b->n; i++)
    for (int j = 0; j < NK_WINDOW; j++)
      b->get[i * NK_WINDOW + j] = sim_get_channel(b->c, b->src[i], b->port[i],
                                                  &b->in[i * NK_WINDOW + j]);
}

/* The next message to come (*M), and its source's index; the receive it
 * took asked for again. */
static int inbox_next(struct sw_inbox *b, struct msg **m) {
  for (int i = 0; i < b->n; i++)
    b->heads[i] = b->get[i * NK_WINDOW + b->head[i]];
  int i = (int)sg_comm_wait_any(b->heads, (size_t)b->n);
  int h = i * NK_WINDOW + b->head[i];
  *m = b->in[h];
  sim_took(*m);
  b->get[h] = sim_get_channel(b->c, b->src[i], b->port[i], &b->in[h]);
  b->head[i] = (b->head[i] + 1) % NK_WINDOW;
  return i;
}

struct nk_switch *nccl_switch_new(struct sim *s, int rank, int q,
                                  const int *gpus, int g) {
  struct nk_switch *w = g_new0(struct nk_switch, 1);
  *w = (struct nk_switch){.s = s,
                          .rank = rank,
                          .q = q,
                          .g = g,
                          .gpus = g_memdup2(gpus, sizeof(int) * (size_t)g)};
  for (int ph = 0; ph < 2; ph++)
    w->ph[ph] = phase_new(g);
  return w;
}

/* A jump: every GPU's PERIODS chunks of both phases gathered and sent. */
static void switch_apply(void *state, int periods) {
  struct nk_switch *w = state;
  for (int ph = 0; ph < 2; ph++)
    phase_advance(&w->ph[ph], w->g, periods);
}

/* Chunk gathered: phase 0 gives GPU k part k of every GPU's chunk (one
 * reduced part's bytes), phase 1 every GPU's reduced part to every GPU
 * (the chunk's bytes). */
static void sw_forward(struct nk_switch *w, struct coll_call *c, int ph,
                       struct sw_gather *gth) {
  for (int k = 0; k < w->g; k++) {
    struct msg *out = g_new0(struct msg, 1);
    out->refs = 1;
    out->tag = w->q;
    for (int h = 0; h < w->g; h++)
      msg_bundle_add(out, ph == 0 ? gth->part[h]->parts[k] : gth->part[h]);
    if (ph == 0)
      out->bytes = gth->part[0]->parts[k]->bytes;
    /* At the rate of the calls' channels (a message of channels merged:
     * nccl.c), as the GPUs send. */
    sim_send_channel(c, w->gpus[k], NVLS_DOWN + 2 * w->q + ph, out,
                     gth->part[0]->rate_Bps);
  }
  gather_free(gth, w->g);
}

void nccl_switch_serve(struct nk_switch *w) {
  struct coll_call c = {
      .sim = w->s, .rank = w->rank, .sends = sim_keep_sends(w->s)};
  int g = w->g, q = w->q;
  /* Every GPU's two ports: source i is GPU i mod G's phase i / G. */
  struct sw_inbox b;
  inbox_open(&b, &c, 2 * g);
  for (int i = 0; i < 2 * g; i++) {
    b.src[i] = w->gpus[i % g];
    b.port[i] = NVLS_PORT + 2 * q + i / g;
  }
  inbox_post(&b);
  for (;;) {
    struct msg *m;
    int i = inbox_next(&b, &m), ph = i / g, from = i % g;
    sim_release_sends(c.sends);
    struct sw_phase *sp = &w->ph[ph];
    phase_add(sp, from, g, m, "NVLS");
    for (struct sw_gather *hd; (hd = phase_full(sp, g));)
      sw_forward(w, &c, ph, hd);
  }
}

void nccl_kernel_nvls(struct coll_call *c, const struct nk_plan *pl, int g,
                      int p, int sw, struct nk_switch *const *switches,
                      const struct nk_tree *tree) {
  if (g < 2)
    return;
  int nc = pl->nc;
  struct nk k = {.c = c, .pl = pl, .p = p, .prog = &nvls_prog, .nt = 3 * nc,
                 .apply = nvls_apply};
  struct nk_nvls_ctx x = {.ch = g_new0(struct nk_nvls, nc),
                          .st = g_new0(struct kff_stream, nc), .g = g,
                          .local = c->rank % g, .sw = sw};
  k.st = &x;
  nk_alloc(&k, 3 * nc, 7 * nc);
  long *total = g_new(long, nc);
  uint64_t n = c->v->n;
  for (int q = 0; q < nc; q++) {
    struct nk_nvls *t = &x.ch[q];
    t->lo = block_lo(0, n, nc, q);
    t->hi = block_lo(0, n, nc, q + 1);
    uint64_t cn = t->hi - t->lo;
    /* A step moves a chunk for each of the G heads (NCCL's loop of
     * nHeads x chunkSize): each GPU's part is a chunk. */
    uint64_t step = pl->chunk * (uint64_t)g;
    t->m = cn ? (int)((cn + step - 1) / step) : 0;
    t->cv = cn ? aligned_block(c, cn, (uint64_t)t->m * g) * g : 0;
    t->tr = tree ? &tree[q] : NULL;
    total[q] = t->m;
    k.at[3 * q] = k.at[3 * q + 1] = k.at[3 * q + 2] = INFINITY;
    double cb = (double)t->cv * sim_value_bytes(c) * pl->cost.wire;
    for (int ph = 0; ph < 2; ph++)
      k.in[k.nin++] = (struct nk_in){
          .chan = q, .port = NVLS_DOWN + 2 * q + ph, .tag = ph, .src = sw,
          .remaining = t->m, .bytes = ph ? cb : cb / g};
    if (!tree)
      continue;
    for (int i = 0; i < tree[q].nkids; i++)
      k.in[k.nin++] = (struct nk_in){.chan = q, .port = NVLS_NET + q,
                                     .src = tree[q].kids[i],
                                     .tag = NT_KID0 + i, .remaining = t->m,
                                     .bytes = cb / g};
    if (tree[q].up >= 0) {
      k.in[k.nin++] = (struct nk_in){.chan = q, .port = NVLS_NET + q,
                                     .src = tree[q].up, .tag = NT_PARENT,
                                     .remaining = t->m, .bytes = cb / g};
      k.in[k.nin++] = (struct nk_in){.chan = q, .port = NVLS_CREDIT + q,
                                     .src = tree[q].up, .tag = NT_CREDIT,
                                     .remaining = t->m};
    }
  }
  nk_join(&k, x.st, nc, 1, NK_CHUNK_REPS, total);
  /* The switch's gathers jump with the GPUs. */
  for (int q = 0; q < nc; q++)
    kff_add_passive(k.ff.ff, switch_apply, switches[q]);
  nk_go(&k, x.st, nc, nvls_arm);
  g_free(total);
  g_free(x.ch);
  g_free(x.st);
  nk_free(&k);
}

/* ---- SHARP's switches -------------------------------------------------- */

/* CollNet's chain (nccl_kernel_tree with SHARPS): inside each machine the
 * channel's chain from its rail's GPU, its head's parent the rail's
 * switches. They take a chunk from every machine's head (on the
 * channel's port), and once they hold all of them send each head the
 * total, as a bundle of the machines' parts that the head sums (the
 * switches' sums at line rate: their work is forwarding), and a slot
 * back (the credit a tree's parent gives: NCCL_STEPS chunks in flight). */
struct nk_sharp {
  struct sim *s;
  int rank, q, nm;
  int *heads;
  struct sw_phase ph;
};

struct nk_sharp *nccl_sharp_new(struct sim *s, int rank, int q,
                                const int *heads, int nm) {
  struct nk_sharp *w = g_new0(struct nk_sharp, 1);
  *w = (struct nk_sharp){.s = s,
                         .rank = rank,
                         .q = q,
                         .nm = nm,
                         .heads = g_memdup2(heads, sizeof(int) * (size_t)nm),
                         .ph = phase_new(nm)};
  return w;
}

/* A jump: every head's PERIODS chunks summed and sent back. */
static void sharp_apply(void *state, int periods) {
  struct nk_sharp *w = state;
  phase_advance(&w->ph, w->nm, periods);
}

static void sharp_forward(struct nk_sharp *w, struct coll_call *c,
                          struct sw_gather *gth) {
  for (int n = 0; n < w->nm; n++) {
    struct msg *out = g_new0(struct msg, 1);
    out->refs = 1;
    for (int h = 0; h < w->nm; h++)
      msg_bundle_add(out, gth->part[h]);
    out->bytes = gth->part[0]->bytes;
    sim_send_channel(c, w->heads[n], w->q, out, 0);
    nk_credit(c, NULL, w->heads[n], CREDIT_PORT + w->q);
  }
  gather_free(gth, w->nm);
}

void nccl_sharp_serve(struct nk_sharp *w) {
  struct coll_call c = {
      .sim = w->s, .rank = w->rank, .sends = sim_keep_sends(w->s)};
  int nm = w->nm;
  /* Every machine's head, on the channel's port. */
  struct sw_inbox b;
  inbox_open(&b, &c, nm);
  for (int i = 0; i < nm; i++) {
    b.src[i] = w->heads[i];
    b.port[i] = w->q;
  }
  inbox_post(&b);
  struct sw_phase *sp = &w->ph;
  for (;;) {
    struct msg *m;
    int i = inbox_next(&b, &m);
    sim_release_sends(c.sends);
    phase_add(sp, i, nm, m, "SHARP");
    for (struct sw_gather *hd; (hd = phase_full(sp, nm));)
      sharp_forward(w, &c, hd);
  }
}

/* ---- NCCL's ring allgather of opaque messages ------------------------- */

/* Every rank's message around the rings (NCCL's allgather, runRing: a
 * step sends on what the step before brought), each channel carrying its
 * share of every message's bytes; channel 0 carries the messages
 * themselves (their payloads, encoded once, forwarded as they are), the
 * other channels only their shares' bytes (what they forward is what
 * they received, whether or not channel 0 has brought that message). */
struct nk_gather {
  struct ring_chan ch;
  int sent, got;
  uint64_t fwd; /* channels > 0: the bytes of the share received last */
  bool armed;
  struct nk_credits cr; /* across machines, as nk_ring's */
};

struct nk_gathers {
  struct nk_gather *g;
  struct kff_stream *st;
  struct msg **all; /* by rank */
  int me;           /* the caller's rank */
};

/* A channel's share of message M's bytes on the wire. */
static uint64_t gather_share(const struct nk *k, const struct msg *m) {
  return (uint64_t)ceil((double)m->bytes * k->pl->cost.wire / k->pl->nc);
}

/* What channel Q sends for rank R at its next step: on channel 0 a
 * bundle of one reference to R's message (its bytes R's share), so that
 * the payload encoded once is shared by every rank, not copied at each of
 * the p - 1 hops (as ring.c's allgather: p copies at each of p ranks held
 * at once did not fit in memory); on the others a message of R's share
 * (the caller's own at step 0, else the one received last). */
static struct msg *gather_part(struct nk *k, int q, int r) {
  struct nk_gathers *x = k->st;
  struct nk_gather *g = &x->g[q];
  struct msg *out = g_new0(struct msg, 1);
  out->refs = 1;
  if (q == 0) {
    msg_bundle_add(out, x->all[r]);
    out->bytes = gather_share(k, x->all[r]);
  } else {
    out->bytes = g->sent == 0 ? gather_share(k, x->all[x->me]) : g->fwd;
  }
  out->tag = r;
  return out;
}

static void gather_arm(struct nk *k, int q) {
  struct nk_gather *g = &((struct nk_gathers *)k->st)->g[q];
  if (!g->armed && g->sent < k->p - 1 && g->got >= g->sent &&
      credits_room(k, &g->cr, g->sent)) {
    g->armed = true;
    nk_arm(k, q, nk_step(k, g->ch.next));
  }
}

static void gather_fire(struct nk *k, int q) {
  struct nk_gathers *x = k->st;
  struct nk_gather *g = &x->g[q];
  g->armed = false;
  /* Send s forwards rank (me - s)'s message: its own at step 0. */
  int r = (x->me - g->sent + k->p) % k->p;
  struct msg *out = gather_part(k, q, r);
  kff_sent(&x->st[q], g->ch.next,
           (double)out->bytes + k->c->sim->p->envelope_bytes);
  nk_ring_send(k, q, g->ch.next, out);
  /* A send after the first forwards the message received last: its slot
   * frees once the copy is done (nk_ring). */
  if (g->sent > 0)
    credits_free(k, &g->cr, &x->st[q], q, g->ch.prev, g->sent - 1,
                 fmax(k->free_at[q], sim_now()));
  g->sent++;
  kff_event(&x->st[q]);
  gather_arm(k, q);
}

static void gather_got(struct nk *k, struct nk_in *in, struct msg *m) {
  struct nk_gathers *x = k->st;
  struct nk_gather *g = &x->g[in->chan];
  if (credits_take(&g->cr, in, m)) {
    gather_arm(k, in->chan);
    return;
  }
  /* The last message is kept: its slot frees now. */
  if (g->got == k->p - 2)
    credits_free(k, &g->cr, &x->st[in->chan], in->chan, g->ch.prev, g->got,
                 sim_now());
  /* Receive s brings rank (me - s - 1)'s message. */
  int r = (x->me - g->got - 1 + 2 * k->p) % k->p;
  if (in->chan == 0) {
    /* The payload travels unchanged: the message it refers to. */
    xbt_assert(!x->all[r] && m->nparts == 1, "rank %d's message gathered twice",
               r);
    x->all[r] = msg_ref(m->parts[0]);
  } else {
    g->fwd = m->bytes;
  }
  msg_free(m);
  g->got++;
  gather_arm(k, in->chan);
}

static bool gather_done(const struct nk *k) {
  const struct nk_gathers *x = k->st;
  for (int q = 0; q < k->nt; q++)
    if (x->g[q].sent < k->p - 1 || x->g[q].got < k->p - 1 ||
        !credits_done(&x->g[q].cr))
      return false;
  return true;
}

static const struct nk_prog gather_prog = {gather_fire, gather_got,
                                           gather_done};

void nccl_kernel_allgather(struct coll_call *c, const struct nk_plan *pl,
                           const struct ring_chan *ch, int p,
                           struct msg *mine, struct msg **all) {
  int nc = pl->nc, me = c->rank;
  gather_start(c, p, mine, all);
  double own = (double)mine->bytes;
  if (p < 2)
    return;
  struct nk k = {.c = c, .pl = pl, .p = p, .prog = &gather_prog, .nt = nc};
  struct nk_gathers x = {g_new0(struct nk_gather, nc),
                         g_new0(struct kff_stream, nc), all, me};
  k.st = &x;
  nk_alloc(&k, nc, 2 * nc);
  for (int q = 0; q < nc; q++) {
    x.g[q].ch = ch[q];
    k.at[q] = INFINITY;
    k.in[k.nin++] = (struct nk_in){.chan = q, .port = q, .src = ch[q].prev,
                                   .remaining = p - 1,
                                   .bytes = own * pl->cost.wire / nc};
  }
  for (int q = 0; q < nc; q++)
    credits_init(&k, &x.g[q].cr, q, ch[q].prev, ch[q].next, p - 1);
  /* Its streams declare no events: p - 1 steps of messages whose sizes
   * may differ. */
  nk_join(&k, x.st, nc, 1, NK_RING_REPS, (long[RING_CHANNELS_MAX]){0});
  nk_go(&k, x.st, nc, gather_arm);
  for (int r = 0; r < p; r++)
    xbt_assert(all[r], "rank %d's message not gathered", r);
  g_free(x.g);
  g_free(x.st);
  nk_free(&k);
}
