/* config/estimate.h: what simulating a point would cost, estimated from its
 * configuration before anything runs, so that sizes a machine cannot
 * simulate are refused with figures instead of exhausting it.
 *
 * The figures are lower bounds built from measurements of this simulator
 * (docs/performance.md): a process of about 15 MB, 20 KB per host
 * (SimGrid's actor and stack pages, records, mailboxes), 24 bytes per host
 * and bucket, 221 bytes per worker and iteration (its record and its row
 * of iterations.csv, 125 bytes of text), 4 bytes per held gradient value
 * and host (8 with an error-feedback codec, 20 with payload = full), and
 * about 8 us of wall time per simulated message (SimGrid's own cost per
 * communication). */
#ifndef GRADSIM_CONFIG_ESTIMATE_H
#define GRADSIM_CONFIG_ESTIMATE_H

#include "experiment.h"

#include <stddef.h>

/* Memory per simulated host (worker or aggregator), bytes. */
#define ESTIMATE_HOST_BYTES 20e3
/* Wall time per simulated message, seconds. */
#define ESTIMATE_MESSAGE_S 8e-6
/* The limits: a point's memory at most this fraction of the machine's
 * physical memory, and at most this many simulated messages (about 22
 * hours at ESTIMATE_MESSAGE_S). */
#define ESTIMATE_MEMORY_FRACTION 0.6
#define ESTIMATE_MAX_MESSAGES 1e10

struct estimate {
  double memory_bytes; /* peak resident memory of the point's process: */
  double hosts_bytes;  /*   the hosts' actors and buckets (and per pair of
                        *   workers what the collective holds: pair_bytes) */
  double records_bytes; /*  the iteration records */
  double values_bytes; /*   the gradient values held */
  double messages;     /* simulated point-to-point messages */
  double wall_s;       /* messages * ESTIMATE_MESSAGE_S */
  double rows_bytes;   /* its rows of iterations.csv */
  const char *ff_blocker; /* the key keeping fast-forward off, or NULL */
  double pair_bytes;   /* the collective's bytes per pair of workers */
};

/* Estimate P. Returns 0, or -1 with *ERR (g_free'd by the caller) when
 * the model or the collective cannot be loaded (run_check() reports
 * those first). */
int estimate_point(const struct point *p, struct estimate *out, char **err);

/* The machine's physical memory in bytes (sysconf), 16 GiB if unknown. */
double estimate_physical_memory(void);

/* Estimate P into *OUT and refuse it when the estimate exceeds the limits
 * above: -1 with *ERR, one line stating the memory and time it would
 * need, the limits, and the keys that make it smaller. */
int estimate_check(const struct point *p, struct estimate *out, char **err);


#endif
