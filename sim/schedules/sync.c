/* sim/schedules/sync.c: update, forward, backward, then the exchange of
 * every bucket (Pipe-SGD seeds/001 Eq. 2). */
#include "../ffwd/steps.h"

#include <simgrid/actor.h>

#include <math.h>
#include <string.h>

static void sync_worker(struct wstate *ws) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  const struct model *m = s->model;
  /* Everything the communication side logs falls inside the exchange
   * window: sum it rather than keep it. */
  w->direct = true;
  /* Whole iterations may repeat once the run is periodic (steps.h). */
  struct steps iters;
  steps_iterations_begin(w, &iters);
  for (int it = 0; it < s->p->iterations; it++) {
    if (steps_iteration(w, &iters, it))
      break;
    struct iter_rec *r = sim_rec(s, it, w->rank);
    r->start = sim_now();
    /* Sharded, the shard's update runs inside the exchange, between the
     * gradients' reduce-scatter and the weights' allgather; fully sharded,
     * the exchange runs unit by unit inside forward and backward too. */
    bool sharded = s->p->sharding != SHARD_NONE, units = run_units(s->p);
    if (!units)
      schedule_compute(ws, (sharded ? 0 : m->update_s) + m->forward_s +
                               m->backward_s,
                       r);
    if (schedule_exchanges(s, it)) {
      double a = sim_now(), computed = 0;
      memset(w->acc, 0, sizeof w->acc);
      if (units)
        computed = schedule_fsdp_iteration(ws, it, r);
      else if (sharded)
        computed = schedule_exchange_sharded(ws, it, m->update_s, r);
      else
        schedule_exchange_all(ws, it);
      /* The window's time: what the communication side logged, the
       * compute inside it, and the rest waiting. */
      double covered = computed;
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
  steps_iterations_end(w, &iters);
}

const struct schedule schedule_sync = {
    .description = "update, forward, backward, then the exchange of every "
                   "bucket (Pipe-SGD Eq. 2)",
    .worker = sync_worker,
    .comm_actor = false,
    .exchange_alone = true,
};
