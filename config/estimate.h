/* config/estimate.h: what simulating a point would cost, estimated from its
 * configuration before anything runs, so that a long sweep says how long
 * before it starts (gradsim run --estimate, and before a sweep of more
 * than a few seconds) and sizes a machine cannot simulate are refused
 * with figures instead of exhausting it.
 *
 * Memory: lower bounds built from measurements of this simulator
 * (docs/performance.md): a process of about 15 MB, 20 KB per host
 * (SimGrid's actor and stack pages, records, mailboxes), 24 bytes per host
 * and bucket, 221 bytes per worker and iteration (its record and its row
 * of iterations.csv, 125 bytes of text), 4 bytes per held gradient value
 * and host (8 with an error-feedback codec, 20 with payload = full).
 *
 * Wall time: the process's start, each host's setup, the synthetic
 * gradients drawn (held values and hosts), a codec's work on them, and
 * the simulated messages, each at a cost that grows with the messages in
 * flight at once (SimGrid's max-min solver shares every link among
 * them); NCCL's kernel's messages (rate-bound, over longer routes) cost
 * more. Fitted on the development machine to runs other than those
 * bench/estimate.sh scores (docs/performance.md, "Estimates", gives the
 * runs and the error). */
#ifndef GRADSIM_CONFIG_ESTIMATE_H
#define GRADSIM_CONFIG_ESTIMATE_H

#include "experiment.h"

#include <stddef.h>

/* Memory per simulated host (worker or aggregator), bytes. */
#define ESTIMATE_HOST_BYTES 20e3
/* Wall time: a process's start; a host's setup; a drawn gradient value;
 * a value carried by a message (copied, summed), and with the oracle
 * (payload = full) its ledger's more (copied with it, checked: q8 on a
 * ring of 16 and 32 H100 workers, 2 x 1M values, payload full against
 * sampled with every value held: 27 and 24 ns); a value through a codec
 * (encoded and decoded: INCEPTIONN's); a byte of a gathered message
 * decoded and added, and a value of it checked by the oracle's ledger
 * (the p^2 terms of q8 per bucket over NCCL's ring, 4 x 1M values on 16
 * and 32 workers, payload sampled with every value held and payload
 * full: 0.47 ns a byte, 9.4 ns a value more). */
#define ESTIMATE_START_S 0.03
#define ESTIMATE_HOST_S 25e-6
#define ESTIMATE_VALUE_S 17e-9
#define ESTIMATE_PAYLOAD_VALUE_S 6e-9
#define ESTIMATE_CODEC_VALUE_S 15e-9
#define ESTIMATE_LEDGER_VALUE_S 25e-9
#define ESTIMATE_GATHER_BYTE_S 0.5e-9
#define ESTIMATE_GATHER_VALUE_S 9.5e-9
/* A message: BASE plus PER_FLOW for each message in flight at once
 * (workers times their streams); NCCL's kernel's. */
#define ESTIMATE_MESSAGE_S 2.5e-6
#define ESTIMATE_FLOW_S 1.5e-9
#define ESTIMATE_KERNEL_MESSAGE_S 2e-6
#define ESTIMATE_KERNEL_FLOW_S 21.5e-9
/* The limits: a point's memory at most this fraction of the machine's
 * physical memory, and at most this many simulated messages (hours at
 * the costs above). */
#define ESTIMATE_MEMORY_FRACTION 0.6
#define ESTIMATE_MAX_MESSAGES 1e10

struct estimate {
  double memory_bytes; /* peak resident memory of the point's process: */
  double hosts_bytes;  /*   the hosts' actors and buckets (and per pair of
                        *   workers what the collective holds: pair_bytes) */
  double records_bytes; /*  the iteration records */
  double values_bytes;  /*   the gradient values held (and gathered) */
  double messages;     /* simulated point-to-point messages */
  double wall_s;       /* the wall time of the point's process */
  double message_s;    /* of which each message */
  double rows_bytes;   /* its rows of iterations.csv */
  const char *ff_blocker; /* the key keeping fast-forward off, or NULL */
  double pair_bytes;   /* the collective's bytes per pair of workers */
};

/* Estimate P. Returns 0, or -1 with *ERR (g_free'd by the caller) when
 * the model or the collective cannot be loaded (run_check() reports
 * those first). */
int estimate_point(const struct point *p, struct estimate *out, char **err);

/* S seconds as text for people ("4.2 s", "35 s", "12 minutes", "3
 * hours"), g_free'd by the caller. */
char *estimate_duration_text(double s);

/* The machine's physical memory in bytes (sysconf), 16 GiB if unknown. */
double estimate_physical_memory(void);

/* Estimate P into *OUT and refuse it when the estimate exceeds the limits
 * above: -1 with *ERR, one line stating the memory and time it would
 * need, the limits, and the keys that make it smaller. */
int estimate_check(const struct point *p, struct estimate *out, char **err);


#endif
