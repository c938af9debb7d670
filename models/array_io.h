/* models/array_io.h: gradient vectors on disk: NumPy .npy (float32, C
 * order) and raw little-endian float32 (.f32).
 *
 * Errors: functions return 0 or a negative errno and write a one-line
 * message (file, what was wrong, what was expected) into ERR. */
#ifndef GRADSIM_MODELS_ARRAY_IO_H
#define GRADSIM_MODELS_ARRAY_IO_H

#include <stddef.h>
#include <stdint.h>

/* Parse the header of an in-memory .npy file of LEN bytes: on success
 * *DATA_OFF is where the float32 data starts and *N the element count (the
 * product of the shape), and LEN == *DATA_OFF + 4 * *N. Accepts format
 * versions 1.0, 2.0 and 3.0, descr '<f4' (or '|f4', '=f4' on this
 * little-endian host), fortran_order False (True only when at most one
 * dimension exceeds 1) and any shape. Never reads outside BUF. */
int npy_parse(const void *buf, size_t len, size_t *data_off, size_t *n,
              char *err, size_t errlen);

/* Read PATH as .npy when it starts with the NumPy magic, else as raw .f32
 * when its name ends in ".f32"; anything else is an error. The vector must
 * hold at least one value. *OUT is malloc'ed; free() it. */
int array_read(const char *path, float **out, size_t *n, char *err,
               size_t errlen);

/* The version 1.0 header of a .npy file holding N float32 values as a 1-D
 * array, into BUF (at least NPY_HEADER_MAX bytes); returns its length (a
 * multiple of 64). */
enum { NPY_HEADER_MAX = 128 };
size_t npy_header(uint64_t n, unsigned char *buf);

/* The bytes of a .npy file holding the N values of X as a 1-D float32
 * array (version 1.0 header). *OUT is malloc'ed, *LEN its size. */
int npy_encode(const float *x, size_t n, unsigned char **out, size_t *len);

#endif
