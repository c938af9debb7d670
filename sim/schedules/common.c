/* sim/schedules/common.c: what the training schedules are built from:
 * exchanging buckets through the collective, the job queue between a
 * worker's compute and communication actors, the aggregators' actor
 * (sim.h). */
#include "../ffwd/steps.h"

#include <simgrid/actor.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>

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

/* A sharded call of bucket B carries its values uncompressed: a bucket
 * the codec skips, or the half ([exchange] shard_codec) that does not
 * carry the codec (WEIGHTS: the allgathers, else the reduce-scatters). */
static bool shard_raw(const struct sim *s, size_t b, bool weights) {
  enum shard_codec sc = s->p->shard_codec;
  return sim_uncompressed(s, b) ||
         sc == (weights ? SHARD_CODEC_GRADIENTS : SHARD_CODEC_WEIGHTS);
}

/* Bucket B of iteration IT: prepared, exchanged (in rounds, for a linear
 * codec: linear.c; through the codec once, around the collective, for
 * [exchange] compression = per-bucket: bucketwise.c) and checked. */
static void exchange_one(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  payload_prepare(ws, b, it);
  if (s->p->sharding != SHARD_NONE) {
    /* Sharded: the gradients' half; checked after the weights' half
     * (shard_allgather_all). */
    struct coll_call c = {.sim = s, .w = ws->w, .rank = ws->w->rank,
                          .bucket = b, .v = &ws->vecs[b],
                          .raw = shard_raw(s, b, false)};
    s->coll->reduce_scatter(&c);
    return;
  }
  if (s->linear && !sim_uncompressed(s, b))
    linear_exchange(ws, b, it);
  else if (s->codec && s->p->compression == COMPRESS_PER_BUCKET &&
           !sim_uncompressed(s, b))
    bucketwise_exchange(ws, b, it);
  else
    exchange_bucket(ws, b);
  payload_check(ws, b, it);
}

/* Bucket B of iteration IT exchanged, or the rest of its periodic run
 * skipped (the buckets before POSTED are posted): the buckets done. */
static size_t exchange_next(struct wstate *ws, size_t b, int it,
                            size_t posted) {
  size_t skipped = steps_bucket_begin(ws->w, b, it, posted);
  if (skipped)
    return skipped;
  exchange_one(ws, b, it);
  return steps_bucket_end(ws->w, b, it);
}

/* Worker W has exchanged the first DONE buckets of iteration IT (the
 * progress display's counts: worker 0's). */
static void progress(const struct worker *w, int it, size_t done) {
  if (!sim_progress || w->rank != 0)
    return;
  size_t n = w->sim->nbuckets;
  sim_progress->buckets = (int64_t)it * (int64_t)n + (int64_t)done;
  if (done == n)
    sim_progress->iterations = it + 1;
}

/* The exchange of iteration IT is complete on WS's worker. */
static void exchange_done(struct wstate *ws, int it) {
  struct worker *w = ws->w;
  payload_release(w->sim, it);
  struct iter_rec *r = sim_rec(w->sim, it, w->rank);
  r->exchange_start = w->first_send;
  r->exchange_end = sim_now();
  r->wire_bytes = w->wire_bytes;
  progress(w, it, w->sim->nbuckets);
}

void schedule_exchange_all(struct wstate *ws, int it) {
  struct worker *w = ws->w;
  w->first_send = -1;
  w->wire_bytes = 0;
  steps_backward(w);
  size_t n = w->sim->nbuckets;
  for (size_t b = 0; b < n;) {
    b += exchange_next(ws, b, it, n);
    progress(w, it, b);
  }
  exchange_done(ws, it);
}

/* Sharded: every bucket's weights allgathered and the result checked;
 * the exchange of iteration IT is then complete. */
static void shard_allgather_all(struct wstate *ws, int it) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  for (size_t b = 0; b < s->nbuckets; b++) {
    struct coll_call c = {.sim = s, .w = w, .rank = w->rank, .bucket = b,
                          .v = &ws->vecs[b], .raw = shard_raw(s, b, true)};
    s->coll->shard_allgather(&c);
    payload_check(ws, b, it);
  }
  exchange_done(ws, it);
}

/* zero3 and hsdp: a call of WS's worker on V for bucket B, of the
 * WEIGHTS or the gradients, over its machine (hsdp; MACHINE) or over all
 * workers. */
static struct coll_call fsdp_call(struct wstate *ws, size_t b,
                                  struct vec *v, bool weights, bool machine) {
  struct sim *s = ws->w->sim;
  struct coll_call c = {.sim = s, .w = ws->w, .rank = ws->w->rank,
                        .bucket = b, .v = v,
                        .raw = shard_raw(s, b, weights)};
  if (machine || s->p->sharding == SHARD_HSDP) {
    c.group = ws->machine;
    c.g = ws->nmachine;
    c.me = ws->me_machine;
  }
  return c;
}

/* Unit B's weights gathered (timed: no values held) for forward or
 * BACKWARD; with hpz backward's from the machine's secondary copy,
 * inside the machine. */
static void fsdp_gather(struct wstate *ws, size_t b, bool backward) {
  struct coll_call c = fsdp_call(ws, b, &ws->params[b], true,
                                 backward && ws->w->sim->p->hpz);
  ws->w->sim->coll->shard_allgather(&c);
}

/* Unit B's gradients reduce-scattered (hsdp: inside the machine, then
 * each part of the shard allreduced across machines, among the rail) and
 * checked on the shard the collective leaves this worker. */
static void fsdp_scatter(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  payload_prepare(ws, b, it);
  bool qgz = s->p->qgz;
  struct coll_call c = fsdp_call(ws, b, &ws->vecs[b], false, qgz);
  s->coll->reduce_scatter(&c);
  uint64_t lo[2], hi[2];
  int g, me;
  coll_group(&c, &g, &me);
  int k = s->coll->shard_ranges(me, g, ws->vecs[b].n, lo, hi);
  /* Across machines (hsdp, qgz): among the workers of this one's index. */
  struct coll_call r = c;
  r.group = ws->rail;
  r.g = ws->nrail;
  r.me = ws->me_rail;
  if (qgz && ws->nrail > 1) {
    /* qgz: each part of the machine's shard reduce-scattered across the
     * machines; what is left of it is this worker's. */
    uint64_t flo[4], fhi[4];
    int fk = 0;
    for (int i = 0; i < k; i++) {
      if (hi[i] <= lo[i])
        continue;
      s->coll->range_reduce_scatter(&r, lo[i], hi[i]);
      uint64_t slo[2], shi[2];
      int sk = s->coll->shard_ranges(r.me, r.g, hi[i] - lo[i], slo, shi);
      for (int j = 0; j < sk; j++) {
        flo[fk] = lo[i] + slo[j];
        fhi[fk++] = lo[i] + shi[j];
      }
    }
    for (int i = 0; i < fk; i++)
      payload_check_range(ws, b, it, flo[i], fhi[i]);
    return;
  }
  if (s->p->sharding == SHARD_HSDP && ws->nrail > 1) {
    for (int i = 0; i < k; i++)
      if (hi[i] > lo[i])
        s->coll->range_allreduce(&r, lo[i], hi[i]);
  }
  for (int i = 0; i < k; i++)
    payload_check_range(ws, b, it, lo[i], hi[i]);
}

double schedule_fsdp_iteration(struct wstate *ws, int it, struct iter_rec *r) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  const struct model *m = s->model;
  size_t nb = s->nbuckets, done = 0;
  bool *have = g_new0(bool, nb), *scattered = g_new0(bool, nb);
  double c0 = r->compute_s, t = 0;
  w->first_send = -1;
  w->wire_bytes = 0;
  /* Forward, then backward: a unit's weights gathered before the pass's
   * first layer of it (forward: freed after it, FSDP's
   * reshard_after_forward; backward: gathered again), and in backward its
   * gradients reduce-scattered once the pass leaves it. */
  size_t nl = m->nlayers;
  for (int backward = 0; backward < 2; backward++) {
    memset(have, 0, nb * sizeof *have);
    for (size_t i = 0; i < nl; i++) {
      size_t l = backward ? nl - 1 - i : i, b = s->layer_bucket[l];
      if (b != SIZE_MAX && !have[b]) {
        schedule_flush(ws, &t, r);
        fsdp_gather(ws, b, backward);
        have[b] = true;
      }
      t += backward ? m->layers[l].backward_s : m->layers[l].forward_s;
      if (backward && b != SIZE_MAX && !scattered[b] &&
          (l == 0 || s->layer_bucket[l - 1] != b)) {
        schedule_flush(ws, &t, r);
        fsdp_scatter(ws, b, it);
        scattered[b] = true;
        progress(w, it, ++done);
      }
    }
    schedule_flush(ws, &t, r);
  }
  for (size_t b = 0; b < nb; b++)
    xbt_assert(scattered[b], "zero3: unit %zu never reduce-scattered", b);
  exchange_done(ws, it);
  schedule_compute(ws, m->update_s, r);
  g_free(have);
  g_free(scattered);
  return r->compute_s - c0;
}

double schedule_exchange_sharded(struct wstate *ws, int it, double update_s,
                                 struct iter_rec *r) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  w->first_send = -1;
  w->wire_bytes = 0;
  for (size_t b = 0; b < s->nbuckets; b++) {
    exchange_one(ws, b, it);
    progress(w, it, b + 1);
  }
  double t0 = sim_now();
  schedule_compute(ws, update_s, r);
  double spent = sim_now() - t0;
  shard_allgather_all(ws, it);
  return spent;
}

void schedule_flush(struct wstate *ws, double *t, struct iter_rec *r) {
  if (*t > 0)
    schedule_compute(ws, *t, r);
  *t = 0;
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
    if (j->kind == JOB_ALLGATHER) {
      shard_allgather_all(ws, j->iteration);
      sg_sem_release(ws->done_sem);
      g_free(j);
      continue;
    }
    if (j->kind == JOB_GATHER || j->kind == JOB_GATHER_BACKWARD) {
      fsdp_gather(ws, j->bucket, j->kind == JOB_GATHER_BACKWARD);
      sg_sem_release(ws->gathered[j->bucket]);
      g_free(j);
      continue;
    }
    if (j->kind == JOB_SCATTER) {
      fsdp_scatter(ws, j->bucket, j->iteration);
      progress(w, j->iteration, ++ws->nscattered);
      /* The last unit's reduce-scatter ends the iteration's exchange. */
      if (ws->nscattered == w->sim->nbuckets)
        exchange_done(ws, j->iteration);
      sg_sem_release(ws->scattered);
      g_free(j);
      continue;
    }
    if (j->bucket == SIZE_MAX) {
      schedule_exchange_all(ws, j->iteration);
    } else {
      if (j->bucket == 0) {
        w->first_send = -1;
        w->wire_bytes = 0;
      }
      /* Posted: this bucket and those queued after it, of this iteration
       * (the queue may already hold the next one's). */
      size_t posted = j->bucket + 1 + g_queue_get_length(ws->jobs);
      size_t done = exchange_next(ws, j->bucket, j->iteration,
                                  posted < last + 1 ? posted : last + 1);
      /* The jobs of the buckets the steps contract skipped, each posted
       * by the time the skip ended (steps_bucket_begin, steps_bucket_end). */
      for (size_t k = 1; k < done; k++) {
        sg_sem_acquire(ws->job_sem);
        struct job *skipped = g_queue_pop_head(ws->jobs);
        xbt_assert(skipped->bucket == j->bucket + k &&
                       skipped->iteration == j->iteration,
                   "skipped buckets: job %zu of iteration %d, not %zu",
                   skipped->bucket, skipped->iteration, j->bucket + k);
        g_free(skipped);
      }
      j->bucket += done - 1;
      progress(w, j->iteration, j->bucket + 1);
      /* Sharded, the weights' allgather completes it. */
      if (j->bucket == last && w->sim->p->sharding == SHARD_NONE)
        exchange_done(ws, j->iteration);
    }
    if (j->bucket == SIZE_MAX || j->bucket == last)
      sg_sem_release(ws->done_sem);
    g_free(j);
  }
}

void schedule_post(struct wstate *ws, int it, size_t bucket) {
  schedule_post_job(ws, it, bucket, JOB_BUCKET);
}

void schedule_post_job(struct wstate *ws, int it, size_t b, int kind) {
  struct job *j = g_new(struct job, 1);
  j->iteration = it;
  j->bucket = b;
  j->kind = kind;
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
