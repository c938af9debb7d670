/* models/codec_cost.h: how long codec work takes where it runs, for the
 * simulator (placement = cpu or gpu; the NIC engine has its own model).
 *
 * The table (models/codec_costs.conf, regenerated on any machine by
 * `gradsim codec calibrate --out FILE`) gives for the CPU the measured
 * nanoseconds per value of encoding and of decoding into an accumulator
 * (plus, for the sparse codecs, nanoseconds per payload byte), and for the
 * GPU a throughput model: passes of 4 bytes per value over the GPU's
 * memory at its bandwidth, plus a kernel launch per call; for the NIC,
 * the parameters of the generic streaming engine (nic.h) per codec. */
#ifndef GRADSIM_MODELS_CODEC_COST_H
#define GRADSIM_MODELS_CODEC_COST_H

#include "codec.h"
#include "nic.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cost_place { COST_CPU, COST_GPU };

struct codec_costs;

/* Load PATH (NULL: codec_costs.conf in the models directory). Returns 0 or
 * -errno with a message naming the file and line. */
int codec_costs_load(const char *path, struct codec_costs **out, char *err,
                     size_t errlen);
void codec_costs_free(struct codec_costs *t);

/* Seconds for one encode (ENCODE) or decode-and-add of N values whose
 * payload is PAYLOAD bytes. Looks the codec up by canonical spec, then by
 * "name/select" (rgc), then by name; a codec without an entry costs 0 and
 * codec_costs_has() says so. */
double codec_cost_seconds(const struct codec_costs *t, const codec_t *c,
                          enum cost_place where, bool encode, uint64_t n,
                          size_t payload);
bool codec_costs_has(const struct codec_costs *t, const codec_t *c,
                     enum cost_place where);
/* The GPU model's kernel launch, in the seconds of every GPU call. */
double codec_cost_gpu_launch(const struct codec_costs *t);
/* The streaming-engine parameters of C on the NIC ("nic" lines, looked up
 * like the others); false when the table has none. */
bool codec_costs_nic(const struct codec_costs *t, const codec_t *c,
                     struct nic_stream *out);

#endif
