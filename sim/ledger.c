/* sim/ledger.c: the oracle's ledger (sim.h, "the oracle's ledger";
 * struct vec): what each encode may lose and what each decode is held
 * to. Below the messages (sim.c), which keep it, and the payloads
 * (payload.c), which check it. */
#include "sim.h"

#include <math.h>

/* A float sum rounds once: by at most half an ulp of its result, 2^-24 of
 * its magnitude (2^-20 more for safety), or 2^-150 below the normal
 * range. Everything else a value may lose comes from the encodes it went
 * through, each bounded by its codec from the block it actually encoded
 * (codec_error_bounds): so a lossless exchange must match the exact sum to
 * its summation rounding, and a decoder that is 1% off fails. */
static const double SUM_ULP = 0x1p-24 * (1 + 0x1p-20), SUM_TINY = 0x1p-149;

void payload_ledger_encode(const struct sim *s, struct msg *m,
                           const float *x, const float *rb, const float *ra) {
  m->hop_want = g_new(double, m->m);
  m->hop_bound = g_new0(double, m->m);
  if (s)
    codec_error_bounds(s->codec, x, rb, ra, m->m, m->hop_bound);
  for (size_t i = 0; i < m->m; i++) {
    double unsent = ra ? (double)(rb ? rb[i] : 0.0f) - (double)ra[i] : 0;
    m->hop_want[i] = (double)x[i] + unsent;
    m->offset[i] += unsent;
    m->bound[i] += m->hop_bound[i];
  }
}

/* The first wrong decode of the run, in the oracle's message. */
static void hop_failed(struct coll_call *c, const struct msg *m, size_t i,
                       double got, double allowed) {
  struct sim *s = c->sim;
  s->oracle_ok = false;
  if (s->oracle_msg->len)
    return;
  g_string_printf(s->oracle_msg,
                  "bucket %zu, a message from rank %d to rank %d, value "
                  "%zu: decoded %.9g where %.9g was encoded (%s), allowed "
                  "%.3g",
                  c->bucket, m->src, c->rank, i, got, m->hop_want[i],
                  m->raw ? "sent as fp32" : codec_spec(s->codec), allowed);
}

void payload_ledger_unpack(struct coll_call *c, struct vec *v, size_t a,
                           const struct msg *m, bool add,
                           const float *before) {
  for (size_t i = 0; i < m->m; i++) {
    size_t j = a + i;
    /* The decoded value: what was added (exact in double: both are
     * floats) is within one rounding of the sum of what decoding gave. */
    double got = add ? (double)v->x[j] - (double)before[i] : (double)v->x[j];
    double round = add ? fabs((double)v->x[j]) * SUM_ULP + SUM_TINY : 0;
    double allowed = m->hop_bound[i] * (1 + 0x1p-40) + round +
                     fabs(m->hop_want[i]) * 0x1p-50;
    if (!(fabs(got - m->hop_want[i]) <= allowed) && isfinite(m->hop_want[i]))
      hop_failed(c, m, i, got, allowed);
    if (!add) {
      v->exact[j] = m->exact[i];
      v->offset[j] = m->offset[i];
      v->bound[j] = m->bound[i];
      continue;
    }
    v->exact[j] += m->exact[i];
    v->offset[j] += m->offset[i];
    v->bound[j] += m->bound[i] + round;
  }
}

void payload_ledger_add(struct vec *v, size_t j, double added) {
  v->offset[j] += added;
  v->bound[j] += fabs((double)v->x[j]) * SUM_ULP + SUM_TINY;
}
