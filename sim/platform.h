/* sim/platform.h: the simulated machines: SimGrid platform XML generated
 * from [platform] keys (star, fat-tree, dragonfly, gpu-cluster) or read
 * from a file, and which hosts are workers and aggregators.
 *
 * Generated platforms put the one-way latency `latency` (alpha) between
 * any two workers of a star (half on each host link) and, on the other
 * generated topologies, between workers that are farthest apart (the
 * latency is spread over the links of the longest route). Host links are
 * split-duplex at `bandwidth`, so a worker sends and receives at full rate
 * at once. Every host computes at PLATFORM_SPEED flop/s: executions are
 * given in seconds times that speed. */
#ifndef GRADSIM_SIM_PLATFORM_H
#define GRADSIM_SIM_PLATFORM_H

#include "engine.h"

#include <simgrid/forward.h>

enum { PLATFORM_SPEED = 1000000000 }; /* flop/s of every generated host */

/* platform_xml() and platform_file_check() are in engine.h. */

/* SimGrid configuration arguments for P ("--cfg=..." strings, a NULL-
 * terminated array to g_strfreev). */
char **platform_cfg(const struct point *p);

/* Whether P's generator builds its platform in SimGrid itself
 * (platform_build) rather than gradsim loading platform_xml's file. */
bool platform_builds(const struct point *p);
/* After simgrid_init: P's platform built in SimGrid, in place of
 * simgrid_load_platform of its XML (platform_builds(P) only). */
void platform_build(const struct point *p);

/* After simgrid_load_platform or platform_build: the worker and aggregator hosts of P, in
 * SimGrid's host order for files, by name for generated platforms.
 * Returns 0 or -1 with *ERR set (not enough hosts). */
int platform_hosts(const struct point *p, sg_host_t **workers,
                   sg_host_t **aggregators, char **err);

#endif
