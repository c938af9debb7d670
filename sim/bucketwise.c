/* sim/bucketwise.c: a codec applied once per bucket, around the
 * collective rather than inside it ([exchange] compression = per-bucket),
 * as PyTorch DDP's communication hooks apply one
 * (torch/distributed/algorithms/ddp_comm_hooks/):
 *
 *   a codec whose payloads sum (codec_sums: fp32, fp16, bf16)
 *       default_hooks.py's fp16_compress_hook and bf16_compress_hook: the
 *       bucket is cast once, allreduced in its own format (NCCL sums half
 *       and bfloat16 buffers in its kernels), and cast back once;
 *   any other codec
 *       quantization_hooks.py's quantize_and_allgather and
 *       dequantize_and_aggregate (and the top-k and sign hooks written
 *       after them): each worker compresses its bucket once, the payloads
 *       are allgathered, and each worker decompresses all p of them and
 *       sums them.
 *
 * Either way a worker encodes its own bucket once, with its own
 * error-feedback stream (its per-bucket codec state, as sim_pack uses it),
 * so error feedback needs no collective that avoids re-encoding: nothing
 * is re-encoded. Linear codecs (PowerSGD) are not here: their rounds
 * (linear.c) already are PyTorch's powerSGD_hook, in either mode.
 * [exchange] staging is not applied, as for a linear codec's rounds. */
#include "sim.h"

#include <xbt/asserts.h>

#include <string.h>

/* The bucket cast once into the codec's value format and allreduced in
 * it: the encode on the worker, the values as the encoding holds them
 * put back into the vector (the oracle's ledger takes the encode's
 * rounding there), the collective's allreduce of plain values at the
 * format's width, then the decode of the sum, timed only: the simulation
 * sums floats, the format's width is what the wire and the timing see
 * (as [model] grad_dtype's values). */
static void exchange_summed(struct coll_call *c, codec_state_t *st) {
  struct sim *s = c->sim;
  struct vec *v = c->v;
  struct msg *m = sim_pack(c, v, 0, v->n, st);
  if (m->m) {
    int rc = codec_decode(s->codec, m->data, m->len, v->x, m->m);
    xbt_assert(rc == 0, "codec %s cannot decode its own payload: %s",
               codec_spec(s->codec), codec_strerror(rc));
    if (v->exact)
      payload_ledger_unpack(c, v, 0, m, false, NULL);
  }
  size_t payload = (size_t)m->bytes;
  msg_free(m);
  c->raw = true;
  c->value_bytes = (int)codec_value_bytes(s->codec);
  s->coll->worker(c);
  c->raw = false;
  c->value_bytes = 0;
  sim_codec_time(c, false, v->n, payload, 1);
}

/* Every worker's encoded bucket to every worker, each decoded and added
 * into the zeroed vector in rank order (so that every worker sums alike):
 * p decodes, each timed. The oracle's ledger adds each message's shadow,
 * what its sender's error feedback kept back and its encode's bound, so
 * that payload_check sees the exact sum plus every worker's codec error. */
static void exchange_gathered(struct coll_call *c, codec_state_t *st) {
  struct sim *s = c->sim;
  struct vec *v = c->v;
  int p = s->nworkers;
  struct msg *mine = sim_pack(c, v, 0, v->n, st);
  struct msg **all = g_new0(struct msg *, p);
  s->coll->allgather(c, mine, all);
  if (v->m) {
    memset(v->x, 0, v->m * sizeof(float));
    if (v->exact) {
      memset(v->exact, 0, v->m * sizeof(double));
      memset(v->offset, 0, v->m * sizeof(double));
      memset(v->bound, 0, v->m * sizeof(double));
    }
  }
  for (int r = 0; r < p; r++) {
    xbt_assert(all[r], "bucket %zu: worker %d's message not gathered",
               c->bucket, r);
    sim_unpack(c, all[r], v, 0, v->n, true);
    msg_free(all[r]);
  }
  g_free(all);
}

void bucketwise_exchange(struct wstate *ws, size_t b, int it) {
  (void)it;
  struct sim *s = ws->w->sim;
  struct coll_call c = {.sim = s,
                        .w = ws->w,
                        .rank = ws->w->rank,
                        .bucket = b,
                        .v = &ws->vecs[b]};
  /* A worker's streams: one per bucket (no aggregator shards: run.c
   * refuses aggregators per bucket). */
  codec_state_t *st = ws->w->states ? ws->w->states[b] : NULL;
  if (codec_sums(s->codec))
    exchange_summed(&c, st);
  else
    exchange_gathered(&c, st);
}
