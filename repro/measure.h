/* repro/measure.h: reproductions that measure the codec library on
 * this machine instead of simulating (kinds codec-ratio and select-time
 * of repro.h), each into a table that becomes runs.csv.
 *
 * codec-ratio: for each point of the experiment (one per [model] name),
 * each codec of `codecs` (SPEC; SPEC; ..., with `labels`) encodes
 * `warmup` steps (default none) and then `steps` steps of every gradient
 * tensor of the model (up to `sample` values per tensor, the bytes scaled
 * to the tensor's size; one codec stream per tensor, so error feedback
 * carries over); only the `steps` steps are counted. With `end_to_end =
 * yes` (3LC Table 2's "end-to-end compression ratio"; [exchange]
 * algorithm must be ps-shared) each of the [platform] nodes workers
 * pushes its own gradient through its own streams and the server's sum
 * of the decoded pushes is encoded once more, the pull every worker
 * receives: the ratio counts the pushes and the pulls; `pull_momentum`
 * m makes the pull the model delta v = m v + sum. JOBS threads (at most
 * one a processor) share the tensors; the result does not depend on
 * JOBS. Columns: model,
 * label, codec, params, sample, warmup, steps, bits_per_value, ratio
 * (32 / bits), for inceptionn the shares of values in the 2, 10, 18 and
 * 34-bit classes (INCEPTIONN Table III), workers (1 without end_to_end),
 * push_ratio and pull_ratio (the pushes' and one pull's ratio; empty
 * without end_to_end).
 *
 * select-time: each codec (RedSync's selectors) encodes vectors of each
 * of `sizes` values drawn from the standard uniform distribution (RedSync
 * Fig. 3): `runs` timed runs of `steps` consecutive encodes from a fresh
 * residual, the median time per encode; beside it the `allreduce` formula
 * (default rabenseifner, RedSync Eq. 2) for the same bytes on the
 * experiment's platform (nodes, bandwidth, latency, reduce_rate).
 * Columns: values, bytes, label, codec, select_s, allreduce_s,
 * select_x_allreduce, sent_values. */
#ifndef GRADSIM_REPRO_MEASURE_H
#define GRADSIM_REPRO_MEASURE_H

#include "experiment.h"
#include "repro.h"

/* Split "a; b; c" (codec specs hold commas) into trimmed items. */
GPtrArray *repro_split_specs(const char *text);

/* Check R's kind parameters and E's models; -1 with *ERR. */
int repro_measure_check(const struct repro *r, const struct experiment *e,
                        char **err);

/* NULL with *ERR on failure (a codec error: an internal error). */
struct table *repro_codec_ratio(const struct repro *r,
                                const struct experiment *e, int jobs,
                                char **err);
struct table *repro_select_time(const struct repro *r,
                                const struct experiment *e, char **err);

#endif
