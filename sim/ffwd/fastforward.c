/* sim/ffwd/fastforward.c: steps simulated once and replayed (ffwd.h,
 * "steps"; docs/fast-forward.md states the conditions).
 *
 * A sequence of steps that every member of a group runs in order (the
 * p - 1 steps of a ring leg, the iterations of a synchronous run) is
 * simulated step by step until it is periodic: at the start of step s,
 * each member compares its own last three step lengths (the times
 * between its starts of steps s - 3, s - 2, s - 1 and s); when they are
 * equal (to 1e-9 of a step), the member votes for that period. Step s
 * is complete when every member has voted at it (steps complete in order:
 * a member starts step s + 1 only after its part of step s). When the
 * last L + 1 complete steps were voted for by every member, all for the
 * same period d, where L is how many steps the farthest member is ahead
 * (the messages in flight belong to those steps, and every vote cast at
 * them so far agreed too), the sequence is in its periodic regime: each
 * step is the previous one shifted by d (the same messages over the same
 * routes, started at the same offsets, with nothing else in flight), and
 * so is every step after it. From the next step no member has started
 * yet, each member skips the rest: it sleeps d per step and repeats its
 * own last step's accounting, bytes and records. Until then, and wherever
 * a vote fails, everything is simulated.
 *
 * The state is shared by the members through struct sim (all actors run
 * in one thread); a sequence is found by the number of sequences its
 * member entered before (every member enters the same ones in the same
 * order), and freed when its last member leaves. */
#include "ffwd.h"

#include <simgrid/actor.h>

#include <math.h>
#include <string.h>

/* Fast-forward is allowed when every step of a sequence can be the same
 * as the last: no data (payload none: sizes do not depend on values), no
 * per-packet or NIC-engine state that the skipped steps would have to
 * update, and a schedule whose other actor puts no traffic on the
 * network between steps (sync, overlap; not pipe, whose communication
 * side runs exchanges of several iterations). The one statement of those
 * conditions: what keeps fast-forward from P (the key and value, for the
 * estimate's message), or NULL when it applies. */
/* A codec per hop on the GPU beside backward (overlap, pipe): a step's
 * encode waits for the layer computing, so steps alike in bytes are not
 * alike in time (a codec per bucket or a linear codec's rounds encode
 * outside the collective's steps; codec_stream = own waits for none). */
static bool codec_per_hop_beside_compute(const struct point *p) {
  if (p->placement != PLACE_GPU || !run_has_codec(p) ||
      p->mode == MODE_SYNC || p->compression != COMPRESS_PER_HOP ||
      p->codec_own_stream)
    return false;
  codec_t *c;
  char e[CODEC_ERR_MAX];
  bool linear = false;
  if (codec_create(p->codec, &c, e, sizeof e) == 0) {
    linear = codec_is_linear(c);
    codec_free(c);
  }
  return !linear;
}

const char *ff_blocker(const struct point *p) {
  if (!p->fast_forward)
    return "[exchange] fast_forward = off";
  if (p->payload != PAYLOAD_NONE)
    return p->payload == PAYLOAD_FULL ? "[exchange] payload = full"
                                      : "[exchange] payload = sampled";
  if (p->mode == MODE_PIPE)
    return "[training] mode = pipe";
  if (p->placement == PLACE_NIC)
    return "[exchange] placement = nic";
  if (p->framing.packets)
    return "[nic] framing = packets";
  if (codec_per_hop_beside_compute(p))
    return "[exchange] placement = gpu with a codec per hop in overlap";
  return NULL;
}

bool run_ff_allowed(const struct point *p) { return !ff_blocker(p); }

/* Step lengths compared, and their tolerance (relative to the step). */
enum { FF_INTERVALS = 3 };
#define FF_TOLERANCE 1e-9

struct ff_seq {
  uint64_t key; /* its key in struct sim's table */
  int members, steps;
  int *arrived;    /* [steps + 1]: members that started step s */
  bool *bad;       /* [steps + 1]: a member did not vote for PERIOD */
  double *period;  /* [steps + 1]: the first vote of step s */
  int max_step;    /* the latest step any member started */
  int run;         /* complete steps in a row every member voted for */
  int skip_from;   /* 0, or the step from which every member skips */
  bool keep_tail;  /* ff_keep_tail(): the last steps are simulated */
  int tail;        /* how many, once decided */
  double d;        /* the period, once decided */
  int entered;     /* members that entered the skip */
  int left;
};

static struct ff_seq *seq_new(uint64_t key, int members, int steps) {
  struct ff_seq *q = g_new0(struct ff_seq, 1);
  q->key = key;
  q->members = members;
  q->steps = steps;
  q->arrived = g_new0(int, steps + 1);
  q->bad = g_new0(bool, steps + 1);
  q->period = g_new0(double, steps + 1);
  return q;
}

static void seq_free(struct ff_seq *q) {
  g_free(q->arrived);
  g_free(q->bad);
  g_free(q->period);
  g_free(q);
}

void ff_join(struct sim *s, struct ff_cursor *cur, uint64_t key, int members,
             int steps, bool eligible) {
  memset(cur, 0, sizeof *cur);
  cur->on = eligible && steps > FF_INTERVALS + 1;
  if (!cur->on)
    return;
  if (!s->ff_seqs)
    s->ff_seqs = g_hash_table_new(g_int64_hash, g_int64_equal);
  cur->seq = g_hash_table_lookup(s->ff_seqs, &key);
  if (!cur->seq) {
    cur->seq = seq_new(key, members, steps);
    g_hash_table_insert(s->ff_seqs, &cur->seq->key, cur->seq);
  }
}

void ff_leave(struct worker *w, struct ff_cursor *cur, int level) {
  if (!cur->on)
    return;
  account_routes_unmark(w, level);
  ff_part(w->sim, cur);
}

void ff_part(struct sim *s, struct ff_cursor *cur) {
  if (!cur->on)
    return;
  struct ff_seq *q = cur->seq;
  if (++q->left == q->members) {
    g_hash_table_remove(s->ff_seqs, &q->key);
    seq_free(q);
  }
  cur->on = false;
}

static bool same(double a, double b) {
  return fabs(a - b) <= FF_TOLERANCE * fmax(fabs(a), fabs(b));
}

/* The member's vote at step S, and the decision when it is the last. */
static void vote(struct ff_cursor *cur, int step, double now, bool ready) {
  struct ff_seq *q = cur->seq;
  /* cur->t[0] is the start of the previous step, t[1] the one before. */
  double d[FF_INTERVALS];
  bool periodic = ready && cur->seen >= FF_INTERVALS;
  for (int i = 0; i < FF_INTERVALS && periodic; i++) {
    d[i] = (i ? cur->t[i - 1] : now) - cur->t[i];
    periodic = d[i] > 0 && (i == 0 || same(d[i], d[0]));
  }
  if (q->arrived[step]++ == 0)
    q->period[step] = periodic ? d[0] : 0;
  if (!periodic || !same(d[0], q->period[step]))
    q->bad[step] = true;
  if (step > q->max_step)
    q->max_step = step;
  if (q->arrived[step] < q->members || q->skip_from)
    return;
  /* Step STEP is complete. */
  bool good = !q->bad[step] &&
              (step == 1 || q->run == 0 || same(q->period[step],
                                               q->period[step - 1]));
  q->run = good ? q->run + 1 : 0;
  int lag = q->max_step - step;
  for (int k = step + 1; k <= q->max_step && good; k++)
    good = !q->bad[k] && (!q->arrived[k] || same(q->period[k], q->period[step]));
  if (good && q->run > lag) {
    q->skip_from = q->max_step + 1;
    q->d = q->period[step];
    /* When the farthest member ends the sequence, the others are at most
     * LAG steps behind: their last LAG + 1 steps, simulated, are all
     * that is in flight while it goes on. */
    q->tail = q->keep_tail ? lag + 1 : 0;
  }
}

bool ff_step(struct ff_cursor *cur, int step) {
  return ff_step_if(cur, step, true);
}

bool ff_step_if(struct ff_cursor *cur, int step, bool ready) {
  if (!cur->on)
    return false;
  double now = sim_now();
  struct ff_seq *q = cur->seq;
  if (q->skip_from && step >= q->skip_from) {
    /* Skipped up to the tail, which is simulated (and not voted on). */
    cur->skip = q->steps - q->tail - step + 1;
    if (cur->skip <= 0) {
      cur->skip = 0;
      return false;
    }
    cur->period = q->d;
    q->entered++;
    return true;
  }
  vote(cur, step, now, ready);
  memmove(cur->t + 1, cur->t, sizeof cur->t - sizeof cur->t[0]);
  cur->t[0] = now;
  cur->seen++;
  return false;
}

void ff_keep_tail(struct ff_cursor *cur) {
  if (cur->on)
    cur->seq->keep_tail = true;
}

bool ff_tail_kept(const struct ff_cursor *cur) {
  return cur->on && cur->seq->keep_tail;
}

bool ff_all_skipping(const struct ff_cursor *cur) {
  return cur->on && cur->seq->entered == cur->seq->members;
}

/* ---- a member's record of its last step, and its copies ---------------- */

void ff_mark(struct worker *w, struct ff_cursor *cur, int level) {
  cur->mark_t = sim_now();
  cur->wire = w->wire_bytes;
  memcpy(cur->acc, w->acc, sizeof cur->acc);
  account_routes_mark(w, level);
}

void ff_replay(struct worker *w, const struct ff_cursor *cur, int level) {
  struct sim *s = w->sim;
  double d = cur->period;
  int k = cur->skip;
  if (k <= 0)
    return;
  /* The step's summed spans (direct, or after account_sum_from), then
   * its kept ones (before that). */
  double at = sim_now();
  for (int st = 0; st < ST_NSTATES; st++) {
    double add = (w->acc[st] - cur->acc[st]) * k;
    w->acc[st] += add;
    sim_trace(s, w->rank, 1, at, at + add, st);
    at += add;
  }
  guint n = w->spans->len, first = n;
  while (first > 0 &&
         g_array_index(w->spans, struct span, first - 1).t0 >= cur->mark_t)
    first--;
  for (guint i = first; i < n; i++) {
    struct span sp = g_array_index(w->spans, struct span, i);
    /* A span of the step: a train of K copies. A train already (a
     * sequence fast-forwarded inside the step): a train a step. */
    int trains = sp.copies == 1 ? 1 : k;
    for (int j = 1; j <= trains; j++) {
      struct span t = sp;
      t.t0 += j * d;
      t.t1 += j * d;
      if (sp.copies == 1) {
        t.period = d;
        t.copies = (uint32_t)k;
      }
      g_array_append_val(w->spans, t);
      for (uint32_t c = 0; s->trace && c < t.copies; c++)
        sim_trace(s, w->rank, 1, t.t0 + c * t.period, t.t1 + c * t.period,
                  (int)t.st);
    }
  }
  w->wire_bytes += (w->wire_bytes - cur->wire) * k;
  account_routes_replay(w, level, k);
  sg_actor_sleep_for(d * k);
}

/* ---- periodic runs of buckets ------------------------------------------- */

/* Periods tried, and the fewest whole periods worth a run: fast-forward
 * needs FF_INTERVALS + 1 steps to vote and one more to skip anything. */
enum { FF_RUN_PERIOD_MAX = 64, FF_RUN_STEPS_MIN = FF_INTERVALS + 3 };

bool ff_same_bucket(const struct sim *s, size_t a, size_t b) {
  return s->buckets[a].n == s->buckets[b].n &&
         sim_uncompressed(s, a) == sim_uncompressed(s, b);
}

/* Buckets from FIRST, in whole periods of PERIOD, each the same as the
 * one PERIOD before. */
static int periods_from(const struct sim *s, size_t first, size_t period) {
  size_t end = first + period;
  while (end < s->nbuckets && ff_same_bucket(s, end, end - period))
    end++;
  return (int)((end - first) / period);
}

/* RUN's compute time a period, when backward posts its buckets
 * periodically (the gap before each the same as PERIOD buckets before,
 * the first period's first excepted: it follows another run or the
 * start), else 0. */
static double compute_period(const struct ff_run *run, const double *gap) {
  size_t end = run->first + (size_t)run->steps * run->period;
  for (size_t b = run->first + run->period + 1; b < end; b++)
    if (gap[b] != gap[b - run->period])
      return 0;
  double d = 0;
  for (size_t b = end - run->period; b < end; b++)
    d += gap[b];
  return d;
}

/* Every worker as fast as the others (no [training] stragglers). */
static bool no_stragglers(const struct point *p) {
  for (int i = 0; p->slowdown && i < p->nodes; i++)
    if (p->slowdown[i] != 1.0)
      return false;
  return true;
}

bool ff_buckets_allowed(const struct point *p, const struct collective *c) {
  /* Stragglers: a slow worker still ends a bucket while the others,
   * simulated, would already send the next one's first (eager) messages
   * over its links; a skip from the next bucket on leaves those out, and
   * moved the slow worker's end by 3e-11 s (an inceptionn ring with fp16
   * messages, a worker 1.5x slower), 1e-8 of its comm_s. Ring steps keep
   * to their neighbours' pace and showed no such difference. */
  /* Sharded exchanges skip ring steps and whole iterations, not runs of
   * buckets (their halves are apart: a bucket's reduce-scatter and its
   * allgather are not one repeated exchange). */
  return run_ff_allowed(p) && !c->aggregators && !c->bucket_state &&
         p->sharding == SHARD_NONE && no_stragglers(p) &&
         !(run_has_codec(p) && p->placement != PLACE_CPU);
}

void ff_bucket_runs(struct sim *s) {
  s->nff_runs = 0;
  if (!ff_buckets_allowed(s->p, s->coll))
    return;
  GArray *runs = g_array_new(FALSE, FALSE, sizeof(struct ff_run));
  for (size_t b = 0; b < s->nbuckets;) {
    /* The period that skips the most buckets from B, the shortest of
     * those that skip as many. */
    struct ff_run best = {b, 0, 0, 0};
    for (size_t per = 1;
         per <= FF_RUN_PERIOD_MAX && b + FF_RUN_STEPS_MIN * per <= s->nbuckets;
         per++) {
      int k = periods_from(s, b, per);
      if (k >= FF_RUN_STEPS_MIN &&
          (size_t)k * per > (size_t)best.steps * best.period)
        best = (struct ff_run){b, per, k, 0};
    }
    if (best.steps) {
      g_array_append_val(runs, best);
      b += (size_t)best.steps * best.period;
    } else {
      b++;
    }
  }
  s->nff_runs = runs->len;
  s->ff_runs = (struct ff_run *)(void *)g_array_free(runs, FALSE);
  if (s->nff_runs && s->schedule->post_gaps) {
    double *gap = g_new(double, s->nbuckets);
    s->schedule->post_gaps(s, gap);
    for (size_t r = 0; r < s->nff_runs; r++)
      s->ff_runs[r].compute_period = compute_period(&s->ff_runs[r], gap);
    g_free(gap);
  }
}
