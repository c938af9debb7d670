/* models/server.h: the step of a parameter server whose aggregators pull
 * once for every worker (ps-shared): the workers' decoded pushes summed,
 * the server's momentum applied, the pull encoded once from the result.
 * The one statement of that step, for the simulator's exchange and
 * warm-up (sim/) and the codec-ratio measurements (repro/measure.c).
 *
 * Momentum is 3LC's MomentumOptimizer on the parameter server (seeds/004
 * Section 5.2): the pull is the model delta v = m v + sum, its learning
 * rate left out (3LC's quantizer is scale-free). */
#ifndef GRADSIM_MODELS_SERVER_H
#define GRADSIM_MODELS_SERVER_H

#include "codec.h"

#include <stddef.h>

/* VEL[0..N) = M VEL + SUM, in float, as the server's optimizer does. */
void server_momentum(float *vel, const float *sum, size_t n, double m);

/* The pull of one step: with VEL (momentum M > 0), VEL = M VEL + SUM and
 * the pull encodes VEL, otherwise it encodes SUM; encoded by ST into OUT
 * (CAP bytes). SUM is zeroed for the next step's pushes. Returns the
 * payload's length or a negative codec error (codec.h). */
ptrdiff_t server_pull(codec_state_t *st, float *sum, float *vel, size_t n,
                      double m, void *out, size_t cap);

#endif
