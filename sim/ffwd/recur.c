/* sim/ffwd/recur.c: fast-forward by recurrence (ffwd.h, "recurrence"; the
 * docs/fast-forward.md states the conditions).
 *
 * When every worker sleeps through the skipped steps of the same ring
 * leg over all workers (fastforward.c; the last has entered the skip and
 * none has woken from it yet), nothing is in flight: each
 * member entered the skip after receiving its message of the step
 * before, and no later step's message is sent. From then on the run is a
 * function of when each worker wakes, of when each one's backward posts
 * the buckets it has not posted yet (compute and communication share
 * nothing else: schedules/common.c), and of what each then does: the
 * rest of the bucket, then the next buckets. That moment is a
 * checkpoint. So is the end of a linear reduce over all workers
 * (recur_gather): every other worker waits on its root. Two checkpoints
 * of one iteration, in buckets B < B2 that are the same exchange (as many values, compressed alike), at the same
 * leg of it, whose wake times differ by one shift D for every worker (to
 * 1e-9 of the leg's step), are the same state D apart for as long as the
 * buckets after them are the same exchanges and begin alike (a bucket
 * begins at the worker's end of the one before or when backward posts it,
 * whichever is later: either backward posts bucket B2 + j D after B + j,
 * or neither waits on it). So bucket B2 + j repeats bucket B + j shifted
 * by D; where B + j is B2 or later, it repeats B + j - P (P = B2 - B) in
 * turn, so bucket B2 + j repeats bucket B + 1 + (j - 1) mod P, recorded
 * already.
 *
 * The state at the end of a sealed bucket (below) is the workers' end
 * times: nothing of the bucket is in flight once its first worker has
 * ended it. Two ends whose times differ by one shift for every worker
 * are the same state (a class: end_class). So once a skip's buckets
 * stop repeating those after B, it goes on: the next bucket repeats any
 * bucket X + 1 recorded earlier that is the same exchange and begins
 * alike, whose start (the end of X) was of the class the skip stands in,
 * and the skip then stands in the class of X + 1's end (chain_from).
 *
 * A skip covers whole buckets, B2 + 1 .. B2 + M, from each worker's end
 * of B2 to its end of B2 + M, and its ends must be quiet: while one
 * worker has ended a bucket and goes on to the next, another may still
 * be exchanging the first (the tail of SMPI's default allreduce after a
 * ring, say), and the two share links. A bucket is sealed when the last
 * message any worker received or waited on in it completed no later
 * than the first worker ended it: then whatever any worker does after
 * its end meets no traffic of the bucket. B must be sealed (B2 is then
 * too, being B shifted) and so must the bucket B2 + M repeats. Each
 * worker, at its end of B2, then repeats its own records of the buckets
 * repeated (their time, summed or listed spans, wire bytes and routes'
 * bytes), shifted to follow one another, and sleeps as long; the buckets
 * it repeats are recorded in turn, so that they can be repeated later
 * (unless their spans went into trains: recur_skip).
 *
 * Within a bucket, the same holds leg by leg: at a checkpoint that is an
 * earlier one shifted, the bucket's next ring leg over all workers
 * repeats the earlier bucket's next leg, when that leg ended at a
 * checkpoint too (its members all asleep, nothing in flight): each worker
 * replays its own record of it from its entry (recur_leg_begin), and the
 * leg's checkpoint is the earlier one shifted. That skips the allgather
 * of a ring whose size came before but not with the same sizes after it.
 *
 * Periodic runs of buckets (fastforward.c) may be in progress: until a
 * run skips, its votes change nothing simulated, so the buckets repeated
 * (all simulated, or repeated in turn: recorded by every worker) are what
 * the simulation gives, and a skip from inside a run leaves the run (its
 * later periods are simulated, or skipped by recurrence). */
#include "ffwd.h"

#include <simgrid/actor.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* What a worker had done by time T: its summed spans, how many spans it
 * kept, its wire bytes, and worker 0's skipped ring steps. What it did
 * between two of these is what a repeat repeats (repeat_between). */
struct recur_state {
  double t, wire;
  double acc[ST_NSTATES];
  uint64_t ff_steps;
  guint spans;
};

/* A worker's state at the end of a bucket of the iteration in progress
 * (AT.t NAN: the bucket was skipped by a run, not recorded), its last
 * message (-INFINITY: none), and the length of its routes then. */
struct recur_end {
  struct recur_state at;
  double last_msg;
  guint routes;
};

/* A worker's record of a ring leg over all workers, the LEG-th of bucket
 * B: its state when it entered and left it, its routes' bytes [ROUTES0,
 * ROUTES1) of recur_leg_routes (FROM: recur_routes' length at its entry,
 * while it is open), and its bucket's last message then. */
struct recur_leg {
  size_t b;
  uint64_t leg;
  struct recur_state in, out;
  double last_msg;
  guint routes0, routes1, from;
};

/* A checkpoint: bucket B of iteration IT at its LEG-th ring leg; each
 * worker wakes at BASE + OFF[rank]; D the leg's step; TAIL: the leg's
 * last steps are simulated after it (ff_keep_tail). Or, GATHER, at the
 * end of a linear reduce over all workers (recur_gather) after LEG legs,
 * its root there at BASE (no OFF). */
struct recur_ck {
  int it;
  size_t b;
  uint64_t leg;
  bool gather, tail;
  double d, base;
  double *off;
};

/* A skip decided at a checkpoint of bucket B2: buckets B2 + 1 .. B2 + M
 * repeat B + 1 .. B + P in turn; then the next NCHAIN buckets repeat
 * CHAIN[0 .. NCHAIN) (chain_from()). */
struct recur_plan {
  bool on;
  int it;
  size_t b2, b, period, m;
  size_t *chain, nchain;
};

/* A leg repeated: the LEG-th of bucket B2 of IT repeats that of B. */
struct recur_legplan {
  bool on;
  int it;
  size_t b2, b;
  uint64_t leg;
};

struct recur {
  GPtrArray *cks;  /* struct recur_ck, in order */
  double *wake;    /* [rank]: when it wakes from the leg in progress */
  /* Per iteration and bucket (IT * nbuckets + b): the first end, the last
   * message, and how many workers recorded it. */
  double *first_end, *last_msg;
  int *ended;
  /* The same: the least time any worker's compute side had posted it
   * before it began (its start less its backward's; how late backward
   * could post it without delaying it). */
  double *slack;
  /* The same: its spans were folded into trains (recur_skip), so that
   * its records do not hold them. */
  bool *folded;
  /* The same: the class of the state at its end (end_class(); -1: not
   * quiet, or not known), and whether it was repeated from a sealed
   * bucket (sealed too, whatever the rounding of its shifted times). */
  int *cls;
  bool *rep_sealed;
  /* The buckets whose ends stand for the classes, in order. */
  GArray *reps;
  /* [b]: when backward posts bucket b, from its start (0 in sync). */
  double *post;
  /* The members of a gather wait here for its root (recur_gather): it
   * releases one each. None can take another gather's: the next needs
   * every member's values, sent after this wait. */
  sg_sem_t gather;
  struct recur_plan plan;
  struct recur_legplan legplan;
};

double recur_bucket_bytes(void) {
  /* A worker's end of a bucket and of its legs (two ring legs and a
   * broadcast), about three routes for the bucket and one for each leg,
   * two checkpoints' wake times;
   * twice that, as GLib's arrays grow by doubling. */
  return 2.0 * (double)(sizeof(struct recur_end) +
                        3 * sizeof(struct recur_leg) +
                        6 * sizeof(struct recur_route) + 2 * sizeof(double));
}

void recur_init(struct sim *s) {
  /* Where runs of buckets apply (a slow worker's tail, aggregators and
   * per-bucket state are outside the state compared), without the trace
   * (it would need the skipped intervals), a linear codec (its factors
   * follow its tensors' shapes, which the buckets compared do not), a
   * collective whose legs do not step in lockstep (the state compared),
   * or a schedule whose posts are not known. */
  if (!ff_buckets_allowed(s->p, s->coll) || s->linear || s->trace ||
      (s->coll->lockstep && !s->coll->lockstep(s->p)) ||
      (s->schedule->comm_actor && !s->schedule->post_gaps))
    return;
  struct recur *r = g_new0(struct recur, 1);
  r->post = g_new0(double, s->nbuckets);
  if (s->schedule->comm_actor) {
    s->schedule->post_gaps(s, r->post);
    for (size_t b = 1; b < s->nbuckets; b++)
      r->post[b] += r->post[b - 1];
  }
  r->cks = g_ptr_array_new();
  r->gather = sg_sem_init(0);
  r->wake = g_new(double, s->nworkers);
  size_t n = (size_t)s->p->iterations * s->nbuckets;
  r->first_end = g_new(double, n);
  r->last_msg = g_new(double, n);
  r->ended = g_new0(int, n);
  r->slack = g_new(double, n);
  r->folded = g_new0(bool, n);
  r->cls = g_new(int, n);
  r->rep_sealed = g_new0(bool, n);
  r->reps = g_array_new(FALSE, FALSE, sizeof(size_t));
  for (size_t i = 0; i < n; i++) {
    r->first_end[i] = r->slack[i] = INFINITY;
    r->cls[i] = -1;
    r->last_msg[i] = -INFINITY;
  }
  s->recur = r;
  for (int i = 0; i < s->nworkers; i++) {
    struct worker *w = &s->workers[i];
    w->recur_ends = g_array_new(FALSE, FALSE, sizeof(struct recur_end));
    w->recur_routes = g_array_new(FALSE, FALSE, sizeof(struct recur_route));
    w->recur_legs = g_array_new(FALSE, FALSE, sizeof(struct recur_leg));
    w->recur_leg_routes =
        g_array_new(FALSE, FALSE, sizeof(struct recur_route));
  }
}

void recur_backward(struct worker *w) { w->backward_t = sim_now(); }

/* W begins bucket B of IT at T (its end of B - 1): how long after its
 * backward began. */
static void note_slack(struct worker *w, size_t b, int it, double t) {
  struct sim *s = w->sim;
  size_t i = (size_t)it * s->nbuckets + b;
  /* After buckets a run skipped (no record): as if it waited. */
  s->recur->slack[i] =
      fmin(s->recur->slack[i], isnan(t) ? -INFINITY : t - w->backward_t);
}

void recur_begin(struct worker *w, size_t b, int it) {
  if (!w->sim->recur)
    return;
  w->recur_it = it;
  if (b == 0) {
    g_array_set_size(w->recur_ends, 0);
    g_array_set_size(w->recur_routes, 0);
    g_array_set_size(w->recur_legs, 0);
    g_array_set_size(w->recur_leg_routes, 0);
  }
  /* Buckets a run skipped: not recorded (never repeated: not every
   * worker's), their routes and spans left before the next one's. */
  while (w->recur_ends->len < b) {
    struct recur_end e = {.at = {.t = NAN, .spans = w->spans->len},
                          .routes = w->recur_routes->len};
    g_array_append_val(w->recur_ends, e);
  }
  w->msg_last = -INFINITY;
  w->legs0 = w->ff_legs;
  if (b > 0)
    note_slack(w, b, it,
               g_array_index(w->recur_ends, struct recur_end, b - 1).at.t);
}

static gint cmp_route(gconstpointer a, gconstpointer b) {
  gsize x = GPOINTER_TO_SIZE(((const struct recur_route *)a)->key),
        y = GPOINTER_TO_SIZE(((const struct recur_route *)b)->key);
  return (x > y) - (x < y);
}

/* The routes of A from FROM, one entry a route: A's new length. */
static guint consolidate(GArray *a, guint from) {
  guint n = a->len;
  if (n - from > 1)
    qsort(&g_array_index(a, struct recur_route, from), n - from,
          sizeof(struct recur_route), cmp_route);
  guint out = from;
  for (guint i = from; i < n; i++) {
    struct recur_route rt = g_array_index(a, struct recur_route, i);
    if (out > from &&
        g_array_index(a, struct recur_route, out - 1).key == rt.key)
      g_array_index(a, struct recur_route, out - 1).bytes += rt.bytes;
    else
      g_array_index(a, struct recur_route, out++) = rt;
  }
  g_array_set_size(a, out);
  return out;
}

/* W's state now, as at T. */
static struct recur_state state_of(const struct worker *w, double t) {
  struct recur_state st = {.t = t, .wire = w->wire_bytes,
                           .ff_steps = w->sim->ff_steps,
                           .spans = w->spans->len};
  memcpy(st.acc, w->acc, sizeof st.acc);
  return st;
}

static void end_class(struct sim *s, int it, size_t b);

/* W's record of bucket B of IT, ended at T, its last message LAST. */
static void record_end(struct worker *w, size_t b, int it, double t,
                       double last) {
  struct sim *s = w->sim;
  struct recur *r = s->recur;
  guint from = b ? g_array_index(w->recur_ends, struct recur_end, b - 1).routes
                 : 0;
  struct recur_end e = {.at = state_of(w, t), .last_msg = last,
                        .routes = consolidate(w->recur_routes, from)};
  g_array_append_val(w->recur_ends, e);
  size_t i = (size_t)it * s->nbuckets + b;
  r->first_end[i] = fmin(r->first_end[i], t);
  r->last_msg[i] = fmax(r->last_msg[i], last);
  if (++r->ended[i] == s->nworkers)
    end_class(s, it, b);
}

void recur_end(struct worker *w, size_t b, int it) {
  if (w->sim->recur)
    record_end(w, b, it, sim_now(), w->msg_last);
}

/* Bucket B of IT recorded by every worker and sealed. */
static bool sealed(const struct sim *s, int it, size_t b) {
  const struct recur *r = s->recur;
  size_t i = (size_t)it * s->nbuckets + b;
  return r->ended[i] == s->nworkers &&
         (r->last_msg[i] <= r->first_end[i] || r->rep_sealed[i]);
}

/* Worker W's end of bucket I (IT * nbuckets + b) less the first end. */
static double end_offset(const struct sim *s, int w, size_t i) {
  size_t b = i % s->nbuckets;
  return g_array_index(s->workers[w].recur_ends, struct recur_end, b).at.t -
         s->recur->first_end[i];
}

/* How long bucket I took, to its first end (the scale of its times). */
static double span_of(const struct sim *s, size_t i) {
  const double *fe = s->recur->first_end;
  double d = i % s->nbuckets ? fe[i] - fe[i - 1] : fe[i];
  return isfinite(d) && d > 0 ? d : fe[i];
}

/* Bucket B of IT, recorded by every worker: the class of the state at
 * its end. After a sealed bucket nothing of it is in flight once its
 * first worker has ended it, and each worker goes on from its own end:
 * the state is the workers' ends, and two ends whose times differ by
 * one shift for every worker (to 1e-9 of the buckets' lengths) are the
 * same state (with when backward posts what is left: starts_alike). A
 * small bucket's broadcast ends on every worker at once, whatever its
 * size, so that the rings after ResNet-50's normalization scales of
 * different sizes begin alike. */
static void end_class(struct sim *s, int it, size_t b) {
  struct recur *r = s->recur;
  size_t i = (size_t)it * s->nbuckets + b;
  if (r->cls[i] >= 0 || !sealed(s, it, b))
    return;
  for (int w = 0; w < s->nworkers; w++)
    if (isnan(end_offset(s, w, i)))
      return;
  for (guint c = 0; c < r->reps->len; c++) {
    size_t i2 = g_array_index(r->reps, size_t, c);
    if (i2 / s->nbuckets != (size_t)it)
      continue;
    double tol = 1e-9 * fmin(span_of(s, i), span_of(s, i2));
    int w = 0;
    while (w < s->nworkers &&
           fabs(end_offset(s, w, i) - end_offset(s, w, i2)) <= tol)
      w++;
    if (w == s->nworkers) {
      r->cls[i] = (int)c;
      return;
    }
  }
  r->cls[i] = (int)r->reps->len;
  g_array_append_val(r->reps, i);
}

/* Bucket X2 begins as bucket SRC did, SHIFT later, on every worker: each
 * begins at its end of the bucket before or when backward posts it,
 * whichever is later, so either backward posts X2 SHIFT after SRC (to
 * 1e-9 of it: layers as long as those before), or neither wait on
 * backward (every worker's end of the bucket before came after SRC's
 * post, and comes SHIFT later after X2's). */
static bool starts_alike(const struct sim *s, int it, size_t src, size_t x2,
                         double shift) {
  const struct recur *r = s->recur;
  double slack = r->slack[(size_t)it * s->nbuckets + src];
  return fabs(r->post[x2] - r->post[src] - shift) <= 1e-9 * shift ||
         (r->post[src] <= slack && r->post[x2] - shift <= slack);
}

/* Checkpoint K2 is the earlier K shifted: the same iteration, exchange
 * and leg, every worker's wake time moved by the same amount (to 1e-9 of
 * the leg's step). */
static bool same_state(const struct sim *s, const struct recur_ck *k,
                       const struct recur_ck *k2) {
  if (k->it != k2->it || k->b >= k2->b || k->leg != k2->leg ||
      k->gather != k2->gather || !ff_same_bucket(s, k->b, k2->b))
    return false;
  if (k->gather)
    return true; /* every other worker waits on the root */
  double tol = 1e-9 * fmax(k->d, k2->d);
  for (int i = 0; i < s->nworkers; i++)
    if (!(fabs(k->off[i] - k2->off[i]) <= tol))
      return false;
  return true;
}

/* The buckets after checkpoint K2's that repeat those after K's, K2
 * being K shifted and K's bucket sealed (0: none can be skipped). */
static size_t skippable(const struct sim *s, const struct recur_ck *k,
                        const struct recur_ck *k2) {
  size_t period = k2->b - k->b, m = 0;
  double shift = k2->base - k->base;
  for (size_t j = 1; k2->b + j < s->nbuckets; j++) {
    size_t b = k->b + j, src = k->b + 1 + (j - 1) % period;
    if (!ff_same_bucket(s, k2->b + j, b) ||
        !starts_alike(s, k->it, src, k2->b + j,
                      shift * (double)(1 + (j - 1) / period)))
      break;
    /* The bucket repeated: recorded by every worker (B2 by the time each
     * worker repeats anything), its spans with it, and sealed (B2 is,
     * being B shifted). */
    size_t i = (size_t)k->it * s->nbuckets + src;
    if (src != k2->b &&
        (s->recur->ended[i] != s->nworkers || s->recur->folded[i]))
      break;
    if (src == k2->b || sealed(s, k->it, src))
      m = j;
  }
  return m;
}

/* After plan PL's periodic buckets, whose last ends in the state of
 * bucket LAST's end SHIFT later: the buckets after them each repeat a
 * bucket X + 1 recorded before B2 whose start, the end of X, was that
 * state (the same class), which it is the same exchange as and begins
 * alike, so that it ends in the state of X + 1's end in turn. */
static void chain_from(struct sim *s, struct recur_plan *pl, size_t last,
                       double shift) {
  struct recur *r = s->recur;
  size_t nb = s->nbuckets, base = (size_t)pl->it * nb;
  int cur = r->cls[base + last];
  double at = r->first_end[base + last] + shift;
  pl->chain = g_new(size_t, nb);
  pl->nchain = 0;
  for (size_t n = pl->b2 + pl->m + 1; n < nb && cur >= 0; n++) {
    size_t x = pl->b2 > 0 ? pl->b2 - 1 : 0, found = SIZE_MAX;
    while (x-- > 0 && found == SIZE_MAX) {
      size_t i = base + x;
      if (r->cls[i] != cur || r->cls[i + 1] < 0 ||
          !ff_same_bucket(s, x + 1, n) || r->folded[i + 1] ||
          !sealed(s, pl->it, x + 1) ||
          !starts_alike(s, pl->it, x + 1, n, at - r->first_end[i]))
        continue;
      found = x + 1;
    }
    if (found == SIZE_MAX)
      break;
    at += r->first_end[base + found] - r->first_end[base + found - 1];
    cur = r->cls[base + found];
    pl->chain[pl->nchain++] = found;
  }
}

/* The earlier checkpoint that skips the most buckets after K's (the
 * first of those that skip as many), unless K's bucket has its skip;
 * then the chain of buckets after those (chain_from). */
static void plan_at(struct sim *s, const struct recur_ck *k) {
  struct recur *r = s->recur;
  if (r->plan.on && r->plan.it == k->it && r->plan.b2 == k->b)
    return;
  struct recur_plan best = {0};
  const struct recur_ck *from = NULL;
  for (guint i = 0; i < r->cks->len; i++) {
    const struct recur_ck *e = g_ptr_array_index(r->cks, i);
    if (!same_state(s, e, k) || !sealed(s, e->it, e->b))
      continue;
    size_t m = skippable(s, e, k);
    if (!from || m > best.m) {
      best = (struct recur_plan){true, k->it, k->b, e->b, k->b - e->b, m,
                                 NULL, 0};
      from = e;
    }
  }
  if (!from)
    return;
  /* Where the periodic part ends: bucket B2 + M repeats SRC, so many
   * periods later (B2 itself, when M is 0: the earlier bucket shifted). */
  double shift = k->base - from->base;
  size_t last = best.b;
  if (best.m > 0) {
    last = best.b + 1 + (best.m - 1) % best.period;
    shift *= (double)(1 + (best.m - 1) / best.period);
  }
  chain_from(s, &best, last, shift);
  if (best.m + best.nchain == 0) {
    g_free(best.chain);
    return;
  }
  g_free(r->plan.chain);
  r->plan = best;
  /* The buckets skipped end as their sources did. */
  size_t base = (size_t)best.it * s->nbuckets;
  for (size_t j = 1; j <= best.m + best.nchain; j++) {
    size_t src = j <= best.m ? best.b + 1 + (j - 1) % best.period
                             : best.chain[j - best.m - 1];
    r->cls[base + best.b2 + j] = r->cls[base + src];
    r->rep_sealed[base + best.b2 + j] = sealed(s, best.it, src);
  }
}

/* At checkpoint K (its bucket's LEG-th leg): when an earlier one is the
 * same state and its bucket's next leg had a checkpoint too, this
 * bucket's next leg repeats that one (recur_leg_begin); its checkpoint
 * is that one shifted, returned. Not a leg whose tail was simulated:
 * what followed it shared links with that tail (ff_keep_tail), and would
 * run here without it. Nor the broadcast after a gather, which its own
 * checkpoint repeats (gather_leg): a gather's time is not known before
 * it. */
static struct recur_ck *next_leg(struct sim *s, const struct recur_ck *k) {
  struct recur *r = s->recur;
  if (k->gather)
    return NULL;
  for (guint i = 0; i < r->cks->len; i++) {
    const struct recur_ck *e = g_ptr_array_index(r->cks, i);
    if (!same_state(s, e, k))
      continue;
    for (guint j = 0; j < r->cks->len; j++) {
      const struct recur_ck *e2 = g_ptr_array_index(r->cks, j);
      if (e2->it != e->it || e2->b != e->b || e2->leg != e->leg + 1 ||
          e2->gather || e2->tail)
        continue;
      r->legplan = (struct recur_legplan){true, k->it, k->b, e->b,
                                          k->leg + 1};
      struct recur_ck *n = g_new(struct recur_ck, 1);
      *n = *e2;
      n->b = k->b;
      n->base = e2->base + (k->base - e->base);
      n->off = g_memdup2(e2->off, (gsize)s->nworkers * sizeof(double));
      return n;
    }
  }
  return NULL;
}

/* Checkpoint K: the skip it plans, kept for the checkpoints after it
 * (with the next leg's, when that leg is repeated). */
static void add_checkpoint(struct sim *s, struct recur_ck *k) {
  struct recur *r = s->recur;
  int it = k->it;
  plan_at(s, k);
  struct recur_ck *next = next_leg(s, k);
  /* Checkpoints of iterations no worker can still be in are dropped:
   * a worker is at most one iteration ahead of another (every exchange
   * needs all of them). */
  guint keep = 0;
  for (guint i = 0; i < r->cks->len; i++) {
    struct recur_ck *e = g_ptr_array_index(r->cks, i);
    if (e->it + 1 < it) {
      g_free(e->off);
      g_free(e);
    } else {
      g_ptr_array_index(r->cks, keep++) = e;
    }
  }
  g_ptr_array_set_size(r->cks, keep);
  g_ptr_array_add(r->cks, k);
  if (next) {
    plan_at(s, next);
    g_ptr_array_add(r->cks, next);
  }
}

/* A checkpoint of W's iteration in bucket B, after the legs W entered
 * in it, at BASE. */
static struct recur_ck *new_checkpoint(const struct worker *w, size_t b,
                                       double base) {
  struct recur_ck *k = g_new0(struct recur_ck, 1);
  k->it = w->recur_it;
  k->b = b;
  k->leg = w->ff_legs - w->legs0;
  k->base = base;
  return k;
}

void recur_checkpoint(struct worker *w, size_t b, const struct ff_cursor *ff,
                      bool last) {
  struct sim *s = w->sim;
  struct recur *r = s->recur;
  if (!r)
    return;
  r->wake[w->rank] = sim_now() + ff->period * ff->skip;
  if (!last)
    return;
  /* Every member asleep now: none woke before the last one entered (a
   * skip of fewer steps than the farthest member was ahead). */
  double base = INFINITY;
  for (int i = 0; i < s->nworkers; i++)
    base = fmin(base, r->wake[i]);
  if (!(base > sim_now()))
    return;
  struct recur_ck *k = new_checkpoint(w, b, base);
  k->tail = ff_tail_kept(ff);
  k->d = ff->period;
  k->off = g_new(double, s->nworkers);
  for (int i = 0; i < s->nworkers; i++)
    k->off[i] = r->wake[i] - k->base;
  add_checkpoint(s, k);
}

/* The linear reduce that ends SMPI's default allreduce over every worker
 * (sim/collectives/common.c) is a checkpoint at its root once it has
 * received (and summed) every member's values: each other member sent
 * its values after receiving every message sent to it before, in this
 * bucket and the ones before, so nothing is in flight, and each waits
 * for the broadcast from the root. From here the run is a function of
 * when the root goes on, and of when backward posts the buckets left:
 * two such checkpoints of the same exchange after as many ring legs are
 * the same state, the roots' times apart. (A bucket smaller than the
 * workers is all such a reduce: ResNet's normalization scales and
 * shifts, which its repeated blocks follow with the same convolution's
 * ring.)
 *
 * The broadcast that follows is a leg of the bucket: the members wait
 * for the root's checkpoint (no time passes: each would wait there for
 * the broadcast's first message anyway) and enter it together. When the
 * earlier checkpoint's bucket was sealed, its broadcast ended quiet (what
 * follows it in the bucket is local), and this one repeats it. */
static void gather_leg(struct sim *s, const struct recur_ck *k) {
  struct recur *r = s->recur;
  for (guint i = 0; i < r->cks->len; i++) {
    const struct recur_ck *e = g_ptr_array_index(r->cks, i);
    if (same_state(s, e, k) && sealed(s, e->it, e->b)) {
      r->legplan = (struct recur_legplan){true, k->it, k->b, e->b,
                                          k->leg + 1};
      return;
    }
  }
}

bool recur_gather(struct worker *w, size_t b, bool root) {
  struct sim *s = w->sim;
  if (!s->recur)
    return false;
  if (root) {
    struct recur_ck *k = new_checkpoint(w, b, sim_now());
    k->gather = true;
    gather_leg(s, k);
    add_checkpoint(s, k);
    for (int i = 1; i < s->nworkers; i++)
      sg_sem_release(s->recur->gather);
  } else {
    /* Idle, as it would be in the broadcast's receive until its parent
     * sends (no earlier than the root goes on). */
    double t0 = sim_now();
    sg_sem_acquire(s->recur->gather);
    sim_span(w, t0, sim_now(), ST_IDLE);
  }
  w->ff_legs++;
  return recur_leg_begin(w, b);
}

/* W's spans [FROM, TO) again, SHIFT later: kept, or
 * summed once the worker sums them (all then fall inside the wait:
 * account_sum_from). With COPIES > 1 (a fold): COPIES copies, each
 * PERIOD after the one before, as trains. */
static void repeat_spans(struct worker *w, guint from, guint to,
                         double shift, uint32_t copies, double period) {
  for (guint i = from; i < to; i++) {
    struct span sp = g_array_index(w->spans, struct span, i);
    sp.t0 += shift;
    sp.t1 += shift;
    if (copies > 1 && sp.copies == 1) {
      sp.copies = copies;
      sp.period = period;
      g_array_append_val(w->spans, sp);
    } else if (copies > 1) {
      /* A train already (a leg skipped in the bucket): a train a copy. */
      for (uint32_t c = 0; c < copies; c++, sp.t0 += period, sp.t1 += period)
        g_array_append_val(w->spans, sp);
    } else if (sp.t0 >= w->sum_from) {
      w->acc[sp.st] += (sp.t1 - sp.t0) * sp.copies;
    } else {
      g_array_append_val(w->spans, sp);
    }
  }
}

/* W repeats what it did between A and B (its own record), SHIFT later:
 * its summed spans, its kept ones (unless SPANS is false), its wire bytes
 * and worker 0's skipped steps; and the bytes routes [FROM, TO) of
 * ROUTES carried. */
static void repeat_between(struct worker *w, const struct recur_state *a,
                           const struct recur_state *b, double shift,
                           bool spans, GArray *routes, guint from, guint to) {
  struct sim *s = w->sim;
  for (int st = 0; st < ST_NSTATES; st++)
    w->acc[st] += b->acc[st] - a->acc[st];
  if (spans)
    repeat_spans(w, a->spans, b->spans, shift, 1, 0);
  w->wire_bytes += b->wire - a->wire;
  for (guint i = from; i < to; i++) {
    struct recur_route rt = g_array_index(routes, struct recur_route, i);
    sim_pair_bytes(s, w, rt.key, rt.bytes);
  }
  if (w->rank == 0)
    s->ff_steps += b->ff_steps - a->ff_steps;
}

/* W repeats its record of bucket SRC (its own) as bucket B of IT, from T
 * (its spans too, unless SPANS is false): returns its end. */
static double repeat(struct worker *w, size_t src, size_t b, int it,
                     double t, bool spans) {
  struct recur_end e0 = g_array_index(w->recur_ends, struct recur_end, src - 1),
                   e1 = g_array_index(w->recur_ends, struct recur_end, src);
  double shift = t - e0.at.t;
  note_slack(w, b, it, t);
  repeat_between(w, &e0.at, &e1.at, shift, spans, w->recur_routes, e0.routes,
                 e1.routes);
  if (w->rank == 0)
    w->sim->ff_buckets++;
  double end = e1.at.t + shift;
  record_end(w, b, it, end, e1.last_msg + shift);
  return end;
}

size_t recur_skip(struct worker *w, size_t b, int it) {
  struct sim *s = w->sim;
  struct recur *r = s->recur;
  if (!r || !r->plan.on || r->plan.it != it || r->plan.b2 != b)
    return 0;
  const struct recur_plan *pl = &r->plan;
  /* A run of buckets in progress (fastforward.c) is left: its periods
   * are no longer simulated one after another. */
  ff_leave(w, &w->bff, FF_LEVEL_BUCKETS);
  size_t per = pl->period, m = pl->m;
  double now = sim_now(), t = now;
  /* More than one period while the worker keeps its spans: each bucket
   * of the first period gets its source's spans as trains, a copy a
   * period (spans kept bucket by bucket would grow with the buckets
   * skipped: Llama-2-7B's 25 MB buckets on 16,384 workers by 4.8 GB);
   * the buckets' records then do not hold their spans (folded). */
  bool fold = m > per && !w->direct && now < w->sum_from;
  double *start = NULL;
  if (fold) {
    /* When each of the first two periods' buckets starts. */
    size_t n = m < 2 * per ? m : 2 * per;
    start = g_new(double, n + 1);
    start[0] = now;
    for (size_t j = 1; j <= n; j++) {
      size_t src = pl->b + 1 + (j - 1) % per;
      start[j] = start[j - 1] +
                 (g_array_index(w->recur_ends, struct recur_end, src).at.t -
                  g_array_index(w->recur_ends, struct recur_end, src - 1).at.t);
    }
  }
  for (size_t j = 1; j <= m; j++) {
    size_t src = pl->b + 1 + (j - 1) % per;
    if (fold && j <= per) {
      /* Copies of bucket j in every period, starting where it does. */
      uint32_t copies = (uint32_t)((m - j) / per + 1);
      double period = copies > 1 ? start[j - 1 + per] - start[j - 1] : 0;
      struct recur_end e0 =
          g_array_index(w->recur_ends, struct recur_end, src - 1);
      repeat_spans(w, e0.at.spans,
                   g_array_index(w->recur_ends, struct recur_end, src).at.spans,
                   t - e0.at.t, copies, period);
    }
    t = repeat(w, src, b + j, it, t, !fold);
    if (fold)
      r->folded[(size_t)it * s->nbuckets + b + j] = true;
  }
  g_free(start);
  for (size_t c = 0; c < pl->nchain; c++)
    t = repeat(w, pl->chain[c], b + m + 1 + c, it, t, true);
  sg_actor_sleep_for(t - now);
  return pl->m + pl->nchain;
}

/* ---- legs ---------------------------------------------------------------- */

/* W repeats its record SRC of an earlier leg as the LEG-th of bucket B. */
static void repeat_leg(struct worker *w, struct recur_leg src, size_t b,
                       uint64_t leg) {
  struct recur_leg g = {.b = b, .leg = leg, .in = state_of(w, sim_now())};
  double shift = g.in.t - src.in.t;
  g.routes0 = w->recur_leg_routes->len;
  repeat_between(w, &src.in, &src.out, shift, true, w->recur_leg_routes,
                 src.routes0, src.routes1);
  /* Its routes recorded again, as the leg's own. */
  for (guint i = src.routes0; i < src.routes1; i++)
    g_array_append_val(
        w->recur_leg_routes,
        g_array_index(w->recur_leg_routes, struct recur_route, i));
  g.routes1 = w->recur_leg_routes->len;
  w->msg_last = fmax(w->msg_last, src.last_msg + shift);
  sg_actor_sleep_for(src.out.t + shift - g.in.t);
  g.out = state_of(w, sim_now());
  g.last_msg = w->msg_last;
  g_array_append_val(w->recur_legs, g);
}

bool recur_leg_begin(struct worker *w, size_t b) {
  const struct recur *r = w->sim->recur;
  if (!r)
    return false;
  uint64_t leg = w->ff_legs - w->legs0;
  const struct recur_legplan *lp = &r->legplan;
  if (lp->on && lp->it == w->recur_it && lp->b2 == b && lp->leg == leg) {
    /* Every worker left that leg, recorded, before this bucket. */
    for (guint i = w->recur_legs->len; i-- > 0;) {
      struct recur_leg src = g_array_index(w->recur_legs, struct recur_leg, i);
      if (src.b == lp->b && src.leg == leg) {
        repeat_leg(w, src, b, leg);
        return true;
      }
    }
    xbt_die("recurrence: worker %d has no record of leg %" PRIu64
            " of bucket %zu", w->rank, leg, lp->b);
  }
  struct recur_leg g = {.b = b, .leg = leg, .in = state_of(w, sim_now()),
                        .from = w->recur_routes->len};
  g_array_append_val(w->recur_legs, g);
  w->leg_open = true;
  return false;
}

void recur_leg_end(struct worker *w) {
  if (!w->leg_open)
    return;
  w->leg_open = false;
  struct recur_leg *g =
      &g_array_index(w->recur_legs, struct recur_leg, w->recur_legs->len - 1);
  g->out = state_of(w, sim_now());
  g->last_msg = w->msg_last;
  /* Its routes, from the bucket's list (consolidated only at its end). */
  g->routes0 = w->recur_leg_routes->len;
  for (guint i = g->from; i < w->recur_routes->len; i++)
    g_array_append_val(w->recur_leg_routes,
                       g_array_index(w->recur_routes, struct recur_route, i));
  g->routes1 = consolidate(w->recur_leg_routes, g->routes0);
}
