/* models/gradgen.h: synthetic gradients, deterministic per
 * (seed, worker, tensor, iteration) and generated one tensor (or one
 * chunk) at a time, so that no worker's whole gradient need be held.
 *
 * A value is
 *   scale_t * tensor_scale * (sqrt(persist) T
 *                             + sqrt(1 - persist) (sqrt(corr) S
 *                                                  + sqrt(1 - corr) P))
 * where S is drawn from a stream shared by all workers (seed, tensor,
 * iteration), P from the worker's private stream, and T from a stream of
 * (seed, tensor) alone, the same at every iteration and on every worker
 * (a persistent direction of descent), all from the chosen distribution.
 * The correlation between one worker's values at two iterations is
 * PERSIST; between two workers' values at one iteration it is
 * persist + (1 - persist) corr.
 * scale_t = scale * decay^iteration narrows the distribution over
 * training. With the spike-and-slab distribution a fraction ZEROS of each
 * worker's values are exact zeros (a private mask). */
#ifndef GRADSIM_MODELS_GRADGEN_H
#define GRADSIM_MODELS_GRADGEN_H

#include <stddef.h>
#include <stdint.h>

enum gradgen_dist {
  GRADGEN_NORMAL,  /* Gaussian, standard deviation = scale */
  GRADGEN_LAPLACE, /* Laplace (double exponential), b = scale */
  GRADGEN_STUDENT, /* Student's t with nu degrees of freedom, times scale */
  GRADGEN_SPIKE,   /* exact zero with probability zeros, else Laplace */
};

struct gradgen_params {
  enum gradgen_dist dist;
  double scale;   /* > 0 */
  double nu;      /* Student-t degrees of freedom, > 0 */
  double zeros;   /* spike-and-slab: probability of an exact zero, [0, 1) */
  double corr;    /* correlation between workers, [0, 1] */
  double persist; /* correlation between iterations, [0, 1) */
  double decay;   /* per-iteration scale factor, (0, 1] */
  uint64_t seed;
};

/* Default parameters (see docs/models.md). */
void gradgen_defaults(struct gradgen_params *p);

/* Names of the distributions, for parsing and printing. */
const char *gradgen_dist_name(enum gradgen_dist d);
/* Returns 0 and sets *D, or -EINVAL for an unknown name. */
int gradgen_dist_parse(const char *name, enum gradgen_dist *d);

/* Check the ranges above; returns 0 or -EINVAL with a message naming the
 * parameter and its valid range. */
int gradgen_validate(const struct gradgen_params *p, char *err, size_t errlen);

/* Values [OFFSET, OFFSET + N) of the gradient of TENSOR on WORKER at
 * ITERATION, into OUT. Chunks of any size give the same values as one
 * call (the streams are advanced to OFFSET in blocks). TENSOR_SCALE
 * multiplies the distribution's scale (per-tensor magnitude). Returns 0 or
 * -ENOMEM. */
int gradgen_fill(const struct gradgen_params *p, uint32_t worker,
                 uint32_t tensor, uint64_t iteration, double tensor_scale,
                 uint64_t offset, float *out, size_t n);

/* The persistent component T is a function of (seed, distribution, nu,
 * tensor, offset) alone, so a caller that generates the same tensor for
 * every worker and iteration (the simulator's payloads and warm-up, a
 * codec-ratio measurement) can draw it once: a cache keeps the unit draws
 * of each (tensor, offset, n) it has been asked for, up to MAX_VALUES
 * values in all (8 bytes each; past that it draws as gradgen_fill does).
 * gradgen_fill_cached gives bit for bit what gradgen_fill gives, with or
 * without a cache (C may be NULL); it only saves the draws. A cache
 * serves one generator at a time: parameters with another seed,
 * distribution or nu empty it first. Not thread-safe. */
struct gradgen_cache;
struct gradgen_cache *gradgen_cache_new(size_t max_values);
void gradgen_cache_free(struct gradgen_cache *c);
int gradgen_fill_cached(const struct gradgen_params *p, struct gradgen_cache *c,
                        uint32_t worker, uint32_t tensor, uint64_t iteration,
                        double tensor_scale, uint64_t offset, float *out,
                        size_t n);

#endif
