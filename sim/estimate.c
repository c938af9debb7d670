/* sim/estimate.c: a point's memory and message count before it runs
 * (estimate.h). The constants were measured on the development machine
 * (peak RSS of one point's process, /usr/bin/time): 16384 against 4096
 * workers of a ring with payload none give 20.0 KB per worker; 2000
 * against 1 iteration of 256 workers 221 bytes per record; 4096 against 1
 * tensor of 256 workers (rdb) 23 bytes per bucket and worker; a sampled
 * payload of 4 x 1M values on 64 workers 3.9 bytes per held value and
 * worker, 8.4 with top-k's residuals. */
#include "estimate.h"

#include "codec.h"
#include "formula.h"
#include "model.h"
#include "sim.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum {
  PROCESS_BYTES = 15000000,
  BUCKET_HOST_BYTES = 24,
  RECORD_BYTES = 221,
  ROW_BYTES = 125,
  /* Steps of a ring leg simulated under fast-forward (collectives/
   * common.c simulates two per leg, two legs). */
  FF_ROUNDS = 4,
};

double estimate_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size
                               : 16.0 * 1024 * 1024 * 1024;
}

static char *duration_text(double s) {
  if (s < 120)
    return g_strdup_printf("%.0f s", s);
  if (s < 7200)
    return g_strdup_printf("%.0f minutes", s / 60);
  if (s < 172800)
    return g_strdup_printf("%.0f hours", s / 3600);
  if (s < 2 * 365.25 * 86400)
    return g_strdup_printf("%.0f days", s / 86400);
  return g_strdup_printf("%.3g years", s / (365.25 * 86400));
}

/* The model, as run.c loads it. */
static struct model *load_model(const struct point *p, char **err) {
  struct model *m;
  char e[512];
  int rc;
  if (!strcmp(p->model, "synthetic")) {
    rc = model_synthetic(p->params, (size_t)p->tensors, p->compute_s,
                         p->update_s, &m, e, sizeof e);
  } else {
    struct model_opts o = {p->device, p->precision, p->batch, NULL};
    rc = model_load(p->model, &o, &m, e, sizeof e);
  }
  if (rc) {
    *err = g_strdup_printf("[model] %s", e);
    return NULL;
  }
  return m;
}

/* Rounds of one exchange of a symmetric collective (no aggregators, a
 * formula of p, n, alpha, beta and gamma only), in which every worker
 * sends one message per round: the formula's alpha count. 0 when the
 * collective is not of that kind. */
static double rounds_of(const struct collective *c, int p) {
  const struct formula *f = c->formula ? formula_find(c->formula) : NULL;
  const unsigned long netg = 1UL << FP_P | 1UL << FP_N | 1UL << FP_ALPHA |
                             1UL << FP_BETA | 1UL << FP_GAMMA;
  if (!f || c->aggregators || f->needs != netg)
    return 0;
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_P] = p;
  in.v[FP_N] = 0;
  in.v[FP_ALPHA] = 1;
  in.v[FP_BETA] = 1;
  in.v[FP_GAMMA] = 0;
  struct formula_out o;
  char e[256];
  if (formula_eval(f, &in, &o, e, sizeof e) != 0)
    return 0;
  return floor(o.total + 0.5);
}

int estimate_point(const struct point *p, struct estimate *out, char **err) {
  *err = NULL;
  const struct collective *coll = coll_find(p->algorithm);
  if (!coll) {
    *err = g_strdup_printf("[exchange] algorithm = %s is not valid",
                           p->algorithm);
    return -1;
  }
  struct model *m = load_model(p, err);
  if (!m)
    return -1;
  bool stateful = false;
  if (strcmp(p->codec, "none") != 0) {
    codec_t *c;
    if (codec_create(p->codec, &c, NULL, 0) == 0) {
      stateful = codec_is_stateful(c);
      codec_free(c);
    }
  }
  double hosts = (double)p->nodes + (coll->aggregators ? p->aggregators : 0);
  /* Buckets as run.c forms them, and the values each holds. */
  double buckets = 0, held = 0, n = 0;
  double floor64 = 64 * hosts;
  for (size_t t = 0; t < m->ntensors; t++) {
    n += (double)m->tensors[t].elements;
    if (4 * n >= p->fusion_bytes || t == m->ntensors - 1) {
      buckets++;
      if (p->payload == PAYLOAD_FULL)
        held += n;
      else if (p->payload == PAYLOAD_SAMPLED)
        held += fmin(n, fmax((double)p->sample, floor64));
      n = 0;
    }
  }
  model_free(m);
  double per_value = p->payload == PAYLOAD_FULL ? 20 : 4;
  if (stateful)
    per_value += 4;
  double iters = p->iterations, workers = p->nodes;
  out->hosts_bytes =
      hosts * ESTIMATE_HOST_BYTES + hosts * buckets * BUCKET_HOST_BYTES;
  out->records_bytes = iters * workers * RECORD_BYTES;
  out->values_bytes = held * hosts * per_value;
  out->memory_bytes = PROCESS_BYTES + out->hosts_bytes +
                      out->records_bytes + out->values_bytes;
  out->rows_bytes = iters * workers * ROW_BYTES;
  /* Every host sends at least one message per bucket and exchange; a
   * symmetric collective one per worker and round, where fast-forward
   * (the conditions of run.c) simulates four steps of a ring's legs. */
  double exchanges = floor(iters / p->local_steps) +
                     (p->iterations % p->local_steps != 0);
  double rounds = rounds_of(coll, p->nodes);
  bool ff = p->fast_forward && p->payload == PAYLOAD_NONE &&
            p->topology == TOPO_STAR && p->mode == MODE_SYNC;
  for (int i = 0; p->slowdown && i < p->nodes && ff; i++)
    ff = p->slowdown[i] == 1.0;
  if (ff)
    rounds = fmin(rounds, FF_ROUNDS);
  double per_exchange = fmax(hosts, rounds * workers);
  out->messages = exchanges * buckets * per_exchange;
  out->wall_s = out->messages * ESTIMATE_MESSAGE_S;
  return 0;
}

int estimate_check(const struct point *p, struct estimate *out, char **err) {
  if (estimate_point(p, out, err) != 0)
    return -1;
  const struct estimate e = *out;
  double phys = estimate_physical_memory();
  double mem_limit = ESTIMATE_MEMORY_FRACTION * phys;
  bool mem = e.memory_bytes > mem_limit;
  bool time = e.messages > ESTIMATE_MAX_MESSAGES;
  if (!mem && !time)
    return 0;
  char *need = units_bytes_text(e.memory_bytes);
  char *lim = units_bytes_text(mem_limit);
  char *have = units_bytes_text(phys);
  char *dur = duration_text(e.wall_s);
  char *parts[] = {units_bytes_text(e.hosts_bytes),
                   units_bytes_text(e.records_bytes),
                   units_bytes_text(e.values_bytes)};
  if (mem)
    *err = g_strdup_printf(
        "too large for this machine: it needs at least %s of memory (%s "
        "for %d workers and their buckets, %s of iteration records, %s of "
        "gradient values) and %.2g simulated messages (about %s); the "
        "limit is %s, %.0f%% of this machine's %s: reduce [platform] "
        "nodes, [training] iterations, [model] tensors or [exchange] "
        "sample, or take a smaller payload",
        need, parts[0], p->nodes, parts[1], parts[2], e.messages, dur, lim,
        100 * ESTIMATE_MEMORY_FRACTION, have);
  else
    *err = g_strdup_printf(
        "too long to simulate: %.2g simulated messages would take about "
        "%s at %.0f us each (and at least %s of memory); the limit is "
        "%.0e messages: reduce [platform] nodes, [training] iterations or "
        "[model] tensors, or let fast_forward = auto skip ring steps "
        "(star, sync, payload = none)",
        e.messages, dur, ESTIMATE_MESSAGE_S * 1e6, need,
        ESTIMATE_MAX_MESSAGES);
  for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
    g_free(parts[i]);
  g_free(need);
  g_free(lim);
  g_free(have);
  g_free(dur);
  return -1;
}
