/* sim/ffwd/steps.c: the steps contract (steps.h) on fast-forward's
 * sequences (fastforward.c) and recurrence (recur.c). */
#include "steps.h"

#include "ffwd.h"

/* A run is fast-forward's when fast-forward is allowed in this run (the
 * conditions of run.c: payload none, no packets or NIC engines, the sync
 * or overlap schedule), a worker runs it over all workers and it is
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
