/* sim/schedules/pipe.c: Pipe-SGD (seeds/001 Algorithm 1) with iteration
 * dependency K: iteration t waits for the aggregated gradient of
 * iteration t - K before its update, and its own gradient is exchanged by
 * the communication actor while the next iterations compute. */
#include "../sim.h"

#include <stdint.h>

static void pipe_worker(struct wstate *ws) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  const struct model *m = s->model;
  int posted = 0, waited = 0;
  for (int it = 0; it < s->p->iterations; it++) {
    struct iter_rec *r = sim_rec(s, it, w->rank);
    r->start = sim_now();
    /* gsum[t - K] must be ready: that is, all but the K - 1 latest of the
     * exchanges posted so far. */
    while (posted - waited > s->p->k - 1) {
      schedule_wait_done(ws, r);
      waited++;
    }
    schedule_compute(ws, m->update_s + m->forward_s + m->backward_s, r);
    if (schedule_exchanges(s, it)) {
      schedule_post(ws, it, SIZE_MAX);
      posted++;
    } else {
      payload_accumulate(ws, it);
      r->exchange_start = r->exchange_end = -1;
    }
    account_prune(w, r->start);
    r->end = sim_now();
  }
  while (waited < posted) {
    schedule_wait_done(ws, sim_rec(s, s->p->iterations - 1, w->rank));
    waited++;
  }
  schedule_post(ws, -1, 0);
}

const struct schedule schedule_pipe = {
    .description = "Pipe-SGD Algorithm 1: iteration t waits for the "
                   "aggregated gradient of t - k only",
    .worker = pipe_worker,
    .comm_actor = true,
};
