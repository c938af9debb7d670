/* models/formula.c: the analytic timing models (formula.h). */
#include "formula.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BIT(p) (1ul << (p))
#define NET (BIT(FP_P) | BIT(FP_N) | BIT(FP_ALPHA) | BIT(FP_BETA))
#define NETG (NET | BIT(FP_GAMMA))

static const struct {
  const char *name, *unit, *help;
} params[FP_COUNT] = {
    [FP_P] = {"p", "", "number of workers"},
    [FP_N] = {"n", "B", "bytes per worker (model or message size)"},
    [FP_ALPHA] = {"alpha", "s", "latency of one message"},
    [FP_BETA] = {"beta", "s/B", "time per byte on a link (1/bandwidth)"},
    [FP_GAMMA] = {"gamma", "s/B", "time to sum one byte"},
    [FP_AGGR] = {"aggregators", "", "parameter-server aggregators A"},
    [FP_GROUP] = {"group", "", "workers per node G (hierarchical)"},
    [FP_ALPHA_IN] = {"alpha-intra", "s", "latency inside a node"},
    [FP_BETA_IN] = {"beta-intra", "s/B", "time per byte inside a node"},
    [FP_DENSITY] = {"density", "",
                    "compressed / dense message size D (RedSync)"},
    [FP_GAMMA1] = {"gamma1", "s",
                   "time to decompress one collected message (RedSync)"},
    [FP_GAMMA2] = {"gamma2", "s",
                   "time to reduce a message of n bytes (RedSync)"},
    [FP_T_SELECT] = {"t-select", "s", "communication-set selection time"},
    [FP_ITER] = {"iterations", "", "training iterations T"},
    [FP_K] = {"k", "", "iteration dependency K (Pipe-SGD)"},
    [FP_T_UP] = {"t-up", "s", "update time per iteration"},
    [FP_T_FOR] = {"t-for", "s", "forward time per iteration"},
    [FP_T_BACK] = {"t-back", "s", "backward time per iteration"},
    [FP_T_B] = {"t-b", "s", "backward time of the first segment"},
    [FP_SEGMENTS] = {"segments", "", "gradient segments L"},
    [FP_SYNC] = {"sync", "s", "global synchronisation time S"},
    [FP_T_COMP] = {"t-comp", "s", "forward + backward time per iteration"},
    [FP_T_COMM] = {"t-comm", "s", "communication time per iteration"},
    [FP_NICS] = {"nics", "", "NICs per node K (nccl-*)"},
    [FP_CHANNELS] = {"channels", "",
                     "channels C: rings, or pairs of trees (nccl-*)"},
    [FP_CHUNK] = {"chunk", "B", "bytes a tree channel pipelines per step"},
};

void formula_in_init(struct formula_in *in) {
  for (int i = 0; i < FP_COUNT; i++)
    in->v[i] = NAN;
}

const char *formula_param_name(enum formula_param p) {
  return params[p].name;
}
const char *formula_param_unit(enum formula_param p) {
  return params[p].unit;
}
const char *formula_param_help(enum formula_param p) {
  return params[p].help;
}

static void term(struct formula_out *o, const char *name, const char *expr,
                 double v) {
  if (o->nterms < FORMULA_TERMS_MAX)
    o->terms[o->nterms++] = (struct formula_term){name, expr, v};
  o->total += v;
}

/* Short names for the parameters inside the formulas. */
#define P in->v[FP_P]
#define N in->v[FP_N]
#define A in->v[FP_ALPHA]
#define B in->v[FP_BETA]
#define G in->v[FP_GAMMA]
#define LG(x) log2(x)

static double clg(double x) { return ceil(log2(x) - 1e-12); }

/* ---- INCEPTIONN (seeds/000, Section VIII-D) ------------------------- */

static void inc_wa(const struct formula_in *in, struct formula_out *o) {
  term(o, "latency", "(1 + log p) alpha", (1 + LG(P)) * A);
  term(o, "bandwidth", "(p + log p) n beta", (P + LG(P)) * N * B);
  term(o, "reduction", "(p - 1) n gamma", (P - 1) * N * G);
}

static void ring(const struct formula_in *in, struct formula_out *o) {
  term(o, "latency", "2(p - 1) alpha", 2 * (P - 1) * A);
  term(o, "bandwidth", "2((p - 1)/p) n beta", 2 * (P - 1) / P * N * B);
  term(o, "reduction", "((p - 1)/p) n gamma", (P - 1) / P * N * G);
}

/* ---- rings on whole values (float32: n/4 values) ---------------------- */

/* MPICH's ring as SMPI runs it (lr, SimGrid allreduce-lr.cpp): the ring
 * moves p blocks of b = floor(n/4p) values in 2(p - 1) steps; the
 * r = n/4 - p b values left over go through SMPI's default allreduce, a
 * linear reduce to rank 0 (the p - 1 messages share its link, then it
 * sums them) and a binomial broadcast. Every term is present for every
 * n, zero where it does not apply, so that a sweep has the same columns. */
static void ring_lr(const struct formula_in *in, struct formula_out *o) {
  double v = floor(N / 4), b = floor(v / P), rest = 4 * (v - P * b);
  double ring_n = b > 0 ? 4 * b : 0, hops = b > 0 ? P - 1 : 0;
  term(o, "latency", "2(p - 1) alpha", 2 * hops * A);
  term(o, "bandwidth", "2(p - 1) 4b beta", 2 * hops * ring_n * B);
  term(o, "reduction", "(p - 1) 4b gamma", hops * ring_n * G);
  bool any = rest > 0 && P > 1;
  term(o, "rest-reduce", "alpha + (p - 1) 4r (beta + gamma)",
       any ? A + (P - 1) * rest * (B + G) : 0);
  term(o, "rest-bcast", "ceil(lg p)(alpha + 4r beta)",
       any ? clg(P) * (A + rest * B) : 0);
}

/* NCCL's split (and INCEPTIONN's Algorithm 1): p blocks that differ by
 * at most one value, so each of the 2(p - 1) steps waits for the largest,
 * of ceil(n/4p) values. */
static void ring_balanced(const struct formula_in *in,
                          struct formula_out *o) {
  double big = 4 * ceil(floor(N / 4) / P);
  term(o, "latency", "2(p - 1) alpha", 2 * (P - 1) * A);
  term(o, "bandwidth", "2(p - 1) 4 ceil(n/4p) beta", 2 * (P - 1) * big * B);
  term(o, "reduction", "(p - 1) 4 ceil(n/4p) gamma", (P - 1) * big * G);
}

/* ---- Thakur, Rabenseifner and Gropp (2005) -------------------------- */

/* Non-powers of two, as the simulator does it (Thakur et al. Section
 * 4.1): the r = p - p' extra ranks (p' the largest power of two <= p)
 * first send their vector to a partner, which sums it, and get the result
 * back at the end. */
static double pow2_floor(double p) { return exp2(floor(log2(p))); }

/* Always present (zero for powers of two), so that every p has the same
 * terms. */
static void fold_terms(const struct formula_in *in, struct formula_out *o) {
  term(o, "fold", "non-power-of-two fold: 2 alpha + 2 n beta + n gamma",
       pow2_floor(P) != P ? 2 * A + 2 * N * B + N * G : 0);
}

static void rdb(const struct formula_in *in, struct formula_out *o) {
  double q = pow2_floor(P);
  term(o, "latency", "lg p' alpha", LG(q) * A);
  term(o, "bandwidth", "lg p' n beta", LG(q) * N * B);
  term(o, "reduction", "lg p' n gamma", LG(q) * N * G);
  fold_terms(in, o);
}

static void rabenseifner(const struct formula_in *in, struct formula_out *o) {
  double q = pow2_floor(P);
  term(o, "latency", "2 lg p' alpha", 2 * LG(q) * A);
  term(o, "bandwidth", "2((p' - 1)/p') n beta", 2 * (q - 1) / q * N * B);
  term(o, "reduction", "((p' - 1)/p') n gamma", (q - 1) / q * N * G);
  fold_terms(in, o);
}

static void bcast_binomial(const struct formula_in *in,
                           struct formula_out *o) {
  term(o, "latency", "ceil(lg p) alpha", clg(P) * A);
  term(o, "bandwidth", "ceil(lg p) n beta", clg(P) * N * B);
}

static void reduce_binomial(const struct formula_in *in,
                            struct formula_out *o) {
  term(o, "latency", "ceil(lg p) alpha", clg(P) * A);
  term(o, "bandwidth", "ceil(lg p) n beta", clg(P) * N * B);
  term(o, "reduction", "ceil(lg p) n gamma", clg(P) * N * G);
}

/* Every worker's n bytes reach every worker by recursive doubling; then
 * each sums the p vectors. */
static void allgather_rdb(const struct formula_in *in,
                          struct formula_out *o) {
  term(o, "latency", "lg p alpha", LG(P) * A);
  term(o, "bandwidth", "(p - 1) n beta", (P - 1) * N * B);
  term(o, "reduction", "(p - 1) n gamma", (P - 1) * N * G);
}

/* GradientFlow (seeds/003) Section 2.4, Fig. 7(b): reduce inside each
 * node of G workers (ring reduce-scatter, then the blocks gathered at the
 * node's master), ring allreduce across the N = p/G masters, binomial
 * broadcast inside each node. */
static void hierarchical(const struct formula_in *in, struct formula_out *o) {
  double g = in->v[FP_GROUP], nodes = P / g;
  double ai = in->v[FP_ALPHA_IN], bi = in->v[FP_BETA_IN];
  term(o, "intra_reduce",
       "G alpha_i + 2((G-1)/G) n beta_i + ((G-1)/G) n gamma",
       g > 1 ? g * ai + 2 * (g - 1) / g * N * bi + (g - 1) / g * N * G : 0);
  term(o, "inter_latency", "2(N - 1) alpha", 2 * (nodes - 1) * A);
  term(o, "inter_bandwidth", "2((N - 1)/N) n beta",
       2 * (nodes - 1) / nodes * N * B);
  term(o, "inter_reduction", "((N - 1)/N) n gamma",
       (nodes - 1) / nodes * N * G);
  term(o, "intra_bcast", "ceil(lg G)(alpha_i + n beta_i)",
       clg(g) * (ai + N * bi));
}

/* ---- NCCL's algorithms on machines of G GPUs (nccl.c in sim/) ---------
 * N = p/G machines of K NICs; alpha, beta through one NIC, alpha_i,
 * beta_i over a GPU's NVLink; C channels. These are the models of what
 * the simulator runs, and what the `nccl` collective's tuner compares
 * (as NCCL's tuner compares its own: NVIDIA/nccl src/graph/tuning.cc). */

/* The machines' parameters. */
#define NG in->v[FP_GROUP]
#define NA_IN in->v[FP_ALPHA_IN]
#define NB_IN in->v[FP_BETA_IN]
#define NK in->v[FP_NICS]
#define NC in->v[FP_CHANNELS]

/* C rings over all p GPUs in lockstep, each carrying n/C: every step
 * moves a block of n/(C p) bytes on every ring, C of them through each
 * GPU's NVLink and ceil(C/K) through each NIC; the step lasts as long as
 * its slowest hop. */
static void nccl_ring(const struct formula_in *in, struct formula_out *o) {
  double nodes = P / NG, step_in = NA_IN + N / P * NB_IN;
  double step_net = A + ceil(NC / NK) * N / (NC * P) * B;
  double step = nodes > 1 ? fmax(step_in, step_net) : step_in;
  term(o, "steps", "2(p - 1) max(alpha_i + (n/p) beta_i, alpha + "
                   "ceil(C/K) n/(C p) beta)",
       2 * (P - 1) * step);
  term(o, "reduction", "((p - 1)/p) n gamma", (P - 1) / P * N * G);
}

/* The depth of NCCL's binary tree over M ranks (ncclGetBtree: the root's
 * one child is the highest power of two below M, and so on down). */
static double btree_depth(double m) {
  double d = 0;
  for (double w = 1; w < m; w *= 2)
    d++;
  return d;
}

/* 2C trees (C channels, each on a tree and its mirror), a chain of G
 * GPUs in each machine under the machine's head and NCCL's binary tree
 * of the N heads, R = (G - 1) + D deep; each tree carries d = n/(2C) in
 * m = ceil(d/c) chunks of c' = min(c, d) bytes, up and down at once.
 * The first chunk goes down the 2R hops and back: their latencies, and on
 * each the time of the W = 4 chunks that share its links in flight (the
 * simulator's window); the rest follow at the rate of the busiest link: a
 * GPU inside a chain sends up to two of every tree's chunks over its
 * NVLink, a NIC four of each of its channels' (the head of a machine
 * inside one tree and a leaf of its mirror). */
static void nccl_tree(const struct formula_in *in, struct formula_out *o) {
  double c = in->v[FP_CHUNK], nodes = P / NG, d = N / (2 * NC);
  double m = ceil(d / c), cc = fmin(c, d), dn = btree_depth(nodes);
  double nv = 2 * NC * fmin(2, NG - 1) * d * NB_IN;
  double net = nodes > 1 ? 4 * ceil(NC / NK) * d * B : 0;
  term(o, "latency", "2((G - 1) alpha_i + D alpha)",
       2 * ((NG - 1) * NA_IN + dn * A));
  term(o, "fill", "2((G - 1) beta_i + D beta) 4 min(c, n/(2C))",
       2 * ((NG - 1) * NB_IN + dn * B) * 4 * cc);
  term(o, "bandwidth",
       "((m - 1)/m) max(2C min(2, G - 1) beta_i, 4 ceil(C/K) beta) n/(2C)",
       m > 0 ? (m - 1) / m * fmax(nv, net) : 0);
  term(o, "reduction", "((p - 1)/p) n gamma", (P - 1) / P * N * G);
}

/* Reduce-scatter over the G GPUs of each machine, a ring allreduce of
 * each GPU's n/G bytes across the N machines with the GPUs of its rail
 * (G/K of them share a NIC), allgather inside. */
static void nccl_rail(const struct formula_in *in, struct formula_out *o) {
  double nodes = P / NG, share = NG / NK;
  term(o, "intra", "2(G - 1)(alpha_i + (n/G) beta_i)",
       2 * (NG - 1) * (NA_IN + N / NG * NB_IN));
  term(o, "inter", "2(N - 1)(alpha + (G/K) n/(G N) beta)",
       2 * (nodes - 1) * (A + share * N / (NG * nodes) * B));
  term(o, "reduction", "((p - 1)/p) n gamma", (P - 1) / P * N * G);
}

/* A parameter server with A aggregators holding n/A bytes each: workers
 * push (the p pushes to one aggregator share its link), aggregators sum,
 * and the result goes back down a binomial tree over the p + 1 nodes of
 * each shard. With A = 1 this is INCEPTIONN's worker-aggregator exchange,
 * with the tree's ceil(lg(p + 1)) rounds where the paper writes log p. */
static void ps(const struct formula_in *in, struct formula_out *o) {
  double a = in->v[FP_AGGR];
  double shard = N / a, up = P / a > 1 ? P / a : 1, r = clg(P + 1);
  term(o, "push", "alpha + max(p/A, 1) n beta", A + up * N * B);
  term(o, "reduction", "(p - 1)(n/A) gamma", (P - 1) * shard * G);
  term(o, "broadcast", "ceil(lg(p+1))(alpha + n beta)", r * (A + N * B));
}

/* The same server with TensorFlow's pull: each aggregator sends its n/A
 * bytes to the p workers at once through its link (3LC seeds/004,
 * Section 2 and Fig. 1), as the pushes came in. */
static void ps_direct(const struct formula_in *in, struct formula_out *o) {
  double a = in->v[FP_AGGR];
  double shard = N / a, up = P / a > 1 ? P / a : 1;
  term(o, "push", "alpha + max(p/A, 1) n beta", A + up * N * B);
  term(o, "reduction", "(p - 1)(n/A) gamma", (P - 1) * shard * G);
  term(o, "pull", "alpha + max(p/A, 1) n beta", A + up * N * B);
}

/* ---- RedSync (seeds/002, Section 2.3) ------------------------------- */

static void redsync_sparse(const struct formula_in *in,
                           struct formula_out *o) {
  double d = in->v[FP_DENSITY];
  double g1 = isnan(in->v[FP_GAMMA1]) ? N * d * G : in->v[FP_GAMMA1];
  double ts = isnan(in->v[FP_T_SELECT]) ? 0 : in->v[FP_T_SELECT];
  term(o, "select", "T_select", ts);
  term(o, "latency", "lg(p) alpha", LG(P) * A);
  term(o, "bandwidth", "(p - 1)(M D) beta", (P - 1) * N * d * B);
  term(o, "decompress", "p gamma1", P * g1);
}

static void redsync_dense(const struct formula_in *in,
                          struct formula_out *o) {
  double g2 = isnan(in->v[FP_GAMMA2]) ? N * G : in->v[FP_GAMMA2];
  term(o, "latency", "2 lg(p) alpha", 2 * LG(P) * A);
  term(o, "bandwidth", "2((p - 1)/p) M beta", 2 * (P - 1) / P * N * B);
  term(o, "reduction", "((p - 1)/p) gamma2", (P - 1) / P * g2);
}

/* ---- Pipe-SGD (seeds/001, Section 3) -------------------------------- */

#define T in->v[FP_ITER]
#define UP in->v[FP_T_UP]

static void pipe_sync(const struct formula_in *in, struct formula_out *o) {
  term(o, "update", "T l_up", T * UP);
  term(o, "compute", "T l_comp", T * in->v[FP_T_COMP]);
  term(o, "communication", "T l_comm", T * in->v[FP_T_COMM]);
}

static void pipe_ideal(const struct formula_in *in, struct formula_out *o) {
  double k = in->v[FP_K];
  term(o, "update", "T/K l_up", T / k * UP);
  term(o, "compute", "T/K l_comp", T / k * in->v[FP_T_COMP]);
  term(o, "communication", "T/K l_comm", T / k * in->v[FP_T_COMM]);
}

static void pipe_bound(const struct formula_in *in, struct formula_out *o) {
  double c = UP + in->v[FP_T_COMP], m = in->v[FP_T_COMM];
  /* Only the binding resource counts: the other term is shown as 0. */
  term(o, "compute_bound", "T (l_up + l_comp) if it is the larger",
       c >= m ? T * c : 0);
  term(o, "comm_bound", "T l_comm if it is the larger", c >= m ? 0 : T * m);
}

static double ring_comm(const struct formula_in *in, double segments) {
  return 2 * (P - 1) * segments * A + 2 * (P - 1) / P * N * B +
         (P - 1) / P * N * G + segments * in->v[FP_SYNC];
}

static void pipe_seq(const struct formula_in *in, struct formula_out *o) {
  double c = UP + in->v[FP_T_FOR] + in->v[FP_T_BACK], m = ring_comm(in, 1);
  term(o, "compute_bound", "T (l_up + l_for + l_back) if larger",
       c >= m ? T * c : 0);
  term(o, "comm_bound",
       "T (2(p-1) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma + S) if "
       "larger",
       c >= m ? 0 : T * m);
}

static void pipe_pipelined(const struct formula_in *in,
                           struct formula_out *o) {
  double l = in->v[FP_SEGMENTS];
  double c = UP + in->v[FP_T_FOR] + in->v[FP_T_B], m = ring_comm(in, l);
  term(o, "compute_bound", "T (l_up + l_for + l_b) if larger",
       c >= m ? T * c : 0);
  term(o, "comm_bound",
       "T (2(p-1) L alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma + L S) "
       "if larger",
       c >= m ? 0 : T * m);
}

static void pipe_efficiency(const struct formula_in *in,
                            struct formula_out *o) {
  double c = UP + in->v[FP_T_COMP], m = in->v[FP_T_COMM];
  term(o, "efficiency", "(l_up + l_comp) / max(l_up + l_comp, l_comm)",
       c / (c > m ? c : m));
}

#define PIPE (BIT(FP_ITER) | BIT(FP_T_UP))
#define NODES                                                                 \
  (NETG | BIT(FP_GROUP) | BIT(FP_ALPHA_IN) | BIT(FP_BETA_IN) |               \
   BIT(FP_NICS) | BIT(FP_CHANNELS))

static const struct formula formulas[] = {
    {"inceptionn-wa", "INCEPTIONN Section VIII-D",
     "(1 + log p) alpha + (p + log p) n beta + (p - 1) n gamma",
     "worker-aggregator gradient exchange, as the paper writes it", "s",
     NETG, false, inc_wa},
    {"inceptionn-ring", "INCEPTIONN Section VIII-D, Algorithm 1",
     "2(p - 1) alpha + 2((p - 1)/p) n beta + ((p - 1)/p) n gamma",
     "INCEPTIONN's aggregator-free ring exchange", "s", NETG, false, ring},
    {"ring", "Thakur et al. 2005; Pipe-SGD Eq. (5)",
     "2(p - 1) alpha + 2((p - 1)/p) n beta + ((p - 1)/p) n gamma",
     "ring allreduce: reduce-scatter then allgather, as the papers write "
     "it (n divisible by 4p)",
     "s", NETG, false, ring},
    {"ring-lr", "MPICH ring as SimGrid SMPI's lr (allreduce-lr.cpp)",
     "2(p - 1)(alpha + 4b beta) + (p - 1) 4b gamma, b = floor(n/4p); "
     "the r = n/4 - pb values left: alpha + (p - 1) 4r (beta + gamma) + "
     "ceil(lg p)(alpha + 4r beta)",
     "the `ring` collective: lr's ring on whole blocks, the rest by a "
     "linear reduce and a binomial broadcast",
     "s", NETG, false, ring_lr},
    {"nccl-ring", "NCCL's ring split; INCEPTIONN Algorithm 1",
     "2(p - 1) alpha + 2(p - 1) 4 ceil(n/4p) beta + (p - 1) 4 ceil(n/4p) "
     "gamma",
     "the `nccl-ring` collective: p blocks that differ by at most one "
     "value",
     "s", NETG, false, ring_balanced},
    {"rdb", "Thakur et al. 2005 Section 4.1",
     "lg p (alpha + n beta + n gamma) (+ a fold for non-powers of two)",
     "recursive doubling (butterfly) allreduce, the MPI baseline", "s", NETG,
     false, rdb},
    {"rabenseifner", "Thakur et al. 2005; RedSync Eq. (2)",
     "2 lg p alpha + 2((p - 1)/p) n beta + ((p - 1)/p) n gamma (+ fold)",
     "recursive halving reduce-scatter then recursive doubling allgather",
     "s", NETG, false, rabenseifner},
    {"bcast-binomial", "Thakur et al. 2005", "ceil(lg p)(alpha + n beta)",
     "binomial-tree broadcast", "s", NET, false, bcast_binomial},
    {"reduce-binomial", "Thakur et al. 2005",
     "ceil(lg p)(alpha + n beta + n gamma)", "binomial-tree reduce", "s",
     NETG, false, reduce_binomial},
    {"allgather-rdb", "RedSync Section 2.3 (with codec none)",
     "lg p alpha + (p - 1) n beta + (p - 1) n gamma",
     "every worker's n bytes to every worker by recursive doubling, then "
     "the sum of the p vectors",
     "s", NETG, true, allgather_rdb},
    {"hierarchical", "GradientFlow Section 2.4, Fig. 7(b)",
     "intra-node reduce + ring over the p/G masters + intra-node "
     "broadcast",
     "hierarchical ring allreduce over nodes of G workers", "s",
     NETG | BIT(FP_GROUP) | BIT(FP_ALPHA_IN) | BIT(FP_BETA_IN), false,
     hierarchical},
    {"nccl-rings", "NCCL's rings (src/graph/rings.cc, src/device/all_reduce.h)",
     "2(p - 1) max(alpha_i + (n/p) beta_i, alpha + ceil(C/K) n/(C p) "
     "beta) + ((p - 1)/p) n gamma",
     "the `nccl-ring` collective on machines of G GPUs: C node-aware "
     "rings in lockstep",
     "s", NODES, false, nccl_ring},
    {"nccl-tree", "NCCL's double binary tree (src/graph/trees.cc)",
     "2((G - 1) alpha_i + D alpha) + 2((G - 1) beta_i + D beta) 4 min(c, "
     "n/(2C)) + ((m - 1)/m) max(2C min(2, G - 1) beta_i, 4 ceil(C/K) beta) "
     "n/(2C) + ((p - 1)/p) n gamma",
     "the `nccl-tree` collective: chains in the machines, binary trees "
     "and their mirrors across, pipelined in chunks",
     "s", NODES | BIT(FP_CHUNK), false, nccl_tree},
    {"nccl-rail", "hierarchical allreduce on rails",
     "2(G - 1)(alpha_i + (n/G) beta_i) + 2(N - 1)(alpha + (G/K) n/(G N) "
     "beta) + ((p - 1)/p) n gamma",
     "the `nccl-rail` collective: reduce-scatter in the machine, a ring "
     "per rail across, allgather in the machine",
     "s", NODES, false, nccl_rail},
    {"ps", "INCEPTIONN Section VIII-D, generalised to A aggregators",
     "alpha + max(p/A, 1) n beta + (p - 1)(n/A) gamma + ceil(lg(p + 1))"
     "(alpha + n beta)",
     "parameter server: push, sum, binomial-tree broadcast", "s",
     NETG | BIT(FP_AGGR), false, ps},
    {"ps-direct", "3LC Section 2 (TensorFlow's parameter server)",
     "2(alpha + max(p/A, 1) n beta) + (p - 1)(n/A) gamma",
     "parameter server: push, sum, every worker pulls from the server", "s",
     NETG | BIT(FP_AGGR), false, ps_direct},
    {"redsync-sparse", "RedSync Eq. (1)",
     "T_select + lg(p) alpha + (p - 1)(M D) beta + p gamma1",
     "sparse allreduce by recursive-doubling allgather (n = M bytes; "
     "gamma1 defaults to n D gamma)",
     "s", NET | BIT(FP_DENSITY) | BIT(FP_GAMMA), false, redsync_sparse},
    {"redsync-dense", "RedSync Eq. (2)",
     "2 lg(p) alpha + 2((p - 1)/p) M beta + ((p - 1)/p) gamma2",
     "dense Rabenseifner allreduce (gamma2 defaults to n gamma)", "s",
     NET | BIT(FP_GAMMA), false, redsync_dense},
    {"pipesgd-sync", "Pipe-SGD Eq. (2)", "T (l_up + l_comp + l_comm)",
     "synchronous SGD", "s", PIPE | BIT(FP_T_COMP) | BIT(FP_T_COMM), false,
     pipe_sync},
    {"pipesgd-ideal", "Pipe-SGD Eq. (3)", "T/K (l_up + l_comp + l_comm)",
     "pipelined SGD with unlimited resources", "s",
     PIPE | BIT(FP_K) | BIT(FP_T_COMP) | BIT(FP_T_COMM), false, pipe_ideal},
    {"pipesgd-pipe", "Pipe-SGD Eq. (4)", "T max(l_up + l_comp, l_comm)",
     "pipelined SGD, resource bound", "s",
     PIPE | BIT(FP_T_COMP) | BIT(FP_T_COMM), false, pipe_bound},
    {"pipesgd-seq", "Pipe-SGD Eq. (5)",
     "T max(l_up + l_for + l_back, 2(p-1) alpha + 2((p-1)/p) n beta + "
     "((p-1)/p) n gamma + S)",
     "Pipe-SGD with sequential gradient communication (ring)", "s",
     NETG | PIPE | BIT(FP_T_FOR) | BIT(FP_T_BACK) | BIT(FP_SYNC), false,
     pipe_seq},
    {"pipesgd-pipelined", "Pipe-SGD Eq. (6)",
     "T max(l_up + l_for + l_b, 2(p-1) L alpha + 2((p-1)/p) n beta + "
     "((p-1)/p) n gamma + L S)",
     "Pipe-SGD with pipelined gradient communication in L segments", "s",
     NETG | PIPE | BIT(FP_T_FOR) | BIT(FP_T_B) | BIT(FP_SEGMENTS) |
         BIT(FP_SYNC),
     false, pipe_pipelined},
    {"pipesgd-efficiency", "Pipe-SGD Eq. (7)",
     "(l_up + l_comp) / max(l_up + l_comp, l_comm)",
     "scaling efficiency of resource-bound Pipe-SGD", "",
     BIT(FP_T_UP) | BIT(FP_T_COMP) | BIT(FP_T_COMM), false, pipe_efficiency},
};

size_t formula_count(void) { return sizeof formulas / sizeof formulas[0]; }

const struct formula *formula_at(size_t i) {
  return i < formula_count() ? &formulas[i] : NULL;
}

const struct formula *formula_find(const char *name) {
  for (size_t i = 0; i < formula_count(); i++)
    if (strcmp(formulas[i].name, name) == 0)
      return &formulas[i];
  return NULL;
}

static int bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

static bool is_count(double v) { return v >= 1 && v == floor(v); }

int formula_eval(const struct formula *f, const struct formula_in *in,
                 struct formula_out *out, char *err, size_t errlen) {
  for (int i = 0; i < FP_COUNT; i++) {
    double v = in->v[i];
    if ((f->needs & BIT(i)) && isnan(v))
      return bad(err, errlen, "formula %s needs --%s (%s%s%s)", f->name,
                 params[i].name, params[i].help, *params[i].unit ? ", " : "",
                 params[i].unit);
    if (isnan(v))
      continue;
    if (!isfinite(v) || v < 0)
      return bad(err, errlen, "--%s %g must be a finite number >= 0",
                 params[i].name, v);
  }
  double p = in->v[FP_P];
  if ((f->needs & BIT(FP_P)) && !is_count(p))
    return bad(err, errlen, "--p %g must be a whole number of workers >= 1",
               p);
  if ((f->needs & BIT(FP_P)) && f->pow2 && exp2(floor(log2(p))) != p)
    return bad(err, errlen, "formula %s needs p a power of two, not %g",
               f->name, p);
  if ((f->needs & BIT(FP_BETA)) && !(in->v[FP_BETA] > 0))
    return bad(err, errlen, "the bandwidth must be positive");
  static const enum formula_param counts[] = {
      FP_AGGR, FP_GROUP, FP_ITER, FP_K, FP_SEGMENTS, FP_NICS, FP_CHANNELS};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    if ((f->needs & BIT(counts[i])) && !is_count(in->v[counts[i]]))
      return bad(err, errlen, "--%s %g must be a whole number >= 1",
                 params[counts[i]].name, in->v[counts[i]]);
  if ((f->needs & BIT(FP_GROUP)) &&
      fmod(p, in->v[FP_GROUP]) != 0)
    return bad(err, errlen, "--p %g must be a multiple of --group %g", p,
               in->v[FP_GROUP]);
  if ((f->needs & BIT(FP_NICS)) &&
      fmod(in->v[FP_GROUP], in->v[FP_NICS]) != 0)
    return bad(err, errlen, "--nics %g must divide --group %g",
               in->v[FP_NICS], in->v[FP_GROUP]);
  if ((f->needs & BIT(FP_CHUNK)) && !(in->v[FP_CHUNK] > 0))
    return bad(err, errlen, "--chunk %g must be positive", in->v[FP_CHUNK]);
  if ((f->needs & BIT(FP_DENSITY)) &&
      !(in->v[FP_DENSITY] > 0 && in->v[FP_DENSITY] <= 1))
    return bad(err, errlen, "--density %g must be in (0, 1]",
               in->v[FP_DENSITY]);
  out->total = 0;
  out->nterms = 0;
  f->eval(in, out);
  return 0;
}
