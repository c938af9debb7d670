/* models/codec_bench.h: how fast the codecs run on this CPU (`gradsim
 * codec bench`), and the CPU cost table the simulator reads (`gradsim
 * codec calibrate`).
 *
 * A bench context owns the measurement's memory: R + 1 synthetic
 * gradients of N values (models/gradgen.h's default distribution, one
 * untimed warm-up vector and one per timed run), a decode target, a memcpy
 * target and, when asked for, a cache-flush buffer. Everything is
 * allocated and written once, at creation, so that no page fault falls
 * inside a timed region. Contexts are not shared between threads.
 *
 * Errors are negative errno values with a one-line message in ERR (ERRLEN
 * bytes, may be 0):
 *   -EINVAL     a bad argument or codec spec (the message says which)
 *   -EOVERFLOW  N is too many values for the codec
 *   -EDOM       the codec refused the data (NaN or infinity)
 *   -ENOMEM     an allocation failed
 *   -EBADMSG    a codec could not decode its own payload (a codec bug)
 * Nothing here prints or exits. */
#ifndef GRADSIM_MODELS_CODEC_BENCH_H
#define GRADSIM_MODELS_CODEC_BENCH_H

#include "codec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct codec_bench_config {
  size_t n;           /* values per vector, >= 1 */
  size_t runs;        /* timed runs, >= 1; the median is kept */
  uint64_t seed;      /* synthetic data seed */
  size_t flush_bytes; /* written before every timed operation (0: none) */
  /* Instead of the flush, read each timed operation's inputs and write its
   * output just before it, so that it runs from the caches when N is
   * small enough for them: the codec's compute rate, not memory's. */
  bool warm;
};

/* `gradsim codec bench`'s defaults: 2^24 values (64 MB), 5 runs, seed 1,
 * and a 256 MB flush, larger than any last-level cache of the machines
 * gradsim runs on, so that every timed operation starts from memory; not
 * warm. */
void codec_bench_defaults(struct codec_bench_config *cfg);

typedef struct codec_bench codec_bench_t;

/* Allocate and fill a context for CFG (a warm one allocates no flush
 * buffer). Returns 0, -EINVAL (n or runs 0, or 4n overflows) or
 * -ENOMEM. */
int codec_bench_create(const struct codec_bench_config *cfg,
                       codec_bench_t **out);
void codec_bench_free(codec_bench_t *b); /* NULL is fine */

/* One codec's throughput, GB/s of float32 (4n bytes divided by the
 * time). */
struct codec_bench_result {
  char spec[CODEC_SPEC_MAX]; /* canonical spec */
  char kernels[16];          /* codec_kernels(): "avx2" or "portable" */
  size_t n;
  double encode_gbps, decode_gbps;
  double memcpy_gbps;                      /* 4n bytes, same run */
  double encode_x_memcpy, decode_x_memcpy; /* the ratios of the medians */
  double bits_per_value;                   /* mean over the timed runs */
  /* The bound the encoder's memory traffic sets, for a codec of two or
   * more passes (codec_encode_passes; PASSES holds it): GB/s of float32
   * of codec_bench_traffic() with the codec's passes, residual and bound
   * (codec_bound) bytes of payload, timed like the encode in the same
   * runs; the encoder's fraction of it. Both 0 for the other codecs. */
  unsigned passes;
  double bound_gbps, encode_x_bound;
};

/* Measure SPEC: one stream state; per run, encode the run's vector, decode
 * the payload (codec_decode, overwrite), memcpy the same vector and, for a
 * codec of two or more passes, run its traffic bound on it
 * (codec_bench_traffic), each after the flush (or warm); the first run is
 * untimed. Medians of the timed runs. */
int codec_bench_measure(codec_bench_t *b, const char *spec,
                        struct codec_bench_result *out, char *err,
                        size_t errlen);

/* The memory traffic of an encoder of PASSES passes over N values
 * (codec.h, codec_encode_passes), with the least work that makes it:
 * PASSES - 1 passes that read X and, when B is not NULL, B (the residual);
 * then one that reads both again, writes B += X and, along the way, the
 * PAYLOAD_BYTES bytes of OUT. Returns a value computed from every byte
 * read, so that no pass can be left out. What `codec bench` times as a
 * codec's bound: no encoder with that traffic can beat it. */
uint32_t codec_bench_traffic(unsigned passes, const float *x, float *b,
                             size_t n, unsigned char *out,
                             size_t payload_bytes);

/* ---- calibration -------------------------------------------------- */

/* One `cpu` line of the cost table (models/codec_cost.h): nanoseconds
 * per value to encode and to decode-and-add, or, for the sparse codecs
 * (codec_is_sparse: topk, rgc), whose decode touches only what was sent, nanoseconds per
 * payload byte to decode-and-add (and decode_ns 0). */
struct codec_cost_line {
  char spec[CODEC_SPEC_MAX];
  double encode_ns;
  double decode_ns;
  double decode_ns_per_byte;
};

/* The costs from timings: ENCODE_S and DECODE_S hold RUNS times in
 * seconds of vectors of N values whose payloads averaged PAYLOAD_BYTES.
 * Costs are the medians divided by N (or by PAYLOAD_BYTES for a sparse
 * codec's decode), so a cost linear in n is recovered exactly and one
 * slow run out of three does not move it. Reorders the arrays. */
void codec_bench_fit(double *encode_s, double *decode_s, size_t runs, size_t n,
                     double payload_bytes, bool sparse,
                     struct codec_cost_line *out);

/* Measure SPEC's costs: per run, encode the run's vector, then decode the
 * payload added into an accumulator (codec_decode_add), with no flush
 * (the simulator charges codec work on data that was just produced); the
 * first run is untimed. */
int codec_bench_calibrate(codec_bench_t *b, const char *spec,
                          struct codec_cost_line *out, char *err,
                          size_t errlen);

/* The processor's name from /proc/cpuinfo and the online cores ("AMD
 * EPYC, 2 cores"), else the host name, into BUF (LEN bytes). */
void codec_bench_cpu_name(char *buf, size_t len);

/* Seconds on the monotonic clock, for timing a region. */
double codec_bench_now(void);
/* The median of the N values of V (sorts V; the mean of the middle two
 * when N is even). */
double codec_bench_median(double *v, size_t n);

/* The text of a cost table: a header naming CPU, DATE, N and RUNS, the
 * COUNT cpu lines, then the GPU and NIC lines of the table at SHIPPED
 * (from its "# GPU" line on; none when SHIPPED cannot be read). Returns a
 * g_malloc'ed string. */
char *codec_bench_cost_table(const struct codec_cost_line *lines, size_t count,
                             const char *cpu, const char *date, size_t n,
                             size_t runs, const char *shipped);

#endif
