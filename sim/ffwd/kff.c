/* sim/ffwd/kff.c: fast-forward of a call's independent streams (kff.h). */
#include "kff.h"

#include <glib.h>
#include <limits.h>
#include <math.h>
#include <simgrid/actor.h>
#include <xbt/asserts.h>

/* Periods compared, and their tolerance (relative). A stream's period
 * is PER events or a multiple of them up to KFF_MULT (flows that share a
 * link may alternate two patterns, a chunk's events repeating only every
 * other chunk), the call's the least common multiple of its streams'. */
enum { KFF_MULT = 4 };
#define KFF_TOLERANCE 1e-9

/* What else the jump moves: the NVSwitches' gathers (passive: they only
 * forward). */
struct kff_passive {
  void (*apply)(void *state, int periods);
  void *state;
};

/* One call's record, shared by its GPUs. */
struct kff {
  uint64_t key;
  int expect, n;       /* streams in all, registered */
  int members, left;   /* GPUs in the call, and those that left it */
  struct kff_stream **st;
  GArray *passive;     /* struct kff_passive */
  double cand;         /* the candidate period */
  int cand_mult;       /* its events: cand_mult x each stream's PER */
  int match;           /* streams periodic at it */
  bool done;           /* jumped, or no longer may */
  double debt;         /* the time jumped over */
  int min_events;      /* events before a stream may vote */
  int window;          /* messages a stream may have in flight */
};

static bool same_time(double a, double b) {
  return fabs(a - b) <= KFF_TOLERANCE * fmax(fabs(a), fabs(b));
}

void kff_pay(const struct kff_host *h) {
  if (h->ff && h->ff->debt > 0)
    sg_actor_sleep_for(h->ff->debt);
}

void kff_add_passive(struct kff *f, void (*apply)(void *state, int periods),
                     void *state) {
  if (!f)
    return;
  for (guint i = 0; i < f->passive->len; i++)
    if (g_array_index(f->passive, struct kff_passive, i).state == state)
      return;
  struct kff_passive pa = {apply, state};
  g_array_append_val(f->passive, pa);
}

/* The call's record (created by its first GPU). */
static struct kff *kff_of(struct kff_host *h, int members, int window,
                          int streams, int per, int reps) {
  struct sim *s = h->c->sim;
  if (!s->nccl_ff)
    s->nccl_ff = g_hash_table_new(g_int64_hash, g_int64_equal);
  uint64_t key = h->c->w->nccl_calls;
  struct kff *f = g_hash_table_lookup(s->nccl_ff, &key);
  if (!f) {
    f = g_new0(struct kff, 1);
    f->key = key;
    f->expect = streams * members;
    f->members = members;
    f->st = g_new0(struct kff_stream *, f->expect);
    f->passive = g_array_new(FALSE, FALSE, sizeof(struct kff_passive));
    f->min_events = per * (reps + 1) + window;
    f->window = window;
    g_hash_table_insert(s->nccl_ff, &f->key, f);
  }
  return f;
}

/* Register K's NC streams (PER events a period, TOTAL[q] events each),
 * each periodic once its last REPS periods are: three, and for a
 * pipeline with a window, the window's periods too (all that is in
 * flight must belong to the regime, as fastforward.c asks its L + 1
 * steps). */
void kff_join(struct kff_host *h, int members, int window,
              struct kff_stream *st, int nc, int per, int reps,
              const long *total) {
  struct coll_call *c = h->c;
  h->ff = NULL;
  for (int q = 0; q < nc; q++)
    st[q] = (struct kff_stream){.h = h, .q = q};
  if (!(c->sim->ff_ok && c->w && c->v->m == 0))
    return;
  struct kff *f = kff_of(h, members, window, nc, per, reps);
  h->ff = f;
  for (int q = 0; q < nc; q++) {
    struct kff_stream *x = &st[q];
    *x = (struct kff_stream){.h = h, .q = q, .per = per, .reps = reps,
                             .total = total[q]};
    x->hist = per * KFF_MULT * reps + 1;
    x->t = g_new0(double, x->hist);
    x->t_rx = g_new0(double, x->hist);
    x->snap = g_new0(double, (size_t)x->hist * KFF_DST);
    xbt_assert(f->n < f->expect, "NCCL call %lu: too many streams",
               (unsigned long)f->key);
    f->st[f->n++] = x;
  }
}

/* K leaves its call (its streams freed; the record with the last). */
void kff_leave(struct kff_host *h, struct kff_stream *st, int nc) {
  struct kff *f = h->ff;
  if (!f)
    return;
  f->done = true; /* a stream gone: no jump after this */
  for (int q = 0; q < nc; q++) {
    g_free(st[q].t);
    g_free(st[q].t_rx);
    g_free(st[q].snap);
  }
  if (++f->left == f->members) {
    g_hash_table_remove(h->c->sim->nccl_ff, &f->key);
    g_free(f->st);
    g_array_free(f->passive, TRUE);
    g_free(f);
  }
}

/* BYTES more on X's route to (FROM: from) rank PEER. */
static void route_add(struct kff_stream *x, int peer, bool from, double bytes) {
  if (!x->h->ff)
    return;
  int i = 0;
  while (i < x->ndst && (x->dst[i] != peer || x->from[i] != from))
    i++;
  xbt_assert(i < KFF_DST, "a channel's bytes take at most %d routes", KFF_DST);
  if (i == x->ndst) {
    x->dst[x->ndst] = peer;
    x->from[x->ndst] = from;
    x->cum[x->ndst++] = 0;
  }
  x->cum[i] += bytes;
}

void kff_sent(struct kff_stream *x, int dst, double bytes) {
  route_add(x, dst, false, bytes);
}

void kff_received(struct kff_stream *x, int src, double bytes) {
  route_add(x, src, true, bytes);
}

/* The jump: every stream PERIODS of the call's periods on (cand_mult of
 * its own each), the passive ones too; each stream's last such period's
 * bytes put on the links PERIODS more times (a switch's in the
 * switches' wire bytes). */
static void kff_jump(struct kff *f, int periods) {
  int mult = f->cand_mult;
  for (int i = 0; i < f->n; i++) {
    struct kff_stream *x = f->st[i];
    struct coll_call *c = x->h->c;
    long span = (long)mult * x->per;
    long last = (x->ev - 1) % x->hist, first = (x->ev - 1 - span) % x->hist;
    for (int j = 0; j < x->ndst; j++) {
      double b = (x->snap[last * KFF_DST + j] -
                  x->snap[first * KFF_DST + j]) *
                 periods;
      if (x->from[j]) {
        sim_link_bytes(c->sim, NULL, x->dst[j], c->rank, b);
        c->sim->aggr_wire_bytes += b;
        continue;
      }
      sim_link_bytes(c->sim, c->w, c->rank, x->dst[j], b);
      if (c->w)
        c->w->wire_bytes += b;
    }
    x->ev += (long)periods * span;
    x->rx += (long)periods * span;
    x->h->apply(x->h, x->q, periods * mult);
    if (c->rank == 0 && x->q == 0)
      c->sim->ff_steps += (uint64_t)periods * (uint64_t)span;
  }
  for (guint i = 0; i < f->passive->len; i++) {
    struct kff_passive *pa = &g_array_index(f->passive, struct kff_passive, i);
    pa->apply(pa->state, periods * mult);
  }
  f->debt = periods * f->cand;
  f->done = true;
}

/* The period of the last REPS periods of the series T (N events so far,
 * PER a period, HIST kept), or 0 when they differ. */
static double series_period(const double *t, long n, int per, int reps,
                            int hist) {
  if (n <= (long)per * reps)
    return 0;
  double d = t[(n - 1) % hist] - t[(n - 1 - per) % hist];
  for (int r = 1; r < reps && d > 0; r++) {
    double dr = t[(n - 1 - (long)r * per) % hist] -
                t[(n - 1 - (long)(r + 1) * per) % hist];
    if (!same_time(dr, d))
      return 0;
  }
  return d;
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* The least multiple M of X's PER (up to KFF_MULT) at which its events
 * and its receives are periodic with one period (*D), or 0. */
static int stream_period(const struct kff_stream *x, double *d) {
  for (int m = 1; m <= KFF_MULT; m++) {
    double de = series_period(x->t, x->ev, m * x->per, x->reps, x->hist);
    if (de > 0 && same_time(series_period(x->t_rx, x->rx, m * x->per,
                                          x->reps, x->hist),
                            de)) {
      *d = de;
      return m;
    }
  }
  return 0;
}

/* Stream X received one of its counted messages now. */
void kff_rx(struct kff_stream *x) {
  struct kff *f = x->h->ff;
  if (!f || f->done)
    return;
  x->t_rx[x->rx++ % x->hist] = sim_now();
}

/* Stream X's event now: its time and bytes recorded, its vote, and the
 * jump when every stream agrees. */
void kff_event(struct kff_stream *x) {
  struct kff *f = x->h->ff;
  if (!f || f->done)
    return;
  long e = x->ev++ % x->hist;
  x->t[e] = sim_now();
  for (int j = 0; j < KFF_DST; j++)
    x->snap[e * KFF_DST + j] = j < x->ndst ? x->cum[j] : 0;
  double d = 0;
  int m = x->ev >= f->min_events ? stream_period(x, &d) : 0;
  bool now = false;
  if (m && (f->match == 0 || (f->match == 1 && x->matched))) {
    f->cand = d;
    f->cand_mult = m;
    now = true;
  } else if (m && f->cand_mult % m == 0) {
    now = same_time(d * (f->cand_mult / m), f->cand);
  } else if (m) {
    /* The call's period grows to both when they agree on the rate: every
     * stream periodic at the candidate is at its multiples too. */
    int l = f->cand_mult * m / gcd(f->cand_mult, m);
    double dl = f->cand * (l / f->cand_mult);
    if (l <= KFF_MULT && same_time(d * (l / m), dl)) {
      f->cand = dl;
      f->cand_mult = l;
      now = true;
    }
  }
  f->match += (int)now - (int)x->matched;
  x->matched = now;
  if (f->n < f->expect || f->match < f->expect)
    return;
  /* Periods left to every stream, a tail of two periods and two windows
   * simulated after the jump (the drain, and no receive left asked for
   * that nothing will answer). */
  long periods = LONG_MAX;
  for (int i = 0; i < f->n; i++) {
    struct kff_stream *y = f->st[i];
    long span = (long)f->cand_mult * y->per;
    long left = (y->total - y->ev - 2L * span - 2L * f->window) / span;
    periods = left < periods ? left : periods;
  }
  if (periods >= 1)
    kff_jump(f, (int)periods);
}

/* Where a stream's filling is not known, before its jump and after it
 * it simulates KFF_EST_PERIODS of the periods it compares and
 * KFF_EST_SETTLE events more (its pipeline's filling and draining).
 * Fitted to the messages counted in runs of nccl-tests' 512 MiB points
 * (rings, trees and NVLS on one and two A100 and H100 machines) and of
 * BERT-large over 32 DGX A100 machines: within a factor of 2.5 of each.
 * Where it is known, what kff_event simulates: the filling, the periods
 * compared, and after the jump two periods and two windows. */
#define KFF_EST_PERIODS 1.5
#define KFF_EST_SETTLE 30

double kff_events(double events, double per, int reps, bool settles,
                  double settle, double window) {
  if (!settles)
    return events;
  return fmin(events, settle > 0
                          ? settle + (reps + 2) * per + 2 * window
                          : KFF_EST_PERIODS * per * reps + KFF_EST_SETTLE);
}
