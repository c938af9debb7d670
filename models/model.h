/* models/model.h: DNN workloads: the gradient tensors a model's backward
 * pass produces, and how long forward, backward and update take on a
 * device.
 *
 * A model is read from a data file (models/<name>.model, format in the
 * docs/models.md, "Model files") and timed with the device table (models/
 * devices.conf): a forward + backward iteration at batch b takes b / r
 * seconds where the table gives a measured throughput r for the model on
 * that device and precision, else 3 F b / (peak efficiency) with F the
 * model's forward FLOPs per sample (backward = 2 x forward) and the
 * device's efficiency the mean of its measured entries. Each layer gets
 * the share of its FLOPs. The update touches 20 bytes per parameter
 * (weight, gradient and momentum read, weight and momentum written) at the
 * device's memory bandwidth. */
#ifndef GRADSIM_MODELS_MODEL_H
#define GRADSIM_MODELS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct model_layer {
  char *name;
  double flops;     /* forward FLOPs per sample */
  double attn_d;    /* its attention's query width d: 4 s^2 d of FLOPS
                     * grow with the square of the tokens s (0: none) */
  double attn_window; /* a sliding window of W tokens: 4 s min(s, W) d
                       * (0: none) */
  double forward_s; /* per iteration, on the chosen device and batch */
  double backward_s;
};

/* Most dimensions a tensor's shape may have. */
#define MODEL_MAX_DIMS 8

struct model_tensor {
  char *name;
  uint64_t elements;
  size_t layer;      /* index into layers */
  double backward_s; /* backward time of the part of its layer producing it */
  size_t ndims;      /* 0: no shape known (a vector of ELEMENTS) */
  uint64_t dims[MODEL_MAX_DIMS]; /* their product is ELEMENTS */
  char dtype[12];    /* the parameter's dtype ("" when not given) */
};

/* The matrix a tensor is viewed as by codecs that work on matrices
 * (PowerSGD): its first dimension by the product of the others, as
 * PyTorch's PowerSGD hook reshapes it; a vector (or a tensor without a
 * shape) is ELEMENTS x 1. */
void model_tensor_matrix(const struct model_tensor *t, uint64_t *rows,
                         uint64_t *cols);

/* Parse a shape written "64x3x7x7" (1 to MODEL_MAX_DIMS dimensions, each a
 * whole number >= 1, their product at most MODEL_MAX_PARAMS) into DIMS;
 * returns the number of dimensions, or 0 when TEXT is not a shape. */
size_t model_parse_shape(const char *text, uint64_t dims[MODEL_MAX_DIMS]);
/* DIMS (N of them) written as model_parse_shape() reads them, into BUF of
 * LEN bytes (MODEL_SHAPE_TEXT_MAX hold any shape), which it returns. */
#define MODEL_SHAPE_TEXT_MAX (MODEL_MAX_DIMS * 21)
const char *model_format_shape(const uint64_t *dims, size_t n, char *buf,
                               size_t len);

struct model {
  char *name;
  char *path;    /* file it came from ("" for synthetic) */
  char *dataset;
  uint64_t params;   /* sum of the tensors' elements */
  size_t nlayers;    /* forward order */
  struct model_layer *layers;
  size_t ntensors;   /* backward order */
  struct model_tensor *tensors;
  size_t backward_from; /* first layer with backward work */
  int file_batch;       /* the batch the source paper used */
  /* A model of token sequences (transformers): tokens per sample in the
   * file (its layers' FLOPs are at that length) and as timed; 0 for the
   * others. */
  uint64_t file_tokens, tokens;
  char *family;         /* the importer's family (gpt2, bert, llama), or "" */
  /* Timing on the device chosen at load time. */
  int batch;
  char *device;
  char *precision;
  double forward_s, backward_s, update_s;
  /* The device's memory bandwidth and capacity (bytes; 0: not listed)
   * and fp32 peak (0: not listed; all 0 for a synthetic model). */
  double memory_Bps, capacity, fp32_flops;
  char *timing_source; /* how the times were obtained, one line */
};

/* NAME as a tensor dtype of a model file (fp32, bf16, fp8_e4m3, ...): the
 * table's own string, or NULL for a name that is none. */
const char *model_dtype_find(const char *name);

/* Whether NAME is a precision devices.conf may list a peak for (fp32,
 * mixed, ...), and all of their names, comma-separated, into BUF of LEN
 * bytes (64 hold them), which it returns. */
bool model_precision_known(const char *name);
/* Bytes a weight (and its gradient) takes when training at precision
 * NAME (fp32, tf32: 4; bf16, fp16, fp8, mixed: 2), 0 for a name that is
 * none. */
double model_precision_weight_bytes(const char *name);

/* The unit of sharded data parallel (FSDP's wrapping, [training]
 * shard_unit) layer NAME belongs to: a block, the layers whose names
 * agree up to their first all-digit part (model.layers.12.mlp.up_proj:
 * model.layers.12; transformer.h.3.attn: transformer.h.3; layer1.0.conv1:
 * layer1.0); a layer outside any block, or every layer with PER_LAYER, a
 * unit of its own. g_free the key. */
char *model_unit_key(const char *name, bool per_layer);
/* A unit as sharded data parallel gathers it: a run of tensors in
 * backward order, [first, first + count), of N values. */
struct model_unit {
  size_t first, count;
  uint64_t n;
};
/* M's units: its tensors in backward order, a run for each change of
 * unit key (model_unit_key; a unit whose tensors come back later is a
 * unit again); *COUNT of them, g_free'd by the caller. */
struct model_unit *model_units(const struct model *m, bool per_layer,
                               size_t *count);
/* The parameters of M's largest unit (model_units). */
uint64_t model_largest_unit(const struct model *m, bool per_layer);
const char *model_precision_names(char *buf, size_t len);

struct model_opts {
  const char *device;    /* NULL: the reference device, P100 */
  const char *precision; /* "fp32" (default), or another precision of
                          * devices.conf's peaks (models/model.c) */
  int batch;             /* 0: the model file's batch */
  const char *dir;       /* NULL: GRADSIM_MODELS_DIR or the built-in path */
  uint64_t tokens;       /* token models: tokens per sample, 0: the file's */
  double mfu;            /* token models: model FLOPs utilization, 0: the
                          * device's measured one (devices.conf) */
};

/* Limits of a model file: the tensors' elements summed, and one layer's
 * forward FLOPs per sample. */
#define MODEL_MAX_PARAMS UINT64_C(10000000000000) /* 1e13 */
#define MODEL_MAX_LAYER_FLOPS 1e18
/* Bytes the update touches per parameter: SGD with momentum reads weight,
 * gradient and momentum and writes weight and momentum. */
#define MODEL_UPDATE_BYTES 20.0

/* Load NAME (a model name, or a path to a .model file) and time it.
 * Returns 0, or -errno with a message naming the file and line, or the
 * unknown model, device or precision with the valid choices. */
int model_load(const char *name, const struct model_opts *opts,
               struct model **out, char *err, size_t errlen);

/* model_load() of a model file's LEN bytes at DATA (no NUL needed at the
 * end; one inside is an error), named PATH in messages and in m->path.
 * The device table is read from model_dir(OPTS) as by model_load(). */
int model_load_data(const char *path, const char *data, size_t len,
                    const struct model_opts *opts, struct model **out,
                    char *err, size_t errlen);

/* A synthetic model for formula validation: PARAMS parameters split into
 * TENSORS equal tensors (the remainder in the last), one layer per
 * tensor; COMPUTE_S seconds of forward + backward (one third forward)
 * split evenly, UPDATE_S of update. */
int model_synthetic(uint64_t params, size_t tensors, double compute_s,
                    double update_s, struct model **out, char *err,
                    size_t errlen);
/* Give every tensor of a synthetic model M the shape DIMS (NDIMS of them),
 * whose product must be each tensor's elements; -EINVAL otherwise. */
int model_synthetic_shape(struct model *m, const uint64_t *dims, size_t ndims,
                          char *err, size_t errlen);

void model_free(struct model *m);

/* What the codec cost model (codec_cost.h) and the collectives' tuning
 * read of a device of devices.conf. */
struct device_info {
  double memory_Bps; /* memory bandwidth */
  double fp32_flops; /* dense fp32 peak (0: not listed) */
  double launch_s;   /* kernel launch overhead (0: not listed) */
  int cc;            /* compute capability x 10 + minor: 70, 80, 90, 100 (0:
                      * not listed) */
  double nvlink_Bps; /* 0: none */
  double capacity;   /* memory bytes (0: not listed) */
};
/* Device NAME of devices.conf (in model_dir(OPTS)): 0, or -errno with a
 * message naming the unknown device and the valid ones. */
int model_device_info(const char *name, const struct model_opts *opts,
                      struct device_info *out, char *err, size_t errlen);

/* The names of the model files in the models directory, sorted, as one
 * comma-separated string (g_free'd by the caller), for messages. (The
 * synthetic model is not a file: experiments name it separately.) */
char *model_list(const struct model_opts *opts);

/* The directory model files and devices.conf are read from. */
const char *model_dir(const struct model_opts *opts);

#endif
