/* sim/ffwd/kff.h: fast-forward of one collective call whose GPUs run
 * independent streams of events (NCCL's kernel, collectives/
 * nccl_kernel.c): the caller declares its facts (a stream's event, what
 * it sent where, what it received) and how its own counters move on a
 * jump; this part finds the call's period and jumps (kff.c).
 *
 * Every channel's program at every GPU is a stream of events (its sends:
 * each program says which), periodic once its pipeline is full. When
 * every stream of the call is periodic with one period d at once, the
 * call's state repeats itself every d, shifted by a period's counts
 * (chunks sent and received, credits): the call jumps, every stream's
 * counters S periods ahead at that instant, its pending timers and the
 * messages in flight left as they are, and every GPU pays the S d left
 * out at its call's end. Done at one instant for all, the jump leaves
 * the rest of the call exactly as it would have run, S d earlier; the
 * bytes of the skipped periods are each stream's last period's, S times.
 * (A stream's own jump at its own event would not: a pipeline always has
 * messages in flight, which would then arrive early.) */
#ifndef GRADSIM_SIM_KFF_H
#define GRADSIM_SIM_KFF_H

#include "../sim.h"

#include <stdbool.h>
#include <stdint.h>

/* Routes a stream's bytes take, at most: the ranks it sends to and the
 * switches it receives from. */
enum { KFF_DST = 6 };

struct kff;

/* The caller's side of a call at one GPU: the call, its record (NULL:
 * no fast-forward), and what moves stream Q's own counters PERIODS of
 * its periods on. */
struct kff_host {
  struct coll_call *c;
  struct kff *ff;
  void (*apply)(struct kff_host *h, int q, int periods);
};

/* One channel's stream of events at one GPU. */
struct kff_stream {
  struct kff_host *h;
  int q;
  int per;       /* events a period */
  long ev;       /* events so far, jumps included */
  long total;    /* events it has in all */
  int reps;      /* periods compared */
  int hist;      /* per x KFF_MULT x reps + 1 */
  double *t;     /* times of the last HIST events, by event mod HIST */
  /* The same of its receives (the program's own choice of them, PER a
   * period too): a pipeline filling its window sends at its timers'
   * pace, periodic but not the steady regime; what it receives then is
   * not yet periodic at that pace. */
  long rx;
  double *t_rx;
  /* Wire bytes sent to each destination (FROM: received from a switch)
   * so far, and at each of the last HIST events. */
  int dst[KFF_DST], ndst;
  bool from[KFF_DST];
  double cum[KFF_DST];
  double *snap;  /* [HIST][KFF_DST] */
  bool matched;  /* periodic, at the call's candidate period */
};

/* Register H's NC streams ST (PER events a period, TOTAL[q] events each;
 * the call has MEMBERS GPUs, each with NC streams, and WINDOW messages in
 * flight at most), each periodic once its last REPS periods are. Sets
 * H->ff (NULL where the point may not fast-forward). */
void kff_join(struct kff_host *h, int members, int window,
              struct kff_stream *st, int nc, int per, int reps,
              const long *total);
/* H leaves its call (its streams freed; the record with the last). */
void kff_leave(struct kff_host *h, struct kff_stream *st, int nc);
/* Stream X sent wire BYTES to DST. */
void kff_sent(struct kff_stream *x, int dst, double bytes);
/* Stream X received wire BYTES from switch SRC (an actor of no GPU,
 * which only forwards: its sends are no stream's). */
void kff_received(struct kff_stream *x, int src, double bytes);
/* Stream X received one of its counted messages now. */
void kff_rx(struct kff_stream *x);
/* Stream X's event now; the jump, when every stream of the call agrees. */
void kff_event(struct kff_stream *x);
/* H's GPU waits out the time its call's jump left out (none where the
 * call did not jump): every GPU pays it at its call's end. */
void kff_pay(const struct kff_host *h);
/* STATE, which only forwards (an NVSwitch, SHARP's switches), moves
 * with the call's jump (F NULL: the call does not fast-forward), once
 * however many of the call's GPUs tell it. */
void kff_add_passive(struct kff *f, void (*apply)(void *state, int periods),
                     void *state);

/* The events a stream of EVENTS simulates, fast-forward's estimate for a
 * run's (config/estimate.c): periodic by PER events once REPS periods
 * repeat, after SETTLE events of filling (0: not known), WINDOW in
 * flight, it runs until it jumps and after; one that never SETTLES into
 * a period runs whole. */
double kff_events(double events, double per, int reps, bool settles,
                  double settle, double window);

#endif
