/* models/memory.h: what data-parallel training keeps in a GPU's memory,
 * and what its optimizer's update streams through it.
 *
 * Model states (Rajbhandari et al., "ZeRO: Memory Optimizations Toward
 * Training Trillion Parameter Models", SC 2020, Sec. 3.1 and 5.1): with
 * 16-bit training (bf16, fp16, mixed, fp8) the weights and gradients are
 * 2 bytes a parameter each and the optimizer keeps K bytes in fp32 (the
 * master weights, 4, and its states: momentum 4, Adam's two moments 8;
 * K = 12 for Adam, the paper's); in fp32 the weights and gradients are 4
 * bytes and K the states alone. ZeRO's stage 1 shards the K bytes over
 * the data-parallel GPUs, stage 2 the gradients too, stage 3 (FSDP's
 * FULL_SHARD) the weights too.
 *
 * Activations (transformers only: a model file with tokens_per_sample and
 * attention lines): Korthikanti et al., "Reducing Activation
 * Recomputation in Large Transformer Models" (MLSys 2023), Sec. 4.1: a
 * block keeps s b h (34 + 5 a s / h) bytes of 16-bit activations for s
 * tokens, batch b, hidden size h and a heads; the 5 a s^2 b term is the
 * attention's scores, softmax and dropout mask, which FlashAttention does
 * not keep, so 34 s b h (twice in fp32). With activation checkpointing a
 * block keeps its input (2 s b h) and one block is recomputed at a time.
 * Other models: activations not modelled (their shapes are not in the
 * model files). */
#ifndef GRADSIM_MODELS_MEMORY_H
#define GRADSIM_MODELS_MEMORY_H

#include "model.h"

#include <stdbool.h>

enum optimizer {
  OPTIMIZER_SGD,
  OPTIMIZER_MOMENTUM,
  OPTIMIZER_ADAM,
  OPTIMIZER_ADAMW,
  OPTIMIZER_COUNT
};
extern const char *const optimizer_names[OPTIMIZER_COUNT];

/* NAME's optimizer, or -1. */
int optimizer_find(const char *name);

/* Bytes an update streams through memory per parameter (its reads and
 * writes), and its FLOPs per parameter: SGD reads weight and gradient
 * and writes the weight (12), momentum reads and writes its buffer too
 * (20), Adam and AdamW both moments (28); 16-bit training's update reads
 * a 2-byte gradient and writes a 2-byte weight beside the fp32 master,
 * the same count. */
double optimizer_update_bytes(enum optimizer o);
double optimizer_update_flops(enum optimizer o);

/* The update's time for PARAMS parameters on a device of MEMORY_BPS
 * bytes/s and FP32_FLOPS (0: not listed): the longer of its bytes and its
 * FLOPs. */
double optimizer_update_s(enum optimizer o, double params, double memory_Bps,
                          double fp32_flops);

/* Bytes a parameter's weight takes in PRECISION, as the precision table
 * gives them (model_precision_weight_bytes; fp32's 4 for a name it does
 * not know). */
double memory_weight_bytes(const char *precision);

struct memory_opts {
  enum optimizer optimizer;
  const char *precision; /* the training precision (model.h) */
  int stage;             /* ZeRO stage: 0 (replicated, DDP) to 3 */
  int shards;            /* GPUs the sharded states are split over */
  int batch;             /* per-GPU batch (sequences) */
  bool checkpoint;       /* activation checkpointing */
  /* ZeRO++'s hierarchical partitioning (hpz): a second copy of the
   * weights sharded over this many GPUs (a machine's; 0: none), counted
   * with the weights. */
  int secondary;
  /* Stage 3: the parameters of the largest unit (a run's largest
   * bucket; model_largest_unit counts the same), and how many units are
   * gathered at once (1; FSDP's prefetch of the next unit: 2). */
  double unit_params;
  int units_held;
  double residual_bytes; /* a codec's error feedback, bytes a parameter */
};

/* One GPU's memory, bytes. */
struct memory {
  /* BUFFERS: stage 3's gathered units, each unit's full weights and its
   * gradients before their reduce-scatter (16-bit, or fp32). */
  double params, grads, optimizer, activations, residual, buffers, total;
  bool activations_known; /* false: not modelled (not in total) */
};

void model_memory(const struct model *m, const struct memory_opts *o,
                  struct memory *out);

#endif
