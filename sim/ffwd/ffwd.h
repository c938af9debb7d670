/* sim/ffwd/ffwd.h: fast-forward, the engine's part that simulates less
 * (docs/fast-forward.md): sequences of alike steps simulated until they
 * are periodic and then skipped (fastforward.c), runs of alike buckets,
 * and recurrence, which repeats what followed an earlier checkpoint
 * (recur.c). NCCL's kernel, whose channels are independent streams, has
 * its own interface: kff.h; the ring phases of the collectives and the
 * schedules know only the steps contract, steps.h. The contract's
 * implementation (steps.c), accounting and the run that sets fast-forward
 * up include this header. */
#ifndef GRADSIM_SIM_FFWD_H
#define GRADSIM_SIM_FFWD_H

#include "../sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What keeps fast-forward from P's run (the key and value, for the
 * estimate's message: [exchange] fast_forward = off, a payload, a NIC
 * engine or packets, mode = pipe), or NULL where it applies; whether it
 * applies (fastforward.c: the one statement of those conditions). */
const char *ff_blocker(const struct point *p);
bool run_ff_allowed(const struct point *p);

/* ---- steps (fastforward.c) -------------------------------------------------
 * A sequence of steps every member of a group runs in order, simulated
 * until it is periodic and then skipped (see fastforward.c). A member
 * joins with the sequence's KEY (the same for every member: the count of
 * sequences of its kind it entered before, in FF_KEY_* space), calls
 * ff_step() at the start of every step and, when it returns true, skips
 * the SKIP steps left, each PERIOD long, repeating its own last step. */
#define FF_KEY_LEGS ((uint64_t)1 << 56)
#define FF_KEY_ITERATIONS ((uint64_t)2 << 56)
#define FF_KEY_BUCKETS ((uint64_t)3 << 56)
#define FF_KEY_CHANNELS ((uint64_t)4 << 56)
/* ELIGIBLE: the caller's conditions hold (no other traffic, the same
 * sizes in every step); otherwise every step is simulated. */
void ff_join(struct sim *s, struct ff_cursor *cur, uint64_t key, int members,
             int steps, bool eligible);
/* At the start of step STEP (1-based): true when the rest is skipped
 * (up to the tail: ff_keep_tail), CUR->skip steps. */
bool ff_step(struct ff_cursor *cur, int step);
/* What follows the sequence may share links with its last steps, which
 * the members behind still run when the first goes on: a skip stops
 * short of the last L + 1 steps (L: how far the farthest member is
 * ahead), and they are simulated. Every member calls it, or none. */
void ff_keep_tail(struct ff_cursor *cur);
/* CUR's sequence keeps its tail (ff_keep_tail()). */
bool ff_tail_kept(const struct ff_cursor *cur);
/* Worker W starts a step it simulates: its state then into CUR, and its
 * routes' bytes recorded at LEVEL (FF_LEVEL_*). */
void ff_mark(struct worker *w, struct ff_cursor *cur, int level);
/* W repeats the step it simulated last (from CUR->mark_t) CUR->skip more
 * times, each CUR->period later: its summed spans, or its spans as trains
 * of copies (a train already, from a sequence inside the step: a train a
 * step), its wire bytes and its routes' bytes at LEVEL, and sleeps as
 * long. The caller counts the skip. */
void ff_replay(struct worker *w, const struct ff_cursor *cur, int level);
/* Worker W leaves CUR's sequence (freed with its last member) and stops
 * recording its routes' bytes at LEVEL (from ff_mark). */
void ff_leave(struct worker *w, struct ff_cursor *cur, int level);
/* A member leaves CUR's sequence without any record of the worker's (a
 * sequence whose member keeps its own: collectives/nccl_kernel.c). */
void ff_part(struct sim *s, struct ff_cursor *cur);
/* The same, the member voting against skipping unless READY (a
 * condition of its own that, once true, stays true). */
bool ff_step_if(struct ff_cursor *cur, int step, bool ready);
/* After ff_step() returned true: every member has now entered the skip
 * (the caller is the last). */
bool ff_all_skipping(const struct ff_cursor *cur);

/* A periodic run of buckets: STEPS periods of PERIOD buckets from bucket
 * FIRST, bucket b + PERIOD the same exchange as bucket b throughout (the
 * same values, compressed or not): each period, a model's layer of
 * identical tensors, can be a fast-forward step. */
struct ff_run {
  size_t first, period;
  int steps;
  /* The compute time between the posts of bucket b and b + PERIOD, the
   * same throughout the run (schedule post_gaps); 0: not the same, or
   * no communication actor. */
  double compute_period;
};
/* Whether whole buckets may be skipped in P's run with collective C (runs
 * of buckets and recurrence, and the estimate of recurrence's records):
 * fast-forward allowed, no aggregators, a collective without state of its
 * own per bucket, no codec off the CPU, no stragglers. */
bool ff_buckets_allowed(const struct point *p, const struct collective *c);
/* Buckets A and B of S are the same exchange: as many values, sent as
 * plain fp32 or through the codec alike. */
bool ff_same_bucket(const struct sim *s, size_t a, size_t b);
/* S's runs (S->ff_runs) when ff_buckets_allowed(). */
void ff_bucket_runs(struct sim *s);

/* ---- fast-forward by recurrence (recur.c) --------------------------------
 * When every worker sleeps through the skipped steps of one ring leg over
 * all workers, the run's state is the workers' wake times and when their
 * backward posts the buckets left: a checkpoint. So is the end of a
 * linear reduce over all workers, every other worker waiting on its
 * root. A checkpoint that is an earlier one shifted (the same exchange,
 * the same leg, every wake time moved by the same amount) repeats what
 * followed it, bucket for bucket, for as long as the buckets that follow
 * are the same exchanges and begin alike (and then each bucket that
 * began, before, in the state the skip stands in: the workers' ends of a
 * sealed bucket, up to one shift): those buckets are skipped, each
 * worker repeating its own records of them (recur.c). */
struct recur;
/* S's state for it, when it applies (after the workers are set up). */
void recur_init(struct sim *s);
/* W's compute side begins backward now (sync: every bucket posted). */
void recur_backward(struct worker *w);
/* W starts bucket B of iteration IT; has ended it (both simulated). */
void recur_begin(struct worker *w, size_t b, int it);
void recur_end(struct worker *w, size_t b, int it);
/* W enters the skip of a ring leg over all workers (CUR: fastforward.c)
 * in bucket B; LAST: the last member to. */
void recur_checkpoint(struct worker *w, size_t b, const struct ff_cursor *cur,
                      bool last);
/* W at the end of a linear reduce over every worker in bucket B (ROOT:
 * its root, which has received and summed every member's values): a
 * checkpoint, which the others wait for. Then W enters the broadcast
 * that follows as a leg: true when it was repeated from an earlier one
 * (the caller returns at once), else it is recorded until
 * recur_leg_end(). */
bool recur_gather(struct worker *w, size_t b, bool root);
/* After W ended bucket B of IT: the buckets after it skipped (each
 * repeated from W's records, and slept through), or 0. */
size_t recur_skip(struct worker *w, size_t b, int it);
/* W enters a ring leg over all workers in bucket B (its ff_legs counted
 * already): true when the leg was repeated from an earlier one instead
 * (the caller returns at once); else it is recorded until
 * recur_leg_end(). */
bool recur_leg_begin(struct worker *w, size_t b);
void recur_leg_end(struct worker *w);
/* Bytes its records take per bucket and worker, at most (the estimate). */
double recur_bucket_bytes(void);

#endif
