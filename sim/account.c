/* sim/account.c: where each worker's time went, and the run's results
 * (run_result of engine.h): the critical-path breakdown per iteration,
 * iterations.csv and links.csv rows, the analytic formula beside the
 * simulation. */
#include "ffwd/ffwd.h"
#include "memory.h"

#include <simgrid/engine.h>
#include <simgrid/link.h>
#include <simgrid/host.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The time S's copies spend in [A, B): copy k is [t0 + k period,
 * t1 + k period), k < copies, the copies disjoint (t1 - t0 <= period). */
static double span_overlap(const struct span *s, double a, double b) {
  if (s->copies == 1)
    return fmax(0, fmin(b, s->t1) - fmax(a, s->t0));
  double len = s->t1 - s->t0, P = s->period;
  int64_t n = s->copies;
  /* The first copy ending after A and the last starting before B: an
   * estimate by division, corrected by the comparisons that define them
   * (so that rounding in the division cannot miscount a copy). */
  int64_t lo = (int64_t)fmax(0, floor((a - s->t1) / P));
  while (lo < n && s->t1 + (double)lo * P <= a)
    lo++;
  while (lo > 0 && s->t1 + (double)(lo - 1) * P > a)
    lo--;
  int64_t hi = (int64_t)fmin((double)n - 1, ceil((b - s->t0) / P));
  while (hi >= 0 && s->t0 + (double)hi * P >= b)
    hi--;
  while (hi + 1 < n && s->t0 + (double)(hi + 1) * P < b)
    hi++;
  if (lo > hi)
    return 0;
  double in = (double)(hi - lo + 1) * len;
  in -= fmax(0, a - (s->t0 + (double)lo * P));
  in -= fmax(0, (s->t1 + (double)hi * P) - b);
  return fmax(0, in);
}

/* Attribute the wait [a, b) of worker W to its communication side's
 * states; the uncovered rest is idle. */
void account_attribute(struct worker *w, double a, double b,
                       struct iter_rec *r) {
  if (b <= a)
    return;
  double covered = 0;
  if (w->sum_from < INFINITY) {
    /* The spans summed since the wait began (account_sum_from). */
    double part[ST_NSTATES];
    for (int st = 0; st < ST_NSTATES; st++)
      covered += part[st] = w->acc[st] - w->acc0[st];
    r->codec_s += part[ST_CODEC];
    r->comm_s += part[ST_COMM];
    r->reduce_s += part[ST_REDUCE];
    r->idle_s += part[ST_IDLE];
    w->sum_from = INFINITY;
  }
  for (guint i = 0; i < w->spans->len; i++) {
    const struct span *s = &g_array_index(w->spans, struct span, i);
    double in = span_overlap(s, a, b);
    if (!(in > 0))
      continue;
    covered += in;
    switch (s->st) {
    case ST_CODEC:
      r->codec_s += in;
      break;
    case ST_COMM:
      r->comm_s += in;
      break;
    case ST_REDUCE:
      r->reduce_s += in;
      break;
    case ST_IDLE:
    case ST_NSTATES:
      r->idle_s += in;
      break;
    }
  }
  r->idle_s += fmax(0, (b - a) - covered);
}

void account_sum_from(struct worker *w) {
  w->sum_from = sim_now();
  memcpy(w->acc0, w->acc, sizeof w->acc0);
}

/* Drop spans whose last copy ended before T (no later wait can overlap
 * them). */
void account_prune(struct worker *w, double t) {
  guint keep = 0;
  for (guint i = 0; i < w->spans->len; i++) {
    struct span s = g_array_index(w->spans, struct span, i);
    if (s.t1 + (double)(s.copies - 1) * s.period > t)
      g_array_index(w->spans, struct span, keep++) = s;
  }
  g_array_set_size(w->spans, keep);
}

void account_links_init(struct sim *s) {
  s->pair_bytes =
      g_hash_table_new_full(sim_pair_hash, g_direct_equal, NULL, g_free);
}

static gint cmp_key(gconstpointer a, gconstpointer b) {
  gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
  return (x > y) - (x < y);
}

/* The pair keys of T (sim_pair_key) in increasing order, so that each
 * link's sum is added to in one order (g_list_free). */
static GList *sorted_pairs(GHashTable *t) {
  return g_list_sort(g_hash_table_get_keys(t), cmp_key);
}

/* The ranks of pair KEY. */
static void pair_ranks(gconstpointer key, int *src, int *dst) {
  gsize k = GPOINTER_TO_SIZE(key);
  *src = (int)(k >> 32);
  *dst = (int)(guint32)k;
}

void account_routes_mark(struct worker *w, int level) {
  if (!w->ff_routes[level])
    w->ff_routes[level] =
        g_hash_table_new_full(sim_pair_hash, g_direct_equal, NULL, g_free);
  else
    g_hash_table_remove_all(w->ff_routes[level]);
  w->ff_recording[level] = true;
}

void account_routes_unmark(struct worker *w, int level) {
  w->ff_recording[level] = false;
}

void account_routes_replay(struct worker *w, int level, int times) {
  GList *keys = sorted_pairs(w->ff_routes[level]);
  bool rec = w->ff_recording[level];
  w->ff_recording[level] = false;
  for (GList *k = keys; k; k = k->next) {
    double b = *(double *)g_hash_table_lookup(w->ff_routes[level], k->data);
    sim_pair_bytes(w->sim, w, k->data, b * times);
  }
  w->ff_recording[level] = rec;
  g_list_free(keys);
}

/* The analytic model of the collective, summed over the buckets, on the
 * point's network: NAN where none applies (a codec, another topology, an
 * exchange overlapped with computation or pipelined, which is not what a
 * formula times). */
/* One GPU's memory in R (models/memory.h): ZeRO's stage of the point's
 * sharding over the workers, its optimizer, batch and checkpointing; a
 * stateful codec keeps an fp32 residual of every value. */
void account_memory(const struct sim *s, struct run_result *r) {
  const struct point *p = s->p;
  const struct model *m = s->model;
  /* Stage 3's units are the run's buckets. */
  uint64_t unit = 0;
  for (size_t b = 0; run_units(p) && b < s->nbuckets; b++)
    unit = s->buckets[b].n > unit ? s->buckets[b].n : unit;
  struct memory_opts o = {
      .optimizer = (enum optimizer)p->optimizer,
      .precision = p->precision,
      .stage = run_units(p)                 ? 3
               : p->sharding == SHARD_ZERO2 ? 2
                                            : p->sharding == SHARD_ZERO1,
      .shards = run_shards(p),
      .batch = m->batch,
      .checkpoint = p->checkpoint,
      .secondary = p->hpz ? topology_node_size(p) : 0,
      .unit_params = (double)unit,
      .units_held = p->mode == MODE_OVERLAP ? 2 : 1,
      .residual_bytes = s->codec && codec_is_stateful(s->codec) ? 4 : 0};
  struct memory mem;
  model_memory(m, &o, &mem);
  r->mem_params = mem.params;
  r->mem_grads = mem.grads;
  r->mem_optimizer = mem.optimizer;
  r->mem_activations = mem.activations_known ? mem.activations : NAN;
  r->mem_residual = mem.residual;
  r->mem_buffers = mem.buffers;
  r->mem_total = mem.total;
  r->capacity = m->capacity > 0 ? m->capacity : NAN;
}

static double formula_of(const struct sim *s) {
  /* A sharded exchange holds the shard's update between its halves. */
  if (!s->schedule->exchange_alone || s->p->sharding != SHARD_NONE)
    return NAN;
  const char *name = NULL;
  if (topology_flat(s->p))
    name = s->p->pull_direct && s->coll->formula_direct
               ? s->coll->formula_direct
               : s->coll->formula;
  else if (topology_node_size(s->p) > 0)
    name = s->coll->formula_nodes;
  if (!name || s->codec)
    return NAN;
  const struct formula *f = formula_find(name);
  double total = 0;
  for (size_t b = 0; b < s->nbuckets; b++)
    total += sim_formula_time(
        s, s->coll, f, (double)s->p->grad_bytes * (double)s->buckets[b].n);
  return total;
}

/* One iteration: its rows of iterations.csv, and the critical path (the
 * worker whose iteration ends last) added to R's means over N
 * iterations. Returns the exchange window: from the first byte leaving
 * any worker to the last worker holding the result (0: none). */
static double iteration_rows(struct sim *s, int it, int n,
                             struct run_result *r) {
  int crit = 0;
  double lo = INFINITY, hi = -INFINITY, wire = 0;
  for (int w = 0; w < s->nworkers; w++) {
    struct iter_rec *x = sim_rec(s, it, w);
    if (x->end > sim_rec(s, it, crit)->end)
      crit = w;
    if (x->exchange_start >= 0) {
      lo = fmin(lo, x->exchange_start);
      hi = fmax(hi, x->exchange_end);
    }
    wire += x->wire_bytes;
    g_string_append_printf(
        r->iterations,
        "%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.17g\n", it, w,
        x->start, x->end, x->compute_s - x->gpu_wait_s,
        x->codec_s + x->gpu_wait_s, x->comm_s, x->reduce_s,
        x->idle_s, x->exchange_start >= 0 ? x->exchange_end - x->exchange_start
                                          : 0,
        x->wire_bytes);
  }
  struct iter_rec *c = sim_rec(s, it, crit);
  /* Compute's waits for the GPU while the worker's own codec held it are
   * codec work, here as in the split (split_of): the GPU runs one thing
   * at a time, and every second of codec on it delays the iteration. */
  r->compute_s += (c->compute_s - c->gpu_wait_s) / n;
  r->codec_s += (c->codec_s + c->gpu_wait_s) / n;
  r->comm_s += c->comm_s / n;
  r->reduce_s += c->reduce_s / n;
  r->idle_s += c->idle_s / n;
  r->wire_bytes += wire / n;
  return hi > lo ? hi - lo : 0;
}

/* The split of iteration_s (docs/outputs.md, runs.csv): one worker followed
 * through the whole run, the one that finishes last (the lowest rank
 * among ties: finishes within 1e-9 of the last, since the parts of
 * workers that end together add up to the same finish only to rounding,
 * and the order of a sum moved by fast-forward must not pick another
 * worker). A worker's records
 * tile its timeline from 0 (each iteration starts where the previous
 * ended, and pipe adds its final wait to the last record), so its parts
 * add up to its finish, the end of the run. (The worker that ends each
 * iteration last, compute_s ... idle_s, may change from one iteration to
 * the next; its iterations then overlap and their sum exceeds the run.)
 * Its GPU waits for its own codec are codec work, not compute. */
static void split_of(struct sim *s, int n, struct run_result *r) {
  double *f = g_new(double, s->nworkers), finish = -INFINITY;
  for (int w = 0; w < s->nworkers; w++) {
    const struct iter_rec *x = sim_rec(s, n - 1, w);
    f[w] = x->start + x->compute_s + x->codec_s + x->comm_s + x->reduce_s +
           x->idle_s;
    finish = fmax(finish, f[w]);
  }
  int last = 0;
  while (last + 1 < s->nworkers &&
         !(f[last] >= finish - 1e-9 * fabs(finish)))
    last++;
  g_free(f);
  double t[5] = {0, 0, 0, 0, 0};
  for (int it = 0; it < n; it++) {
    const struct iter_rec *x = sim_rec(s, it, last);
    t[0] += x->compute_s - x->gpu_wait_s;
    t[1] += x->comm_s;
    t[2] += x->codec_s + x->gpu_wait_s;
    t[3] += x->reduce_s;
    t[4] += x->idle_s;
  }
  r->split_compute_s = t[0] / n;
  r->exposed_comm_s = t[1] / n;
  r->exposed_codec_s = t[2] / n;
  r->exposed_reduce_s = t[3] / n;
  r->split_idle_s = t[4] / n;
}

static sg_host_t host_of(const struct sim *s, int rank) {
  if (rank < s->nworkers)
    return s->workers[rank].host;
  if (rank < s->nworkers + s->naggr)
    return s->aggr_hosts[rank - s->nworkers];
  return s->extra_hosts[rank - s->nworkers - s->naggr];
}

/* links.csv: the links that carried traffic, each the bytes of the pairs
 * whose route crosses it (in pair order: each link's sum is of whole
 * bytes, exact in any order below 2^53). */
static GString *link_rows(const struct sim *s, double simulated_s) {
  size_t nl = sg_link_count();
  sg_link_t *links = sg_link_list();
  double *bytes = g_new0(double, nl);
  for (size_t i = 0; i < nl; i++)
    sg_link_set_data(links[i], GSIZE_TO_POINTER(i + 1));
  GList *keys = sorted_pairs(s->pair_bytes);
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  for (GList *k = keys; k; k = k->next) {
    int src, dst;
    pair_ranks(k->data, &src, &dst);
    double b = *(double *)g_hash_table_lookup(s->pair_bytes, k->data);
    xbt_dynar_reset(route);
    sg_host_get_route(host_of(s, src), host_of(s, dst), route);
    unsigned i;
    sg_link_t l;
    xbt_dynar_foreach (route, i, l)
      bytes[GPOINTER_TO_SIZE(sg_link_get_data(l)) - 1] += b;
  }
  xbt_dynar_free(&route);
  g_list_free(keys);
  GString *rows = g_string_new(NULL);
  for (size_t i = 0; i < nl; i++) {
    if (bytes[i] <= 0)
      continue;
    double bw = sg_link_get_bandwidth(links[i]);
    g_string_append_printf(rows, "%s,%.17g,%.9g,%.9g\n",
                           sg_link_get_name(links[i]), bytes[i],
                           bytes[i] / fmax(simulated_s, 1e-300),
                           bytes[i] / fmax(simulated_s, 1e-300) / bw);
  }
  g_free(bytes);
  xbt_free(links);
  return rows;
}

void account_summarize(struct sim *s, struct run_result *r) {
  int n = s->p->iterations, ex = 0;
  double exch = 0;
  r->iterations = g_string_new(NULL);
  for (int it = 0; it < n; it++) {
    double window = iteration_rows(s, it, n, r);
    if (window > 0) {
      exch += window;
      ex++;
    }
  }
  split_of(s, n, r);
  r->wire_bytes += s->aggr_wire_bytes / n;
  r->aggr_reduce_s = s->naggr ? s->aggr_reduce_s / n / s->naggr : 0;
  r->exchange_s = ex ? exch / ex : 0;
  r->simulated_s = simgrid_get_clock();
  r->iteration_s = r->simulated_s / n;
  double per = (double)n * s->nworkers;
  r->packets = s->net.packets / n;
  r->header_bytes = s->net.header_bytes / n;
  r->driver_s = s->net.driver_s / per;
  r->nic_s = s->net.nic_s / per;
  r->nic_busy = r->iteration_s > 0 ? r->nic_s / (2 * r->iteration_s) : 0;
  r->nic_stall_cycles = s->net.nic_stalls / per;
  r->formula_s = formula_of(s);
  account_memory(s, r);
  r->ff_steps = s->ff_steps;
  r->ff_iterations = s->ff_iterations;
  r->ff_buckets = s->ff_buckets;
  r->oracle = !s->oracle_ok ? "fail" : s->oracle_run ? "pass" : "na";
  if (!s->oracle_ok)
    r->note = g_strdup(s->oracle_msg->str);
  r->links = link_rows(s, r->simulated_s);
  r->calls = g_string_new(NULL);
  if (s->coll->calls)
    s->coll->calls(s, r->calls);
}
