/* sim/predict.c: a point's iteration predicted by the alpha-beta-gamma
 * formulas, without SimGrid (run_predict() of engine.h), for searches
 * that rank many configurations before simulating a few (gradsim
 * advise). It is a prediction, not a bound: the simulation shares
 * links, waits for peers and runs NCCL's protocols, which no formula
 * here sees; the caller measures how far off it is. */
#include "sim.h"

#include "codec_cost.h"

#include <math.h>
#include <string.h>

void sim_init_free(struct sim *s) {
  model_free(s->model);
  codec_free(s->codec);
  codec_costs_free(s->costs);
  g_free(s->buckets);
  g_free(s->layer_bucket);
  g_free(s->ff_runs);
  if (s->oracle_msg)
    g_string_free(s->oracle_msg, TRUE);
  if (s->mb)
    g_hash_table_destroy(s->mb);
}

/* The formula S's collective has on its topology; on machines, for a
 * collective with a flat formula only, that formula at the network's
 * alpha and beta (a rank-order ring crosses each machine through one
 * NIC, its steps in lockstep at the NIC's rate); otherwise the ring's
 * (MPICH's on a flat network, NCCL's rings on machines). *FC is the
 * collective whose parameters it takes. */
static const struct formula *formula_for(const struct sim *s,
                                         const struct collective **fc) {
  *fc = s->coll;
  bool flat = topology_flat(s->p);
  bool nodes = !flat && topology_node_size(s->p) > 0;
  const char *name = s->p->pull_direct && s->coll->formula_direct
                         ? s->coll->formula_direct
                         : s->coll->formula;
  if (nodes && s->coll->formula_nodes)
    name = s->coll->formula_nodes;
  else if (!flat && !nodes)
    name = NULL;
  if (!name) {
    *fc = coll_find(nodes ? "nccl-ring" : "ring");
    name = nodes ? (*fc)->formula_nodes : (*fc)->formula;
  }
  return formula_find(name);
}

/* The formula's time for an allreduce of BYTES, rounded up to a whole
 * number of the point's values (at least one). */
static double allreduce_s(const struct sim *s, const struct formula *f,
                          const struct collective *fc, double bytes) {
  int vb = s->p->grad_bytes;
  return sim_formula_time(s, fc, f, fmax(1, ceil(bytes / vb)) * vb);
}

/* Bucket B's exchange: its communication into *COMM, its codec work into
 * *CODEC. */
static void bucket_cost(const struct sim *s, const struct formula *f,
                        const struct collective *fc, size_t b, double wire_bits,
                        double *comm, double *codec) {
  const struct point *p = s->p;
  uint64_t n = s->buckets[b].n;
  double plain = (double)n * p->grad_bytes;
  *codec = 0;
  if (!s->codec || sim_uncompressed(s, b)) {
    *comm = allreduce_s(s, f, fc, plain);
    return;
  }
  double payload = (double)n * wire_bits / 8, np = p->nodes;
  enum cost_place where = p->placement == PLACE_GPU ? COST_GPU : COST_CPU;
  bool on_nic = p->placement == PLACE_NIC;
  if (p->compression == COMPRESS_PER_HOP && !s->coll->aggregators &&
      !s->coll->gathers && !s->linear) {
    /* A ring's 2 (p - 1) steps, each a block encoded and decoded. */
    uint64_t blk = (uint64_t)ceil((double)n / np);
    size_t pay = (size_t)ceil(payload / np);
    *comm = allreduce_s(s, f, fc, payload);
    if (!on_nic)
      *codec = 2 * (np - 1) *
               (codec_cost_seconds(s->costs, s->codec, where, true, blk, pay) +
                codec_cost_seconds(s->costs, s->codec, where, false, blk, pay));
    return;
  }
  /* Once around the collective: what sums is allreduced, what does not
   * is allgathered (a ring's allgather of p blocks is half the allreduce
   * of p blocks) and every worker's payload decoded. */
  bool sums = s->linear || codec_sums(s->codec) || s->coll->aggregators;
  *comm = sums || s->coll->gathers ? allreduce_s(s, f, fc, payload)
                                   : allreduce_s(s, f, fc, payload * np) / 2;
  if (!on_nic)
    *codec = codec_cost_seconds(s->costs, s->codec, where, true, n,
                                (size_t)payload) +
             (sums && !s->coll->gathers ? 1 : np) *
                 codec_cost_seconds(s->costs, s->codec, where, false, n,
                                    (size_t)payload);
}

int run_predict(const struct point *p, double wire_bits,
                struct run_prediction *out, char **err) {
  memset(out, 0, sizeof *out);
  if (run_check(p, err) != 0)
    return -1;
  struct sim *s = g_new0(struct sim, 1);
  int rc = sim_init(s, p, err);
  if (rc == 0) {
    const struct model *m = s->model;
    const struct collective *fc;
    const struct formula *f = formula_for(s, &fc);
    out->formula = f ? f->name : "none";
    double update =
        m->update_s / (p->sharding != SHARD_NONE ? run_shards(p) : 1);
    out->compute_s = m->forward_s + m->backward_s + update;
    /* Sharded exchanges: zero1 and zero2 move an allreduce's bytes in a
     * reduce-scatter and an allgather; stage 3 gathers the weights twice,
     * three halves of it. Exchanges every local_steps iterations. */
    double scale = (run_units(p) ? 1.5 : 1.0) / p->local_steps;
    double ready = 0, end = 0, codec_total = 0;
    for (size_t b = 0; b < s->nbuckets && f; b++) {
      const struct bucket *bk = &s->buckets[b];
      for (size_t t = bk->first; t < bk->first + bk->count; t++)
        ready += m->tensors[t].backward_s;
      double comm, codec;
      bucket_cost(s, f, fc, b, wire_bits, &comm, &codec);
      double t = (comm + codec) * scale;
      out->exchange_s += t;
      codec_total += codec * scale;
      end = fmax(ready, end) + t;
    }
    out->codec_s = codec_total;
    struct run_result r = {0};
    account_memory(s, &r);
    out->memory_bytes = r.mem_total;
    out->capacity = r.capacity;
    out->batch = m->batch;
    for (size_t t = 0; t < m->ntensors; t++)
      out->params += (double)m->tensors[t].elements;
    double fwd = m->forward_s, bwd = m->backward_s;
    bool gpu_shared = sim_gpu_shared(s);
    if (p->mode == MODE_SYNC || p->sharding != SHARD_NONE)
      out->iteration_s = out->compute_s + out->exchange_s;
    else if (p->mode == MODE_OVERLAP)
      out->iteration_s =
          fwd + update + fmax(bwd + (gpu_shared ? codec_total : 0), end);
    else
      out->iteration_s = fmax(out->compute_s, out->exchange_s);
    if (!f) {
      *err = g_strdup("no formula applies");
      rc = -1;
    }
  }
  sim_init_free(s);
  g_free(s);
  return rc;
}
