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
 *   ring-lossy     nccl-ring that leaves the last of its p blocks out of
 *                  the exchange: a lost block
 */
#include "codec_impl.h"
#include "collectives/common.h"

#include <stdlib.h>

extern const struct codec_ops codec_fp32_ops, codec_q8_ops, codec_3lc_ops;

static struct codec_ops drop_ops, q8_off_ops, tlc_off_ops;

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

const struct codec_ops *const codec_registry_extra[] = {
    &drop_ops, &q8_off_ops, &tlc_off_ops, NULL};
const struct collective *const coll_registry_extra[] = {&ring_lossy, NULL};

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
}
