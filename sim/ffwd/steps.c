/* sim/ffwd/steps.c: the steps contract (steps.h) on fast-forward's
 * sequences (fastforward.c) and recurrence (recur.c). */
#include "steps.h"

#include "ffwd.h"

#include <math.h>
#include <simgrid/actor.h>

/* A run is fast-forward's when fast-forward is allowed in this run
 * (ff_blocker, fastforward.c: payload none, no packets or NIC engines,
 * the sync or overlap schedule), a worker runs it over all workers and it is
 * uniform: it moves the same bytes between the same neighbours in every
 * step with nothing else in flight, so that once its steps are periodic
 * the rest are skipped. */
bool steps_begin(struct coll_call *c, struct steps *st, int g, int nsteps,
                 bool uniform) {
  struct ff_cursor *ff = &st->ff;
  bool eligible = c->sim->ff_ok && c->w && g == c->sim->nworkers && uniform;
  /* Only eligible runs are counted: every worker enters the same ones in
   * the same order, so that their counts name the same run. */
  uint64_t key = eligible ? FF_KEY_LEGS + ++c->w->ff_legs : 0;
  /* The whole run repeated from an earlier one (recur.c). */
  if (eligible && recur_leg_begin(c->w, c->bucket)) {
    ff->on = false;
    return true;
  }
  ff_join(c->sim, ff, key, g, nsteps, eligible);
  return false;
}

void steps_keep_tail(struct steps *st) { ff_keep_tail(&st->ff); }

/* Skip FF->skip steps shaped like the last simulated one: its
 * accounting, bytes and a sleep of their length. */
static void replay(struct coll_call *c, const struct ff_cursor *ff) {
  recur_checkpoint(c->w, c->bucket, ff, ff_all_skipping(ff));
  ff_replay(c->w, ff, FF_LEVEL_STEP);
  if (c->rank == 0)
    c->sim->ff_steps += (uint64_t)ff->skip;
}

int steps_at(struct coll_call *c, struct steps *st, int step) {
  struct ff_cursor *ff = &st->ff;
  if (ff_step(ff, step)) {
    replay(c, ff);
    return ff->skip;
  }
  if (ff->on)
    ff_mark(c->w, ff, FF_LEVEL_STEP);
  return 0;
}

void steps_end(struct coll_call *c, struct steps *st) {
  ff_leave(c->w, &st->ff, FF_LEVEL_STEP);
  recur_leg_end(c->w);
}

/* Over every worker: a checkpoint of recurrence, and the broadcast a
 * leg it may repeat (recur.c). */
bool steps_gather(struct coll_call *c, bool world, bool root) {
  return world && c->w && recur_gather(c->w, c->bucket, root);
}

void steps_gather_end(struct coll_call *c, bool world) {
  if (world && c->w)
    recur_leg_end(c->w);
}

/* ---- the schedules' side ------------------------------------------------ */

void steps_backward(struct worker *w) { recur_backward(w); }

/* ---- fast-forward of periodic runs of buckets (ffwd.h, struct ff_run) ---
 * A worker exchanges an iteration's buckets in order; in a run of
 * identical periods (a model's identical layers: Llama-2-7B's 32 decoder
 * layers are 224 buckets of 25 MB, 7 a layer), each period is a
 * fast-forward step (fastforward.c): simulated until every worker's
 * periods are periodic, then the rest of the run is skipped, each worker
 * repeating its own last period (its spans, bytes and links) once per
 * period left, and sleeping as long. Compute and communication share
 * nothing but the jobs (compute holds the GPU, the reduce runs on the
 * host's CPU), so in overlap a worker votes for the skip only when its
 * communication waits on no job it cannot foresee: backward has posted
 * the whole run, or posts it periodically (ff_run.compute_period) as
 * often as the worker's periods go; either way the periods left are the
 * last one shifted, as fastforward.c argues for ring steps. */

static const struct ff_run *run_of(const struct sim *s, size_t b,
                                   size_t *index) {
  for (size_t r = 0; r < s->nff_runs; r++) {
    const struct ff_run *run = &s->ff_runs[r];
    if (b >= run->first &&
        b < run->first + (size_t)run->steps * run->period) {
      *index = r;
      return run;
    }
  }
  return NULL;
}

/* FF->skip periods of W's run repeated from the last simulated one. */
static void bucket_replay(struct worker *w, const struct ff_cursor *ff,
                          size_t buckets) {
  ff_replay(w, ff, FF_LEVEL_BUCKETS);
  if (w->rank == 0)
    w->sim->ff_buckets += buckets;
}

/* Before bucket B of iteration IT, the buckets before POSTED posted by
 * the compute side: how many buckets from B fast-forward skipped (0:
 * exchange B). */
static size_t bucket_ff(struct worker *w, size_t b, int it, size_t posted) {
  struct sim *s = w->sim;
  size_t r;
  const struct ff_run *run = run_of(s, b, &r);
  if (!run)
    return 0;
  size_t end = run->first + (size_t)run->steps * run->period;
  if (b == run->first) {
    w->bff_run = r;
    ff_join(s, &w->bff, FF_KEY_BUCKETS + (uint64_t)it * s->nff_runs + r,
            s->nworkers, run->steps, true);
  }
  if ((b - run->first) % run->period != 0 || !w->bff.on)
    return 0;
  int step = (int)((b - run->first) / run->period) + 1;
  /* The rest repeats the last period when nothing waits on compute any
   * more (the run posted), or when compute posts the run periodically as
   * often as the member's periods go (compute-bound: both sides shift
   * by the same period). */
  double last = w->bff.seen ? sim_now() - w->bff.t[0] : 0;
  bool ready = posted >= end ||
               (run->compute_period > 0 &&
                fabs(last - run->compute_period) <= 1e-9 * last);
  /* The run's last period is simulated, not skipped: what follows the
   * run (another bucket, the iteration's end, compute's next job) is not
   * what followed the periods before, and it shapes that period's tail
   * (a slow worker's last messages share links with a fast one's next
   * bucket in every period but the last). */
  if (ff_step_if(&w->bff, step, ready) && w->bff.skip > 1) {
    w->bff.skip--;
    size_t skipped = (size_t)w->bff.skip * run->period;
    bucket_replay(w, &w->bff, skipped);
    ff_leave(w, &w->bff, FF_LEVEL_BUCKETS);
    return skipped;
  }
  ff_mark(w, &w->bff, FF_LEVEL_BUCKETS);
  return 0;
}

/* After bucket B: the end of its run, simulated to the last. */
static void bucket_ff_after(struct worker *w, size_t b) {
  struct sim *s = w->sim;
  if (!w->bff.on)
    return;
  const struct ff_run *run = &s->ff_runs[w->bff_run];
  if (b + 1 == run->first + (size_t)run->steps * run->period)
    ff_leave(w, &w->bff, FF_LEVEL_BUCKETS);
}

size_t steps_bucket_begin(struct worker *w, size_t b, int it,
                          size_t posted) {
  size_t skipped = bucket_ff(w, b, it, posted);
  if (!skipped)
    recur_begin(w, b, it);
  return skipped;
}

size_t steps_bucket_end(struct worker *w, size_t b, int it) {
  bucket_ff_after(w, b);
  recur_end(w, b, it);
  return 1 + recur_skip(w, b, it);
}

/* Iterations IT.. skipped by fast-forward (fastforward.c): each is the
 * last simulated one (IT - 1) shifted by one more period. */
static void skip_iterations(struct worker *w, int it,
                            const struct ff_cursor *ff) {
  struct sim *s = w->sim;
  const struct iter_rec *last = sim_rec(s, it - 1, w->rank);
  for (int k = 0; k < ff->skip; k++) {
    struct iter_rec *r = sim_rec(s, it + k, w->rank);
    double shift = (k + 1) * ff->period;
    *r = *last;
    r->start += shift;
    r->end += shift;
    if (r->exchange_start >= 0) {
      r->exchange_start += shift;
      r->exchange_end += shift;
    }
  }
  account_routes_replay(w, FF_LEVEL_ITERATION, ff->skip);
  if (w->rank == 0)
    s->ff_iterations += (uint64_t)ff->skip;
  sg_actor_sleep_for(ff->period * ff->skip);
}

/* Whole iterations repeat once the run is periodic, when nothing outside
 * the workers (aggregators) takes part and every iteration exchanges (no
 * local steps). */
void steps_iterations_begin(struct worker *w, struct steps *st) {
  const struct sim *s = w->sim;
  ff_join(w->sim, &st->ff, FF_KEY_ITERATIONS, s->nworkers, s->p->iterations,
          s->ff_ok && s->naggr == 0 && s->p->local_steps == 1);
}

bool steps_iteration(struct worker *w, struct steps *st, int it) {
  if (ff_step(&st->ff, it + 1)) {
    skip_iterations(w, it, &st->ff);
    return true;
  }
  if (st->ff.on)
    account_routes_mark(w, FF_LEVEL_ITERATION);
  return false;
}

void steps_iterations_end(struct worker *w, struct steps *st) {
  ff_leave(w, &st->ff, FF_LEVEL_ITERATION);
}
