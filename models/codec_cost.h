/* models/codec_cost.h: how long codec work takes where it runs, for the
 * simulator (placement = cpu or gpu; the NIC engine has its own model).
 *
 * The table (models/codec_costs.conf; `gradsim codec calibrate --out FILE`
 * writes one with this machine's cpu lines) holds:
 *
 *   cpu    the measured nanoseconds per value of encoding and of decoding
 *          into an accumulator (plus, for the sparse codecs, nanoseconds
 *          per payload byte);
 *   gpu    a kernel model, per implementation of the kernels (the names
 *          [exchange] implementation takes: gradsim, pytorch, fused) and
 *          codec: the kernels each encode and decode launches and the
 *          bytes they move, and the shared figures that turn those into
 *          seconds on a device (codec_costs_bind);
 *   nic    the parameters of the NIC's generic streaming engine (nic.h).
 *
 * On the GPU, a call of N values and PAYLOAD bytes takes
 *
 *   kernels x launch_s + bytes / (e_mem x memory_Bps)
 *                      + flops / (e_flops x fp32_flops)
 *
 * with the device's launch overhead, memory bandwidth and fp32 peak
 * (model.h, struct device_info) and the table's fitted fractions e_mem
 * and e_flops. Bytes are a row's bytes per value times N plus its bytes
 * per payload byte times PAYLOAD; a row marked with a radix selection
 * (torch.topk) adds that selection's launches, passes over the values and
 * compute; a linear codec (PowerSGD, codec.h) costs per round, from the
 * shapes of its bucket's tensors: per matrix its products (2 rows cols r
 * flops each, reading or writing the matrix), its orthogonalization (per
 * column launches, or a QR), and per round and tensor the launches the
 * implementation makes. */
#ifndef GRADSIM_MODELS_CODEC_COST_H
#define GRADSIM_MODELS_CODEC_COST_H

#include "codec.h"
#include "model.h"
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

/* Time T's GPU rows on the device DEV (named DEV_NAME in messages) with the
 * kernels of implementation IMPL, for codec C (NULL: none). Returns 0, or
 * -EINVAL with a message: the table has GPU rows but none of IMPL (naming
 * those it has), or C's row needs a figure DEV lacks (its launch overhead,
 * its memory bandwidth, its fp32 peak for products or a selection's
 * compute). Until bound, GPU costs are 0 and codec_costs_has() looks at
 * the gradsim rows. */
int codec_costs_bind(struct codec_costs *t, const char *dev_name,
                     const struct device_info *dev, const char *impl,
                     const codec_t *c, char *err, size_t errlen);

/* Seconds for one encode (ENCODE) or decode-and-add of N values whose
 * payload is PAYLOAD bytes. Looks the codec up by canonical spec, then by
 * "name/select" (rgc), then by name, then its first listed setting; a
 * codec without an entry costs 0 and codec_costs_has() says so. A linear
 * codec here is one stream of one matrix (the most square one N factors
 * into, as codec.h says): on the GPU its two rounds for an encode, its
 * finish for a decode. */
double codec_cost_seconds(const struct codec_costs *t, const codec_t *c,
                          enum cost_place where, bool encode, uint64_t n,
                          size_t payload);
bool codec_costs_has(const struct codec_costs *t, const codec_t *c,
                     enum cost_place where);
/* The launches in codec_cost_seconds() on the GPU (kernels x the bound
 * device's launch overhead): what a call batched into an earlier call's
 * kernels does not pay again. */
double codec_cost_gpu_launch(const struct codec_costs *t, const codec_t *c,
                             bool encode, uint64_t n, size_t payload);

/* A linear codec's rounds (codec.h: 0 and 1, each before its allreduce;
 * CODEC_COST_FINISH, the decompression) over a bucket of the K tensors
 * SHAPES (rows x cols each; the matrices the rank-r factors shrink are
 * compressed, codec_lin_len() says which). GPU: the round's rows of the
 * bound implementation. CPU: the cpu line's encode of the bucket's values,
 * a third for round 0 (the first products) and two thirds for round 1
 * (orthogonalization, second products, residual), its decode for the
 * finish. */
enum { CODEC_COST_FINISH = 2 };
double codec_cost_linear_seconds(const struct codec_costs *t,
                                 const codec_t *c, enum cost_place where,
                                 int round, const struct codec_shape *shapes,
                                 size_t k);

/* The streaming-engine parameters of C on the NIC ("nic" lines, looked up
 * like the others); false when the table has none. */
bool codec_costs_nic(const struct codec_costs *t, const codec_t *c,
                     struct nic_stream *out);

#endif
