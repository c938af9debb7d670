/* sim/schedules/overlap.c: each bucket is exchanged as soon as backward
 * has produced its tensors (layer-wise overlap, GradientFlow seeds/003
 * Fig. 12; lazy allreduce when fusion_bytes groups them, Fig. 15); the
 * next update waits for all. */
#include "../ffwd/steps.h"

#include <simgrid/semaphore.h>

#include <string.h>

/* Once backward has produced layer L's tensors (layers from the last;
 * PRODUCED: the tensors produced before, updated): the buckets from NEXT
 * that are complete, whose jobs it posts then. */
static size_t complete_after(const struct sim *s, size_t l, size_t next,
                             size_t *produced) {
  const struct model *m = s->model;
  while (*produced < m->ntensors && m->tensors[*produced].layer == l)
    (*produced)++;
  while (next < s->nbuckets &&
         s->buckets[next].first + s->buckets[next].count <= *produced)
    next++;
  return next;
}

/* [model] micro_batch: gradient accumulation over A micro-batches, as
 * PyTorch DDP's no_sync() does it: the gradients of the first A - 1 are
 * only accumulated, and the buckets are exchanged as the last one's
 * backward produces them, so only that backward overlaps the exchange. */
static double micro_batches(const struct sim *s) {
  int mb = s->p->micro_batch;
  const struct model *m = s->model;
  return mb > 0 && mb < m->batch ? (double)m->batch / mb : 1;
}

/* Backward, layer by layer from the last, posting each bucket once its
 * last tensor is produced (tensors come in backward order); SHARE of
 * each layer's time (the last micro-batch's). Layers after which nothing
 * is posted are computed with the next one, in one go (summed as
 * overlap_gaps sums them), unless a codec shares the GPU (its work could
 * come between them): ResNet-50's 171 layers post at 107 of them, and
 * each is a sleep of every worker's compute actor. (--trace shows such
 * layers as one compute interval.) */
static void backward(struct wstate *ws, int it, bool send, double share,
                     struct iter_rec *r) {
  const struct sim *s = ws->w->sim;
  const struct model *m = s->model;
  size_t next = 0, produced = 0; /* buckets posted; tensors produced */
  bool merge = !sim_gpu_shared(s);
  double t = 0;
  steps_backward(ws->w);
  for (size_t l = m->nlayers; l-- > 0;) {
    t += share * m->layers[l].backward_s;
    size_t done = complete_after(s, l, next, &produced);
    if (merge && l > 0 && !(send && next < done))
      continue;
    schedule_compute(ws, t, r);
    t = 0;
    while (send && next < done)
      schedule_post(ws, it, next++);
  }
  while (send && next < s->nbuckets)
    schedule_post(ws, it, next++);
}

static void overlap_gaps(const struct sim *s, double *gap) {
  const struct model *m = s->model;
  double share = 1 / micro_batches(s), t = 0;
  size_t next = 0, produced = 0;
  for (size_t l = m->nlayers; l-- > 0;) {
    t += share * m->layers[l].backward_s;
    size_t done = complete_after(s, l, next, &produced);
    for (; next < done; next++, t = 0)
      gap[next] = t;
  }
  for (; next < s->nbuckets; next++, t = 0)
    gap[next] = t;
}

/* Wait for SEM (released by the communication actor), the wait
 * attributed to what it did meanwhile. */
static void wait_for(struct wstate *ws, sg_sem_t sem, struct iter_rec *r) {
  double a = sim_now();
  sg_sem_acquire(sem);
  account_attribute(ws->w, a, sim_now(), r);
}

/* One pass over the layers, forward or BACKWARD: the first unit's gather
 * posted before it, each unit's waited for as the pass enters it and the
 * next unit's posted then; in backward a unit's reduce-scatter posted
 * once the pass leaves it. The layers' compute accumulates in *T, run
 * before each wait and post (and carried into the next pass, whose first
 * gather it hides). Returns the units passed. */
static size_t fsdp_pass(struct wstate *ws, int it, bool backward, double *t,
                        struct iter_rec *r) {
  const struct sim *s = ws->w->sim;
  const struct model *m = s->model;
  size_t nb = s->nbuckets ? s->nbuckets : 1, nl = m->nlayers, n = 0;
  size_t *order = g_new(size_t, nb);
  bool *seen = g_new0(bool, nb), *left = g_new0(bool, nb);
  for (size_t i = 0; i < nl; i++) {
    size_t b = s->layer_bucket[backward ? nl - 1 - i : i];
    if (b != SIZE_MAX && !seen[b]) {
      seen[b] = true;
      order[n++] = b;
    }
  }
  memset(seen, 0, nb * sizeof *seen);
  size_t next = 0;
  if (n)
    schedule_post_job(ws, it, order[next++],
                      backward ? JOB_GATHER_BACKWARD : JOB_GATHER);
  for (size_t i = 0; i < nl; i++) {
    size_t l = backward ? nl - 1 - i : i, b = s->layer_bucket[l];
    if (b != SIZE_MAX && !seen[b]) {
      schedule_flush(ws, t, r);
      wait_for(ws, ws->gathered[b], r);
      seen[b] = true;
      if (next < n)
        schedule_post_job(ws, it, order[next++],
                          backward ? JOB_GATHER_BACKWARD : JOB_GATHER);
    }
    *t += backward ? m->layers[l].backward_s : m->layers[l].forward_s;
    if (backward && b != SIZE_MAX && !left[b] &&
        (l == 0 || s->layer_bucket[l - 1] != b)) {
      schedule_flush(ws, t, r);
      schedule_post_job(ws, it, b, JOB_SCATTER);
      left[b] = true;
    }
  }
  g_free(order);
  g_free(seen);
  g_free(left);
  return n;
}

/* Fully sharded ([training] sharding = zero3, hsdp) in overlap, as FSDP
 * runs it: the communication actor gathers a unit's weights one unit
 * ahead of compute (forward: the next unit's gather posted as a unit
 * starts, the CPU running ahead of the GPU; backward: BACKWARD_PRE's
 * prefetch), and reduce-scatters a unit's gradients once its backward is
 * done, while the next unit computes; all on one stream of collectives,
 * in order, as on one NCCL communicator. The update waits for the last
 * reduce-scatter. */
static void fsdp_overlap(struct wstate *ws, int it, struct iter_rec *r) {
  struct worker *w = ws->w;
  w->first_send = -1;
  w->wire_bytes = 0;
  ws->nscattered = 0;
  double t = 0;
  fsdp_pass(ws, it, false, &t, r);
  size_t units = fsdp_pass(ws, it, true, &t, r);
  schedule_flush(ws, &t, r);
  /* Every reduce-scatter, then the shard's update. */
  account_sum_from(w);
  double a = sim_now();
  for (size_t k = 0; k < units; k++)
    sg_sem_acquire(ws->scattered);
  account_attribute(w, a, sim_now(), r);
  schedule_compute(ws, w->sim->model->update_s, r);
}

static void overlap_worker(struct wstate *ws) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  const struct model *m = s->model;
  double a = micro_batches(s);
  /* Sharded ([training] sharding), the shard's update comes between the
   * gradients' reduce-scatter, which overlaps backward, and the weights'
   * allgather, which the next forward waits for. */
  bool sharded = s->p->sharding != SHARD_NONE;
  bool units = run_units(s->p);
  for (int it = 0; it < s->p->iterations; it++) {
    struct iter_rec *r = sim_rec(s, it, w->rank);
    r->start = sim_now();
    if (units) {
      fsdp_overlap(ws, it, r);
      account_prune(w, sim_now());
      r->end = sim_now();
      continue;
    }
    schedule_compute(ws, (sharded ? 0 : m->update_s) + m->forward_s +
                             (a - 1) / a * m->backward_s,
                     r);
    bool send = schedule_exchanges(s, it);
    backward(ws, it, send, 1 / a, r);
    if (send) {
      account_sum_from(w);
      schedule_wait_done(ws, r);
      if (sharded) {
        schedule_compute(ws, m->update_s, r);
        account_sum_from(w);
        schedule_post_job(ws, it, 0, JOB_ALLGATHER);
        schedule_wait_done(ws, r);
      }
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
    .post_gaps = overlap_gaps,
};
