/* sim/run.h: run one experiment point in SimGrid and report what it
 * measured. SimGrid can be started once per process: callers run each
 * point in a process of its own (sweep.c). */
#ifndef GRADSIM_SIM_RUN_H
#define GRADSIM_SIM_RUN_H

#include "experiment.h"

#include <glib.h>
#include <stdint.h>

struct run_result {
  /* Means per iteration, simulated seconds (see the README, "runs.csv"). */
  double exchange_s, iteration_s;
  double compute_s, codec_s, comm_s, reduce_s, idle_s;
  double wire_bytes;
  double formula_s; /* NAN where no analytic model applies */
  const char *oracle; /* "pass", "fail" or "na" */
  /* Packets (framing = packets) and the NIC engine (placement = nic). */
  double packets, header_bytes; /* every sender's, like wire_bytes */
  double driver_s;              /* per worker: its host's driver time */
  double nic_s;                 /* per worker: its two engines' busy time */
  double nic_busy;              /* nic_s / (2 iteration_s) */
  double nic_stall_cycles;      /* per worker: both engines */
  double simulated_s; /* the whole run */
  uint64_t ff_steps;  /* ring steps worker 0 fast-forwarded, all phases */
  GString *iterations; /* iterations.csv rows, without header */
  GString *links;      /* links.csv rows, without header */
  char *note;          /* the oracle's finding when it failed, or NULL */
};

/* Run P (platform XML written into WORKDIR; a Paje trace there too when
 * TRACE). Returns 0, or -1 with *ERR set to one line (bad input the
 * experiment check could not see: a platform file with too few hosts, a
 * codec that does not suit the collective, payload too large). */
int run_point(const struct point *p, const char *workdir, bool trace,
              struct run_result *r, char **err);

void run_result_clear(struct run_result *r);

/* Check everything about P that does not need SimGrid (model, codec,
 * collective, payload size); -1 with *ERR on bad input. */
int run_check(const struct point *p, char **err);

#endif
