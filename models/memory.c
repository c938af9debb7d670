/* models/memory.c: a GPU's memory in data-parallel training, and the
 * optimizer's update (memory.h). */
#include "memory.h"

#include <math.h>
#include <string.h>

const char *const optimizer_names[OPTIMIZER_COUNT] = {"sgd", "momentum",
                                                      "adam", "adamw"};

int optimizer_find(const char *name) {
  for (int i = 0; i < OPTIMIZER_COUNT; i++)
    if (strcmp(name, optimizer_names[i]) == 0)
      return i;
  return -1;
}

/* fp32 states a parameter: momentum's buffer, Adam's two moments. */
static const int STATES[OPTIMIZER_COUNT] = {0, 1, 2, 2};

double optimizer_update_bytes(enum optimizer o) {
  /* Weight and gradient read, weight written; each state read and
   * written. */
  return 12.0 + 8.0 * STATES[o];
}

double optimizer_update_flops(enum optimizer o) {
  /* PyTorch's update as written: SGD w -= lr g (2); momentum b = mu b + g
   * then w -= lr b (4); Adam's two moments (3 and 4), their bias
   * corrections, the square root, the division and the step (about 12),
   * AdamW's decoupled weight decay two more. */
  static const double F[OPTIMIZER_COUNT] = {2, 4, 12, 14};
  return F[o];
}

double optimizer_update_s(enum optimizer o, double params, double memory_Bps,
                          double fp32_flops) {
  double t = optimizer_update_bytes(o) * params / memory_Bps;
  if (fp32_flops > 0)
    t = fmax(t, optimizer_update_flops(o) * params / fp32_flops);
  return t;
}

double memory_weight_bytes(const char *precision) {
  double b = model_precision_weight_bytes(precision);
  return b > 0 ? b : 4;
}

/* A transformer's hidden size and blocks: its attention layers' width and
 * count (0 blocks: not a transformer of the model file's kind). */
static void blocks_of(const struct model *m, double *h, int *blocks) {
  *h = 0;
  *blocks = 0;
  for (size_t l = 0; l < m->nlayers; l++)
    if (m->layers[l].attn_d > 0) {
      *h = m->layers[l].attn_d;
      ++*blocks;
    }
}

void model_memory(const struct model *m, const struct memory_opts *o,
                  struct memory *out) {
  double psi = (double)m->params, wb = memory_weight_bytes(o->precision);
  double n = o->shards > 1 ? o->shards : 1;
  /* ZeRO's K: the fp32 master weights of 16-bit training and the
   * optimizer's fp32 states. */
  double k = (wb < 4 ? 4 : 0) + 4.0 * STATES[o->optimizer];
  *out = (struct memory){0};
  out->params = wb * psi / (o->stage >= 3 ? n : 1) +
                (o->secondary > 0 ? wb * psi / o->secondary : 0);
  out->grads = wb * psi / (o->stage >= 2 ? n : 1);
  out->optimizer = k * psi / (o->stage >= 1 ? n : 1);
  out->residual = o->residual_bytes * psi;
  if (o->stage >= 3)
    out->buffers =
        2 * wb * o->unit_params * (o->units_held > 0 ? o->units_held : 1);
  double h;
  int blocks;
  blocks_of(m, &h, &blocks);
  if (blocks > 0 && m->tokens > 0) {
    double sbh = (double)m->tokens * o->batch * h * (wb / 2);
    out->activations =
        o->checkpoint ? 2 * sbh * blocks + 34 * sbh : 34 * sbh * blocks;
    out->activations_known = true;
  }
  out->total = out->params + out->grads + out->optimizer + out->residual +
               out->buffers + out->activations;
}
