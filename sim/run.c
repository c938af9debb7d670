/* sim/run.c: one simulation (engine.h): the point checked, the run set
 * up (workers, aggregators, their vectors and codec states), SimGrid
 * started with the point's platform, the actors of the schedule created
 * and run, the results taken. The schedules are in schedules/, the
 * payload and oracle in payload.c, the accounting in account.c. */
#include "engine.h"

#include "codec_cost.h"
#include "memory.h"
#include "ffwd/ffwd.h"
#include "ffwd/kff.h"
#include "platform.h"
#include "sim.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/log.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(gs_run, gradsim, "runs");

/* ---- configuration checks -------------------------------------------- */

static struct model *load_model(const struct point *p, char **err) {
  struct model *m;
  char e[512];
  int rc;
  if (p->synthetic) {
    rc = model_synthetic(p->params, (size_t)p->tensors, p->compute_s,
                         p->update_s, &m, e, sizeof e);
    if (!rc && p->shape_dims &&
        (rc = model_synthetic_shape(m, p->shape, p->shape_dims, e,
                                    sizeof e)) != 0)
      model_free(m);
  } else {
    struct model_opts o = point_model_opts(p);
    rc = model_load(p->model, &o, &m, e, sizeof e);
  }
  if (rc) {
    *err = g_strdup_printf("[model] %s", e);
    return NULL;
  }
  /* [model] compute_scale, update_rate and [training] step_overhead: a
   * calibration's handles on a cluster's compute (an update on the host
   * instead of the GPU; a per-step cost compression does not remove:
   * framework, input pipeline), applied to what the model gives. */
  for (size_t l = 0; l < m->nlayers; l++) {
    m->layers[l].forward_s *= p->compute_scale;
    m->layers[l].backward_s *= p->compute_scale;
  }
  for (size_t t = 0; t < m->ntensors; t++)
    m->tensors[t].backward_s *= p->compute_scale;
  m->forward_s *= p->compute_scale;
  m->backward_s *= p->compute_scale;
  /* Activation checkpointing: backward runs each layer's forward again
   * before its own work (a full recompute: 4 forwards' FLOPs an
   * iteration instead of 3), its tensors' shares alike. */
  if (p->checkpoint && !p->synthetic) {
    for (size_t t = 0; t < m->ntensors; t++) {
      const struct model_layer *l = &m->layers[m->tensors[t].layer];
      if (l->backward_s > 0)
        m->tensors[t].backward_s *= (l->backward_s + l->forward_s) /
                                    l->backward_s;
    }
    for (size_t l = 0; l < m->nlayers; l++)
      m->layers[l].backward_s += m->layers[l].forward_s;
    m->backward_s += m->forward_s;
  }
  if (!p->synthetic)
    m->update_s = p->update_Bps > 0
                      ? optimizer_update_s(p->optimizer, (double)m->params,
                                           p->update_Bps, 0)
                      : optimizer_update_s(p->optimizer, (double)m->params,
                                           m->memory_Bps, m->fp32_flops);
  /* Sharded, each GPU updates its shard. */
  m->update_s /= run_shards(p);
  m->update_s += p->step_overhead_s;
  return m;
}

/* The collective suits P: it exists, P's workers and aggregators are
 * what it needs. */
static int check_collective(const struct point *p,
                            const struct collective *coll, char **err) {
  if (!coll) {
    char *names = coll_names();
    *err = g_strdup_printf("[exchange] algorithm = %s is not valid (valid: "
                           "%s)",
                           p->algorithm, names);
    g_free(names);
    return -1;
  }
  if (coll->pow2 && (p->nodes & (p->nodes - 1))) {
    *err = g_strdup_printf("[exchange] algorithm = %s needs a power-of-two "
                           "number of workers, not [platform] nodes = %d",
                           coll->name, p->nodes);
    return -1;
  }
  if (coll->aggregators && p->aggregators < 1) {
    *err = g_strdup_printf("[exchange] algorithm = %s needs [platform] "
                           "aggregators >= 1",
                           coll->name);
    return -1;
  }
  if (coll->aggregators && p->aggregators > p->nodes) {
    *err = g_strdup_printf("[platform] aggregators = %d: at most one per "
                           "worker (nodes = %d)",
                           p->aggregators, p->nodes);
    return -1;
  }
  if (!coll->aggregators && p->server_momentum > 0) {
    *err = g_strdup_printf("[exchange] server_momentum = %g applies to "
                           "algorithm = ps or ps-shared (a parameter "
                           "server), not %s",
                           p->server_momentum, coll->name);
    return -1;
  }
  return 0;
}

/* The collectives that can gather every worker's message (struct
 * collective's allgather), comma-separated (g_free). */
static char *gatherers(void) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < coll_count(); i++)
    if (coll_at(i)->allgather)
      g_string_append_printf(s, "%s%s", s->len ? ", " : "", coll_at(i)->name);
  return g_string_free(s, FALSE);
}

/* Why [exchange] compression = per-bucket (bucketwise.c) does not suit
 * P's codec C (not linear) and collective (g_free), or NULL. */
static char *per_bucket_error(const struct point *p,
                              const struct collective *coll, const codec_t *c) {
  char *names = gatherers(), *e = NULL;
  if (p->placement == PLACE_NIC)
    e = g_strdup_printf(
        "[exchange] compression = per-bucket encodes each bucket once on "
        "the worker, which placement = nic (an engine that compresses "
        "every message on the wire) does not: take placement = cpu or "
        "gpu, or compression = per-hop");
  else if (coll->aggregators || coll->bucket_state)
    e = g_strdup_printf(
        "[exchange] compression = per-bucket: algorithm = %s applies the "
        "codec inside itself (%s), not around it: take compression = "
        "per-hop, or one of %s",
        coll->name,
        coll->aggregators ? "its aggregators sum decoded pushes"
                          : "to the chunks it selects",
        names);
  else if (!codec_sums(c) && !coll->allgather)
    e = g_strdup_printf(
        "[exchange] compression = per-bucket: codec %s does not sum, so "
        "each bucket is allgathered, which algorithm = %s cannot: take %s",
        p->codec, coll->name, names);
  g_free(names);
  return e;
}

/* P's codec (*C, NULL for none) exists and suits the collective and the
 * payload. [exchange] compression = per-bucket without a codec is the run
 * without one, as per-hop is: the key says where a codec goes, and a
 * sweep across codecs, none included, and both modes stays valid. */
static int check_codec(const struct point *p, const struct collective *coll,
                       codec_t **c, char **err) {
  *c = NULL;
  if (!run_has_codec(p))
    return 0;
  char e[CODEC_ERR_MAX];
  if (codec_create(p->codec, c, e, sizeof e) != 0) {
    *err = g_strdup_printf("[exchange] codec = %s: %s", p->codec, e);
    return -1;
  }
  bool linear = codec_is_linear(*c);
  /* A linear codec's rounds are per bucket in either mode (linear.c). */
  bool per_bucket = !linear && p->compression == COMPRESS_PER_BUCKET;
  char *bucketwise = per_bucket ? per_bucket_error(p, coll, *c) : NULL;
  if (bucketwise)
    *err = bucketwise;
  else if (linear && coll->bucket_state)
    *err = g_strdup_printf(
        "[exchange] codec = %s exchanges its factors by two allreduces, "
        "which algorithm = %s (a selection of each bucket's own values) "
        "cannot run: take any other collective",
        p->codec, coll->name);
  else if (linear && p->payload == PAYLOAD_SAMPLED)
    *err = g_strdup_printf("[exchange] codec = %s works on whole matrices: "
                           "payload = sampled cannot hold them (use full, "
                           "or none to time it)",
                           p->codec);
  else if (linear && p->placement == PLACE_NIC)
    *err = g_strdup_printf("[exchange] codec = %s multiplies matrices, which "
                           "the NIC engine does not: placement = cpu or gpu",
                           p->codec);
  else if (linear && p->server_momentum > 0)
    *err = g_strdup_printf("[exchange] codec = %s: server_momentum applies "
                           "to a compressed pull, which its allreduces of "
                           "factors do not have",
                           p->codec);
  /* Per bucket each worker encodes its own bucket once: no collective
   * re-encodes a partial sum, so error feedback is never refused. */
  else if (!linear && !per_bucket && codec_is_stateful(*c) && !coll->stateful)
    *err = g_strdup_printf(
        "[exchange] codec = %s keeps an error-feedback state per worker, "
        "which algorithm = %s (re-encoding partial sums on every hop) "
        "cannot use: take allgather-rdb, ps or ps-shared, compression = "
        "per-bucket, or a stateless codec",
        p->codec, coll->name);
  else if (!linear && p->payload == PAYLOAD_NONE && !codec_size_is_fixed(*c))
    *err = g_strdup_printf("[exchange] codec = %s: its payload size "
                           "depends on the data, so payload = none cannot "
                           "time it (use full or sampled)",
                           p->codec);
  if (*err) {
    codec_free(*c);
    *c = NULL;
    return -1;
  }
  return 0;
}

/* The collectives that can (KIND 0: reduce-scatter, 1: with a codec, 2:
 * allreduce a range, 3: reduce-scatter one), comma-separated (g_free). */
static char *shard_names(int kind) {
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < coll_count(); i++) {
    const struct collective *c = coll_at(i);
    if (c->reduce_scatter && (kind != 1 || !c->shard_plain) &&
        (kind != 2 || c->range_allreduce) &&
        (kind != 3 || c->range_reduce_scatter))
      g_string_append_printf(names, "%s%s", names->len ? ", " : "", c->name);
  }
  return g_string_free(names, FALSE);
}

/* COLL cannot do across machines what KEY needs (WHAT; shard_names'
 * KIND says which can): -1 with *ERR. */
static int lacks(const struct collective *coll, const char *key,
                 const char *what, int kind, char **err) {
  char *names = shard_names(kind);
  *err = g_strdup_printf("[training] %s with algorithm = %s: it cannot %s "
                         "across machines (take %s)",
                         key, coll->name, what, names);
  g_free(names);
  return -1;
}

/* Sharded data parallel suits P: a collective that reduce-scatters (and
 * for units says where the shards are; for hsdp allreduces a range, on
 * machines), a codec per hop it can time, sync or overlap (not pipe), no
 * micro-batches for units, an exchange every iteration. */
static int check_sharding(const struct point *p, const struct collective *coll,
                          const codec_t *codec, char **err) {
  if (p->sharding == SHARD_NONE)
    return 0;
  const char *what = sharding_names[p->sharding];
  if (!coll->reduce_scatter) {
    char *names = shard_names(0);
    *err = g_strdup_printf("[training] sharding = %s reduce-scatters "
                           "gradients and allgathers weights, which "
                           "algorithm = %s does not: take %s",
                           what, coll->name, names);
    g_free(names);
    return -1;
  }
  if (codec && coll->shard_plain) {
    char *names = shard_names(1);
    *err = g_strdup_printf("[training] sharding = %s with algorithm = %s "
                           "and [exchange] codec = %s: %s's reduce-scatter "
                           "and allgather are simulated without a codec "
                           "(take codec = none, or for a codec algorithm "
                           "= %s; grad_dtype = bf16 narrows the values)",
                           what, coll->name, p->codec, coll->name, names);
    g_free(names);
    return -1;
  }
  /* A codec per hop compresses both halves as the collective's
   * allreduce does (each hop of the reduce-scatter, each block once in
   * the allgather: ZeRO++'s quantized weights and gradients, on a ring),
   * or one of them ([exchange] shard_codec); once per bucket, or a linear
   * codec's rounds, are not simulated sharded. */
  if (codec) {
    bool linear = codec_is_linear(codec), fixed = codec_size_is_fixed(codec);
    const char *why =
        linear ? "a linear codec's rounds are not simulated sharded"
        : p->compression == COMPRESS_PER_BUCKET
            ? "compression = per-bucket is not simulated sharded (per-hop "
              "is)"
        : run_units(p) && !fixed && p->shard_codec != SHARD_CODEC_GRADIENTS
            ? "its weights are gathered without values, which a codec "
              "whose size depends on the data cannot time (shard_codec = "
              "gradients keeps it off the gathers)"
            : NULL;
    if (why) {
      *err = g_strdup_printf("[training] sharding = %s with [exchange] "
                             "codec = %s: %s",
                             what, p->codec, why);
      return -1;
    }
  }
  bool units = run_units(p);
  if (p->mode == MODE_PIPE) {
    *err = g_strdup_printf("[training] sharding = %s runs with mode = sync "
                           "or overlap (mode = pipe: not simulated yet)",
                           what);
    return -1;
  }
  if (units && p->micro_batch > 0) {
    *err = g_strdup_printf("[training] sharding = %s with [model] "
                           "micro_batch: gradient accumulation is not "
                           "simulated fully sharded",
                           what);
    return -1;
  }
  if (units && !coll->shard_ranges) {
    *err = g_strdup_printf("[training] sharding = %s with algorithm = %s: "
                           "where its reduce-scatter leaves each shard is "
                           "not known (shard_ranges)",
                           what, coll->name);
    return -1;
  }
  /* A power of two of GPUs for what halves and doubles: the shards'
   * group, and with hpz the machine's. */
  int shards = run_shards(p), mg = p->hpz ? topology_node_size(p) : 0;
  if (coll->shard_pow2 && ((shards > 0 && (shards & (shards - 1))) ||
                           (mg > 0 && (mg & (mg - 1))))) {
    *err = g_strdup_printf("[training] sharding = %s with algorithm = %s: "
                           "its reduce-scatter and allgather halve and "
                           "double over a power of two GPUs, not %d",
                           what, coll->name,
                           shards & (shards - 1) ? shards : mg);
    return -1;
  }
  if ((p->hpz || p->qgz) && p->sharding != SHARD_ZERO3) {
    *err = g_strdup_printf("[training] %s is ZeRO++'s, on sharding = zero3 "
                           "(not sharding = %s)",
                           p->hpz ? "hpz" : "qgz", what);
    return -1;
  }
  if (p->qgz && !coll->range_reduce_scatter)
    return lacks(coll, "qgz", "reduce-scatter a machine's part", 3, err);
  if (p->sharding == SHARD_HSDP || p->hpz || p->qgz) {
    const char *key = p->sharding == SHARD_HSDP ? "sharding = hsdp"
                      : p->hpz                  ? "hpz"
                                                : "qgz";
    int g = topology_node_size(p);
    if (g < 1) {
      *err = g_strdup_printf(
          "[training] %s works inside each machine: it needs a topology of "
          "machines (nvswitch, gpu-cluster or a preset), not topology = %s",
          key, topology_name(p->topology));
      return -1;
    }
    if (p->nodes % g != 0) {
      *err = g_strdup_printf("[training] %s: [platform] nodes = %d is not "
                             "a whole number of machines of %d GPUs",
                             key, p->nodes, g);
      return -1;
    }
  }
  if (p->sharding == SHARD_HSDP && !coll->range_allreduce)
    return lacks(coll, "sharding = hsdp", "allreduce a shard", 2, err);
  if (p->local_steps > 1) {
    *err = g_strdup_printf("[training] sharding = %s exchanges every "
                           "iteration: local_steps = %d is not simulated "
                           "with it",
                           what, p->local_steps);
    return -1;
  }
  return 0;
}

/* P's codec cost table (its costs file, else the default) into *OUT:
 * bound to the point's device, as its implementation launches the
 * kernels, where CODEC runs on the GPU; its NIC engine's figures into
 * NIC where it runs on the NIC. run_check's and run_setup's, so that a
 * bad table stops a sweep before any point runs. */
static int point_costs(const struct point *p, const codec_t *codec,
                       struct codec_costs **out, struct nic_stream *nic,
                       char **err) {
  char e[512];
  *out = NULL;
  struct codec_costs *costs;
  if (codec_costs_load(*p->costs ? p->costs : NULL, &costs, e, sizeof e) != 0) {
    *err = g_strdup(e);
    return -1;
  }
  *out = costs;
  if (p->placement == PLACE_GPU && codec) {
    struct device_info dev;
    struct model_opts mo = point_model_opts(p);
    if (model_device_info(p->device, &mo, &dev, e, sizeof e) != 0) {
      *err = g_strdup_printf("[model] device: %s", e);
      return -1;
    }
    if (codec_costs_bind(costs, p->device, &dev,
                         implementation_names[p->implementation], codec, e,
                         sizeof e) != 0) {
      *err = g_strdup_printf("[exchange] placement = gpu: %s", e);
      return -1;
    }
  }
  if (p->placement == PLACE_NIC && codec && !nic_tagged(codec) &&
      !codec_costs_nic(costs, codec, nic)) {
    *err = g_strdup_printf("[exchange] placement = nic: the cost table "
                           "has no 'nic' line for codec %s (see "
                           "models/codec_costs.conf)",
                           codec_spec(codec));
    return -1;
  }
  return 0;
}

int run_check(const struct point *p, char **err) {
  *err = NULL;
  const struct collective *coll = coll_find(p->algorithm);
  codec_t *c;
  if (check_collective(p, coll, err) != 0 || check_codec(p, coll, &c, err) != 0)
    return -1;
  if (check_sharding(p, coll, c, err) != 0) {
    codec_free(c);
    return -1;
  }
  char e[1024];
  if (coll->check_point && coll->check_point(p, e, sizeof e) != 0) {
    *err = g_strdup(e);
    codec_free(c);
    return -1;
  }
  struct codec_costs *costs;
  struct nic_stream nic;
  int cc = point_costs(p, run_has_codec(p) ? c : NULL, &costs, &nic, err);
  codec_costs_free(costs);
  if (cc != 0) {
    codec_free(c);
    return -1;
  }
  struct model *m = load_model(p, err);
  int rc = m ? 0 : -1;
  if (m && p->micro_batch > 0 &&
      (p->micro_batch > m->batch || m->batch % p->micro_batch != 0)) {
    *err = g_strdup_printf("[model] micro_batch = %d must divide the batch "
                           "of %d samples per worker and iteration",
                           p->micro_batch, m->batch);
    rc = -1;
  }
  model_free(m);
  codec_free(c);
  return rc;
}

static struct bucket *buckets_of(const struct model *m, double fusion_bytes,
                                 double cycle_s, int grad_bytes,
                                 size_t *count);
static struct bucket *units_of(const struct model *m, bool per_layer,
                               size_t *count, size_t **layer_bucket);

/* The bytes of values a bucket fuses: fusion_bytes, or for a collective
 * that sends csc_ratio of them (csc), fusion_bytes / csc_ratio. */
static double fusion_of(const struct point *p, const struct collective *c) {
  return c->fuse_selected ? p->fusion_bytes / p->csc_ratio : p->fusion_bytes;
}

/* What the formula of collective C (without aggregators, of p, n,
 * alpha, beta and gamma only) counts of KEY (FP_ALPHA: messages a
 * worker sends, one a round; FP_BETA: bytes) over P workers and N bytes:
 * its total at KEY = 2 less that at KEY = 1 (alpha and beta otherwise 1,
 * gamma 0); NAN for the other collectives. */
static double coll_formula_count(const struct collective *c, int p, double n,
                                 enum formula_param key) {
  const struct formula *f = c->formula ? formula_find(c->formula) : NULL;
  const unsigned long netg = 1UL << FP_P | 1UL << FP_N | 1UL << FP_ALPHA |
                             1UL << FP_BETA | 1UL << FP_GAMMA;
  if (!f || c->aggregators || f->needs != netg)
    return NAN;
  double total[2];
  for (int k = 0; k < 2; k++) {
    struct formula_in in;
    formula_in_init(&in);
    in.v[FP_P] = p;
    in.v[FP_N] = n;
    in.v[FP_ALPHA] = in.v[FP_BETA] = 1;
    in.v[FP_GAMMA] = 0;
    in.v[key] = 1 + k;
    struct formula_out o;
    char e[256];
    if (formula_eval(f, &in, &o, e, sizeof e) != 0)
      return NAN;
    total[k] = o.total;
  }
  return total[1] - total[0];
}

/* The alpha count of a symmetric collective's formula, in which every
 * worker sends one message per round (on one value a block: ring-lr
 * rings whole blocks only; any size, only the alphas are counted); 0
 * for the others. */
static double rounds_of(const struct collective *c, int p) {
  double r = coll_formula_count(c, p, 4.0 * p, FP_ALPHA);
  return isnan(r) ? 0 : floor(r + 0.5);
}

/* The values a worker of collective C over P workers sends, per value of
 * its vector: its formula's beta count over the bytes, where the
 * collective does not gather; 2 otherwise (a ring's two legs, a push and
 * a pull). */
static double carried_of(const struct collective *c, int p) {
  const double n = 4.0 * p * 1024;
  double b = c->gathers ? NAN : coll_formula_count(c, p, n, FP_BETA);
  return isnan(b) ? 2 : b / n;
}

/* Steps of a ring simulated at least before fast-forward can skip
 * (fastforward.c: four per sequence; a ring's two legs are one sequence
 * when alike, collectives/common.c), for the estimate's lower bound. */
enum { FF_ROUNDS = 4 };

/* Mappings a process has besides its actors' stacks (libraries, the
 * heap's arenas, glibc's mmapped chunks, SimGrid's own), with room to
 * spare: a ring's process had about 230 more than two per actor at 4,096
 * and at 16,384 workers (peak of /proc/PID/maps). */
enum { BASE_MAPPINGS = 8192 };

static double max_map_count(void) {
  double v = 65530; /* Linux's default */
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  if (f) {
    double r;
    if (fscanf(f, "%lf", &r) == 1 && r > 0)
      v = r;
    fclose(f);
  }
  return v;
}

/* Built with AddressSanitizer, no guard pages: SimGrid kills the daemons
 * (NCCL's NVSwitch actors, collectives/nccl.c) when the workers end but
 * frees their stacks only at exit, after LeakSanitizer has begun reading
 * every live block, a stack's protected guard page with it (the tracer
 * faults: CI's unit suite, NVLS's oracle cases). ASan's own redzones
 * stand in for the guard there (start_simgrid). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUN_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(RUN_ASAN)
#define RUN_ASAN 1
#endif

bool run_sanitized(void) {
#ifdef RUN_ASAN
  return true;
#else
  return false;
#endif
}

bool run_stack_guards(int actors) {
  return 2.0 * actors + BASE_MAPPINGS <= max_map_count();
}

double run_stack_bytes(int actors) {
  return run_stack_guards(actors) ? 0 : (double)actors * RUN_STACK_KIB * 1024;
}

static int actors_of(const struct point *p, const struct collective *coll) {
  const struct schedule *sc = schedule_of(p->mode);
  return p->nodes * (sc->comm_actor ? 2 : 1) +
         (coll->aggregators ? p->aggregators : 0);
}

int run_shape(const struct point *p, struct run_shape *out, char **err) {
  *err = NULL;
  memset(out, 0, sizeof *out);
  const struct collective *coll = coll_find(p->algorithm);
  if (!coll) {
    *err = g_strdup_printf("[exchange] algorithm = %s is not valid",
                           p->algorithm);
    return -1;
  }
  struct model *m = load_model(p, err);
  if (!m)
    return -1;
  /* Per held value and host: the value (4 bytes), an error-feedback
   * residual (4), and with the oracle (payload = full) its shadow, the
   * ledger's offset and bound, and the exact sums (8 each). */
  bool full = p->payload == PAYLOAD_FULL;
  out->value_bytes = 4 + (full ? 32 : 0);
  codec_t *codec = NULL;
  if (run_has_codec(p) && codec_create(p->codec, &codec, NULL, 0) != 0)
    codec = NULL;
  if (codec && codec_is_stateful(codec))
    out->value_bytes += 4;
  /* With the oracle, what a step's messages hold at once beyond a ring's
   * (collective oracle_value_bytes), and a linear codec's factors, their
   * ledgers and the oracle's books of its rounds (payload.c; PowerSGD on
   * a ring of 8 and 16 DGX-H100 workers of 2 x 1M and 4 x 1M values:
   * peak RSS over the estimate, 33.1 and 27.0 bytes a value). */
  if (full)
    out->value_bytes +=
        coll->oracle_value_bytes + (codec && codec_is_linear(codec) ? 34 : 0);
  /* Each worker gathers every worker's message of a bucket and decodes
   * them all (engine.h, gather_values). */
  bool gathered =
      coll->gathers || (p->compression == COMPRESS_PER_BUCKET && codec &&
                        !codec_sums(codec) && !codec_is_linear(codec));
  out->hosts = p->nodes + (coll->aggregators ? p->aggregators : 0);
  size_t *layer_bucket = NULL;
  struct bucket *b =
      run_units(p)
          ? units_of(m, p->shard_per_layer, &out->buckets, &layer_bucket)
          : buckets_of(m, fusion_of(p, coll), p->fusion_cycle_s, p->grad_bytes,
                       &out->buckets);
  g_free(layer_bucket);
  size_t slow = 0; /* buckets that a whole-block ring simulates in full */
  out->ff_blocker = ff_blocker(p);
  out->fast_forward = !out->ff_blocker;
  out->kernel_messages = coll->messages ? 0 : -1;
  out->streams = 1;
  for (size_t i = 0; i < out->buckets; i++) {
    size_t held = payload_held(p, b[i].n);
    out->held_values += (double)held;
    /* A gathered message, or a push at the aggregators (which receive a
     * bucket's p at once): its payload (a codec's bound, raw floats
     * without one) and with the oracle its shadow, the ledger's offset
     * and bound (msg_of) and what its decode must give and within what
     * (payload_ledger_encode), 8 bytes each a held value. */
    if ((gathered || coll->aggregators) && held) {
      double enc = codec ? (double)codec_bound(codec, held) : 4.0 * held;
      if (gathered)
        out->gather_decoded += (double)p->nodes * enc;
      out->gather_bytes =
          fmax(out->gather_bytes,
               (double)p->nodes * (enc + (full ? 40.0 * held : 0)));
    }
    /* Balanced blocks of a bucket p does not divide differ: fast-forward
     * finds no steps alike to jump over. */
    slow += coll->balanced_blocks && b[i].n % (uint64_t)p->nodes != 0;
    struct coll_messages cm;
    if (out->kernel_messages >= 0 &&
        coll->messages(p, b[i].n, p->grad_bytes, &cm)) {
      double events = out->fast_forward
                          ? kff_events(cm.events, cm.period, cm.reps,
                                       cm.settles, cm.settle, cm.window)
                          : cm.events;
      out->kernel_messages +=
          cm.streams *
          (events + cm.credits * fmax(events - cm.credit_window, 0)) *
          fmax(cm.calls, 1);
      out->streams = fmax(out->streams, cm.streams);
    } else {
      out->kernel_messages = -1;
    }
  }
  g_free(b);
  model_free(m);
  if (p->payload != PAYLOAD_NONE)
    out->payload_values = carried_of(coll, p->nodes) * out->held_values;
  if (run_has_codec(p) && p->compression == COMPRESS_PER_HOP &&
      !coll->aggregators)
    out->codec_values = out->payload_values;
  if (gathered && full)
    out->gather_values = (double)p->nodes * out->held_values;
  codec_free(codec);
  out->exchanges = floor((double)p->iterations / p->local_steps) +
                   (p->iterations % p->local_steps != 0);
  out->rounds = rounds_of(coll, p->nodes);
  /* zero3 gathers each unit's weights twice: three halves of an
   * allreduce (hsdp's inside a machine, about as many steps, and its
   * shard's allreduce across machines). */
  if (run_units(p))
    out->rounds *= 1.5;
  out->actors = actors_of(p, coll);
  out->pair_bytes = coll->pair_bytes;
  out->bucket_bytes = ff_buckets_allowed(p, coll) ? recur_bucket_bytes() : 0;
  out->full_rounds = out->rounds;
  out->full_buckets = out->fast_forward ? slow : out->buckets;
  if (out->fast_forward && slow)
    out->ff_blocker = "[platform] nodes not dividing every bucket's values "
                      "(their blocks then differ)";
  /* Fast-forward jumps over a ring leg's steps once they repeat; other
   * steps are simulated, every one. */
  if (out->fast_forward && coll->ring_legs)
    out->rounds = fmin(out->rounds, FF_ROUNDS);
  return 0;
}

/* ---- setting the run up ------------------------------------------------- */

/* Tensors into buckets of at least FUSION_BYTES of gradients of
 * GRAD_BYTES a value (0: one per tensor, INFINITY: one for all), in
 * backward order; with CYCLE_S > 0 a bucket also closes once backward
 * has spent that long producing its tensors (Horovod's tensor fusion:
 * its background thread fuses what is ready every HOROVOD_CYCLE_TIME). */
static struct bucket *buckets_of(const struct model *m, double fusion_bytes,
                                 double cycle_s, int grad_bytes,
                                 size_t *count) {
  GArray *bs = g_array_new(FALSE, FALSE, sizeof(struct bucket));
  struct bucket cur = {0, 0, 0};
  double spent = 0;
  for (size_t t = 0; t < m->ntensors; t++) {
    cur.count++;
    cur.n += m->tensors[t].elements;
    spent += m->tensors[t].backward_s;
    if ((double)grad_bytes * (double)cur.n >= fusion_bytes ||
        (cycle_s > 0 && spent >= cycle_s) || t == m->ntensors - 1) {
      g_array_append_val(bs, cur);
      cur = (struct bucket){t + 1, 0, 0};
      spent = 0;
    }
  }
  *count = bs->len;
  return (struct bucket *)(void *)g_array_free(bs, FALSE);
}

/* sharding = zero3: the units as buckets, each the run of tensors (in
 * backward order) of one unit, and each layer's bucket in *LAYER_BUCKET
 * (SIZE_MAX: a layer whose unit has no tensors). */
static struct bucket *units_of(const struct model *m, bool per_layer,
                               size_t *count, size_t **layer_bucket) {
  size_t nu;
  struct model_unit *u = model_units(m, per_layer, &nu);
  struct bucket *bs = g_new(struct bucket, nu ? nu : 1);
  GHashTable *of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                         NULL);
  for (size_t i = 0; i < nu; i++) {
    bs[i] = (struct bucket){u[i].first, u[i].count, u[i].n};
    /* A unit that comes back later is a unit again: a layer without
     * tensors goes with its unit's last run. */
    g_hash_table_replace(
        of,
        model_unit_key(m->layers[m->tensors[u[i].first].layer].name, per_layer),
        GSIZE_TO_POINTER(i + 1));
  }
  g_free(u);
  *layer_bucket = g_new(size_t, m->nlayers ? m->nlayers : 1);
  for (size_t l = 0; l < m->nlayers; l++) {
    char *k = model_unit_key(m->layers[l].name, per_layer);
    gsize b = GPOINTER_TO_SIZE(g_hash_table_lookup(of, k));
    (*layer_bucket)[l] = b ? b - 1 : SIZE_MAX;
    g_free(k);
  }
  /* A layer's own tensors decide its bucket where its unit recurs. */
  for (size_t i = 0; i < nu; i++)
    for (size_t t = bs[i].first; t < bs[i].first + bs[i].count; t++)
      (*layer_bucket)[m->tensors[t].layer] = i;
  g_hash_table_destroy(of);
  *count = nu;
  return bs;
}

static void vec_init(struct vec *v, uint64_t n, size_t m, bool oracle) {
  v->n = n;
  v->m = m;
  vec_alloc(v, oracle);
}

int sim_init(struct sim *s, const struct point *p, char **err) {
  s->p = p;
  s->coll = coll_find(p->algorithm);
  s->schedule = schedule_of(p->mode);
  s->model = load_model(p, err);
  if (run_has_codec(p))
    codec_create(p->codec, &s->codec, NULL, 0);
  s->linear = s->codec && codec_is_linear(s->codec);
  if (point_costs(p, s->codec, &s->costs, &s->nic_stream, err) != 0)
    return -1;
  s->gamma = 1.0 / p->reduce_Bps;
  s->ff_ok = run_ff_allowed(p);
  s->nworkers = p->nodes;
  s->naggr = s->coll->aggregators ? p->aggregators : 0;
  s->oracle_ok = true;
  s->oracle_msg = g_string_new(NULL);
  s->mb = g_hash_table_new(sim_pair_hash, g_direct_equal);
  if (run_units(p))
    s->buckets = units_of(s->model, p->shard_per_layer, &s->nbuckets,
                          &s->layer_bucket);
  else
    s->buckets = buckets_of(s->model, fusion_of(p, s->coll),
                            p->fusion_cycle_s, p->grad_bytes, &s->nbuckets);
  ff_bucket_runs(s);
  return 0;
}

/* SimGrid started on P's platform (built, or written into WORKDIR), with the
 * point's network configuration, for ACTORS actors (whose stacks get
 * guard pages if the process's mappings allow). ARGS keeps the strings
 * SimGrid was given and *ARGV the array of them it was given (SimGrid
 * shifts the options it takes out of it), both to free after the run. */
static int start_simgrid(const struct point *p, const char *workdir,
                         int actors, GPtrArray *args, char ***argvp,
                         char **err) {
  /* A platform gradsim builds itself needs no file; a file's errors are
   * found before SimGrid starts. */
  bool build = platform_builds(p);
  char *xml = build ? NULL : platform_xml(p, workdir, err);
  if (!build && !xml)
    return -1;
  g_ptr_array_add(args, g_strdup("gradsim"));
  char **cfg = platform_cfg(p);
  for (char **c = cfg; *c; c++)
    g_ptr_array_add(args, g_strdup(*c));
  g_strfreev(cfg);
  g_ptr_array_add(args, g_strdup_printf("--cfg=contexts/stack-size:%d",
                                        RUN_STACK_KIB));
#ifdef RUN_ASAN
  (void)actors;
  bool guards = false;
#else
  bool guards = run_stack_guards(actors);
#endif
  if (!guards)
    g_ptr_array_add(args, g_strdup("--cfg=contexts/guard-size:0"));
  g_ptr_array_add(args, g_strdup("--log=root.thres:critical"));
  int argc = (int)args->len;
  g_ptr_array_add(args, NULL);
  char **argv = g_memdup2(args->pdata, args->len * sizeof(char *));
  *argvp = argv;
  simgrid_init(&argc, argv);
  if (build)
    platform_build(p);
  else
    simgrid_load_platform(xml);
  g_free(xml);
  return 0;
}

/* The rank lists every worker shares (a list per worker would cost
 * O(p^2) memory): 0..P-1, and per aggregator its broadcast tree. */
static void make_ranks(struct sim *s) {
  s->ranks = g_new(int, s->nworkers);
  for (int i = 0; i < s->nworkers; i++)
    s->ranks[i] = i;
  s->trees = g_new0(int *, s->naggr ? s->naggr : 1);
  for (int a = 0; a < s->naggr; a++) {
    s->trees[a] = g_new(int, s->nworkers + 1);
    s->trees[a][0] = s->nworkers + a;
    for (int i = 0; i < s->nworkers; i++)
      s->trees[a][i + 1] = i;
  }
}

/* Worker I's error-feedback codec streams: one per bucket and aggregator
 * shard, for the values it holds of each. */
static void make_states(struct sim *s, struct wstate *ws, int i) {
  int shards = s->naggr ? s->naggr : 1;
  struct worker *w = ws->w;
  w->states = g_new0(codec_state_t *, s->nbuckets * (size_t)shards);
  for (size_t b = 0; b < s->nbuckets; b++)
    for (int a = 0; a < shards; a++) {
      struct vec tmp = ws->vecs[b];
      size_t lo, hi;
      uint64_t n = tmp.n;
      vec_held(&tmp, n * (uint64_t)a / (uint64_t)shards,
               n * (uint64_t)(a + 1) / (uint64_t)shards, &lo, &hi);
      codec_state_create(s->codec, hi - lo,
                         s->p->grad.seed * 1000003u + (uint64_t)i,
                         &w->states[b * (size_t)shards + (size_t)a]);
    }
}

/* Worker I's linear-codec streams: one per bucket, its tensors' shapes
 * set, when it holds the bucket's values (payload = full). The same seed
 * on every worker: a linear codec's workers start from the same factors
 * (PowerSGD keys its initial Q by shape anyway). */
static void make_lin_states(struct sim *s, struct wstate *ws) {
  ws->lin_states = g_new0(codec_state_t *, s->nbuckets);
  for (size_t b = 0; b < s->nbuckets; b++) {
    if (!ws->vecs[b].m)
      continue;
    size_t k;
    struct codec_shape *sh = linear_shapes(s, b, &k);
    xbt_assert(codec_state_create(s->codec, ws->vecs[b].m, s->p->grad.seed,
                                  &ws->lin_states[b]) == 0 &&
                   codec_state_set_shapes(ws->lin_states[b], sh, k) == 0,
               "%s stream of bucket %zu", codec_spec(s->codec), b);
    g_free(sh);
  }
}

static void make_workers(struct sim *s, sg_host_t *hosts, bool oracle) {
  const struct point *p = s->p;
  s->workers = g_new0(struct worker, s->nworkers);
  s->ws = g_new0(struct wstate, s->nworkers);
  s->recs = g_new0(struct iter_rec, (size_t)p->iterations * s->nworkers);
  for (int i = 0; i < s->nworkers; i++) {
    struct worker *w = &s->workers[i];
    w->rank = i;
    w->sim = s;
    w->host = hosts[i];
    w->gpu = sg_mutex_init();
    w->slowdown = p->slowdown ? p->slowdown[i] : 1.0;
    w->spans = g_array_new(FALSE, FALSE, sizeof(struct span));
    w->sum_from = INFINITY;
    w->cstate = g_new0(void *, s->nbuckets);
    struct wstate *ws = &s->ws[i];
    ws->w = w;
    ws->vecs = g_new0(struct vec, s->nbuckets);
    for (size_t b = 0; b < s->nbuckets; b++)
      vec_init(&ws->vecs[b], s->buckets[b].n,
               payload_held(p, s->buckets[b].n), oracle);
    if (run_units(p)) {
      ws->params = g_new0(struct vec, s->nbuckets);
      for (size_t b = 0; b < s->nbuckets; b++)
        vec_init(&ws->params[b], s->buckets[b].n, 0, false);
      if (p->mode == MODE_OVERLAP) {
        ws->gathered = g_new(sg_sem_t, s->nbuckets);
        for (size_t b = 0; b < s->nbuckets; b++)
          ws->gathered[b] = sg_sem_init(0);
        ws->scattered = sg_sem_init(0);
      }
    }
    if (p->sharding == SHARD_HSDP || p->hpz || p->qgz) {
      /* Machines of G consecutive workers (the platforms' order). */
      int g = topology_node_size(p), nm = s->nworkers / g;
      ws->nmachine = g;
      ws->nrail = nm;
      ws->me_machine = i % g;
      ws->me_rail = i / g;
      ws->machine = g_new(int, g);
      ws->rail = g_new(int, nm);
      for (int k = 0; k < g; k++)
        ws->machine[k] = i / g * g + k;
      for (int k = 0; k < nm; k++)
        ws->rail[k] = k * g + i % g;
    }
    if (p->local_steps > 1) {
      ws->accum = g_new0(float *, s->nbuckets);
      for (size_t b = 0; b < s->nbuckets; b++)
        ws->accum[b] = g_new0(float, ws->vecs[b].m + 1);
    }
    if (s->linear)
      make_lin_states(s, ws);
    else if (s->codec && codec_is_stateful(s->codec))
      make_states(s, ws, i);
    ws->jobs = g_queue_new();
    ws->job_sem = sg_sem_init(0);
    ws->done_sem = sg_sem_init(0);
  }
}

/* Aggregators: one shard of every bucket each, holding what the workers'
 * vectors hold of it, with its own codec stream (and server_momentum's
 * v) for a shared pull (ps-shared). */
static void make_aggregators(struct sim *s, bool oracle) {
  s->as = g_new0(struct astate, s->naggr ? s->naggr : 1);
  bool shared = s->naggr && s->codec && s->coll->shared_pull;
  if (shared && codec_is_stateful(s->codec))
    s->aggr_states = g_new0(codec_state_t *, s->nbuckets * (size_t)s->naggr);
  /* ps's pull is fp32 whatever the values: momentum only matters to a
   * compressed one. */
  if (shared && s->p->server_momentum > 0)
    s->aggr_vel = g_new0(float *, s->nbuckets * (size_t)s->naggr);
  for (int a = 0; a < s->naggr; a++) {
    s->as[a].a = a;
    s->as[a].sim = s;
    s->as[a].vecs = g_new0(struct vec, s->nbuckets);
    for (size_t b = 0; b < s->nbuckets; b++) {
      uint64_t n = s->buckets[b].n;
      uint64_t lo = n * (uint64_t)a / (uint64_t)s->naggr,
               hi = n * (uint64_t)(a + 1) / (uint64_t)s->naggr;
      size_t hl, hh;
      vec_held(&s->ws[0].vecs[b], lo, hi, &hl, &hh);
      vec_init(&s->as[a].vecs[b], hi - lo, hh - hl, oracle);
      if (s->aggr_states)
        codec_state_create(s->codec, hh - hl,
                           s->p->grad.seed * 7919u + (uint64_t)a,
                           &s->aggr_states[b * (size_t)s->naggr + (size_t)a]);
      if (s->aggr_vel)
        s->aggr_vel[b * (size_t)s->naggr + (size_t)a] =
            g_new0(float, hh - hl ? hh - hl : 1);
    }
  }
}

static void wstate_actor(int argc, char **argv) {
  (void)argc, (void)argv;
  struct wstate *ws = sg_actor_self_get_data();
  ws->w->sim->schedule->worker(ws);
  sim_drain_sends(ws->w->sim);
}

/* A worker's communication side (schedules' comm_actor). */
static void comm_actor(int argc, char **argv) {
  schedule_comm_actor(argc, argv);
  struct wstate *ws = sg_actor_self_get_data();
  sim_drain_sends(ws->w->sim);
}

/* An actor named NAME on HOST running CODE with DATA. */
static void spawn(const char *name, sg_host_t host, xbt_main_func_t code,
                  void *data) {
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, data);
  sg_actor_start_(a, code, 0, NULL);
}

/* The actors, in this order: each worker's compute side (and
 * communication side), the aggregators. */
static void make_actors(struct sim *s, sg_host_t *whosts, sg_host_t *ahosts) {
  char name[32];
  for (int i = 0; i < s->nworkers; i++) {
    snprintf(name, sizeof name, "worker%d", i);
    spawn(name, whosts[i], wstate_actor, &s->ws[i]);
    if (s->schedule->comm_actor) {
      snprintf(name, sizeof name, "comm%d", i);
      spawn(name, whosts[i], comm_actor, &s->ws[i]);
    }
  }
  for (int a = 0; a < s->naggr; a++) {
    snprintf(name, sizeof name, "aggregator%d", a);
    spawn(name, ahosts[a], schedule_aggregator_actor, &s->as[a]);
  }
  if (s->coll->spawn)
    s->coll->spawn(s);
}

/* ---- the run ----------------------------------------------------------- */

const char *run_fits(const struct run_result *r) {
  if (!(r->capacity > 0))
    return "-";
  return r->mem_total <= r->capacity ? "yes" : "no";
}

void run_result_clear(struct run_result *r) {
  if (r->iterations)
    g_string_free(r->iterations, TRUE);
  if (r->links)
    g_string_free(r->links, TRUE);
  if (r->calls)
    g_string_free(r->calls, TRUE);
  g_free(r->note);
  memset(r, 0, sizeof *r);
}

/* The results, and the Paje trace into WORKDIR when one was kept. */
static int finish(struct sim *s, const char *workdir, struct run_result *r,
                  char **err) {
  if (s->fatal) {
    *err = g_strdup(s->fatal);
    return -1;
  }
  account_summarize(s, r);
  if (!s->trace)
    return 0;
  char *tpath = g_build_filename(workdir, "trace.paje", NULL);
  int rc = sim_trace_write(s, tpath);
  if (rc != 0)
    *err = g_strdup_printf("cannot write %s", tpath);
  g_free(tpath);
  return rc;
}

/* The simulation's state lives until the process ends: SimGrid runs once
 * per process, and the run's structures (SimGrid's semaphores and mutexes
 * among them) are freed with it.  The one process-wide pointer keeps that
 * state reachable, so that the leak checker, like a reader, sees it is kept
 * on purpose rather than lost: the one static in the engine, for the one
 * SimGrid engine a process has (volatile: a store nothing reads is
 * otherwise optimized away). */
static struct sim *volatile process_run;

void run_progress_to(struct run_progress *p) { sim_progress = p; }

int run_point(const struct point *p, const char *workdir, bool trace,
              struct run_result *r, char **err) {
  memset(r, 0, sizeof *r);
  if (run_check(p, err) != 0)
    return -1;
  struct sim *s = g_new0(struct sim, 1);
  process_run = s;
  if (sim_init(s, p, err) != 0)
    return -1;
  GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
  char **argv = NULL;
  if (start_simgrid(p, workdir, actors_of(p, s->coll), args, &argv, err) !=
      0)
    return -1;
  /* --trace: gradsim writes its own Paje trace of the workers' states
   * (SimGrid 3.32's tracer aborts on split-duplex links). */
  if (trace)
    s->trace = g_array_new(FALSE, FALSE, sizeof(struct trace_ev));
  sg_host_t *whosts, *ahosts;
  if (platform_hosts(p, &whosts, &ahosts, err) != 0)
    return -1;
  bool oracle = p->payload == PAYLOAD_FULL;
  payload_init_truth(s, oracle);
  make_ranks(s);
  make_workers(s, whosts, oracle);
  recur_init(s);
  make_aggregators(s, oracle);
  /* The error-feedback streams warmed up, a linear codec's by its rounds
   * (linear.c), any other's by its encodes (payload.c). */
  if (s->linear)
    linear_warm_up(s);
  else
    payload_warm_up(s);
  s->aggr_hosts = ahosts; /* the run's, as the workers' hosts are */
  account_links_init(s);
  make_actors(s, whosts, ahosts);
  if (sim_progress) {
    sim_progress->iterations_total = p->iterations;
    sim_progress->buckets_total = (int64_t)p->iterations *
                                  (int64_t)s->nbuckets;
  }
  simgrid_run();
  g_free(argv);
  g_ptr_array_free(args, TRUE);
  g_free(whosts);
  return finish(s, workdir, r, err);
}
