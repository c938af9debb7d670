/* config/estimate.c: a point's memory, messages and wall time before it
 * runs (estimate.h). The constants were measured on the development machine
 * (peak RSS of one point's process, /usr/bin/time): 16384 against 4096
 * workers of a ring with payload none give 20.0 KB per worker; 2000
 * against 1 iteration of 256 workers 221 bytes per record; 4096 against 1
 * tensor of 256 workers (rdb) 23 bytes per bucket and worker; a sampled
 * payload of 4 x 1M values on 64 workers 3.9 bytes per held value and
 * worker, 8.4 with top-k's residuals. */
#include "estimate.h"

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
};

double estimate_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size
                               : 16.0 * 1024 * 1024 * 1024;
}

char *estimate_duration_text(double s) {
  if (s < 10)
    return g_strdup_printf("%.1f s", s);
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

int estimate_point(const struct point *p, struct estimate *out, char **err) {
  struct run_shape sh;
  if (run_shape(p, &sh, err) != 0)
    return -1;
  double per_value = sh.value_bytes;
  double hosts = sh.hosts, iters = p->iterations, workers = p->nodes;
  out->hosts_bytes = hosts * ESTIMATE_HOST_BYTES +
                     hosts * (double)sh.buckets * BUCKET_HOST_BYTES +
                     workers * (double)sh.buckets * sh.bucket_bytes +
                     topology_route_bytes(p) + run_stack_bytes(sh.actors) +
                     workers * workers * sh.pair_bytes;
  out->records_bytes = iters * workers * RECORD_BYTES;
  out->values_bytes = sh.held_values * hosts * per_value + sh.gather_bytes;
  out->memory_bytes = PROCESS_BYTES + out->hosts_bytes +
                      out->records_bytes + out->values_bytes;
  out->rows_bytes = iters * workers * ROW_BYTES;
  /* Every host sends at least one message per bucket and exchange; a
   * symmetric collective one per worker and round (fast-forwarded steps
   * not counted, except in the buckets simulated step by step). */
  double per_bucket = fmax(hosts, sh.rounds * workers);
  double per_full = fmax(hosts, sh.full_rounds * workers);
  out->messages =
      sh.exchanges * ((double)(sh.buckets - sh.full_buckets) * per_bucket +
                      (double)sh.full_buckets * per_full);
  bool kernel = sh.kernel_messages >= 0;
  if (kernel)
    out->messages = sh.exchanges * workers * sh.kernel_messages;
  double flows = workers * sh.streams;
  out->message_s = kernel ? ESTIMATE_KERNEL_MESSAGE_S +
                                flows * ESTIMATE_KERNEL_FLOW_S
                          : ESTIMATE_MESSAGE_S + flows * ESTIMATE_FLOW_S;
  /* Every held value is drawn once per host (gradgen's cache). */
  out->wall_s =
      ESTIMATE_START_S + hosts * ESTIMATE_HOST_S +
      sh.held_values * hosts * ESTIMATE_VALUE_S +
      workers * sh.exchanges *
          (sh.payload_values *
               (ESTIMATE_PAYLOAD_VALUE_S +
                (p->payload == PAYLOAD_FULL ? ESTIMATE_LEDGER_VALUE_S : 0)) +
           sh.codec_values * ESTIMATE_CODEC_VALUE_S +
           sh.gather_decoded * ESTIMATE_GATHER_BYTE_S +
           sh.gather_values * ESTIMATE_GATHER_VALUE_S) +
      out->messages * out->message_s;
  out->ff_blocker = sh.ff_blocker;
  out->pair_bytes = sh.pair_bytes;
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
  char *dur = estimate_duration_text(e.wall_s);
  char *parts[] = {units_bytes_text(e.hosts_bytes),
                   units_bytes_text(e.records_bytes),
                   units_bytes_text(e.values_bytes)};
  if (mem)
    *err = g_strdup_printf(
        "too large for this machine: it needs at least %s of memory (%s "
        "for %d workers, their actors' stacks, buckets and routes%s, %s "
        "of iteration records, %s of gradient values) and %.2g simulated "
        "messages (about %s); the "
        "limit is %s, %.0f%% of this machine's %s: reduce [platform] "
        "nodes, [training] iterations, [model] tensors or [exchange] "
        "sample, or take a smaller payload%s",
        need, parts[0], p->nodes,
        e.pair_bytes > 0 ? ", and what each holds for every other one" : "",
        parts[1], parts[2], e.messages, dur, lim,
        100 * ESTIMATE_MEMORY_FRACTION, have,
        p->payload == PAYLOAD_FULL ? " ([exchange] payload = sampled)" : "");
  else
    *err = g_strdup_printf(
        "too long to simulate: %.2g simulated messages would take about "
        "%s at %.0f us each (and at least %s of memory); the limit is "
        "%.0e messages: reduce [platform] nodes, [training] iterations or "
        "[model] tensors%s%s%s",
        e.messages, dur, e.message_s * 1e6, need,
        ESTIMATE_MAX_MESSAGES,
        e.ff_blocker ? ", or let fast-forward skip repeated steps ("
                     : "",
        e.ff_blocker ? e.ff_blocker : "",
        e.ff_blocker ? " keeps it off)" : "");
  for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
    g_free(parts[i]);
  g_free(need);
  g_free(lim);
  g_free(have);
  g_free(dur);
  return -1;
}
