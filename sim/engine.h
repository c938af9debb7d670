/* sim/engine.h: the simulation engine's contract: one experiment point
 * (a fully typed configuration) simulated in SimGrid, and what it
 * measured. This is everything the layers above (config/, sweep/, repro/,
 * cli/) and a C program of one's own use of the engine; sim.h and the
 * other headers of sim/ are its insides (collectives, schedules,
 * platforms).
 *
 *   struct point p = ...;             (config/ fills it from a key file)
 *   char *err;
 *   if (run_check(&p, &err) != 0) ...  bad input, err says why
 *   struct run_result r;
 *   if (run_point(&p, "/tmp/work", false, &r, &err) != 0) ...
 *   printf("%g\n", r.exchange_s);
 *   run_result_clear(&r);
 *
 * Units: seconds of simulated time, bytes, bytes per second (the point's
 * *_Bps fields; runs.csv reports bits per second). Ownership: the caller
 * owns the point and its strings; results and error messages are the
 * caller's to free (run_result_clear, g_free). Errors: functions return
 * 0, or -1 with a one-line message in *ERR naming the key, the value and
 * what is allowed; the engine never prints and never exits on bad input.
 * Internal invariants are checked with xbt_assert, which aborts.
 *
 * SimGrid starts once per process: run_point() can be called once per
 * process (sweep/ runs each point in a child process). */
#ifndef GRADSIM_SIM_ENGINE_H
#define GRADSIM_SIM_ENGINE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gradgen.h"
#include "model.h"
#include "nccl.h"
#include "nic.h"

/* Generated topologies, in the order of their registry
 * (sim/platforms/registry.c: topology_name() and topology_find() are the
 * one table of their names), and platform files. */
enum topology {
  TOPO_STAR, TOPO_FAT_TREE, TOPO_DRAGONFLY, TOPO_GPU, TOPO_TORUS,
  TOPO_NVSWITCH, TOPO_FILE
};
/* nvswitch: how the NICs of the nodes meet (docs/collectives.md,
 * "Machines of today"). */
enum fabric { FABRIC_RAIL, FABRIC_FAT_TREE, FABRIC_COUNT };
enum payload { PAYLOAD_FULL, PAYLOAD_SAMPLED, PAYLOAD_NONE, PAYLOAD_COUNT };
enum placement { PLACE_CPU, PLACE_GPU, PLACE_NIC, PLACE_COUNT };
enum mode { MODE_SYNC, MODE_OVERLAP, MODE_PIPE, MODE_COUNT };
/* NCCL's algorithms and protocols (enum nccl_algo, enum nccl_proto):
 * models/nccl.h. */
/* How a codec is applied to a bucket ([exchange] compression): inside the
 * collective at every hop (INCEPTIONN's way), or once per bucket around
 * it (PyTorch DDP's communication hooks). */
enum compression { COMPRESS_PER_HOP, COMPRESS_PER_BUCKET, COMPRESS_COUNT };
/* Whose kernels a GPU codec's cost models ([exchange] implementation;
 * models/codec_costs.conf says what each launches and streams). */
enum implementation { IMPL_GRADSIM, IMPL_PYTORCH, IMPL_FUSED, IMPL_COUNT };
/* Sharded data parallel ([training] sharding): ZeRO's stage 1
 * (optimizer states) and 2 (and gradients) exchange alike, each bucket's
 * gradients reduce-scattered, each GPU's shard updated, the updated
 * weights allgathered; they differ in memory (models/memory.h). Stage 3
 * (FSDP's FULL_SHARD) keeps only its shard of the weights: each unit's
 * weights allgathered before its forward and again before its backward,
 * its gradients reduce-scattered after its backward. HSDP (FSDP's
 * HYBRID_SHARD) is stage 3 inside each machine, the machines replicas:
 * each unit's weights gathered inside the machine, its gradients
 * reduce-scattered inside and each shard allreduced across machines. */
enum sharding {
  SHARD_NONE,
  SHARD_ZERO1,
  SHARD_ZERO2,
  SHARD_ZERO3,
  SHARD_HSDP,
  SHARD_COUNT
};
/* Which halves of a sharded exchange carry a codec per hop ([exchange]
 * shard_codec): both, the weights' allgathers only (ZeRO++'s quantized
 * weights, qwZ), or the gradients' reduce-scatters only; the other half
 * moves its values uncompressed (at grad_dtype's width). */
enum shard_codec {
  SHARD_CODEC_ALL,
  SHARD_CODEC_WEIGHTS,
  SHARD_CODEC_GRADIENTS,
  SHARD_CODEC_COUNT
};

/* The one table of each enum's names, indexed by it: the values of its
 * key ([platform] fabric, [exchange] payload and placement, [training]
 * mode) and of the results' columns, all in sim/names.c (a file of its
 * own, so that readers of experiment files link it without the engine). */
extern const char *const fabric_names[FABRIC_COUNT];
extern const char *const payload_names[PAYLOAD_COUNT];
extern const char *const placement_names[PLACE_COUNT];
extern const char *const mode_names[MODE_COUNT];
/* nccl_algo_names and nccl_proto_names end with "auto" at the _AUTO
 * index. */
extern const char *const nccl_algo_names[NCCL_ALGO_COUNT + 1];
extern const char *const nccl_proto_names[NCCL_PROTO_COUNT + 1];
extern const char *const nccl_version_names[NCCL_VERSION_COUNT];
extern const char *const nccl_tuner_names[NCCL_TUNER_COUNT];
extern const char *const compression_names[COMPRESS_COUNT];
extern const char *const implementation_names[IMPL_COUNT];
extern const char *const sharding_names[SHARD_COUNT];
extern const char *const shard_codec_names[SHARD_CODEC_COUNT];

/* One simulation's configuration (every key of an experiment file, the
 * docs/run.md, "Experiment keys"). Strings are owned by whoever filled it. */
struct point {
  /* [platform] */
  enum topology topology;
  char *platform_file; /* topology = file:PATH */
  int nodes;           /* workers */
  int aggregators;
  double bandwidth_Bps; /* bytes per second */
  double latency_s;     /* one-way, worker to worker */
  bool ideal;
  double timing_precision_s; /* SimGrid's surf/precision */
  int gpus_per_node, gpus_per_switch; /* gpu-cluster, nvswitch */
  double pcie_Bps, pcie_latency_s;
  int nics_per_node;        /* nvswitch: NICs per node, GPU i on NIC i K/G */
  double nvlink_Bps;        /* nvswitch: each GPU's NVLink, each way */
  double nvlink_latency_s;  /* nvswitch: GPU to GPU inside a node */
  enum fabric fabric;       /* nvswitch */
  bool nvls;                /* nvswitch: the NVSwitches reduce (NVLink
                             * SHARP: Hopper's third NVSwitch and later) */
  bool sharp;               /* the network's switches reduce (InfiniBand
                             * SHARP, NCCL's CollNet) */
  int leaf;                 /* fat-tree: hosts per leaf switch; nvswitch:
                             * NIC ports per leaf switch */
  double oversubscription;  /* fat-tree: leaf down/up bandwidth ratio */
  double host_stack_Bps;    /* a host's sends plus receives at most this
                             * (0: each way at the link's rate) */
  double ingress_Bps;       /* star: a host's receiving rate (0: the
                             * link's; else `bandwidth` is egress only) */
  int group_size;           /* dragonfly: hosts per router */
  int torus_dims[3];        /* torus: hosts along each axis (0: none) */
  /* [platform] hosts: worker i takes hosts[i], aggregator a hosts[nodes +
   * a] (a NULL-terminated list, from the hostfile HOSTS_FILE); NULL: the
   * platform's own order (the natural order of the names for a file). */
  char *hosts_file; /* "" for none */
  char **hosts;
  /* [model] */
  char *model;    /* name or path, or "synthetic" */
  bool synthetic; /* model is "synthetic": params, tensors, shape, compute
                   * and update give it; otherwise a model file */
  uint64_t params; /* synthetic */
  int tensors;
  /* synthetic: every tensor's shape ([model] shape), SHAPE_DIMS of them
   * (0: none, vectors) */
  size_t shape_dims;
  uint64_t shape[MODEL_MAX_DIMS];
  double compute_s, update_s;
  double compute_scale; /* multiplies forward and backward times */
  double update_Bps;    /* bytes the update touches per second, 0: device */
  char *device, *precision;
  int batch; /* 0: the model file's */
  uint64_t seq_len; /* token models: tokens per sample, 0: the file's */
  int micro_batch;  /* samples per forward and backward pass, 0: the
                     * batch (no gradient accumulation) */
  const char *grad_dtype; /* [model] grad_dtype (static): fp32, bf16, fp16 */
  int grad_bytes;   /* its bytes: 4 or 2, each gradient value's on the wire
                     * when it travels uncompressed, and in buckets and
                     * sums */
  double mfu;       /* token models: model FLOPs utilization, 0: device's */
  /* [exchange] */
  char *algorithm;
  char *codec; /* a codec spec, or "none" */
  enum placement placement;
  double reduce_Bps; /* bytes summed per second (gamma = 1 / this) */
  double staging_Bps; /* CUDA-aware MPI: each bucket copied to the host
                       * before its collective and back after it at this
                       * rate (0: none, the collective on device memory) */
  enum payload payload;
  int sample;        /* sampled: values encoded per block */
  int compress_min;  /* buckets of fewer values travel uncompressed */
  bool pull_direct;  /* ps, ps-shared: aggregators send to every worker */
  int warmup_steps;  /* untimed codec steps before iteration 0 */
  double server_momentum; /* ps, ps-shared: the pull is v = m v + sum */
  int group;         /* hierarchical: workers per node (0: topology's) */
  int chunk;         /* csc: values per chunk */
  int channels;      /* nccl-*: rings or trees at once (0: one per NIC) */
  enum nccl_algo nccl_algo;   /* nccl: NCCL_ALGO, or the tuner's choice */
  enum nccl_proto nccl_proto; /* nccl-*: NCCL_PROTO, or the tuner's */
  enum nccl_version nccl_version; /* whose tuner tables choose */
  enum nccl_tuner nccl_tuner;     /* a tuner plugin over NCCL's choice */
  /* The latency the network plugin reports to NCCL (s;
   * ncclNetProperties_t.latency), which NCCL's tuner adds to a step
   * between machines (twice under Simple) and no transfer pays. */
  double nccl_net_latency_s;
  /* NCCL's kernels (collectives/nccl.c), as a calibration sets them: the
   * host's and CUDA's time a call takes beyond NCCL's base latency of its
   * algorithm and protocol (s), a Simple step's CTA time inside a machine (s, beyond the
   * wire's latency; < 0: NCCL's), LL's bus bandwidth (all channels
   * together) and LL128's per channel (bytes/s of data; 0: NCCL's
   * model's), the fraction of its NVLink NVLS reaches (0: NCCL's
   * efficiency). */
  double nccl_launch_s, nccl_step_s, nccl_ll_Bps, nccl_ll128_Bps;
  double nvls_efficiency;
  enum compression compression; /* a codec per hop or per bucket */
  enum implementation implementation; /* whose GPU codec kernels */
  double tree_chunk; /* nccl-tree: bytes a channel pipelines per step */
  /* NCCL_NVLSTREE_MAX_CHUNKSIZE: NVLS's tree's largest chunk (bytes; 0:
   * NCCL's default, 64 KiB from four machines on). */
  double nvlstree_max_chunk;
  double csc_ratio;  /* csc: fraction of chunks exchanged */
  bool fast_forward;
  double eager_bytes; /* messages below this are sent eagerly (detached) */
  double envelope_bytes; /* added to every message on the wire */
  char *costs; /* codec cost table, "" for the shipped one */
  /* [nic] */
  struct nic_engine nic;
  struct nic_framing framing;
  /* [training] */
  enum mode mode;
  int iterations;
  int k;
  double fusion_bytes; /* 0: one bucket per tensor; INFINITY: one in all */
  double fusion_cycle_s; /* a bucket closes after this much backward (0:
                          * never by time) */
  int local_steps;
  char *stragglers; /* "W:F,..." slowdown factors, "" for none */
  double step_overhead_s; /* fixed time added to every iteration */
  int optimizer;          /* enum optimizer (models/memory.h) */
  enum sharding sharding;
  enum shard_codec shard_codec; /* [exchange] shard_codec */
  /* [exchange] codec_stream = own: a GPU codec's kernels on a CUDA
   * stream of their own, beside the layers' compute (else after it, on
   * the compute's stream). */
  bool codec_own_stream;
  bool shard_per_layer;   /* [training] shard_unit = layer (else block) */
  bool checkpoint;        /* [training] activation_checkpointing */
  /* ZeRO++ (Wang et al., ICLR 2024) on sharding = zero3: hpz, its
   * hierarchical partitioning (a secondary copy of the weights sharded
   * inside each machine, backward's gathers from it inside the machine);
   * qgz, its gradients reduced inside each machine first, then each
   * machine's part across machines (its all-to-alls' two hops, here as
   * reduce-scatters). */
  bool hpz, qgz;
  double *slowdown; /* per worker, parsed from stragglers; NULL: none (a
                     * sweep of huge clusters holds no per-worker array) */
  /* [gradients] */
  struct gradgen_params grad;
  /* The point's identity, for the layers above (the engine reads
   * neither): its effective configuration as key file text, and a short
   * hash of it (the name of its result files). */
  char *config;
  char hash[17];
};

/* What one point measured. Means per iteration, simulated seconds (the
 * docs/outputs.md, "runs.csv" says what each is). */
struct run_result {
  double exchange_s, iteration_s;
  /* The worker that ends each iteration last, per iteration (means). */
  double compute_s, codec_s, comm_s, reduce_s, idle_s;
  /* iteration_s split (means over the iterations of the worker that
   * finishes last; they add up to iteration_s): GPU compute, then the
   * waits compute did not hide, by what the exchange was doing. */
  double split_compute_s, exposed_comm_s, exposed_codec_s, exposed_reduce_s,
      split_idle_s;
  /* The aggregators' summation per iteration (mean over aggregators; 0
   * without them): in sync every worker waits for it, inside its idle
   * time, since an aggregator is no worker. */
  double aggr_reduce_s;
  double wire_bytes;
  /* One GPU's memory (models/memory.h), bytes: model states, the
   * activations (NAN: not modelled, not in the total), a codec's error
   * feedback, their total; the device's capacity (NAN: not listed). */
  double mem_buffers; /* stage 3's gathered units (models/memory.h) */
  double mem_params, mem_grads, mem_optimizer, mem_activations, mem_residual,
      mem_total, capacity;
  double formula_s; /* NAN where no analytic model applies */
  const char *oracle; /* "pass", "fail" or "na" (static strings) */
  /* Packets (framing = packets) and the NIC engine (placement = nic). */
  double packets, header_bytes; /* every sender's, like wire_bytes */
  double driver_s;              /* per worker: its host's driver time */
  double nic_s;                 /* per worker: its two engines' busy time */
  double nic_busy;              /* nic_s / (2 iteration_s) */
  double nic_stall_cycles;      /* per worker: both engines */
  double simulated_s; /* the whole run */
  uint64_t ff_steps;  /* ring steps worker 0 fast-forwarded, all phases */
  uint64_t ff_iterations; /* whole iterations fast-forwarded */
  uint64_t ff_buckets;    /* bucket exchanges worker 0 fast-forwarded */
  GString *iterations; /* iterations.csv rows, without point index or header */
  GString *links;      /* links.csv rows, likewise */
  GString *calls;      /* nccl.csv rows, likewise */
  char *note;          /* the oracle's finding when it failed, or NULL */
};

/* Check everything about P that does not need SimGrid (model, codec,
 * collective, payload size); -1 with *ERR on bad input. */
int run_check(const struct point *p, char **err);

/* Simulate P: its platform XML (and, when TRACE, a Paje trace,
 * trace.paje) are written into WORKDIR, which must exist. Returns 0 with
 * *R filled, or -1 with *ERR: bad input that run_check() cannot see (a
 * platform file with too few hosts, a codec that does not suit the
 * collective) or a run that had to stop (a codec refusing NaN). */
int run_point(const struct point *p, const char *workdir, bool trace,
              struct run_result *r, char **err);

void run_result_clear(struct run_result *r);

/* P compresses: its [exchange] codec is not "none" (the key's one
 * spelling of no codec). */
bool run_has_codec(const struct point *p);
/* The GPUs P's sharded states are divided among: its workers, HSDP's a
 * machine's; 1 unsharded. */
int run_shards(const struct point *p);
/* P's exchange runs unit by unit, the weights sharded too: zero3, hsdp. */
bool run_units(const struct point *p);

/* P's iteration predicted by the alpha-beta-gamma formulas, without
 * SimGrid (sim/predict.c): each bucket's exchange by the collective's
 * formula (formula.h) on its topology, or the ring's where it has none, at
 * the bytes it carries (WIRE_BITS per value for a codec's payload, as
 * measured on data by the caller), its codec work at the cost table's
 * figures on the point's device, and compute from the model, combined as
 * the schedule runs them (overlap: buckets exchanged one after another
 * as backward produces them). A prediction that ranks configurations,
 * not a bound: the simulation's link sharing, waits and NCCL's protocols
 * are not in it. */
struct run_prediction {
  double compute_s;    /* forward, backward and update per iteration */
  double exchange_s;   /* every bucket's exchange, one after another */
  double codec_s;      /* of which codec work */
  double iteration_s;  /* the schedule's iteration */
  const char *formula; /* the formula.h model used (static) */
  double memory_bytes; /* one GPU's memory, as runs.csv's memory_bytes */
  double capacity;     /* the device's memory, NAN when not listed */
  int batch;           /* samples per worker and iteration */
  double params;       /* the model's gradient values */
};
int run_predict(const struct point *p, double wire_bits,
                struct run_prediction *out, char **err);

/* Whether R's point fits its GPU's memory: "yes", "no", or "-" where the
 * device lists no capacity. The model states and the codec's residual
 * always count; the activations where they are modelled. */
const char *run_fits(const struct run_result *r);

/* What a running point has done, for a progress display in another
 * process (sweep/ shares it with the point's process): the engine writes
 * it as it goes. Counts of worker 0 (buckets and iterations fast-forward
 * skips count as done); aligned doubles and 64-bit counts, each written
 * whole, so that a reader sees each field old or new, never torn. */
struct run_progress {
  double sim_s;    /* the simulated clock at the last message */
  double messages; /* point-to-point messages simulated so far */
  int64_t buckets, buckets_total;     /* bucket exchanges of worker 0 */
  int64_t iterations, iterations_total;
};

/* Where run_point() writes its progress (NULL, the default: nowhere). */
void run_progress_to(struct run_progress *p);

/* The shape of P's simulation, before it runs, for estimates of its
 * memory and time (config/estimate.c). */
struct run_shape {
  int hosts;          /* workers and the aggregators the collective uses */
  size_t buckets;     /* buckets per exchange */
  double held_values; /* gradient values held per host, all buckets */
  double value_bytes; /* bytes per held value and host: the value, a
                       * residual, the oracle's shadow and ledger */
  double exchanges;   /* exchanges over the run (local steps skip some) */
  /* Messages every worker sends per bucket and exchange in a collective
   * without aggregators whose formula is one of p, n, alpha, beta and
   * gamma (its alpha count), fast-forwarded steps not counted; 0 for
   * the others (at least one message per host then). */
  double rounds;
  /* The same without fast-forward, and the buckets simulated so (all of
   * them without fast-forward; with it, a whole-block collective's
   * buckets whose values p does not divide: collective balanced_blocks). */
  double full_rounds;
  size_t full_buckets;
  bool fast_forward;  /* fast-forward applies (docs/fast-forward.md) */
  const char *ff_blocker; /* otherwise the key that keeps it off (or what
                           * keeps it off full_buckets' steps) */
  /* Bytes each worker holds for each other one while exchanging
   * (allgather-rdb's references to every message; collective pair_bytes). */
  double pair_bytes;
  /* Bytes kept per bucket and worker besides its vector: fast-forward by
   * recurrence's records, where whole buckets may be skipped (0
   * otherwise). */
  double bucket_bytes;
  int actors;         /* SimGrid actors: workers (two each when their
                       * schedule has a communication actor) and
                       * aggregators */
  /* Messages every worker sends per exchange, all buckets, counted by
   * the collective itself (NCCL's kernel: its channels' chunks and steps;
   * with fast-forward where it applies), or < 0 where ROUNDS count
   * them; and its messages in flight at once (at least 1). */
  double kernel_messages;
  double streams;
  /* Values a worker's messages carry per exchange, all buckets (about
   * twice the values held: a ring's reduce and gather legs, a push and a
   * pull), or 0 with payload = none; of them, those a codec encodes and
   * decodes on the way (a codec per hop, in a collective without
   * aggregators), or 0. */
  double payload_values, codec_values;
  /* Where each worker gathers every worker's message of a bucket
   * (allgather-rdb; compression = per-bucket with a codec that does not
   * sum) and decodes all p of them: the payload bytes a worker decodes
   * per exchange, all buckets (p codec bounds of the values held); the
   * values of them the oracle's ledger checks (p times the values held,
   * with payload = full); and the bytes of a bucket's p messages, alive
   * at once, in the largest (payloads and, with the oracle, their
   * ledgers), there and where the aggregators take a bucket's p pushes
   * at once (a collective with aggregators); 0 otherwise. */
  double gather_decoded, gather_values, gather_bytes;
};
/* Whether ACTORS actors' stacks get a guard page each. SimGrid's guard
 * page splits the stack's heap mapping in two, and Linux allows a process
 * vm.max_map_count mappings (65,530 by default; SimGrid aborts deep in the
 * run when they run out), so above 28,669 actors (at the default) the
 * stacks go unguarded: the same actor code, whose stack use does not grow
 * with the worker count, runs guarded in every test. */
bool run_stack_guards(int actors);
/* Whether the engine is built with AddressSanitizer (no guard pages then:
 * run.c), whose redzones, shadow and quarantine add to a run's memory. */
bool run_sanitized(void);
/* Each actor's stack, KiB (contexts/stack-size). */
#define RUN_STACK_KIB 64
/* Resident bytes of ACTORS actors' stacks beyond the touched pages the
 * per-host figure of the estimate counts: unguarded stacks come from
 * calloc, which zeroes (so touches) every page of them. */
double run_stack_bytes(int actors);
/* -1 with *ERR when the model or the collective cannot be loaded. */
int run_shape(const struct point *p, struct run_shape *out, char **err);

/* How P's [model] keys time a model file (models/model.h). */
struct model_opts point_model_opts(const struct point *p);

/* The SimGrid platform XML of P: generated into DIR, or P's own file.
 * Returns its path (g_free) or NULL with *ERR. */
char *platform_xml(const struct point *p, const char *dir, char **err);

/* The names of P's hosts (a NULL-terminated list, g_strfreev): a
 * generated platform's without SimGrid, a file's by loading it in a child
 * process (see platform_file_check()), in the platform's default order
 * (a file's: the natural order of the names, h2 before h10). -1 with
 * *ERR. */
int platform_host_names(const struct point *p, char ***names, char **err);

/* Check a platform file before anything is simulated or written: that it
 * is well-formed XML (a line-precise message otherwise) and that SimGrid
 * loads it (in a child process, as SimGrid starts once per process and
 * aborts on a platform it rejects). Sets *HOSTS to its host count.
 * Returns 0, or -1 with *ERR. */
int platform_file_check(const char *path, size_t *hosts, char **err);

/* Whether the collective ALGORITHM's aggregators pull once for all
 * workers, each worker decoding the one message (ps-shared); false for
 * the others and for a name no collective has. */
bool collective_shares_pull(const char *algorithm);

/* ---- topologies (sim/platforms/registry.c) ------------------------------
 * The one table of the topologies' names: [platform] topology = NAME
 * (file:PATH aside). */
const char *topology_name(enum topology t);
/* 0 with *OUT, or -1 for a name no generator has. */
int topology_find(const char *name, enum topology *out);
/* Every generated topology's name, comma-separated (g_free). */
char *topology_names(void);
/* What P's topology cannot build (nodes that do not fill whole machines,
 * NICs that do not divide the GPUs, ...): 0, or -1 with a message naming
 * the keys in ERR. */
int topology_check(const struct point *p, char *err, size_t errlen);
/* Workers per machine on P's topology (the GPUs of a gpu-cluster or
 * nvswitch node), 0 where the topology has no machines of several. */
int topology_node_size(const struct point *p);
/* Bytes SimGrid's routing of P's generated platform holds beyond its
 * hosts and links (a Dijkstra zone's route cache), for the estimate. */
double topology_route_bytes(const struct point *p);

#endif
