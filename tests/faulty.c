/* tests/faulty.c: a codec and a collective broken on purpose, for the
 * oracle's tests (test_sim.c): each joins its registry through the weak
 * extension lists (codecs/registry.c, sim/collectives/registry.c), so that
 * only this test program can name them.
 *
 *   fp32-drop      fp32 whose decoder adds (or writes) only every other
 *                  value: a dropped value
 *   q8-off         q8 whose decoder scales every value by 1.01: a
 *                  systematic error of 1%
 *   3lc-off        3lc whose decoder scales by 1.01: the same in an
 *                  error-feedback codec
 *   lin-sum        the simplest linear compressor, for the engine's
 *                  rounds (sim/linear.c): round 0 sends the values
 *                  themselves, round 1 nothing, the finish is round 0's sum
 *   lin-sum-off    lin-sum whose finish scales the sum by 1.01
 *   powersgd-off   powersgd whose finish scales the decompressed sum by
 *                  1.01: the same in a real linear compressor
 *   ring-lossy     nccl-ring that leaves the last of its p blocks out of
 *                  the exchange: a lost block
 *   shard-no-ag    inceptionn sharded ([training] sharding) without its
 *                  allgather
 *   shard-no-rs    inceptionn sharded without its reduce-scatter
 *   shard-wrong-ranges  inceptionn sharded, naming the next worker's
 *                  shard its own
 */
#include "codec_impl.h"
#include "collectives/common.h"

#include <stdlib.h>

extern const struct codec_ops codec_fp32_ops, codec_q8_ops, codec_3lc_ops,
    codec_powersgd_ops;

static struct codec_ops drop_ops, q8_off_ops, tlc_off_ops, psgd_off_ops;
static struct codec_lin_ops psgd_off_lin;

static int psgd_off_finish(codec_state_t *s, const float *sum, float *out) {
  int rc = codec_powersgd_ops.lin->finish(s, sum, out);
  for (size_t i = 0; rc == 0 && i < s->n; i++)
    out[i] *= 1.01f;
  return rc;
}

static int drop_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  float *tmp = malloc((n ? n : 1) * sizeof *tmp);
  int rc = codec_fp32_ops.decode(c, in, len, tmp, n, false);
  for (size_t i = 0; rc == 0 && i < n; i += 2)
    out[i] = add ? out[i] + tmp[i] : tmp[i];
  for (size_t i = 1; rc == 0 && !add && i < n; i += 2)
    out[i] = 0;
  free(tmp);
  return rc;
}

/* Decode through REAL, then scale by 1.01. */
static int off_decode(const struct codec_ops *real, const codec_t *c,
                      const unsigned char *in, size_t len, float *out,
                      size_t n, bool add) {
  float *tmp = malloc((n ? n : 1) * sizeof *tmp);
  int rc = real->decode(c, in, len, tmp, n, false);
  for (size_t i = 0; rc == 0 && i < n; i++)
    out[i] = add ? out[i] + tmp[i] * 1.01f : tmp[i] * 1.01f;
  free(tmp);
  return rc;
}

static int q8_off_decode(const codec_t *c, const unsigned char *in,
                         size_t len, float *out, size_t n, bool add) {
  return off_decode(&codec_q8_ops, c, in, len, out, n, add);
}

static int tlc_off_decode(const codec_t *c, const unsigned char *in,
                          size_t len, float *out, size_t n, bool add) {
  return off_decode(&codec_3lc_ops, c, in, len, out, n, add);
}

/* ---- lin-sum: round 0 = the values, round 1 = nothing, finish = the
 * sum of round 0; its stream keeps that sum (ext) and, for the oracle's
 * bound, the worker's own values. ------------------------------------ */

struct linsum {
  float *sum, *own;
  int stage;
};

static void ls_init(codec_t *c) { (void)c; }
static int ls_configure(codec_t *c, const char *key, const char *value,
                        char *err, size_t errlen) {
  (void)c;
  (void)value;
  return codec_unknown_key("lin-sum", key, "", err, errlen);
}
static void ls_describe(const codec_t *c, char *buf, size_t len) {
  (void)c;
  if (len)
    buf[0] = '\0';
}
static size_t ls_bound(const codec_t *c, size_t n) {
  (void)c;
  return 4 * n;
}
static ptrdiff_t ls_encode(codec_state_t *s, const float *in,
                           unsigned char *out) {
  memcpy(out, in, 4 * s->n);
  return (ptrdiff_t)(4 * s->n);
}
static int ls_decode(const codec_t *c, const unsigned char *in, size_t len,
                     float *out, size_t n, bool add) {
  (void)c;
  if (len != 4 * n)
    return -EBADMSG;
  for (size_t i = 0; i < n; i++)
    out[i] = (add ? out[i] : 0) + kern_loadf(in + 4 * i);
  return 0;
}
static void ls_state_free(codec_state_t *s) {
  struct linsum *g = s->ext;
  if (g) {
    free(g->sum);
    free(g->own);
    free(g);
  }
  s->ext = NULL;
}
static void ls_state_init(codec_state_t *s) {
  if (!s->ext) {
    struct linsum *g = calloc(1, sizeof *g);
    g->sum = calloc(s->n + 1, sizeof(float));
    g->own = calloc(s->n + 1, sizeof(float));
    s->ext = g;
  }
  ((struct linsum *)s->ext)->stage = 0;
}
static uint64_t ls_len(const codec_t *c, const struct codec_shape *sh,
                       size_t k, int round) {
  (void)c;
  uint64_t n = 0;
  for (size_t i = 0; i < k; i++)
    n += sh[i].rows * sh[i].cols;
  return round == 0 ? n : 0;
}
static int ls_round(codec_state_t *s, int round, const float *in,
                    float *out) {
  struct linsum *g = s->ext;
  if (round == 0) {
    memcpy(out, in, 4 * s->n);
    memcpy(g->own, in, 4 * s->n);
  } else {
    memcpy(g->sum, in, 4 * s->n);
  }
  g->stage = round + 1;
  return 0;
}
static int ls_finish(codec_state_t *s, const float *sum, float *out) {
  (void)sum;
  struct linsum *g = s->ext;
  if (g->stage != 2)
    return -EINVAL;
  memcpy(out, g->sum, 4 * s->n);
  g->stage = 0;
  return 0;
}
static size_t ls_acc_len(const codec_state_t *s) { return s->n; }
static void ls_acc_init(const codec_state_t *s, double *acc) {
  memset(acc, 0, s->n * sizeof *acc);
}
static void ls_acc_add(const codec_state_t *s, double *acc) {
  const struct linsum *g = s->ext;
  for (size_t i = 0; i < s->n; i++)
    acc[i] += fabs((double)g->own[i]);
}
/* The sum of p floats in any order: within gamma_(p-1) of the sum of their
 * magnitudes (Higham, Lemma 3.1); p u for safety. */
static void ls_bounds(const codec_state_t *s, const double *acc, size_t p,
                      double *out) {
  for (size_t i = 0; i < s->n; i++)
    out[i] = (double)p * 0x1p-23 * acc[i];
}

static const struct codec_lin_ops ls_lin = {ls_len,     ls_round,
                                            ls_finish,  ls_acc_len,
                                            ls_acc_init, ls_acc_add,
                                            ls_bounds};
static const struct codec_ops linsum_ops = {
    .info = {.name = "lin-sum",
             .params = "",
             .description = "a linear compressor that sends its values "
                            "(a test's)"},
    .init = ls_init,
    .configure = ls_configure,
    .describe = ls_describe,
    .bound = ls_bound,
    .lossless = true,
    .lin = &ls_lin,
    .state_free = ls_state_free,
    .encode = ls_encode,
    .decode = ls_decode,
    .state_init = ls_state_init,
};

static struct codec_ops linsum_off_ops;
static struct codec_lin_ops linsum_off_lin;

static int ls_off_finish(codec_state_t *s, const float *sum, float *out) {
  int rc = ls_finish(s, sum, out);
  for (size_t i = 0; rc == 0 && i < s->n; i++)
    out[i] *= 1.01f;
  return rc;
}

static void lossy_worker(struct coll_call *c) {
  int p = c->sim->nworkers;
  uint64_t n = c->v->n, kept = n - n / (uint64_t)p;
  ring_reduce_scatter(c, c->sim->ranks, p, c->rank, 0, kept);
  ring_allgather(c, c->sim->ranks, p, c->rank, 0, kept, RING_ENCODE_ONCE);
}

static const struct collective ring_lossy = {
    .name = "ring-lossy",
    .description = "nccl-ring without its last block (a test's fault)",
    .worker = lossy_worker,
};

/* The sharded faults are inceptionn (the balanced ring, whose halves
 * shard) with one piece replaced, set up before main(). */
extern const struct collective coll_inceptionn;
static struct collective shard_no_ag, shard_no_rs, shard_wrong_ranges;

static void shard_nothing(struct coll_call *c) { (void)c; }

/* inceptionn's shard, one worker off: the oracle checks a block not
 * summed there. */
static int shard_ranges_off(int me, int p, uint64_t n, uint64_t lo[2],
                            uint64_t hi[2]) {
  return coll_inceptionn.shard_ranges((me + 1) % p, p, n, lo, hi);
}

const struct codec_ops *const codec_registry_extra[] = {
    &drop_ops,   &q8_off_ops,      &tlc_off_ops,
    &linsum_ops, &linsum_off_ops, &psgd_off_ops, NULL};
const struct collective *const coll_registry_extra[] = {
    &ring_lossy, &shard_no_ag, &shard_no_rs, &shard_wrong_ranges, NULL};

/* The broken codecs are the real ones with their decoder replaced, set
 * up before main() (their tables are not constant expressions here). */
__attribute__((constructor)) static void faulty_init(void) {
  drop_ops = codec_fp32_ops;
  drop_ops.info.name = "fp32-drop";
  drop_ops.decode = drop_decode;
  q8_off_ops = codec_q8_ops;
  q8_off_ops.info.name = "q8-off";
  q8_off_ops.decode = q8_off_decode;
  tlc_off_ops = codec_3lc_ops;
  tlc_off_ops.info.name = "3lc-off";
  tlc_off_ops.decode = tlc_off_decode;
  linsum_off_lin = ls_lin;
  linsum_off_lin.finish = ls_off_finish;
  linsum_off_ops = linsum_ops;
  linsum_off_ops.info.name = "lin-sum-off";
  linsum_off_ops.lin = &linsum_off_lin;
  psgd_off_lin = *codec_powersgd_ops.lin;
  psgd_off_lin.finish = psgd_off_finish;
  psgd_off_ops = codec_powersgd_ops;
  psgd_off_ops.info.name = "powersgd-off";
  psgd_off_ops.lin = &psgd_off_lin;
  shard_no_ag = coll_inceptionn;
  shard_no_ag.name = "shard-no-ag";
  shard_no_ag.shard_allgather = shard_nothing;
  shard_no_rs = coll_inceptionn;
  shard_no_rs.name = "shard-no-rs";
  shard_no_rs.reduce_scatter = shard_nothing;
  shard_wrong_ranges = coll_inceptionn;
  shard_wrong_ranges.name = "shard-wrong-ranges";
  shard_wrong_ranges.shard_ranges = shard_ranges_off;
}
