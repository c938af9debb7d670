/* models/codec_eval.h: what a codec does to gradients: payload size and
 * error, step by step through one stream state (`gradsim codec
 * roundtrip`), and over steps of synthetic gradients (`gradsim codec
 * compare`).
 *
 * These functions only compute: the caller owns the codec, the stream
 * state and every buffer (sizes below), and nothing is allocated here.
 *
 * Errors: 0, or a negative errno with *FAILED naming the stage:
 *   CODEC_EVAL_GENERATE  the synthetic gradient (gradgen_fill: -ENOMEM);
 *   CODEC_EVAL_ENCODE    codec_encode()'s error: -EDOM when the input holds
 *                        NaN or infinity and the codec needs finite values
 *                        (the data's fault), anything else a bug;
 *   CODEC_EVAL_DECODE    codec_decode() refused the payload just encoded
 *                        (a bug in the codec).
 * The stream state is left as codec_encode() leaves it. */
#ifndef GRADSIM_MODELS_CODEC_EVAL_H
#define GRADSIM_MODELS_CODEC_EVAL_H

#include "codec.h"
#include "gradgen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum codec_eval_stage {
  CODEC_EVAL_GENERATE,
  CODEC_EVAL_ENCODE,
  CODEC_EVAL_DECODE,
};

/* Largest and root-mean-square |X[i] - Y[i]| over N values (both 0 for
 * N = 0). A NaN difference makes the largest NaN: an error that cannot be
 * measured is not hidden. */
void codec_eval_error(const float *x, const float *y, size_t n,
                      double *max_abs, double *rmse);

/* One training step of one gradient. */
struct codec_step_stats {
  size_t bytes;             /* payload bytes (no container) */
  double bits_per_value;    /* 8 bytes / n */
  double ratio;             /* 4 n / bytes; NAN for an empty payload */
  double max_abs_err, rmse; /* of decoded - input (codec_eval_error) */
  size_t nclasses;          /* codec_class_count(): 0, or (inceptionn) */
  uint64_t classes[CODEC_CLASS_MAX]; /* values per class, of
                               codec_class_bits() each (INCEPTIONN's
                               0/8/16/32 bits kept, Table III) */
};

/* Encode X (N values, the N S was created for) through S, so that the
 * codec's residuals carry to the next step, into PAYLOAD (CAP bytes, at
 * least codec_bound(codec, N)); decode the payload into Y (N values) and
 * measure. */
int codec_eval_step(codec_state_t *s, const float *x, size_t n, void *payload,
                    size_t cap, float *y, struct codec_step_stats *out,
                    enum codec_eval_stage *failed);

/* Buffers of codec_eval_compare() for gradients of N values: X and Y
 * 4 N bytes each, SUM_X and SUM_Y 8 N bytes each. Their contents on entry
 * do not matter. */
struct codec_eval_scratch {
  float *x, *y;
  double *sum_x, *sum_y;
};

/* A codec over the steps of a synthetic gradient. */
struct codec_compare_row {
  double bits_per_value; /* mean payload bits per value over the steps */
  double ratio;          /* 32 / bits_per_value */
  double rmse;           /* mean over the steps of each step's RMSE */
  double max_abs_err;    /* largest over all steps */
  double sum_rel_err;    /* ||sum of decoded - sum of inputs|| / ||sum of
                            inputs|| over the steps (0 when the inputs sum
                            to zero): what error feedback keeps small */
  double sum_cosine;     /* the cosine similarity of those two sums (1 when
                            both are zero, 0 when one is) */
};

/* STEPS steps t = 0, 1, ... of the synthetic gradient GP (worker 0,
 * tensor 0, iteration t, N values, scale 1), each encoded through S into
 * PAYLOAD (CAP bytes, at least codec_bound(codec, N)), decoded and
 * measured. STEPS >= 1. */
int codec_eval_compare(codec_state_t *s, const struct gradgen_params *gp,
                       size_t n, size_t steps, void *payload, size_t cap,
                       const struct codec_eval_scratch *w,
                       struct codec_compare_row *out,
                       enum codec_eval_stage *failed);

#endif
