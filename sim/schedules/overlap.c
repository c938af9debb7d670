/* sim/schedules/overlap.c: each bucket is exchanged as soon as backward
 * has produced its tensors (layer-wise overlap, GradientFlow seeds/003
 * Fig. 12; lazy allreduce when fusion_bytes groups them, Fig. 15); the
 * next update waits for all. */
#include "../sim.h"

/* Backward, layer by layer from the last, posting each bucket once its
 * last tensor is produced (tensors come in backward order); SHARE of
 * each layer's time (the last micro-batch's). */
static void backward(struct wstate *ws, int it, bool send, double share,
                     struct iter_rec *r) {
  const struct sim *s = ws->w->sim;
  const struct model *m = s->model;
  size_t next = 0, produced = 0; /* buckets posted; tensors produced */
  for (size_t l = m->nlayers; l-- > 0;) {
    schedule_compute(ws, share * m->layers[l].backward_s, r);
    while (produced < m->ntensors && m->tensors[produced].layer == l)
      produced++;
    while (send && next < s->nbuckets &&
           s->buckets[next].first + s->buckets[next].count <= produced)
      schedule_post(ws, it, next++);
  }
  while (send && next < s->nbuckets)
    schedule_post(ws, it, next++);
}

static void overlap_worker(struct wstate *ws) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  const struct model *m = s->model;
  /* [model] micro_batch: gradient accumulation over A micro-batches, as
   * PyTorch DDP's no_sync() does it: the gradients of the first A - 1 are
   * only accumulated, and the buckets are exchanged as the last one's
   * backward produces them, so only that backward overlaps the exchange. */
  int mb = s->p->micro_batch;
  double a = mb > 0 && mb < m->batch ? (double)m->batch / mb : 1;
  for (int it = 0; it < s->p->iterations; it++) {
    struct iter_rec *r = sim_rec(s, it, w->rank);
    r->start = sim_now();
    schedule_compute(ws, m->update_s + m->forward_s +
                             (a - 1) / a * m->backward_s,
                     r);
    bool send = schedule_exchanges(s, it);
    backward(ws, it, send, 1 / a, r);
    if (send) {
      schedule_wait_done(ws, r);
    } else {
      payload_accumulate(ws, it);
      r->exchange_start = r->exchange_end = -1;
    }
    account_prune(w, sim_now());
    r->end = sim_now();
  }
  schedule_post(ws, -1, 0);
}

const struct schedule schedule_overlap = {
    .description = "each bucket exchanged as soon as backward produces it, "
                   "by a communication actor (layer-wise overlap; lazy "
                   "allreduce with fusion_bytes)",
    .worker = overlap_worker,
    .comm_actor = true,
};
