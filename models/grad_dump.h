/* models/grad_dump.h: the synthetic gradient of one worker at one
 * iteration, for a model's tensors, written to a file (`gradsim
 * gradients`): the tensors concatenated in backward order, as raw float32
 * (.f32) or a 1-D NumPy array (.npy).
 *
 * Errors: functions return 0 or a negative errno; grad_dump_write() also
 * writes a one-line message (the file or directory and the system's
 * reason) into ERR. */
#ifndef GRADSIM_MODELS_GRAD_DUMP_H
#define GRADSIM_MODELS_GRAD_DUMP_H

#include "gradgen.h"
#include "model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tensors [first, last) of a model, in backward order, and the number of
 * values they hold. */
struct grad_dump_range {
  size_t first, last;
  uint64_t values;
};

/* The tensor of M named TENSOR, or every tensor when TENSOR is NULL.
 * Returns 0, or -ENOENT when M has no tensor of that name. */
int grad_dump_range(const struct model *m, const char *tensor,
                    struct grad_dump_range *out);

/* The values of tensors R of M that WORKER produces at ITERATION under GP
 * (gradgen_fill(), tensor index = the tensor's place in backward order,
 * tensor scale 1), written to PATH: a .npy file when NPY, else raw
 * little-endian float32.
 *
 * Streamed, one chunk of values in memory at a time, into a temporary
 * file beside PATH that is renamed to PATH at the end; the file gets the
 * permissions any new file gets (0666 less the umask). On an error
 * nothing is left behind and an existing PATH is untouched. Returns 0 or
 * -errno: the directory refused the temporary file, or a write, the
 * generator (-ENOMEM) or the rename failed. */
int grad_dump_write(const char *path, bool npy, const struct model *m,
                    const struct grad_dump_range *r,
                    const struct gradgen_params *gp, uint32_t worker,
                    uint64_t iteration, char *err, size_t errlen);

#endif
