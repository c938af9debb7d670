/* sim/sim.h: the simulation of one experiment point: workers and
 * aggregators as SimGrid actors, the data they exchange, and the
 * accounting of where their time goes.
 *
 * Time: GPU work (forward, backward, update, codecs placed on the GPU)
 * is a sleep under the worker's accelerator mutex, so that it serialises
 * but does not load the host; CPU work (summation, codecs placed on the
 * CPU) is an execution on the worker's host (PLATFORM_SPEED flop/s, one
 * core), so that concurrent CPU work shares it; messages are SimGrid
 * communications through one mailbox per ordered pair of ranks. */
#ifndef GRADSIM_SIM_SIM_H
#define GRADSIM_SIM_SIM_H

#include "codec.h"
#include "engine.h"
#include "formula.h"
#include "model.h"
#include "server.h"

#include <simgrid/forward.h>
#include <stdbool.h>
#include <stdint.h>

/* Where a worker's communication side spends its time. */
enum state { ST_CODEC, ST_COMM, ST_REDUCE, ST_IDLE, ST_NSTATES };

/* A vector a collective works on: N values simulated, M of them held (N
 * when payload = full, a sample when sampled, 0 when none). Messages are
 * timed for N values; codecs run on the M held ones and the payload size
 * is scaled by N / M.
 *
 * With the oracle (payload = full) three double arrays travel beside X,
 * through every message, sum and copy (payload.c, "the ledger"):
 *   EXACT   the dataflow: the same sums of the gradients, without loss
 *           (NAN: a value the collective keeps local by design, csc's
 *           unselected chunks, which is no sum and is not checked);
 *   OFFSET  what X is known to differ from the exact sum by: error
 *           feedback's unsent residuals (RB - RA of each encode), values
 *           a collective adds on purpose (csc's kept chunks, a server's
 *           momentum);
 *   BOUND   the most X may differ from EXACT + OFFSET: the error bounds
 *           of the encodes that touched the value (codec_error_bounds,
 *           from each encoded block's actual values) plus the rounding of
 *           every float sum into it. */
struct vec {
  uint64_t n;
  size_t m;
  float *x;      /* M values, or NULL */
  double *exact; /* the oracle's shadow: M values, or NULL */
  double *offset, *bound; /* the ledger: M values each, with EXACT */
};

/* What travels through a mailbox; the sender allocates, the receiver
 * frees (msg_free). Reference counted, so that a bundle (allgather) can
 * share the messages it carries. */
struct msg {
  int refs;
  int src;
  int tag;         /* the sender's label (NVLS: its channel), or 0 */
  double rate_Bps; /* NVLS: the rate the switch forwards it at (0: the
                    * links') */
  bool raw;        /* fp32 values whatever the codec */
  double posted;   /* simulated time the sender posted it */
  uint64_t bytes;  /* simulated size */
  uint64_t n;      /* values it stands for */
  unsigned char *data; /* encoded payload of the held values, or NULL */
  size_t len;
  size_t m;        /* held values encoded in data */
  double *exact;   /* shadow values (M), or NULL */
  double *offset, *bound; /* their ledger (struct vec), with EXACT */
  /* With EXACT: what each value must decode to, the values packed plus
   * what error feedback kept back (HOP_WANT), and within what (HOP_BOUND:
   * that one encode's codec_error_bounds), checked at every decode. */
  double *hop_want, *hop_bound;
  struct msg **parts; /* a bundle: the messages it carries */
  size_t nparts;
  /* Transport through the NIC engine (placement = nic), models/nic.h;
   * zero otherwise. PACKETS counts the packets of the uncompressed
   * message, which compression on the NIC keeps. */
  uint64_t nic_packets;
  double tx_s, rx_s;           /* compression, decompression engine time */
  double tx_stalls, rx_stalls; /* engine stall cycles */
  double fill_s;               /* what pipelining cannot hide */
  uint64_t sent_packets;       /* framing: packets on the wire (sim_send) */
  double tx_done;  /* when the sender's compression engine finished it */
  struct sent *sent; /* its send's handle, kept by its sender, or NULL */
};

void msg_free(struct msg *m); /* drops one reference */
struct msg *msg_ref(struct msg *m);
/* Add PART (a new reference) to the bundle B: its size and NIC work. */
void msg_bundle_add(struct msg *b, struct msg *part);
/* A message that carries M's payload by reference: a bundle of one
 * (of M's one part, if M is such a bundle), sent as M would be and
 * unpacked as M (sim_unpack), so that a payload passed on or sent to
 * several receivers is not copied (copied, a parameter server's pull
 * held p copies of the payload and the oracle's ledger at once). */
struct msg *msg_share(struct msg *m);

struct sim;

/* One interval of a worker's communication side, or COPIES of it each
 * PERIOD later than the one before (the steps fast-forward skips: one
 * record for them all, so that a worker's spans stay O(steps simulated)
 * rather than O(p) per bucket). */
struct span {
  double t0, t1;
  double period;
  uint32_t copies;
  enum state st;
};

/* A member's place in a fast-forward sequence (below, "fast-forward"). */
struct ff_seq;
struct ff_cursor {
  bool on;
  struct ff_seq *seq;
  double t[3];   /* the member's starts of its last steps, latest first */
  int seen;      /* steps it started */
  int skip;      /* when ff_step() returned true: the steps left */
  double period; /* and their length */
  /* The caller's record of the last step: */
  double mark_t;             /* its start */
  double acc[ST_NSTATES];    /* the worker's summed spans then (direct) */
  double wire;               /* the worker's wire bytes then */
};

/* What fast-forward replays: a ring step, a period of a run of buckets,
 * an iteration. */
enum { FF_LEVEL_STEP, FF_LEVEL_BUCKETS, FF_LEVEL_ITERATION, FF_LEVELS };

/* Bytes to one route, consolidated per bucket (recurrence's records:
 * struct worker recur_routes). */
struct recur_route {
  gpointer key;
  double bytes;
};

struct worker {
  int rank;
  struct sim *sim;
  sg_host_t host;
  sg_mutex_t gpu;
  double slowdown;
  /* Codec states for the worker's own vectors, one per bucket (and
   * aggregator shard), for the codecs with error feedback. */
  codec_state_t **states;
  /* A collective's own state per bucket (csc's residuals), or NULL. */
  void **cstate;
  /* Accounting of the iteration in progress. */
  GArray *spans;      /* struct span, communication side */
  /* sync schedule: spans are only summed (the attribution window holds
   * them all), so that memory stays O(1) per worker. */
  bool direct;
  double acc[ST_NSTATES];
  /* overlap: from SUM_FROM (when compute waits for the exchange; INFINITY
   * before) every span the communication side logs falls inside the
   * wait, so it is summed into ACC (ACC0 then) rather than kept. */
  double sum_from, acc0[ST_NSTATES];
  double wire_bytes;  /* bytes this worker sent */
  double first_send;  /* time of its first send in the iteration, or -1 */
  /* Ring legs it entered (fast-forward's keys; a ring's two legs count
   * once where they are one sequence: collectives/common.c). */
  uint64_t ff_legs;
  /* NCCL kernels it ran (their channels' fast-forward keys). */
  uint64_t nccl_calls;
  /* Bytes its messages put on each route, (src << 32 | dst) -> double,
   * since the start of the last simulated ring step, period of a run of
   * buckets and iteration (FF_LEVEL_*) that fast-forward may replay;
   * off: not recording. */
  GHashTable *ff_routes[FF_LEVELS];
  bool ff_recording[FF_LEVELS];
  /* Fast-forward of a periodic run of buckets (schedules/common.c): the
   * run it is in (an index into struct sim's ff_runs) and its cursor. */
  size_t bff_run;
  struct ff_cursor bff;
  /* Fast-forward by recurrence (recur.c), when it applies: the worker's
   * state at the end of each bucket of the iteration in progress (IT),
   * the bytes each of those buckets put on each route, the latest message
   * it saw complete in the bucket in progress, the ring legs it had
   * entered at its start, and when its backward began (sync: when its
   * exchange began, every bucket posted). */
  GArray *recur_ends, *recur_routes;
  /* The same per ring leg over all workers (recur.c, struct recur_leg),
   * the bytes each put on each route, and whether one is open. */
  GArray *recur_legs, *recur_leg_routes;
  bool leg_open;
  double msg_last, backward_t;
  uint64_t legs0;
  int recur_it;
};

struct bucket {
  size_t first, count; /* tensors [first, first + count), backward order */
  uint64_t n;          /* values */
};

/* Per-iteration record of one worker (a row of iterations.csv). From
 * START its compute side spends COMPUTE_S on the GPU (update, forward,
 * backward; GPU_WAIT_S of it waiting for the GPU while the worker's
 * communication actor ran a codec there), and waits for the exchange:
 * the wait is split by what the communication side did meanwhile,
 * CODEC_S, COMM_S, REDUCE_S, and IDLE_S (waiting for peers, or nothing
 * logged). In sync the whole exchange is waited for; in overlap and pipe
 * only what compute did not hide. The parts tile [START, END), except
 * that pipe's wait for its last exchanges, after its last iteration, is
 * added to that iteration's parts. */
struct iter_rec {
  double start, end;
  double compute_s, codec_s, comm_s, reduce_s, idle_s;
  double gpu_wait_s;
  double wire_bytes;
  double exchange_start, exchange_end;
};

/* Packets and NIC engine work of the whole run (struct sim.net). */
struct net_totals {
  double packets, header_bytes; /* every sender's */
  double driver_s;              /* workers' hosts, both ends */
  double nic_s, nic_stalls;     /* workers' NIC engines */
};

struct codec_costs;

struct sim {
  const struct point *p;
  struct codec_costs *costs;
  uint64_t pack_count; /* seeds the fresh codec streams of sim_pack */
  double aggr_wire_bytes;
  /* Bytes each pair of ranks sent, (src << 32 | dst) -> double: put on
   * their routes' links at the end (links.csv). */
  GHashTable *pair_bytes;
  double aggr_reduce_s; /* the aggregators' summation, all of them */
  struct net_totals net;
  /* placement = nic with a codec other than inceptionn: its streaming
   * engine (codec_costs.conf). */
  struct nic_stream nic_stream;
  /* placement = nic: per rank, when its compression and decompression
   * engines are next free (one engine each per NIC, shared by the
   * messages in flight through it); NULL until first used. */
  double *tx_free, *rx_free;
  struct model *model;
  const struct collective *coll;
  codec_t *codec; /* NULL for none */
  struct worker *workers;
  int nworkers;
  sg_host_t *aggr_hosts;
  int naggr;
  /* Hosts that are neither workers nor aggregators but send and receive
   * (the NVSwitches' reduction: collectives/nccl_kernel.c), ranks
   * nworkers + naggr + i. */
  sg_host_t *extra_hosts;
  int nextra;
  codec_state_t **aggr_states; /* [bucket * naggr + a], ps-shared pull */
  float **aggr_vel; /* the same, [exchange] server_momentum's v, or NULL */
  struct bucket *buckets;
  size_t nbuckets;
  /* sharding = zero3: each layer's unit (its bucket), SIZE_MAX for a
   * layer without weights or unit (run.c, units_of). */
  size_t *layer_bucket;
  double gamma;      /* s per byte summed */
  size_t held_max;   /* values held per bucket (sampled payload) */
  /* Records, [iteration][worker]. */
  struct iter_rec *recs;
  /* Oracle. */
  bool oracle_run, oracle_ok;
  double oracle_worst; /* largest error over its bound */
  GString *oracle_msg;
  /* Shared mailbox table (all actors run in one thread). */
  GHashTable *mb;
  /* The mailboxes of NCCL's channels, (channel, src, dst) -> mailbox
   * (created lazily). */
  GHashTable *mb_chan;
  /* NCCL calls' fast-forward records (collectives/nccl_kernel.c), by
   * the calls' numbers. */
  GHashTable *nccl_ff;
  /* Set when a run must stop (an internal check failed). */
  char *fatal;
  /* Rank lists shared by every worker (a list per worker would cost
   * O(p^2) memory while they all run): 0..P-1, and per aggregator A the
   * broadcast tree order [P + A, 0, 1, ..., P-1]. */
  int *ranks;
  int **trees;
  /* Fast-forward (fastforward.c): allowed for this run; the ring steps
   * and iterations worker 0 skipped; the sequences in progress. */
  bool ff_ok;
  uint64_t ff_steps, ff_iterations, ff_buckets;
  GHashTable *ff_seqs;
  /* The periodic runs of buckets (ff_bucket_runs), in bucket order. */
  struct ff_run *ff_runs;
  size_t nff_runs;
  /* Fast-forward by recurrence (recur.c), or NULL where it does not
   * apply. */
  struct recur *recur;
  /* --trace: state intervals, written as a Paje trace at the end. */
  GArray *trace; /* struct trace_ev, or NULL */
  /* The run (run.c): the training schedule, the workers' and
   * aggregators' sides, and the oracle's exact sums (payload.c). */
  const struct schedule *schedule;
  struct wstate *ws;  /* per worker */
  struct astate *as;  /* per aggregator */
  double **truth;     /* [slot * nbuckets + bucket]: held values */
  int truth_slots;    /* iterations whose sums are in flight at once */
  int *checked;       /* per slot: workers that checked it */
  /* The gradients' persistent component, drawn once per tensor for every
   * worker and iteration (gradgen.h); NULL without one. */
  struct gradgen_cache *gcache;
  /* A linear codec (codec_is_linear: PowerSGD): its buckets exchange in
   * rounds (linear.c), and the oracle's books for them, [slot * nbuckets
   * + bucket] like the truth (payload.c). */
  bool linear;
  struct lin_books *lin;
  /* The collective's own state for the run (nccl.c: NCCL's model of the
   * point), or NULL; it lives as long as the run. */
  void *coll_run;
  /* Each actor's kept sends (sim_keep_sends), by actor, or NULL. */
  GHashTable *kept;
};

/* One state interval of a worker's compute (side 0) or communication
 * (side 1) timeline, for the Paje trace. */
struct trace_ev {
  double t0, t1;
  int worker, side;
  int state; /* enum state, or ST_NSTATES for compute */
};

/* Record an interval in the trace (no-op without --trace). */
void sim_trace(struct sim *s, int worker, int side, double t0, double t1,
               int state);
/* Write the recorded intervals to PATH as a Paje trace. */
int sim_trace_write(const struct sim *s, const char *path);

/* The machines of a topology that has machines of several workers
 * (gpu-cluster, nvswitch), for the node-aware collectives and their
 * formulas. */
struct node_net {
  int size;        /* workers per machine (0: the topology has none) */
  int nics;        /* NICs per machine: worker i of a machine on NIC
                    * i nics / size */
  double alpha_in; /* worker to worker inside a machine: latency */
  double beta_in;  /* and seconds per byte */
  double alpha;    /* worker to worker across machines through one NIC */
  double beta;     /* and seconds per byte through it */
};
/* P's machines (size 0 when its topology has none). */
struct node_net topology_node_net(const struct point *p);
/* The analytic formulas' network (one alpha and beta between any two
 * workers) is P's: a flat topology. */
bool topology_flat(const struct point *p);

/* S's fields that need no SimGrid: the model, codec, cost table,
 * buckets; -1 with *ERR on bad input run_check() cannot see (run.c). A
 * run keeps them until its process ends; sim_init_free() frees them where
 * nothing runs (predict.c). */
int sim_init(struct sim *s, const struct point *p, char **err);
void sim_init_free(struct sim *s);

/* Formula F's time for BYTES on S's point: p, n, alpha, beta and gamma
 * of the point, and the rest from collective C's formula_params (S's, or
 * another whose formula stands in for it: predict.c); NAN when F cannot
 * be evaluated. */
double sim_formula_time(const struct sim *s, const struct collective *c,
                        const struct formula *f, double bytes);

/* ---- primitives for collectives ---------------------------------------- */

struct coll_call;

double sim_now(void);

/* BYTES from rank SRC to rank DST: counted for every link of their route
 * (account.c asks SimGrid for the routes at the end), and in worker W's
 * records (fast-forward and recurrence; W may be NULL). */
void sim_link_bytes(struct sim *s, struct worker *w, int src, int dst,
                    double bytes);
/* The same for the pair KEY (sim_pair_key). */
void sim_pair_bytes(struct sim *s, struct worker *w, gpointer key,
                    double bytes);

/* Where this process's run reports its progress (engine.h,
 * run_progress_to), or NULL: sim_send counts messages, the schedules
 * worker 0's buckets and iterations. */
extern struct run_progress *sim_progress;

/* The mailbox for messages from SRC to DST (ranks: workers 0..P-1,
 * aggregators P..). */
sg_mailbox_t sim_mailbox(struct sim *s, int src, int dst);

/* An ordered pair of ranks as one hash key, src << 32 | dst, and its hash
 * (the tables of mailboxes and of pair bytes). GLib's g_direct_hash keeps
 * the low 32 bits only, dst: an incast's p - 1 pairs into one rank would
 * share one hash value, and every lookup would walk all of them. */
gpointer sim_pair_key(int src, int dst);
guint sim_pair_hash(gconstpointer key);

/* Bucket B travels as plain fp32 whatever the codec ([exchange]
 * compress_min). */
bool sim_uncompressed(const struct sim *s, size_t b);
/* C's messages are plain fp32: no codec, or its bucket travels
 * uncompressed (C->raw). */
bool sim_plain(const struct coll_call *c);
/* Bytes a plain value of C takes on the wire (coll_call.value_bytes). */
int sim_value_bytes(const struct coll_call *c);
/* Log a span of the communication side of W. */
void sim_span(struct worker *w, double t0, double t1, enum state st);

/* CPU work of SECONDS (before the worker's slowdown) on W's host, logged
 * as state ST. */
void sim_cpu(struct worker *w, double seconds, enum state st);
/* Accelerator work: a sleep under W's GPU mutex. Returns the time spent
 * waiting for the mutex first (the other actor of W held it). */
double sim_gpu(struct worker *w, double seconds);
/* The GPU is shared by compute and a codec's work (placement = gpu), so
 * the order of their work on it matters; otherwise compute has it alone. */
bool sim_gpu_shared(const struct sim *s);
/* Summation of VALUES dense values: gamma * 4 * VALUES of CPU work on W
 * (NULL: the calling aggregator). */
void sim_reduce(struct worker *w, struct sim *s, uint64_t values);
/* [exchange] staging: VALUES of W's bucket copied between device and
 * host memory at the staging rate (a copy engine's, not the CPU's: the
 * time passes on W's communication side as transfer). */
void sim_stage(struct worker *w, struct sim *s, uint64_t values);

/* Send M (takes ownership) from the caller to rank DST without waiting;
 * returns the comm to wait on (sim_wait_send), or NULL when the message
 * goes eagerly (below [exchange] eager_bytes: detached, nothing to wait
 * for, as MPI's eager protocol). */
sg_comm_t sim_send(struct coll_call *c, int dst, struct msg *m);
void sim_wait_send(struct coll_call *c, sg_comm_t comm);
/* Receive the next message from rank SRC, blocking; logs idle (before
 * the sender posted) and comm time. */
struct msg *sim_recv(struct coll_call *c, int src);
/* Receive one message from each of the N ranks SRCS at once (so that the
 * transfers share the links), into OUT[i]. */
void sim_recv_all(struct coll_call *c, const int *srcs, int n,
                  struct msg **out);
/* Receives posted ahead (MPI_Irecv): one message from each of the N
 * ranks SRCS, the comms into GETS (each released by sim_recv_wait), the
 * messages into OUT as they arrive. A message's transfer starts when both
 * its send and its receive are posted. */
void sim_recv_post(struct coll_call *c, const int *srcs, int n,
                   struct msg **out, sg_comm_t *gets);
/* Wait for the N receives GETS of sim_recv_post, logged as sim_recv_all
 * logs its own from now. */
void sim_recv_wait(struct coll_call *c, sg_comm_t *gets, int n,
                   struct msg **out);
/* NCCL's connections (collectives/nccl_kernel.c): a message on channel
 * CHAN (a mailbox of its own for each channel and pair of ranks), which
 * its sender never waits for, at most at RATE_BPS wire bytes a second
 * (<= 0: the links' rate); accounted as sim_send accounts. It flows once
 * its receiver asks for it (sim_get_channel). No NIC engine or packets.
 * Its handle is kept in C->sends where the caller keeps them, else it
 * is detached. */
void sim_send_channel(struct coll_call *c, int dst, int chan, struct msg *m,
                      double rate_Bps);
/* The calling actor's kept sends, made on first use. SimGrid 3.32 keeps
 * every detached comm on one list and removes each as it completes by a
 * scan of the whole list (CommImpl::finish: the maestro's activities_),
 * which with hundreds in flight took a third of an NCCL run; a kept send
 * is on its sender's own list, which sim_release_sends empties of those
 * taken. */
struct sends *sim_keep_sends(struct sim *s);
/* Release the handles of the kept sends SS whose messages were taken
 * (sim_took): each waited on (done already: no simulated time passes). */
void sim_release_sends(struct sends *ss);
/* M was taken by its receiver: its kept send, if any, may be released. */
void sim_took(struct msg *m);
/* Before the calling actor ends: wait until every message it sent and
 * kept is taken (a send whose sender ended is cancelled, its receiver
 * failed, where a detached one flowed on). */
void sim_drain_sends(struct sim *s);
/* The next message from SRC on channel CHAN, asked for now: the comm to
 * wait on (sim_wait_any_for), the message into *OUT. */
sg_comm_t sim_get_channel(struct coll_call *c, int src, int chan,
                          struct msg **out);
/* After a message of sim_get_channel arrived: its sender's exchange began
 * no later than it posted it (exchange_s), and recurrence's record of the
 * latest message. */
void sim_got_channel(struct coll_call *c, struct msg *m);

/* Send to DST and receive from SRC at once (the send is posted first). */
struct msg *sim_sendrecv(struct coll_call *c, int dst, struct msg *out,
                         int src);

/* ---- the oracle's ledger (ledger.c) ------------------------------------ */

/* The oracle's ledger (struct vec): M (its EXACT, OFFSET and BOUND copied
 * from the values it was packed from) just encoded from X, by a stream
 * whose residual was RB before and is RA after (NULL: none; S NULL: sent
 * raw, no codec): the encode's unsent part joins its offset and its error
 * bound its bound, and both are what its decode is held to. */
void payload_ledger_encode(const struct sim *s, struct msg *m,
                           const float *x, const float *rb, const float *ra);
/* After M was decoded by C's caller into V's values [A, A + M->m) (ADD:
 * added to BEFORE, the values they held): each decoded value checked
 * against what was encoded (a decoder's error is caught where it
 * happens, whatever follows), the ledger copied or added, with the
 * rounding of the sum. */
void payload_ledger_unpack(struct coll_call *c, struct vec *v, size_t a,
                           const struct msg *m, bool add,
                           const float *before);
/* A collective added ADDED on purpose into V's value J (already in
 * V->x[J]): known to the ledger, with the sum's rounding. */
void payload_ledger_add(struct vec *v, size_t j, double added);

/* ---- data through codecs -------------------------------------------- */

/* The shapes of bucket B's tensors (g_free), K of them: what a linear
 * codec (codec.h, "linear compressors") sees of them. */
struct codec_shape *linear_shapes(const struct sim *s, size_t b, size_t *k);

/* Build a message carrying V[lo, hi) (a range of values of V), encoded
 * with the simulation's codec (a fresh, stateless stream) or with STATE
 * when not NULL, timing the encode on the caller. */
struct msg *sim_pack(struct coll_call *c, const struct vec *v, uint64_t lo,
                     uint64_t hi, codec_state_t *state);
/* Codec work of SHARE of an encode (ENCODE) or a decode of N simulated
 * values and PAYLOAD bytes, on the caller's side, where the point places
 * it (nothing on the NIC: its engine's time travels with the message). A
 * linear codec's work is its round C->lin_round (a decode: its finish)
 * over the tensors of bucket C->bucket (N and PAYLOAD unused). */
void sim_codec_time(struct coll_call *c, bool encode, uint64_t n,
                    size_t payload, double share);
/* Decode M into V[lo, hi) (ADD: add into it), timing the decode. */
void sim_unpack(struct coll_call *c, const struct msg *m, struct vec *v,
                uint64_t lo, uint64_t hi, bool add);
/* A message of V[lo, hi) as plain fp32 values, whatever the codec (the
 * uncompressed pull of a parameter server). */
struct msg *sim_pack_raw(struct coll_call *c, const struct vec *v, uint64_t lo,
                         uint64_t hi);

/* V->x (V->m values) and, when ORACLE, its shadow and ledger, zeroed;
 * vec_release frees them. */
void vec_alloc(struct vec *v, bool oracle);
void vec_release(struct vec *v);
/* K held values of SRC from index A into DST from index B: the values,
 * and the shadow and ledger where both have them. */
void vec_copy(struct vec *dst, size_t b, const struct vec *src, size_t a,
              size_t k);
/* The held values of V in [lo, hi): their index range in V->x. */
void vec_held(const struct vec *v, uint64_t lo, uint64_t hi, size_t *a,
              size_t *b);

/* ---- collectives ------------------------------------------------------ */

struct coll_call {
  struct sim *sim;
  struct worker *w; /* NULL for an aggregator's side */
  int rank;         /* the caller's rank */
  size_t bucket;
  struct vec *v;    /* the worker's vector: summed in place */
  bool raw;         /* messages are plain fp32 whatever the codec */
  /* Bytes a plain value takes on the wire in this call (0: the point's
   * grad_dtype): a per-bucket codec that sums (codec_sums) allreduces
   * its encoded values at their width. */
  int value_bytes;
  /* sim_batch_begin(): the codec calls until sim_batch_end() are one
   * kernel of encodes and one of decodes on the GPU, each launched once. */
  bool batch, enc_launched, dec_launched;
  /* A linear codec's round an encode's sim_codec_time() charges (0 or 1;
   * its decode is the finish: sim/linear.c). */
  int lin_round;
  /* The workers a sharded exchange's call runs over, GROUP[0..G) with
   * the caller at index ME (HSDP's machine or rail); NULL: all of them. */
  const int *group;
  int g, me;
  /* Where the caller keeps the handles of its channel sends
   * (sim_keep_sends), or NULL: they are detached. */
  struct sends *sends;
};

/* The workers C runs over (its GROUP, else every worker: sim->ranks),
 * their count *G and the caller's index *ME among them. */
static inline const int *coll_group(const struct coll_call *c, int *g,
                                    int *me) {
  *g = c->group ? c->g : c->sim->nworkers;
  *me = c->group ? c->me : c->rank;
  return c->group ? c->group : c->sim->ranks;
}

/* The GPU codec work of the messages a step sends and receives at once
 * (NCCL's channels, a tree's chunks) in one encode and one decode kernel:
 * between these calls only the first of each pays the kernel launch. */
void sim_batch_begin(struct coll_call *c);
void sim_batch_end(struct coll_call *c);

/* A collective's account of one worker's messages for one bucket (struct
 * collective messages), as the streams of kff.h declare them: STREAMS
 * streams (its messages in flight at once) of EVENTS messages each,
 * periodic by PERIOD events once REPS periods repeat, unless it never
 * SETTLES into one period; SETTLE: the events before it does, where
 * measured (0: fast-forward's usual), WINDOW those in flight at most.
 * What fast-forward skips of them is its own estimate (kff_events). */
struct coll_messages {
  double streams, events, period;
  int reps;
  bool settles;
  double settle, window;
  /* Calls of EVENTS events each a stream makes for the bucket (0: one;
   * a sharded exchange's reduce-scatter and allgathers), each
   * fast-forwarded on its own. */
  double calls;
  /* Credits back across machines (a ring's: nccl_kernel.c): CREDITS a
   * stream's event beyond its first CREDIT_WINDOW, over the worker's
   * streams on average (0: none). */
  double credits, credit_window;
};

struct collective {
  const char *name;
  const char *description;
  const char *formula; /* the formula.h model it matches, or NULL */
  const char *formula_direct; /* the model with [exchange] pull = direct */
  bool pow2;           /* needs a power-of-two number of workers */
  bool aggregators;    /* needs [platform] aggregators >= 1 */
  bool stateful;       /* takes error-feedback codecs */
  /* Its aggregators compress their pull once, through their own codec
   * streams, and every worker gets those bytes (ps-shared). */
  bool shared_pull;
  /* Validate the configuration, before anything runs (run_check: a
   * sweep's every point, and --estimate's), on the point alone; may be
   * NULL. */
  int (*check_point)(const struct point *p, char *err, size_t errlen);
  /* Whether P's run steps its workers' legs in lockstep, a message each
   * leg from every worker (NULL: always); a kernel whose channels run
   * on their own does not. */
  bool (*lockstep)(const struct point *p);
  /* One worker's part of an allreduce of C->v (called by every worker
   * for the same bucket in the same order). */
  void (*worker)(struct coll_call *c);
  /* Every worker's message to every worker (called by every worker for
   * the same bucket in the same order): MINE, the caller's (consumed),
   * and into ALL[r] worker r's, the caller's own included (each a
   * reference the caller frees); payloads travel as they are, encoded
   * once (a per-bucket codec that does not sum: bucketwise.c). NULL:
   * the collective cannot gather. */
  void (*allgather)(struct coll_call *c, struct msg *mine, struct msg **all);
  /* Sharded data parallel ([training] sharding): the allreduce's two
   * halves apart. REDUCE_SCATTER leaves in each worker's C->v the sum of
   * its shard (a part the collective chooses, and values too few to
   * shard summed whole); SHARD_ALLGATHER, called later for the same
   * bucket, gives every worker every shard, so that the two together
   * leave what WORKER leaves. NULL: the collective cannot shard. */
  void (*reduce_scatter)(struct coll_call *c);
  void (*shard_allgather)(struct coll_call *c);
  /* The parts [LO[i], HI[i]) of a bucket of N values whose sum
   * REDUCE_SCATTER leaves at index ME of its G workers: how many (at
   * most 2). These three run over C->group where one is given. */
  int (*shard_ranges)(int me, int g, uint64_t n, uint64_t lo[2],
                      uint64_t hi[2]);
  /* HSDP: values [LO, HI) of C->v allreduced over C->group (NULL: the
   * collective cannot). */
  void (*range_allreduce)(struct coll_call *c, uint64_t lo, uint64_t hi);
  /* ZeRO++'s qgz: values [LO, HI) of C->v reduce-scattered over
   * C->group, member i left the sum of shard_ranges(i, g, HI - LO)
   * shifted by LO (NULL: the collective cannot). */
  void (*range_reduce_scatter)(struct coll_call *c, uint64_t lo,
                               uint64_t hi);
  /* Its sharded halves need a power-of-two group (nothing folded). */
  bool shard_pow2;
  /* Its sharded halves carry values only, no codec (nccl: NCCL's
   * ReduceScatter and AllGather kernels). */
  bool shard_plain;
  /* One aggregator's part (NULL when the collective has none). */
  void (*aggregator)(struct coll_call *c);
  /* Start the collective's own actors beside the workers' (may be NULL;
   * nccl: the NVSwitches' reduction where NVLS may run). */
  void (*spawn)(struct sim *s);
  /* Fill the formula parameters beyond p, n, alpha, beta, gamma (may be
   * NULL). */
  void (*formula_params)(const struct sim *s, struct formula_in *in);
  /* Its allreduce is an allgather: every worker's vector (a codec's
   * payload as it is) to every worker, each summing what it receives, so
   * that its formula's n is one worker's bytes whatever a codec does
   * (predict.c). */
  bool gathers;
  /* [training] fusion_bytes thresholds the bytes a bucket sends, csc_ratio
   * of its values (csc's lazy buffer of selected chunks), not its values'
   * bytes: buckets fuse fusion_bytes / csc_ratio. */
  bool fuse_selected;
  /* Free a worker's per-bucket state (struct worker.cstate); may be NULL. */
  void (*free_state)(void *state);
  /* That state belongs to the bucket's values (csc's chunk selection), so
   * the collective cannot allreduce other vectors under the bucket's
   * number: a linear codec's factors. */
  bool bucket_state;
  /* The formula.h model on topologies of machines (gpu-cluster,
   * nvswitch), whose formula_params gives the machines' network (the
   * inside's and a NIC's alpha and beta); NULL: none there. FORMULA
   * applies on flat topologies (star). */
  const char *formula_nodes;
  /* Bytes a worker holds for each other worker while it exchanges a
   * bucket (a lower bound: the run's estimate counts p^2 of them), or 0
   * when what it holds does not grow with p. */
  double pair_bytes;
  /* Bytes per held value its messages of a step hold at once with the
   * oracle (payload = full: each message's values with their ledger, 41
   * bytes with q8), beyond what a ring's take, which the estimate's
   * value_bytes include: a lower bound measured as peak RSS over the
   * estimate (q8 on 8 and 16 DGX-H100 workers of 2 x 1M and 4 x 1M
   * values). */
  double oracle_value_bytes;
  /* Its ring legs over all workers cut a bucket into p blocks of n/p
   * values (inceptionn's balanced ring), alike only where p divides n
   * (the run's estimate: run_shape). */
  bool balanced_blocks;
  /* Its steps are collectives/common.c's ring legs (over all workers or
   * groups of them), p - 1 alike a leg; otherwise recursive halving or
   * doubling, a server's push and pull, a tree (the run's estimate:
   * run_shape). */
  bool ring_legs;
  /* What one worker sends for a bucket of N values of VALUE_BYTES
   * each, for the run's estimate (run_shape); false where its formula's
   * alphas count the messages; NULL: they always do. */
  bool (*messages)(const struct point *p, uint64_t n, int value_bytes,
                   struct coll_messages *out);
  /* nccl.csv's rows of the run (docs/outputs.md), without the point's
   * index: the calls its kernels made and what chose them (NULL: none). */
  void (*calls)(const struct sim *s, GString *out);
};

const struct collective *coll_find(const char *name);
/* The registered collectives, in registry order: I in [0, coll_count()). */
size_t coll_count(void);
const struct collective *coll_at(size_t i);
/* Names of every collective, comma-separated (g_free). */
char *coll_names(void);

/* run_has_codec(), run_shards(), run_units(): engine.h. */

/* ---- fast-forward --------------------------------------------------------
 * Its whole interface is ffwd/ffwd.h (steps, runs of buckets, recurrence)
 * and ffwd/kff.h (a call of independent streams): the files that take
 * part in it include them. */

/* ---- the run's insides: schedules, payloads, accounting ------------------ */

/* A worker's record of iteration IT. */
static inline struct iter_rec *sim_rec(struct sim *s, int it, int w) {
  return &s->recs[(size_t)it * (size_t)s->nworkers + (size_t)w];
}

/* Gradient jobs between a worker's compute and communication actors:
 * bucket BUCKET of ITERATION, or every bucket (SIZE_MAX); ITERATION < 0
 * ends the communication actor. */
struct job {
  int iteration;
  size_t bucket;
  int kind; /* JOB_BUCKET; a sharded exchange's second half, every
             * bucket's weights allgathered after the shard's update
             * (JOB_ALLGATHER); a fully sharded unit's JOB_GATHER (for
             * forward), JOB_GATHER_BACKWARD or JOB_SCATTER (bucket: the
             * unit) */
};
enum {
  JOB_BUCKET,
  JOB_ALLGATHER,
  JOB_GATHER,
  JOB_GATHER_BACKWARD,
  JOB_SCATTER
};

/* A worker's side of the run beside what collectives see (struct
 * worker): its vectors, local-step accumulators, and the job queue
 * between its compute and communication actors (overlap, pipe). */
struct wstate {
  struct worker *w;
  struct vec *vecs;    /* per bucket */
  /* sharding = zero3 or hsdp: each unit's weights, gathered before its
   * forward and its backward (timed only: no values held). */
  struct vec *params;
  /* hsdp: the worker's machine and its rail (the machines' workers of
   * its index), and its index in each. */
  int *machine, *rail;
  int nmachine, nrail, me_machine, me_rail;
  /* zero3 and hsdp in overlap: each unit's gathered weights, and the
   * reduce-scatters done (released by the communication actor); the
   * units scattered this iteration. */
  sg_sem_t *gathered, scattered;
  size_t nscattered;
  float **accum;       /* per bucket: local steps not yet sent, or NULL */
  /* A linear codec's stream per bucket (the whole bucket, its tensors'
   * shapes set), when values are held; NULL otherwise. */
  codec_state_t **lin_states;
  GQueue *jobs;
  sg_sem_t job_sem, done_sem;
};

/* An aggregator: its shard of every bucket. */
struct astate {
  int a;
  struct sim *sim;
  struct vec *vecs; /* per bucket */
};

/* A training schedule (schedules/): the compute side of a worker, run as
 * its actor (its data, sg_actor_self_get_data(), is its struct wstate);
 * COMM_ACTOR: a communication actor (schedule_comm_actor) runs beside it
 * and exchanges the jobs it posts. */
struct schedule {
  const char *description; /* its name: mode_names[] (sim/names.c) */
  void (*worker)(struct wstate *ws);
  bool comm_actor;
  /* Its exchange runs alone, after every computation of the iteration
   * (what the collectives' formulas time: the results compare them only
   * then). */
  bool exchange_alone;
  /* With a communication actor: the compute time before each bucket's
   * job is posted, from the previous one's (from backward's start for
   * the first), into GAP[nbuckets] (bucket fast-forward: ffwd/ffwd.h,
   * struct ff_run); NULL: not known. */
  void (*post_gaps)(const struct sim *s, double *gap);
};
const struct schedule *schedule_of(enum mode mode);

/* schedules/common.c: what the schedules are built from. */
/* Whether iteration IT exchanges (3LC's local steps skip some). */
bool schedule_exchanges(const struct sim *s, int it);
/* GPU work of SECONDS on WS's worker, counted as compute of R. */
void schedule_compute(struct wstate *ws, double seconds, struct iter_rec *r);
/* The GPU work of *T seconds accumulated, if any, then none left. */
void schedule_flush(struct wstate *ws, double *t, struct iter_rec *r);
/* Every bucket of iteration IT: prepared, exchanged, checked, recorded. */
void schedule_exchange_all(struct wstate *ws, int it);
/* Sharded data parallel's exchange of iteration IT ([training]
 * sharding): every bucket's gradients reduce-scattered (struct
 * collective reduce_scatter), the worker's shard updated (UPDATE_S of
 * GPU time, recorded in R), every bucket's weights allgathered and the
 * result checked. Returns the seconds the update took. */
double schedule_exchange_sharded(struct wstate *ws, int it, double update_s,
                                 struct iter_rec *r);
/* Fully sharded (sharding = zero3), iteration IT of WS's worker in sync:
 * forward and backward unit by unit, each unit's weights allgathered
 * before its forward and its backward, its gradients reduce-scattered
 * after its backward and checked on the shard, then the shard's update;
 * compute recorded in R. Returns the seconds of compute it ran. */
double schedule_fsdp_iteration(struct wstate *ws, int it, struct iter_rec *r);
/* Post a job to WS's communication actor; wait for one to finish,
 * attributing the wait to R. */
void schedule_post(struct wstate *ws, int it, size_t bucket);
/* A job of another KIND (JOB_ALLGATHER; JOB_GATHER, JOB_SCATTER of unit
 * B); JOB_ALLGATHER's end releases the done semaphore as a bucket run's
 * last does. */
void schedule_post_job(struct wstate *ws, int it, size_t b, int kind);
void schedule_wait_done(struct wstate *ws, struct iter_rec *r);
/* The actors' code: a worker's communication actor, an aggregator. */
void schedule_comm_actor(int argc, char **argv);
void schedule_aggregator_actor(int argc, char **argv);

/* linear.c: a linear codec's exchange (codec.h, "linear compressors"):
 * round 0 on the worker's gradient, the collective's allreduce of its
 * factors, round 1, the allreduce of the second factors, the finish; and
 * an aggregator's part of both allreduces. */
void linear_exchange(struct wstate *ws, size_t b, int it);
void linear_aggregate(struct astate *as, size_t b);
/* [exchange] warmup_steps for a linear codec: every worker's stream
 * through that many exchanges, the sums taken directly. */
void linear_warm_up(struct sim *s);

/* bucketwise.c: a codec once per bucket around the collective
 * ([exchange] compression = per-bucket; PyTorch DDP's communication
 * hooks): bucket B of iteration IT on WS's worker encoded once with its
 * stream; a codec that sums (codec_sums) allreduced by the collective's
 * worker as plain values of codec_value_bytes() each, then decoded once;
 * any other gathered (struct collective's allgather), then every
 * worker's message decoded and added. Not for linear codecs (linear.c)
 * nor buckets that travel uncompressed. */
void bucketwise_exchange(struct wstate *ws, size_t b, int it);

/* payload.c: gradient values, local steps, the oracle. */
/* Bucket B of worker W at iteration IT: its gradient's M held values
 * (every tensor's values, or a prefix of each in proportion). */
void payload_gradient(const struct sim *s, int w, size_t b, uint64_t it,
                      float *out, size_t m);
/* The generator's iteration of warm-up step 0 ([exchange] warmup_steps),
 * far from any timed iteration: step k draws PAYLOAD_WARMUP_ITERATION + k. */
#define PAYLOAD_WARMUP_ITERATION ((uint64_t)1 << 40)
/* Values held per bucket of N values (payload full, sampled or none). */
size_t payload_held(const struct point *p, uint64_t n);
/* The oracle's exact sums, when it runs, and the gradients' cache. */
void payload_init_truth(struct sim *s, bool oracle);
/* WS's vector of bucket B for the exchange of iteration IT (its gradient
 * plus what local steps kept), added to the exact sum. */
void payload_prepare(struct wstate *ws, size_t b, int it);
/* The error-feedback codec streams after [exchange] warmup_steps untimed
 * steps (payload.c; a linear codec's: linear_warm_up). */
void payload_warm_up(struct sim *s);
/* The oracle for a linear codec's exchange (linear.c): each worker's
 * factors of round R (0 or 1) in FV->x, their shadow set and added to the
 * round's exact sum; after the round's allreduce, FV checked against it;
 * after round 1, what the worker kept back (its residual RB before round
 * 0, its stream's now) and its part of the codec's bound; after the
 * finish, V's values checked against the exact sum plus what every
 * worker kept back, within every worker's bound and the aggregation's. */
void payload_lin_factors(struct wstate *ws, size_t b, int it, int round,
                         struct vec *fv);
void payload_lin_check(struct wstate *ws, size_t b, int it, int round,
                       const struct vec *fv);
void payload_lin_keep(struct wstate *ws, size_t b, int it, const float *rb);
/* (RB is NULL for a codec without a residual.) */
void payload_lin_settle(struct wstate *ws, size_t b, int it);
/* A local step without exchange: keep iteration IT's gradient. */
void payload_accumulate(struct wstate *ws, int it);
/* After bucket B's exchange at IT: the dataflow and the codec's error
 * checked against the exact sum. */
void payload_check(struct wstate *ws, size_t b, int it);
/* The same, only values [LO, HI) of the bucket (a shard). */
void payload_check_range(struct wstate *ws, size_t b, int it, uint64_t lo,
                         uint64_t hi);
/* Everyone's checks of IT done: its sums' slot is free again. */
void payload_release(struct sim *s, int it);

/* account.c: where time went, and the results. */
/* Attribute the wait [A, B) of worker W to its communication side's
 * states into R; the uncovered rest is idle. */
void account_attribute(struct worker *w, double a, double b,
                       struct iter_rec *r);
/* W's compute side waits for the exchange from now to its end (overlap):
 * the spans logged from now on are summed, not kept (struct worker). */
void account_sum_from(struct worker *w);
/* Drop W's spans that ended before T. */
void account_prune(struct worker *w, double t);
/* S counts the bytes each link carries (links.csv), in place of
 * SimGrid's link-load plugin, whose every update sums all flows on a
 * link (O(p^2) when p flows share one). */
void account_links_init(struct sim *s);
/* Worker W (re)starts recording its routes' bytes at LEVEL; stops. */
void account_routes_mark(struct worker *w, int level);
void account_routes_unmark(struct worker *w, int level);
/* The bytes recorded at LEVEL put on the links TIMES more times. */
void account_routes_replay(struct worker *w, int level, int times);
/* One GPU's memory for S's point into R's mem_* fields and capacity
 * (models/memory.h); needs no SimGrid. */
void account_memory(const struct sim *s, struct run_result *r);
/* The run's results into R (iterations.csv and links.csv rows too). */
void account_summarize(struct sim *s, struct run_result *r);

#endif
