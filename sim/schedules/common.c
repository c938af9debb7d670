/* sim/schedules/common.c: what the training schedules are built from:
 * exchanging buckets through the collective, the job queue between a
 * worker's compute and communication actors, the aggregators' actor
 * (sim.h). */
#include "../sim.h"

#include <simgrid/actor.h>
#include <simgrid/semaphore.h>

#include <math.h>
#include <string.h>

bool schedule_exchanges(const struct sim *s, int it) {
  /* 3LC's local steps: an exchange every local_steps iterations. */
  return (it + 1) % s->p->local_steps == 0 || it == s->p->iterations - 1;
}

/* [exchange] compress_min: small buckets (batch normalization's scales
 * and shifts, biases) go as plain fp32 whatever the codec, as 3LC does
 * (seeds/004 Section 5.1: "we exclude state changes for small layers
 * (batch normalization in our experiments) from compression").
 * [exchange] staging: CUDA-aware OpenMPI's allreduce on device buffers
 * copies the bucket to host memory, runs the host collective (its sums
 * on the CPU, at reduce_rate) and copies the result back (OpenMPI 3.1,
 * ompi/mca/coll/cuda/coll_cuda_allreduce.c). */
static void exchange_bucket(struct wstate *ws, size_t b) {
  struct sim *s = ws->w->sim;
  struct coll_call c = {.sim = s, .w = ws->w, .rank = ws->w->rank,
                        .bucket = b, .v = &ws->vecs[b],
                        .raw = sim_uncompressed(s, b)};
  sim_stage(ws->w, s, c.v->n);
  s->coll->worker(&c);
  sim_stage(ws->w, s, c.v->n);
}

/* Bucket B of iteration IT: prepared, exchanged (in rounds, for a linear
 * codec: linear.c) and checked. */
static void exchange_one(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  payload_prepare(ws, b, it);
  if (s->linear && !sim_uncompressed(s, b))
    linear_exchange(ws, b, it);
  else
    exchange_bucket(ws, b);
  payload_check(ws, b, it);
}

/* The exchange of iteration IT is complete on WS's worker. */
static void exchange_done(struct wstate *ws, int it) {
  struct worker *w = ws->w;
  payload_release(w->sim, it);
  struct iter_rec *r = sim_rec(w->sim, it, w->rank);
  r->exchange_start = w->first_send;
  r->exchange_end = sim_now();
  r->wire_bytes = w->wire_bytes;
}

void schedule_exchange_all(struct wstate *ws, int it) {
  struct worker *w = ws->w;
  w->first_send = -1;
  w->wire_bytes = 0;
  for (size_t b = 0; b < w->sim->nbuckets; b++)
    exchange_one(ws, b, it);
  exchange_done(ws, it);
}

void schedule_compute(struct wstate *ws, double seconds, struct iter_rec *r) {
  struct worker *w = ws->w;
  double t0 = sim_now();
  r->gpu_wait_s += sim_gpu(w, seconds);
  r->compute_s += sim_now() - t0;
  sim_trace(w->sim, w->rank, 0, t0, sim_now(), ST_NSTATES);
}

/* The communication actor of overlap and pipe: exchanges the jobs the
 * compute actor posts, in order. */
void schedule_comm_actor(int argc, char **argv) {
  (void)argc, (void)argv;
  struct wstate *ws = sg_actor_self_get_data();
  struct worker *w = ws->w;
  size_t last = w->sim->nbuckets - 1;
  for (;;) {
    sg_sem_acquire(ws->job_sem);
    struct job *j = g_queue_pop_head(ws->jobs);
    if (j->iteration < 0) {
      g_free(j);
      break;
    }
    if (j->bucket == SIZE_MAX) {
      schedule_exchange_all(ws, j->iteration);
    } else {
      if (j->bucket == 0) {
        w->first_send = -1;
        w->wire_bytes = 0;
      }
      exchange_one(ws, j->bucket, j->iteration);
      if (j->bucket == last)
        exchange_done(ws, j->iteration);
    }
    if (j->bucket == SIZE_MAX || j->bucket == last)
      sg_sem_release(ws->done_sem);
    g_free(j);
  }
}

void schedule_post(struct wstate *ws, int it, size_t bucket) {
  struct job *j = g_new(struct job, 1);
  j->iteration = it;
  j->bucket = bucket;
  g_queue_push_tail(ws->jobs, j);
  sg_sem_release(ws->job_sem);
}

void schedule_wait_done(struct wstate *ws, struct iter_rec *r) {
  double a = sim_now();
  sg_sem_acquire(ws->done_sem);
  account_attribute(ws->w, a, sim_now(), r);
}

void schedule_aggregator_actor(int argc, char **argv) {
  (void)argc, (void)argv;
  struct astate *as = sg_actor_self_get_data();
  struct sim *s = as->sim;
  for (int it = 0; it < s->p->iterations; it++) {
    if (!schedule_exchanges(s, it))
      continue;
    for (size_t b = 0; b < s->nbuckets; b++) {
      if (s->linear && !sim_uncompressed(s, b)) {
        linear_aggregate(as, b);
        continue;
      }
      struct vec *v = &as->vecs[b];
      struct coll_call c = {.sim = s, .rank = s->nworkers + as->a,
                            .bucket = b, .v = v,
                            .raw = sim_uncompressed(s, b)};
      s->coll->aggregator(&c);
    }
  }
}
