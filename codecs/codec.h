/* codecs/codec.h: gradient codecs, the public contract.
 *
 * Freestanding C11 (the C standard library and errno values, and GSL's
 * CBLAS for PowerSGD's matrix products: no SimGrid, no GLib), so that the
 * codecs can be fuzzed, benchmarked and reused outside the simulator.
 *
 * A codec is named by a spec string "name[:key=value,...]" and parsed once
 * into an immutable codec_t, which may be shared by any number of streams.
 * Everything that changes from one encode to the next (error-accumulation
 * and residual buffers, random generators, step counters, cached
 * thresholds) lives in a codec_state_t, one per stream: in the simulator,
 * one per (worker, tensor). Nothing lives in statics.
 *
 * Errors are negative errno values; codec_strerror() names them:
 *   -EINVAL     bad argument (NULL pointer, n that does not match the state)
 *   -ENOSPC     the output buffer is smaller than the payload
 *   -EDOM       input holds NaN or infinity and the codec needs finite values
 *   -EBADMSG    a payload that is truncated, too long or malformed
 *   -ENOMEM     allocation failed
 *   -EOVERFLOW  n is too large for the codec's index or size fields
 */
#ifndef GRADSIM_CODECS_CODEC_H
#define GRADSIM_CODECS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct codec codec_t;
typedef struct codec_state codec_state_t;

/* Longest spec accepted, and the size of an error message buffer that is
 * always large enough. */
enum { CODEC_SPEC_MAX = 256, CODEC_ERR_MAX = 256 };
/* Most value classes a codec may have (codec_class_count). */
enum { CODEC_CLASS_MAX = 8 };

/* ---- parsing -------------------------------------------------------- */

/* Parse SPEC into a new codec. Returns 0, or -EINVAL with a one-line
 * message in ERR (ERRLEN bytes, may be 0) that names the codec or
 * parameter, the bad value and what is allowed. */
int codec_create(const char *spec, codec_t **out, char *err, size_t errlen);
void codec_free(codec_t *c); /* NULL is fine */

const char *codec_name(const codec_t *c);
/* The canonical spec with every parameter spelled out, defaults included
 * ("3lc:s=1,zre=1"); parsing it again gives the same codec. */
const char *codec_spec(const codec_t *c);
/* ---- properties: what the layers above ask of a codec --------------
 * Everything the simulator, the models and the measurements need to know
 * about a codec is asked here, never decided by comparing its name. */

/* True when decode(encode(x)) == x bit for bit (fp32). */
bool codec_is_lossless(const codec_t *c);
/* True when encoding keeps a per-stream buffer (error feedback,
 * residuals): such a codec's output depends on earlier steps. */
bool codec_is_stateful(const codec_t *c);
/* True when every payload of N values is exactly codec_bound(C, N) bytes
 * whatever the values, so that it can be timed without values (the
 * simulator's payload = none); false when the size depends on the data
 * (inceptionn's classes, 3lc's zero runs, a threshold selection). */
bool codec_size_is_fixed(const codec_t *c);
/* True when a payload carries a subset of the values with their
 * positions (topk, rgc): decoding costs in proportion to the payload,
 * not to N. */
bool codec_is_sparse(const codec_t *c);
/* True when the sum of two encodings is an encoding of the sum, in the
 * codec's own value format, as NCCL sums fp16 and bf16 buffers: a payload
 * is N plain values of one floating-point type (fp32, fp16, bf16), so a
 * collective can add payloads value by value and never decode a partial
 * sum. False for every quantizer, sparsifier and sign codec (their
 * scales, indices, classes and signs do not add). The simulator's
 * [exchange] compression = per-bucket allreduces what sums and gathers
 * what does not (PyTorch DDP's communication hooks). */
bool codec_sums(const codec_t *c);
/* The bytes one encoded value takes when codec_sums(C) (4 for fp32, 2
 * for fp16 and bf16): the width a summing collective moves and adds;
 * 0 for a codec that does not sum. */
unsigned codec_value_bytes(const codec_t *c);
/* The encoder's passes over memory: how many times an encode of N values
 * must read its input, and its residual when it keeps one
 * (codec_is_stateful), whatever the implementation, when the N values do
 * not fit in the caches; the last pass also writes the payload and the
 * residual, the passes before it only read (a failed encode leaves the
 * state untouched).
 *   1  the codec streams: a value's code depends on it and on a few
 *      neighbours (fp16, trunc, inceptionn; qsgd's buckets of up to 32 KB
 *      are read again from the L1 cache).
 *   2  a statistic of the whole vector comes before the first code: q8's
 *      and terngrad's max|x|, and with error feedback 3lc's max|b + x| and
 *      onebit's means of b + x (read b and x, then read both again and
 *      write b).
 *   0  the codec states no figure: a selection or a factorisation whose
 *      passes depend on its algorithm (topk, rgc, powersgd).
 * `gradsim codec bench` measures the bound this traffic sets
 * (models/codec_bench.h). */
unsigned codec_encode_passes(const codec_t *c);
/* The family a cost table may list C under between its canonical spec
 * and its name ("rgc/trimmed": every rgc ratio with that selection), in
 * BUF (LEN bytes); false, with BUF empty, when C has none. */
bool codec_cost_family(const codec_t *c, char *buf, size_t len);

/* The error one encode may add, value by value: the oracle's ledger.
 * For the block IN of N values, encoded by a stream whose residual
 * (codec_state_residual) held RB before the encode and RA after (both
 * NULL for a codec without one: zeros), OUT[i] bounds
 *
 *     | decode(encode(IN))[i] - (IN[i] + RB[i] - RA[i]) |
 *
 * computed from the block's actual values: 0 for a lossless codec, the
 * rounding of its arithmetic for error feedback (what was not sent is
 * exactly RB + IN - RA), the quantizer's step for the others (q8: half of
 * max|IN| / 127), INFINITY where nothing bounds it (a value that is not
 * finite). A decode-and-add's own summation is the caller's to count. */
void codec_error_bounds(const codec_t *c, const float *in, const float *rb,
                        const float *ra, size_t n, double *out);

/* Value classes: a codec that keeps a different number of bits for each
 * value (INCEPTIONN's 0/8/16/32-bit classes, seeds/000 Table III) says
 * how many classes it has (0: none), the field bits each keeps, and the
 * class of every value of a payload; the NIC engine's cycle model and the
 * measurements' class shares use them. */
size_t codec_class_count(const codec_t *c); /* <= CODEC_CLASS_MAX */
unsigned codec_class_bits(const codec_t *c, size_t k);
/* Validate the LEN-byte payload of N values as codec_decode() does and
 * store each value's class in CLS[i] (may be NULL) and the number of
 * values of class k in COUNTS[k] (codec_class_count() entries; may be
 * NULL). Returns 0, -EBADMSG, or -EINVAL for a codec without classes. */
int codec_classes(const codec_t *c, const void *payload, size_t len,
                  size_t n, uint8_t *cls, uint64_t *counts);
/* The values a sparse payload carries (its count field), or N for a dense
 * codec; -EBADMSG for a malformed payload. */
ptrdiff_t codec_payload_values(const codec_t *c, const void *payload,
                               size_t len, size_t n);
/* The kernels C runs: "avx2" (x86 with AVX2, the default) or "portable"
 * (no AVX2, or GRADSIM_CODEC_PORTABLE set when C was created). Both give
 * the same bytes. */
const char *codec_kernels(const codec_t *c);

/* Worst-case payload bytes for N values; encoding into a buffer of at
 * least this size always succeeds for finite input. For N = 0 this is the
 * size of an empty vector's payload, which may be 0. */
size_t codec_bound(const codec_t *c, size_t n);
/* True when the codec takes vectors of N values (index and size fields
 * wide enough: rgc takes at most 2^32 - 1 values). */
bool codec_accepts(const codec_t *c, size_t n);

/* ---- streams -------------------------------------------------------- */

/* A stream of encodes of vectors of N values. SEED drives the codec's
 * random choices (terngrad); two states with the same codec, N and seed
 * produce identical payloads from identical inputs. Returns 0, -ENOMEM or
 * -EOVERFLOW (N beyond the codec's limit). */
int codec_state_create(const codec_t *c, size_t n, uint64_t seed,
                       codec_state_t **out);
void codec_state_free(codec_state_t *s); /* NULL is fine */
/* Back to the state just after creation (residuals zero, step 0). */
void codec_state_reset(codec_state_t *s);
const codec_t *codec_state_codec(const codec_state_t *s);
/* Number of successful encodes so far. */
uint64_t codec_state_step(const codec_state_t *s);
/* The error-accumulation / residual buffer (N floats), or NULL for a
 * stateless codec. Read-only view, valid until the next call on S. */
const float *codec_state_residual(const codec_state_t *s);

/* Encode IN (N values, N as given at creation) into OUT (CAP bytes).
 * Returns the exact payload size in bytes (the sizes of the table in
 * docs/codecs.md), or a negative errno. Encoding succeeds if and only if CAP is at
 * least the payload size; on any failure nothing beyond OUT[CAP) is
 * written and the state is left exactly as it was, so the call can be
 * repeated with a larger buffer. A CAP of codec_bound() or more takes the
 * fast path; a smaller CAP costs a copy of the state and payload. */
ptrdiff_t codec_encode(codec_state_t *s, const float *in, size_t n, void *out,
                       size_t cap);

/* Decode the LEN-byte payload IN into OUT (N values). Stateless: needs only
 * the codec. Validates the payload against N and returns 0 or -EBADMSG;
 * never reads outside IN[0, LEN) nor writes outside OUT[0, N). On error OUT
 * may hold partial results. */
int codec_decode(const codec_t *c, const void *in, size_t len, float *out,
                 size_t n);
/* The same, but adds the decoded values into ACC (ACC[i] += value), the
 * receiver's summation in a collective. On error ACC may be partly
 * updated. */
int codec_decode_add(const codec_t *c, const void *in, size_t len, float *acc,
                     size_t n);

/* Text for a codec error value (negative errno). */
const char *codec_strerror(int err);

/* ---- tensor shapes and linear compressors (PowerSGD) -------------------
 * A stream's N values may be a run of tensors, each viewed as a matrix
 * ROWS x COLS (a tensor's first dimension by the product of the others,
 * as PyTorch's PowerSGD hook views it; a vector is N x 1). Codecs that
 * work on matrices read the shapes; the others ignore them. Without
 * shapes a stream is one matrix, the most square one N factors into
 * (R x C with R the largest divisor of N not above its square root). */
struct codec_shape {
  uint64_t rows, cols;
};
/* Set S's tensors: K shapes whose rows x cols sum to the N of S. Resets
 * the stream (codec_state_reset). Returns 0, -EINVAL (the sizes do not
 * add up to N, a zero dimension) or -ENOMEM. */
int codec_state_set_shapes(codec_state_t *s, const struct codec_shape *shapes,
                           size_t k);

/* A linear compressor's compression of a sum is the sum of the workers'
 * compressions, so its exchange is allreduces of small factors with work
 * between them instead of one encoded message (PowerSGD, Vogels et al.
 * 2019, Algorithm 1: P = M Q, allreduce P, orthogonalize, Q = M^T P,
 * allreduce Q, decompress P Q^T). Such a codec still has codec_encode()
 * and codec_decode() for one stream alone (one worker: the factors of its
 * own matrix), which the benchmarks and measurements use; the simulator
 * runs its rounds:
 *
 *   codec_lin_round(s, 0, in, out)   the first factors of the gradient IN
 *   (the collective sums OUT over the workers into SUM)
 *   codec_lin_round(s, 1, sum, out)  the second factors, from that sum
 *   (the collective sums them)
 *   codec_lin_finish(s, sum, out)    the decompressed sum of the workers'
 *                                    gradients (N values)
 *
 * Every worker's stream runs the same rounds on the same shapes. Round 0's
 * message also carries the values of the tensors that travel uncompressed
 * (a matrix that rank-r factors would not shrink, biases), summed with it.
 * Error feedback: the residual (codec_state_residual) holds what a worker
 * has not yet sent, updated by round 1; when round 1's message is empty
 * (nothing is compressed), by round 0 already, so that nothing a worker
 * keeps depends on an allreduce it does not wait for. */
bool codec_is_linear(const codec_t *c);
/* Floats of round R's message (0 or 1) for a stream of the tensors SHAPES
 * (K of them), without a stream (the simulator times payload = none
 * with it). */
uint64_t codec_lin_len(const codec_t *c, const struct codec_shape *shapes,
                       size_t k, int round);
/* Round R: IN is the gradient (round 0, N values) or the sum of round 0's
 * messages (round 1); OUT gets codec_lin_len() floats. Returns 0, -EINVAL
 * (not a linear codec, R not 0 or 1, round 1 before round 0) or -EDOM
 * (the gradient holds NaN or infinity; the state is left as it was). */
int codec_lin_round(codec_state_t *s, int round, const float *in, float *out);
/* After round 1: OUT (N values) = the decompressed sum, from the sum SUM of
 * round 1's messages. Returns 0 or -EINVAL. */
int codec_lin_finish(codec_state_t *s, const float *sum, float *out);

/* The oracle's bound for a linear exchange. Workers' streams may hold
 * factors that differ by rounding (a collective that sums in a different
 * order on every worker), so the bound needs what every worker holds: each
 * adds its part into ACC (codec_lin_acc_len() doubles, set up by
 * codec_lin_acc_init) after its round 1; after its finish, OUT[i] bounds
 *
 *     | finish[i] - sum over workers w of (in_w[i] + rb_w[i] - ra_w[i]
 *                                          +- codec_error_bounds_w[i]) |
 *
 * for P workers: what the aggregation of the factors may add beyond each
 * worker's own encode (rb, ra: its residual before round 0, after round
 * 1). A worker adds its part after round 1, or after round 0 when round
 * 1's message is empty. */
size_t codec_lin_acc_len(const codec_state_t *s);
void codec_lin_acc_init(const codec_state_t *s, double *acc);
void codec_lin_acc_add(const codec_state_t *s, double *acc);
void codec_lin_bounds(const codec_state_t *s, const double *acc, size_t p,
                      double *out);

/* ---- registry ------------------------------------------------------- */

struct codec_info {
  const char *name;
  const char *params;      /* parameters, their ranges and defaults */
  const char *description; /* one line, with the paper it follows */
  /* The settings its papers use, as specs (NULL-terminated; NULL: the
   * name alone): what `gradsim codec bench` and `calibrate` measure. */
  const char *const *settings;
};

/* The registered codecs, in registry order: I in [0, codec_count()). */
size_t codec_count(void);
const struct codec_info *codec_info(size_t i);
/* Every codec's paper settings (struct codec_info.settings, or its name
 * alone), in registry order: I in [0, codec_setting_count()); NULL past
 * the end. What `gradsim codec bench` and `calibrate` measure. */
size_t codec_setting_count(void);
const char *codec_setting(size_t i);

#ifdef __cplusplus
}
#endif
#endif
