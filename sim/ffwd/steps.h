/* sim/ffwd/steps.h: the steps contract, all a collective or a schedule
 * knows of fast-forward. A collective declares a run of steps every member of a
 * group takes in the same order, and whether the run is uniform (the same
 * bytes between the same neighbours in every step: its own fact), then
 * asks at each step whether to take it. Fast-forward decides (its
 * conditions are its own: ffwd.h, docs/fast-forward.md), skips what it
 * can, accounts for what it skipped and sleeps as long; what the caller
 * sees is a number of steps to jump over.
 *
 *   struct steps st;
 *   if (steps_begin(c, &st, g, 2 * (g - 1), uniform))
 *     return;                      (the whole run repeated an earlier one)
 *   for (int s = 1; s <= 2 * (g - 1); s++) {
 *     int skipped = steps_at(c, &st, s);
 *     if (skipped) { s += skipped - 1; continue; }
 *     ... the step ...
 *   }
 *   steps_end(c, &st); */
#ifndef GRADSIM_SIM_FFWD_STEPS_H
#define GRADSIM_SIM_FFWD_STEPS_H

#include "../sim.h"

#include <stdbool.h>

struct steps {
  struct ff_cursor ff;
};

/* C's worker begins a run of NSTEPS steps over G members (a leg over all
 * workers when G is theirs); UNIFORM: every step moves the same bytes
 * between the same neighbours. True when the whole run was repeated from
 * an earlier one instead (recurrence): the caller goes on after it. */
bool steps_begin(struct coll_call *c, struct steps *st, int g, int nsteps,
                 bool uniform);
/* What the caller does after the run shares the run's links: its last
 * steps are simulated, not skipped. Every member calls it, or none. */
void steps_keep_tail(struct steps *st);
/* At the start of step STEP (from 1): the steps skipped from it (0: take
 * it). */
int steps_at(struct coll_call *c, struct steps *st, int step);
/* The run is over for C's worker. */
void steps_end(struct coll_call *c, struct steps *st);

/* The end of a linear reduce over every worker (WORLD: the group is all
 * of them; ROOT: the caller is the one that summed): true when the
 * broadcast that follows was repeated from an earlier one (the caller
 * returns at once); else the caller broadcasts, then steps_gather_end(). */
bool steps_gather(struct coll_call *c, bool world, bool root);
void steps_gather_end(struct coll_call *c, bool world);

/* ---- the schedules' side: iterations and buckets --------------------
 * A schedule states when W's backward begins (every bucket it will post
 * counted from then), wraps each bucket's exchange in
 * steps_bucket_begin() and steps_bucket_end(), and each iteration in
 * steps_iteration(); what fast-forward skips there (runs of alike
 * buckets, buckets that repeat an earlier checkpoint, whole iterations)
 * it accounts for and sleeps through. */

/* W's backward begins now (in sync, after it every bucket is posted). */
void steps_backward(struct worker *w);
/* Before bucket B of iteration IT (the buckets before POSTED posted by
 * the compute side): how many buckets from B were skipped (0: exchange
 * B, then steps_bucket_end()). Every bucket skipped, there or after
 * steps_bucket_end(), was posted by the time the skip ended. */
size_t steps_bucket_begin(struct worker *w, size_t b, int it, size_t posted);
/* After exchanging bucket B of IT: the buckets done, B and those after it
 * that were skipped. */
size_t steps_bucket_end(struct worker *w, size_t b, int it);
/* W begins its iterations; at the start of iteration IT (from 0): true
 * when the rest were skipped (their records filled, slept through: the
 * caller stops); W is done with them. */
void steps_iterations_begin(struct worker *w, struct steps *st);
bool steps_iteration(struct worker *w, struct steps *st, int it);
void steps_iterations_end(struct worker *w, struct steps *st);

#endif
