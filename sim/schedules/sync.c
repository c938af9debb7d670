/* sim/schedules/sync.c: update, forward, backward, then the exchange of
 * every bucket (Pipe-SGD seeds/001 Eq. 2). */
#include "../ffwd/ffwd.h"

#include <simgrid/actor.h>

#include <math.h>
#include <string.h>

/* Iterations IT.. skipped by fast-forward (fastforward.c): each is the
 * last simulated one (IT - 1) shifted by one more period. */
static void skip_iterations(struct wstate *ws, int it,
                            const struct ff_cursor *ff) {
  struct worker *w = ws->w;
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

static void sync_worker(struct wstate *ws) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  const struct model *m = s->model;
  /* Everything the communication side logs falls inside the exchange
   * window: sum it rather than keep it. */
  w->direct = true;
  /* Whole iterations repeat once the run is periodic, when nothing
   * outside the workers (aggregators) takes part and every iteration
   * exchanges (no local steps). */
  struct ff_cursor ff;
  ff_join(s, &ff, FF_KEY_ITERATIONS, s->nworkers, s->p->iterations,
          s->ff_ok && s->naggr == 0 && s->p->local_steps == 1);
  for (int it = 0; it < s->p->iterations; it++) {
    if (ff_step(&ff, it + 1)) {
      skip_iterations(ws, it, &ff);
      break;
    }
    if (ff.on)
      account_routes_mark(w, FF_LEVEL_ITERATION);
    struct iter_rec *r = sim_rec(s, it, w->rank);
    r->start = sim_now();
    schedule_compute(ws, m->update_s + m->forward_s + m->backward_s, r);
    if (schedule_exchanges(s, it)) {
      double a = sim_now();
      memset(w->acc, 0, sizeof w->acc);
      schedule_exchange_all(ws, it);
      double covered = 0;
      for (int st = 0; st < ST_NSTATES; st++)
        covered += w->acc[st];
      r->codec_s += w->acc[ST_CODEC];
      r->comm_s += w->acc[ST_COMM];
      r->reduce_s += w->acc[ST_REDUCE];
      r->idle_s += w->acc[ST_IDLE] + fmax(0, (sim_now() - a) - covered);
    } else {
      payload_accumulate(ws, it);
      r->exchange_start = r->exchange_end = -1;
    }
    r->end = sim_now();
  }
  ff_leave(w, &ff, FF_LEVEL_ITERATION);
}

const struct schedule schedule_sync = {
    .description = "update, forward, backward, then the exchange of every "
                   "bucket (Pipe-SGD Eq. 2)",
    .worker = sync_worker,
    .comm_actor = false,
    .exchange_alone = true,
};
