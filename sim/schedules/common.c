/* sim/schedules/common.c: what the training schedules are built from:
 * exchanging buckets through the collective, the job queue between a
 * worker's compute and communication actors, the aggregators' actor
 * (sim.h). */
#include "../ffwd/ffwd.h"

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

/* Bucket B of iteration IT: prepared, exchanged (in rounds, for a linear
 * codec: linear.c; through the codec once, around the collective, for
 * [exchange] compression = per-bucket: bucketwise.c) and checked. */
static void exchange_one(struct wstate *ws, size_t b, int it) {
  struct sim *s = ws->w->sim;
  payload_prepare(ws, b, it);
  if (s->linear && !sim_uncompressed(s, b))
    linear_exchange(ws, b, it);
  else if (s->codec && s->p->compression == COMPRESS_PER_BUCKET &&
           !sim_uncompressed(s, b))
    bucketwise_exchange(ws, b, it);
  else
    exchange_bucket(ws, b);
  payload_check(ws, b, it);
}

/* ---- fast-forward of periodic runs of buckets (sim.h, struct ff_run) ----
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

/* FF->skip periods of WS's run repeated from the last simulated one. */
static void bucket_replay(struct wstate *ws, const struct ff_cursor *ff,
                          size_t buckets) {
  struct worker *w = ws->w;
  ff_replay(w, ff, FF_LEVEL_BUCKETS);
  if (w->rank == 0)
    w->sim->ff_buckets += buckets;
}

/* Before bucket B of iteration IT, the buckets before POSTED posted by
 * the compute side: how many buckets from B fast-forward skipped (0:
 * exchange B). */
static size_t bucket_ff(struct wstate *ws, size_t b, int it, size_t posted) {
  struct worker *w = ws->w;
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
    bucket_replay(ws, &w->bff, skipped);
    ff_leave(w, &w->bff, FF_LEVEL_BUCKETS);
    return skipped;
  }
  ff_mark(w, &w->bff, FF_LEVEL_BUCKETS);
  return 0;
}

/* After bucket B: the end of its run, simulated to the last. */
static void bucket_ff_after(struct wstate *ws, size_t b) {
  struct worker *w = ws->w;
  struct sim *s = w->sim;
  if (!w->bff.on)
    return;
  const struct ff_run *run = &s->ff_runs[w->bff_run];
  if (b + 1 == run->first + (size_t)run->steps * run->period)
    ff_leave(w, &w->bff, FF_LEVEL_BUCKETS);
}

/* Bucket B of iteration IT exchanged, or the rest of its periodic run
 * skipped (the buckets before POSTED are posted): the buckets done. */
static size_t exchange_next(struct wstate *ws, size_t b, int it,
                            size_t posted) {
  size_t skipped = bucket_ff(ws, b, it, posted);
  if (skipped)
    return skipped;
  recur_begin(ws->w, b, it);
  exchange_one(ws, b, it);
  bucket_ff_after(ws, b);
  recur_end(ws->w, b, it);
  return 1 + recur_skip(ws->w, b, it);
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
  recur_backward(w);
  size_t n = w->sim->nbuckets;
  for (size_t b = 0; b < n;) {
    b += exchange_next(ws, b, it, n);
    progress(w, it, b);
  }
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
      /* Posted: this bucket and those queued after it, of this iteration
       * (the queue may already hold the next one's). */
      size_t posted = j->bucket + 1 + g_queue_get_length(ws->jobs);
      size_t done = exchange_next(ws, j->bucket, j->iteration,
                                  posted < last + 1 ? posted : last + 1);
      /* The jobs of the buckets skipped: posted (bucket_ff), or posted
       * by the time the skip ended (recur_skip: each skipped bucket began
       * no earlier than its post). */
      for (size_t k = 1; k < done; k++) {
        sg_sem_acquire(ws->job_sem);
        struct job *skipped = g_queue_pop_head(ws->jobs);
        xbt_assert(skipped->bucket == j->bucket + k &&
                       skipped->iteration == j->iteration,
                   "bucket fast-forward: job %zu of iteration %d, not %zu",
                   skipped->bucket, skipped->iteration, j->bucket + k);
        g_free(skipped);
      }
      j->bucket += done - 1;
      progress(w, j->iteration, j->bucket + 1);
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
