/* tests/test_models.c: units, the analytic formulas against the papers'
 * own worked numbers, the synthetic gradient generator, and the model
 * files and device tables. */
#include <criterion/criterion.h>

/* The layer's one header (models/models.h), as a user of it includes it. */
#include "models.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define REL(a, b) (fabs((a) - (b)) / fabs(b))

/* ---- units ------------------------------------------------------------ */

Test(units, bandwidth) {
  double v;
  cr_assert_eq(units_bandwidth("10Gbps", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 1.25e9, 1);
  cr_assert_eq(units_bandwidth("1.25GBps", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 1.25e9, 1);
  cr_assert_eq(units_bandwidth("56Gbps", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 7e9, 1);
  cr_assert_eq(units_bandwidth("1KiBps", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 1024, 1e-9);
  cr_assert_eq(units_bandwidth("1000", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 1000, 1e-9);
  char err[256];
  cr_assert_eq(units_bandwidth("10Gbs", &v, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "10Gbs") && strstr(err, "bps"));
  cr_assert_eq(units_bandwidth("0bps", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_bandwidth("-1Gbps", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_bandwidth("", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_bandwidth("inf", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_bandwidth("1e400Bps", &v, NULL, 0), -EINVAL);
}

Test(units, time_and_size) {
  double v;
  cr_assert_eq(units_time("5us", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 5e-6, 1e-18);
  cr_assert_eq(units_time("1.5ms", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 1.5e-3, 1e-15);
  cr_assert_eq(units_time("2", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 2, 0);
  cr_assert_eq(units_time("0", &v, NULL, 0), 0);
  cr_assert_eq(units_time("5 us", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_time("5usec", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_time("-1s", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_size("64MB", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 64e6, 0);
  cr_assert_eq(units_size("64MiB", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 64.0 * 1048576, 0);
  cr_assert_eq(units_size("8b", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 1, 0);
  cr_assert_eq(units_size("64MBps", &v, NULL, 0), -EINVAL);
  cr_assert_eq(units_time_per_byte("2.5e-10", &v, NULL, 0), 0);
  cr_assert_float_eq(v, 2.5e-10, 1e-22);
  cr_assert_eq(units_time_per_byte("abc", &v, NULL, 0), -EINVAL);
}

/* ---- formulas --------------------------------------------------------- */

static struct formula_out eval(const char *name, struct formula_in *in) {
  const struct formula *f = formula_find(name);
  cr_assert_not_null(f, "formula %s", name);
  struct formula_out o;
  char err[256];
  int rc = formula_eval(f, in, &o, err, sizeof err);
  cr_assert_eq(rc, 0, "%s: %s", name, err);
  double sum = 0;
  for (size_t i = 0; i < o.nterms; i++)
    sum += o.terms[i].value;
  cr_assert_float_eq(sum, o.total, 1e-12 * fabs(o.total) + 1e-300,
                     "terms add up");
  return o;
}

static struct formula_in net(double p, double n, double alpha, double beta,
                             double gamma) {
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_P] = p;
  in.v[FP_N] = n;
  in.v[FP_ALPHA] = alpha;
  in.v[FP_BETA] = beta;
  in.v[FP_GAMMA] = gamma;
  return in;
}

/* GradientFlow Section 1: AlexNet's 61M fp32 parameters put 488 MB
 * through every GPU per iteration, 69.7 ms even at the full 56 Gbps: the
 * ring's bandwidth term for large p. */
Test(formula, gradientflow_alexnet_69ms) {
  struct formula_in in = net(512, 61e6 * 4, 0, 8.0 / 56e9, 0);
  struct formula_out o = eval("ring", &in);
  cr_assert_eq(strcmp(o.terms[1].name, "bandwidth"), 0);
  cr_assert(REL(o.terms[1].value, 69.7e-3) < 0.003, "%g",
            o.terms[1].value);
}

/* INCEPTIONN Section VIII-D, p = 4 by hand: (1 + 2) alpha + (4 + 2) n beta
 * + 3 n gamma; the ring: 6 alpha + 1.5 n beta + 0.75 n gamma. */
Test(formula, inceptionn_by_hand) {
  struct formula_in in = net(4, 1e8, 1e-5, 1e-9, 2e-10);
  struct formula_out wa = eval("inceptionn-wa", &in);
  cr_assert_float_eq(wa.total, 3e-5 + 6 * 0.1 + 3 * 0.02, 1e-12);
  struct formula_out ring = eval("inceptionn-ring", &in);
  cr_assert_float_eq(ring.total, 6e-5 + 1.5 * 0.1 + 0.75 * 0.02, 1e-12);
  /* WA grows linearly with p, the ring does not (Fig. 15). */
  in.v[FP_P] = 8;
  struct formula_out wa8 = eval("inceptionn-wa", &in);
  struct formula_out ring8 = eval("inceptionn-ring", &in);
  cr_assert(wa8.total / wa.total > 1.6);
  cr_assert(ring8.total / ring.total < 1.2);
}

/* RedSync Section 2.3: at D = 0.1% and p = 128 the sparse allgather moves
 * (p - 1) D = 12.7% of the dense M beta ("12.8%" in the text, p D), and
 * Eq. (1) by hand. */
Test(formula, redsync_by_hand) {
  struct formula_in in = net(128, 1e8, 2e-6, 1e-9, 1e-10);
  in.v[FP_DENSITY] = 0.001;
  in.v[FP_GAMMA1] = 3e-4;
  in.v[FP_T_SELECT] = 0.01;
  struct formula_out s = eval("redsync-sparse", &in);
  cr_assert_float_eq(s.terms[2].value / (1e8 * 1e-9), 0.127, 1e-12);
  cr_assert_float_eq(s.total, 0.01 + 7 * 2e-6 + 0.0127 + 128 * 3e-4, 1e-12);
  struct formula_out d = eval("redsync-dense", &in);
  cr_assert_float_eq(d.total,
                     2 * 7 * 2e-6 + 2 * 127.0 / 128 * 0.1 +
                         127.0 / 128 * 1e8 * 1e-10,
                     1e-12);
  /* gamma1 defaults to n D gamma. */
  in.v[FP_GAMMA1] = NAN;
  struct formula_out s2 = eval("redsync-sparse", &in);
  cr_assert_float_eq(s2.terms[3].value, 128 * 1e8 * 0.001 * 1e-10, 1e-15);
}

/* Thakur et al. 2005 for p = 8 and the fold for p = 6. */
Test(formula, thakur_collectives) {
  struct formula_in in = net(8, 1e6, 1e-6, 1e-9, 1e-10);
  cr_assert_float_eq(eval("rdb", &in).total, 3 * (1e-6 + 1e-3 + 1e-4),
                     1e-15);
  cr_assert_float_eq(eval("rabenseifner", &in).total,
                     6e-6 + 2 * 7.0 / 8 * 1e-3 + 7.0 / 8 * 1e-4, 1e-15);
  cr_assert_float_eq(eval("bcast-binomial", &in).total, 3 * (1e-6 + 1e-3),
                     1e-15);
  cr_assert_float_eq(eval("reduce-binomial", &in).total,
                     3 * (1e-6 + 1e-3 + 1e-4), 1e-15);
  cr_assert_float_eq(eval("allgather-rdb", &in).total,
                     3e-6 + 7 * 1e-3 + 7 * 1e-4, 1e-15);
  in.v[FP_P] = 6; /* p' = 4 plus the fold */
  cr_assert_float_eq(eval("rdb", &in).total,
                     2 * (1e-6 + 1e-3 + 1e-4) + 2e-6 + 2e-3 + 1e-4, 1e-15);
  cr_assert_float_eq(eval("bcast-binomial", &in).total, 3 * (1e-6 + 1e-3),
                     1e-15);
}

Test(formula, ps_and_hierarchical) {
  struct formula_in in = net(4, 1e6, 1e-6, 1e-9, 1e-10);
  in.v[FP_AGGR] = 1;
  /* push: alpha + 4 n beta; sum: 3 n gamma; broadcast over 5 nodes:
   * 3 rounds. */
  cr_assert_float_eq(eval("ps", &in).total,
                     1e-6 + 4e-3 + 3e-4 + 3 * (1e-6 + 1e-3), 1e-15);
  in.v[FP_AGGR] = 2;
  cr_assert_float_eq(eval("ps", &in).total,
                     1e-6 + 2e-3 + 3 * 0.5e6 * 1e-10 + 3 * (1e-6 + 1e-3),
                     1e-15);
  struct formula_in h = net(16, 1e6, 2e-6, 1e-9, 1e-10);
  h.v[FP_GROUP] = 4;
  h.v[FP_ALPHA_IN] = 1e-6;
  h.v[FP_BETA_IN] = 1e-10;
  double intra = 4 * 1e-6 + 2 * 0.75 * 1e6 * 1e-10 + 0.75 * 1e6 * 1e-10;
  double inter = 6 * 2e-6 + 2 * 0.75 * 1e-3 + 0.75 * 1e-4;
  double bcast = 2 * (1e-6 + 1e6 * 1e-10);
  cr_assert_float_eq(eval("hierarchical", &h).total, intra + inter + bcast,
                     1e-15);
  /* G = 1 is the plain ring over p. */
  h.v[FP_GROUP] = 1;
  struct formula_in r = net(16, 1e6, 2e-6, 1e-9, 1e-10);
  cr_assert_float_eq(eval("hierarchical", &h).total, eval("ring", &r).total,
                     1e-15);
}

/* Pipe-SGD Eqs. (2)-(7) on made-up stage times. */
Test(formula, pipesgd) {
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_ITER] = 100;
  in.v[FP_K] = 2;
  in.v[FP_T_UP] = 0.01;
  in.v[FP_T_COMP] = 0.1;
  in.v[FP_T_COMM] = 0.3;
  cr_assert_float_eq(eval("pipesgd-sync", &in).total, 41, 1e-12);
  cr_assert_float_eq(eval("pipesgd-ideal", &in).total, 20.5, 1e-12);
  cr_assert_float_eq(eval("pipesgd-pipe", &in).total, 30, 1e-12);
  cr_assert_float_eq(eval("pipesgd-efficiency", &in).total, 0.11 / 0.3,
                     1e-12);
  in.v[FP_T_COMM] = 0.05; /* compute bound: SE = 1 */
  cr_assert_float_eq(eval("pipesgd-efficiency", &in).total, 1, 1e-12);
  struct formula_in r = net(4, 1e7, 1e-5, 1e-9, 1e-10);
  r.v[FP_ITER] = 10;
  r.v[FP_T_UP] = 0.001;
  r.v[FP_T_FOR] = 0.002;
  r.v[FP_T_BACK] = 0.004;
  r.v[FP_T_B] = 0.001;
  r.v[FP_SYNC] = 1e-4;
  r.v[FP_SEGMENTS] = 4;
  double comm = 6e-5 + 1.5e-2 + 0.75e-3 + 1e-4;
  cr_assert_float_eq(eval("pipesgd-seq", &r).total, 10 * comm, 1e-12);
  double comm4 = 4 * 6e-5 + 1.5e-2 + 0.75e-3 + 4e-4;
  cr_assert_float_eq(eval("pipesgd-pipelined", &r).total, 10 * comm4, 1e-12);
  /* Communication bound: sequential beats pipelined (Section 3.1). */
  cr_assert(eval("pipesgd-seq", &r).total <
            eval("pipesgd-pipelined", &r).total);
}

Test(formula, bad_input) {
  char err[256];
  struct formula_out o;
  struct formula_in in = net(4, 1e6, 1e-6, 1e-9, NAN);
  cr_assert_eq(formula_eval(formula_find("ring"), &in, &o, err, sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "--gamma"), "%s", err);
  in = net(0, 1e6, 1e-6, 1e-9, 0);
  cr_assert_eq(formula_eval(formula_find("ring"), &in, &o, err, sizeof err),
               -EINVAL);
  in = net(2.5, 1e6, 1e-6, 1e-9, 0);
  cr_assert_eq(formula_eval(formula_find("ring"), &in, &o, err, sizeof err),
               -EINVAL);
  in = net(6, 1e6, 1e-6, 1e-9, 0);
  cr_assert_eq(formula_eval(formula_find("allgather-rdb"), &in, &o, err,
                            sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "power of two"));
  in = net(4, -1, 1e-6, 1e-9, 0);
  cr_assert_eq(formula_eval(formula_find("ring"), &in, &o, err, sizeof err),
               -EINVAL);
  in = net(4, 1e6, 1e-6, 0, 0);
  cr_assert_eq(formula_eval(formula_find("ring"), &in, &o, err, sizeof err),
               -EINVAL);
  cr_assert_null(formula_find("nonesuch"));
}

/* ---- synthetic gradients --------------------------------------------- */

static float *fill(const struct gradgen_params *p, uint32_t w, uint32_t t,
                   uint64_t it, size_t n) {
  float *x = malloc(n * sizeof *x);
  cr_assert_eq(gradgen_fill(p, w, t, it, 1.0, 0, x, n), 0);
  return x;
}

Test(gradgen, deterministic_and_chunked) {
  struct gradgen_params p;
  gradgen_defaults(&p);
  p.corr = 0.3;
  size_t n = 20000;
  float *a = fill(&p, 1, 2, 3, n), *b = fill(&p, 1, 2, 3, n);
  cr_assert_eq(memcmp(a, b, n * sizeof *a), 0);
  /* Chunks at awkward offsets give the same values. */
  float *c = malloc(n * sizeof *c);
  size_t cuts[] = {0, 1, 4095, 4097, 9000, 16384, n};
  for (size_t i = 0; i + 1 < sizeof cuts / sizeof cuts[0]; i++)
    cr_assert_eq(gradgen_fill(&p, 1, 2, 3, 1.0, cuts[i], c + cuts[i],
                              cuts[i + 1] - cuts[i]),
                 0);
  cr_assert_eq(memcmp(a, c, n * sizeof *a), 0);
  /* Another worker, tensor, iteration or seed differs. */
  float *d = fill(&p, 2, 2, 3, n), *e = fill(&p, 1, 3, 3, n);
  float *f = fill(&p, 1, 2, 4, n);
  cr_assert_neq(memcmp(a, d, n * sizeof *a), 0);
  cr_assert_neq(memcmp(a, e, n * sizeof *a), 0);
  cr_assert_neq(memcmp(a, f, n * sizeof *a), 0);
  p.seed = 2;
  float *g = fill(&p, 1, 2, 3, n);
  cr_assert_neq(memcmp(a, g, n * sizeof *a), 0);
  free(a), free(b), free(c), free(d), free(e), free(f), free(g);
}

/* The persistent component's cache changes nothing but the work: every
 * worker, iteration and chunk gives what gradgen_fill gives, from cached
 * draws, past the cache's room, and after a change of seed or
 * distribution (which must empty it). */
Test(gradgen, cache_gives_the_same_values) {
  struct gradgen_params p;
  gradgen_defaults(&p);
  p.dist = GRADGEN_STUDENT;
  p.nu = 6.2;
  p.persist = 0.9;
  p.corr = 0.2;
  size_t n = 9000;
  /* Room for 2N values: the later spans find it full and are drawn. */
  struct gradgen_cache *c = gradgen_cache_new(2 * n);
  float *x = malloc(n * sizeof *x);
  for (int round = 0; round < 3; round++) {
    if (round == 1)
      p.seed = 7;
    if (round == 2)
      p.dist = GRADGEN_LAPLACE;
    for (uint32_t w = 0; w < 3; w++)
      for (uint32_t t = 0; t < 3; t++)
        for (uint64_t it = 0; it < 3; it++) {
          float *want = fill(&p, w, t, it, n);
          cr_assert_eq(gradgen_fill_cached(&p, c, w, t, it, 1.0, 0, x, n), 0);
          cr_assert_eq(memcmp(want, x, n * sizeof *x), 0,
                       "round %d worker %u tensor %u iteration %llu", round, w,
                       t, (unsigned long long)it);
          /* A chunk is its own span and agrees too. */
          cr_assert_eq(
              gradgen_fill_cached(&p, c, w, t, it, 1.0, 4097, x, n - 4097), 0);
          cr_assert_eq(memcmp(want + 4097, x, (n - 4097) * sizeof *x), 0);
          free(want);
        }
  }
  /* A NULL cache is gradgen_fill. */
  float *want = fill(&p, 1, 1, 1, n);
  cr_assert_eq(gradgen_fill_cached(&p, NULL, 1, 1, 1, 1.0, 0, x, n), 0);
  cr_assert_eq(memcmp(want, x, n * sizeof *x), 0);
  free(want);
  free(x);
  gradgen_cache_free(c);
}

struct moments {
  double mean, var, mabs, zeros;
};

static struct moments moments_of(const float *x, size_t n) {
  struct moments m = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    m.mean += x[i];
    m.mabs += fabs(x[i]);
    m.zeros += x[i] == 0.0f;
  }
  m.mean /= (double)n;
  m.mabs /= (double)n;
  m.zeros /= (double)n;
  for (size_t i = 0; i < n; i++)
    m.var += (x[i] - m.mean) * (x[i] - m.mean);
  m.var /= (double)(n - 1);
  return m;
}

Test(gradgen, moments) {
  size_t n = 1 << 20;
  struct gradgen_params p;
  gradgen_defaults(&p);
  p.scale = 0.01;
  /* Normal: variance scale^2 (relative standard error sqrt(2/n) = 0.14%). */
  p.dist = GRADGEN_NORMAL;
  float *x = fill(&p, 0, 0, 0, n);
  struct moments m = moments_of(x, n);
  cr_assert(fabs(m.mean) < 5 * 0.01 / sqrt((double)n));
  cr_assert(REL(m.var, 1e-4) < 0.01, "normal var %g", m.var);
  free(x);
  /* Laplace(b): E|x| = b, variance 2 b^2. */
  p.dist = GRADGEN_LAPLACE;
  x = fill(&p, 0, 0, 0, n);
  m = moments_of(x, n);
  cr_assert(REL(m.mabs, 0.01) < 0.01, "laplace E|x| %g", m.mabs);
  cr_assert(REL(m.var, 2e-4) < 0.02, "laplace var %g", m.var);
  free(x);
  /* Student t, nu = 5: variance nu / (nu - 2). */
  p.dist = GRADGEN_STUDENT;
  p.nu = 5;
  x = fill(&p, 0, 0, 0, n);
  m = moments_of(x, n);
  cr_assert(REL(m.var, 1e-4 * 5.0 / 3.0) < 0.05, "student var %g", m.var);
  free(x);
  /* Its tail: the excess kurtosis of t with nu = 10 is 6 / (nu - 4) = 1. */
  p.nu = 10;
  x = fill(&p, 0, 0, 0, n);
  m = moments_of(x, n);
  double m4 = 0;
  for (size_t i = 0; i < n; i++)
    m4 += pow(x[i] - m.mean, 4);
  double kurt = m4 / (double)n / (m.var * m.var) - 3;
  cr_assert(REL(m.var, 1e-4 * 10.0 / 8.0) < 0.02, "student var %g", m.var);
  cr_assert(fabs(kurt - 1.0) < 0.2, "student excess kurtosis %g", kurt);
  free(x);
  /* Spike and slab: the fraction of exact zeros, within 5 sigma. */
  p.dist = GRADGEN_SPIKE;
  p.zeros = 0.7;
  x = fill(&p, 0, 0, 0, n);
  m = moments_of(x, n);
  cr_assert(fabs(m.zeros - 0.7) < 5 * sqrt(0.7 * 0.3 / (double)n),
            "zeros %g", m.zeros);
  free(x);
}

/* The sample correlation of A and B (N values each). */
static double sample_corr(const float *a, const float *b, size_t n) {
  struct moments ma = moments_of(a, n), mb = moments_of(b, n);
  double cov = 0;
  for (size_t i = 0; i < n; i++)
    cov += (a[i] - ma.mean) * (b[i] - mb.mean);
  return cov / (double)(n - 1) / sqrt(ma.var * mb.var);
}

/* The defaults with a standard normal distribution. */
static struct gradgen_params unit_normal(void) {
  struct gradgen_params p;
  gradgen_defaults(&p);
  p.dist = GRADGEN_NORMAL;
  p.scale = 1;
  return p;
}

Test(gradgen, correlation_and_decay) {
  size_t n = 1 << 20;
  struct gradgen_params p = unit_normal();
  for (double c = 0; c <= 1.0; c += 0.25) {
    p.corr = c;
    float *a = fill(&p, 0, 5, 0, n), *b = fill(&p, 1, 5, 0, n);
    double r = sample_corr(a, b, n);
    cr_assert(fabs(r - c) < 0.005, "corr %g: measured %g", c, r);
    cr_assert(REL(moments_of(a, n).var, 1.0) < 0.01);
    free(a), free(b);
  }
  p.corr = 0;
  p.decay = 0.9;
  float *x = fill(&p, 0, 0, 10, n);
  struct moments m = moments_of(x, n);
  cr_assert(REL(sqrt(m.var), pow(0.9, 10)) < 0.005);
  free(x);
}

Test(gradgen, persistence_between_iterations) {
  size_t n = 1 << 20;
  struct gradgen_params p = unit_normal();
  /* persist = 0 is the generator without the persistent stream: the
   * values the generator gave before persist existed (fd35e10). */
  float *x0 = fill(&p, 2, 3, 7, n);
  static const float before[] = {-0x1.c8dbb8p-2f, 0x1.f66a9cp+0f,
                                 -0x1.03fad8p-1f, 0x1.8123bep-1f};
  cr_assert_arr_eq(x0, before, sizeof before);
  for (double q = 0; q < 1.0; q += 0.3) {
    p.persist = q;
    float *a = fill(&p, 0, 5, 3, n), *b = fill(&p, 0, 5, 40, n);
    float *c = fill(&p, 1, 5, 3, n);
    double r = sample_corr(a, b, n), rw = sample_corr(a, c, n);
    cr_assert(fabs(r - q) < 0.005, "persist %g: measured %g", q, r);
    cr_assert(fabs(rw - q) < 0.005, "persist %g, corr 0: workers %g", q, rw);
    cr_assert(REL(moments_of(a, n).var, 1.0) < 0.01);
    free(a), free(b), free(c);
  }
  p.persist = 0;
  float *y0 = fill(&p, 2, 3, 7, n);
  cr_assert_arr_eq(x0, y0, n * sizeof *x0);
  free(x0), free(y0);
}

Test(gradgen, defaults_resemble_the_seeds) {
  /* Values in [-1, 1] and sharply peaked at zero: INCEPTIONN Fig. 5. */
  size_t n = 1 << 20;
  struct gradgen_params p;
  gradgen_defaults(&p);
  float *x = fill(&p, 0, 0, 0, n);
  size_t small = 0, inside = 0;
  for (size_t i = 0; i < n; i++) {
    inside += fabs(x[i]) <= 1.0f;
    small += fabs(x[i]) < 0x1p-10f;
  }
  cr_assert_eq(inside, n);
  cr_assert(small > n / 2, "most values near zero: %zu", small);
  free(x);
}

Test(gradgen, validation) {
  struct gradgen_params p;
  gradgen_defaults(&p);
  char err[256];
  cr_assert_eq(gradgen_validate(&p, err, sizeof err), 0);
  p.corr = 1.5;
  cr_assert_eq(gradgen_validate(&p, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "corr"));
  gradgen_defaults(&p);
  p.persist = 1;
  cr_assert_eq(gradgen_validate(&p, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "persist=1 must be in [0, 1)"), "%s", err);
  gradgen_defaults(&p);
  p.scale = 0;
  cr_assert_eq(gradgen_validate(&p, err, sizeof err), -EINVAL);
  gradgen_defaults(&p);
  p.decay = 0;
  cr_assert_eq(gradgen_validate(&p, err, sizeof err), -EINVAL);
  gradgen_defaults(&p);
  p.zeros = 1;
  cr_assert_eq(gradgen_validate(&p, err, sizeof err), -EINVAL);
  enum gradgen_dist d;
  cr_assert_eq(gradgen_dist_parse("student", &d), 0);
  cr_assert_eq(d, GRADGEN_STUDENT);
  cr_assert_eq(gradgen_dist_parse("gauss", &d), -EINVAL);
}

static long max_rss_kb(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

/* A 138M-parameter gradient (VGG-16's size) generated in 1M-value chunks
 * keeps memory at one chunk. */
Test(gradgen, bounded_memory, .timeout = 120) {
  struct gradgen_params p;
  gradgen_defaults(&p);
  enum { CHUNK = 1 << 20 };
  float *buf = malloc(CHUNK * sizeof *buf);
  cr_assert_eq(gradgen_fill(&p, 0, 0, 0, 1.0, 0, buf, CHUNK), 0);
  long before = max_rss_kb();
  uint64_t total = 138357544, done = 0;
  double sum = 0;
  while (done < total) {
    size_t c = total - done < CHUNK ? (size_t)(total - done) : CHUNK;
    cr_assert_eq(gradgen_fill(&p, 0, 1, 0, 1.0, done, buf, c), 0);
    sum += buf[c - 1];
    done += c;
  }
  long grew = max_rss_kb() - before;
  cr_assert(grew < 16 * 1024, "resident memory grew by %ld kB", grew);
  cr_assert(isfinite(sum));
  free(buf);
}

/* ---- models ----------------------------------------------------------- */

Test(model, synthetic) {
  struct model *m;
  char err[256];
  cr_assert_eq(model_synthetic(1000003, 10, 0.3, 0.01, &m, err, sizeof err),
               0);
  cr_assert_eq(m->params, 1000003);
  cr_assert_eq(m->ntensors, 10);
  uint64_t sum = 0;
  double back = 0;
  for (size_t i = 0; i < m->ntensors; i++) {
    sum += m->tensors[i].elements;
    back += m->tensors[i].backward_s;
  }
  cr_assert_eq(sum, 1000003);
  cr_assert_float_eq(back, 0.2, 1e-12);
  cr_assert_float_eq(m->forward_s + m->backward_s, 0.3, 1e-12);
  /* Backward order: the last layer's tensor first. */
  cr_assert_eq(m->tensors[0].layer, 9);
  model_free(m);
  cr_assert_eq(model_synthetic(0, 1, 1, 0, &m, err, sizeof err), -EINVAL);
  cr_assert_eq(model_synthetic(5, 6, 1, 0, &m, err, sizeof err), -EINVAL);
  cr_assert_eq(model_synthetic(5, 1, -1, 0, &m, err, sizeof err), -EINVAL);
}

/* ---- memory per GPU ---------------------------------------------------- */

/* ZeRO (Rajbhandari et al., SC 2020), Figure 1 and Sec. 5.1: a 7.5B
 * parameter model, mixed precision with Adam (K = 12), 64 GPUs: 120 GB a
 * GPU replicated, 31.4 GB with the optimizer states sharded, 16.6 GB with
 * the gradients too, 1.9 GB with the parameters too. */
Test(memory, zero_paper_example) {
  struct model *m;
  char err[256];
  cr_assert_eq(model_synthetic(7500000000ull, 1, 1, 0, &m, err, sizeof err),
               0);
  static const double paper_gb[4] = {120, 31.4, 16.6, 1.9};
  static const double psi = 7.5e9, nd = 64;
  const double formula[4] = {(2 + 2 + 12) * psi,
                             2 * psi + 2 * psi + 12 * psi / nd,
                             2 * psi + (2 + 12) * psi / nd,
                             (2 + 2 + 12) * psi / nd};
  for (int stage = 0; stage < 4; stage++) {
    struct memory mem;
    struct memory_opts o = {.optimizer = OPTIMIZER_ADAM,
                            .precision = "bf16",
                            .stage = stage,
                            .shards = 64,
                            .batch = 1};
    model_memory(m, &o, &mem);
    cr_assert_eq(mem.total, formula[stage], "stage %d: %.6g, formula %.6g",
                 stage, mem.total, formula[stage]);
    /* The paper's figures, as it rounds them. */
    cr_assert(fabs(mem.total / 1e9 - paper_gb[stage]) <= 0.05,
              "stage %d: %.4g GB, the paper's %.4g", stage, mem.total / 1e9,
              paper_gb[stage]);
    cr_assert_not(mem.activations_known); /* no transformer's shapes */
  }
  /* AdamW keeps Adam's states; momentum one fewer; fp32 no master copy. */
  struct memory a, b;
  struct memory_opts o = {.optimizer = OPTIMIZER_ADAMW, .precision = "bf16",
                          .shards = 1};
  model_memory(m, &o, &a);
  cr_assert_eq(a.total, 16 * psi);
  o.optimizer = OPTIMIZER_MOMENTUM;
  model_memory(m, &o, &b);
  cr_assert_eq(b.total, 12 * psi);
  o.precision = "fp32";
  model_memory(m, &o, &b);
  cr_assert_eq(b.total, (4 + 4 + 4) * psi);
  /* A stateful codec's residual: 4 bytes a value. */
  o.residual_bytes = 4;
  model_memory(m, &o, &b);
  cr_assert_eq(b.residual, 4 * psi);
  model_free(m);
}

/* A transformer's activations (Korthikanti et al. 2023, Sec. 4.1, without
 * the attention's s^2 terms): 34 s b h a block in 16 bits, and with
 * checkpointing 2 s b h a block and one block recomputed. Llama-3-8B on
 * an 80 GB H100 with Adam does not fit replicated; FSDP's full sharding
 * over 64 GPUs with checkpointing at batch 1 does. */
Test(memory, transformer_activations) {
  struct model *m;
  char err[512];
  struct model_opts mo = {.device = "H100", .precision = "bf16", .batch = 1};
  cr_assert_eq(model_load("llama-3-8b", &mo, &m, err, sizeof err), 0, "%s",
               err);
  const double s = 8192, h = 4096, blocks = 32;
  struct memory mem;
  struct memory_opts o = {.optimizer = OPTIMIZER_ADAM, .precision = "bf16",
                          .shards = 1, .batch = 1};
  model_memory(m, &o, &mem);
  cr_assert(mem.activations_known);
  cr_assert_eq(mem.activations, 34 * s * h * blocks);
  cr_assert_gt(mem.total, m->capacity);
  cr_assert_eq(m->capacity, 80e9);
  o.checkpoint = true;
  o.stage = 3;
  o.shards = 64;
  model_memory(m, &o, &mem);
  cr_assert_eq(mem.activations, 2 * s * h * blocks + 34 * s * h);
  cr_assert_lt(mem.total, m->capacity);
  /* fp32 activations take twice the bytes. */
  o.precision = "fp32";
  struct memory f;
  model_memory(m, &o, &f);
  cr_assert_eq(f.activations, 2 * mem.activations);
  model_free(m);
}

/* The update streams 12, 20 and 28 bytes a parameter (SGD, momentum,
 * Adam), and momentum's is the 20 the models charge by default. */
Test(memory, optimizer_update) {
  cr_assert_eq(optimizer_update_bytes(OPTIMIZER_SGD), 12);
  cr_assert_eq(optimizer_update_bytes(OPTIMIZER_MOMENTUM), MODEL_UPDATE_BYTES);
  cr_assert_eq(optimizer_update_bytes(OPTIMIZER_ADAM), 28);
  cr_assert_eq(optimizer_update_bytes(OPTIMIZER_ADAMW), 28);
  cr_assert_eq(optimizer_update_s(OPTIMIZER_ADAM, 1e9, 1e12, 0), 0.028);
  /* Bound by FLOPs on a device slow at them. */
  cr_assert_eq(optimizer_update_s(OPTIMIZER_ADAM, 1e9, 1e12, 1e9), 12);
  cr_assert_eq(optimizer_find("adamw"), OPTIMIZER_ADAMW);
  cr_assert_eq(optimizer_find("lamb"), -1);
}

/* Every model the seeds evaluate has a file, loads, and holds the size the
 * papers state (the files' own 'expect' lines are checked by the loader;
 * these are the sizes as the papers print them, in MiB or MB); resnet101,
 * Zhang et al. 2020's torchvision model, holds torchvision's exact count. */
Test(model, seed_models) {
  static const struct {
    const char *name;
    double bytes, tol;
    size_t tensors; /* 0: not stated */
  } want[] = {
      {"alexnet", 233 * 1048576.0, 0.01, 26},    /* INCEPTIONN, RedSync */
      {"vgg16", 528 * 1048576.0, 0.01, 0},       /* RedSync Table 1 */
      {"resnet50", 98 * 1048576.0, 0.01, 153},   /* INCEPTIONN; GradientFlow */
      {"resnet101", 44549160 * 4.0, 0, 314},     /* torchvision, Zhang et al. */
      {"resnet110", 1.7e6 * 4, 0.02, 0},         /* He et al. */
      {"resnet44", 2.65e6, 0.01, 0},             /* RedSync Table 1 */
      {"resnet18", 11.69e6 * 4, 0.005, 0},       /* torchvision */
      {"hdc", 2.5 * 1048576.0, 0.02, 0},         /* INCEPTIONN */
      {"mnist-mlp", 648010 * 4.0, 0, 0},         /* 784-500-500-10 */
      {"cifar100-cnn", 0, 0, 0},
      {"cifar100-convex", 0, 0, 0},
      {"lstm-ptb", 204e6, 0.005, 0},             /* RedSync Table 1 */
      {"lstm-wiki2", 344e6, 0.005, 0},           /* RedSync Table 1 */
      {"vgg16-cifar", 59e6, 0.005, 0},           /* RedSync Table 1 */
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    struct model *m;
    char err[512];
    int rc = model_load(want[i].name, NULL, &m, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", want[i].name, err);
    uint64_t sum = 0;
    double back = 0;
    for (size_t t = 0; t < m->ntensors; t++) {
      sum += m->tensors[t].elements;
      back += m->tensors[t].backward_s;
      cr_assert_lt(m->tensors[t].layer, m->nlayers);
    }
    cr_assert_eq(sum, m->params);
    if (want[i].bytes > 0)
      cr_assert(REL(4.0 * (double)m->params, want[i].bytes) <= want[i].tol,
                "%s: %.6g bytes, stated %.6g", want[i].name,
                4.0 * (double)m->params, want[i].bytes);
    if (want[i].tensors)
      cr_assert_eq(m->ntensors, want[i].tensors, "%s", want[i].name);
    cr_assert(m->forward_s > 0 && m->backward_s > 0 && m->update_s > 0);
    /* The tensors carry all the backward time of their layers. */
    cr_assert(back <= m->backward_s * (1 + 1e-9));
    model_free(m);
  }
}

/* Throughputs measured in the seeds are reproduced exactly; others come
 * from the device's efficiency. */
Test(model, timing) {
  struct model *m;
  char err[512];
  cr_assert_eq(model_load("alexnet", NULL, &m, err, sizeof err), 0, "%s",
               err);
  cr_assert_float_eq(m->forward_s + m->backward_s, 128 / 1670.0, 1e-12);
  cr_assert_float_eq(m->backward_s, 2 * m->forward_s, 1e-12);
  cr_assert(strstr(m->timing_source, "measured"));
  model_free(m);
  struct model_opts o = {.device = "V100", .precision = "mixed", .batch = 256, .dir = NULL};
  cr_assert_eq(model_load("alexnet", &o, &m, err, sizeof err), 0, "%s", err);
  cr_assert_float_eq(m->forward_s + m->backward_s, 256 / 3700.0, 1e-12);
  model_free(m);
  /* A model without a measurement: efficiency-based, proportional to the
   * batch. */
  struct model_opts a = {.device = "TitanXp", .precision = NULL, .batch = 32, .dir = NULL};
  struct model_opts b = {.device = "TitanXp", .precision = NULL, .batch = 64, .dir = NULL};
  struct model *ma, *mb;
  cr_assert_eq(model_load("vgg16", &a, &ma, err, sizeof err), 0, "%s", err);
  cr_assert_eq(model_load("vgg16", &b, &mb, err, sizeof err), 0, "%s", err);
  cr_assert_float_eq(2 * (ma->forward_s + ma->backward_s),
                     mb->forward_s + mb->backward_s, 1e-12);
  cr_assert(strstr(ma->timing_source, "efficiency"));
  model_free(ma);
  model_free(mb);
  /* The convex variant has backward only in its last layer. */
  cr_assert_eq(model_load("cifar100-convex", NULL, &m, err, sizeof err), 0);
  cr_assert(m->backward_s < 0.01 * m->forward_s);
  model_free(m);
}

/* GradientFlow Section 3.3: AlexNet's top 8 layers produce 96.2% of the
 * gradients and take 7.1% of the backward time. The layer list and the
 * FLOP-proportional split give 96.2% and 8.1% (nothing was fitted). */
Test(model, gradientflow_alexnet_profile) {
  struct model *m;
  char err[512];
  cr_assert_eq(model_load("alexnet", NULL, &m, err, sizeof err), 0);
  size_t top = m->nlayers - 8;
  uint64_t elems = 0;
  double back = 0;
  for (size_t t = 0; t < m->ntensors; t++)
    if (m->tensors[t].layer >= top)
      elems += m->tensors[t].elements;
  for (size_t l = top; l < m->nlayers; l++)
    back += m->layers[l].backward_s;
  cr_assert(fabs((double)elems / (double)m->params - 0.962) < 0.005);
  cr_assert(fabs(back / m->backward_s - 0.071) < 0.015, "%g",
            back / m->backward_s);
  model_free(m);
}

static char *write_tmp(const char *text) {
  char *path = strdup("/tmp/gradsim-model-XXXXXX.model");
  int fd = mkstemps(path, 6);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return path;
}

Test(model, bad_files) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"layer a 1\n", ":1: the first directive must be 'model NAME'"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 0 a\n", ":4: tensor t"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 5 b\n", "'b' is not declared"},
      {"model x\nbatch 4\nlayer a -1\n", ":3: layer a"},
      {"model x\nbatch 4\nlayer a 1\nlayer a 2\n", "declared twice"},
      {"model x\nbatch 0\n", ":2: batch"},
      {"model x\nbatch 4\nsource \"unterminated\n", ":3: unterminated"},
      {"model x\nbatch 4\nfoo bar\n", ":3: unknown or malformed"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 5 a\nexpect params 10 0 \"s\"\n",
       "hold 5 parameters, not 10"},
      {"model x\nlayer a 1\ntensor t 5 a\n", "no 'batch N' line"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = write_tmp(cases[i].text);
    struct model *m;
    char err[512];
    int rc = model_load(path, NULL, &m, err, sizeof err);
    cr_assert_lt(rc, 0, "case %zu loaded", i);
    cr_assert(strstr(err, cases[i].want), "case %zu: %s", i, err);
    cr_assert(!strchr(err, '\n'));
    unlink(path);
    free(path);
  }
  struct model *m;
  char err[512];
  cr_assert_lt(model_load("nonesuch", NULL, &m, err, sizeof err), 0);
  cr_assert(strstr(err, "alexnet") && strstr(err, "vgg16"), "%s", err);
  struct model_opts o = {.device = "K80", .precision = NULL, .batch = 0, .dir = NULL};
  cr_assert_eq(model_load("alexnet", &o, &m, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "P100"), "%s", err);
  struct model_opts q = {.device = NULL, .precision = "fp8", .batch = 0, .dir = NULL};
  cr_assert_eq(model_load("alexnet", &q, &m, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "fp32, mixed"), "%s", err);
}

/* ---- the NIC engine (models/nic.h), on hand-made bursts --------------- */

static struct nic_engine engine(void) {
  struct nic_engine e;
  nic_engine_default(&e);
  return e;
}

/* The tagged codec the engine streams (INCEPTIONN's classes). */
static codec_t *inc_codec(void) {
  codec_t *c;
  cr_assert_eq(codec_create("inceptionn:eb=-10", &c, NULL, 0), 0);
  cr_assert(nic_tagged(c));
  return c;
}

Test(nic, only_codecs_with_classes_are_tagged) {
  codec_t *c;
  cr_assert_eq(codec_create("q8", &c, NULL, 0), 0);
  cr_assert_not(nic_tagged(c));
  cr_assert_not(nic_tagged(NULL));
  codec_free(c);
}

Test(nic, eight_zeros) {
  struct nic_engine e = engine();
  codec_t *inc = inc_codec();
  uint8_t tags[8] = {0};
  uint16_t vb[2];
  cr_assert_eq(nic_inc_vectors(&e, inc, tags, 8, vb), 1);
  cr_assert_eq(vb[0], 16, "tag vector only: %u bits", vb[0]);
  struct nic_cost c;
  nic_inc_compress(&e, vb, 1, 0, &c);
  /* 16 bits: no whole output burst; the carry leaves padded at the end. */
  cr_assert_eq(c.bits, 16);
  cr_assert_eq(c.out_bursts, 0);
  cr_assert(c.flush);
  cr_assert_eq(c.stalls, 0);
  cr_assert_eq(c.cycles, 2, "one in, one flush: %lu", (unsigned long)c.cycles);
  codec_free(inc);
}

Test(nic, eight_large_values_carry_and_stall) {
  struct nic_engine e = engine();
  codec_t *inc = inc_codec();
  uint8_t tags[8 * 17];
  memset(tags, 3, sizeof tags);
  uint16_t vb[17];
  cr_assert_eq(nic_inc_vectors(&e, inc, tags, 8, vb), 1);
  cr_assert_eq(vb[0], 272);
  struct nic_cost c;
  /* One 272-bit vector: one burst out, a 16-bit carry flushed. */
  nic_inc_compress(&e, vb, 1, 0, &c);
  cr_assert_eq(c.out_bursts, 1);
  cr_assert(c.flush);
  cr_assert_eq(c.stalls, 0);
  cr_assert_eq(c.cycles, 2);
  /* Seventeen: the carry grows 16 bits a cycle; after sixteen it is a
   * whole burst, so the seventeenth waits one cycle. 17 x 272 = 4624 bits:
   * 18 whole bursts and 16 bits. */
  cr_assert_eq(nic_inc_vectors(&e, inc, tags, 8 * 17, vb), 17);
  nic_inc_compress(&e, vb, 17, 0, &c);
  cr_assert_eq(c.bits, 4624);
  cr_assert_eq(c.out_bursts, 18);
  cr_assert_eq(c.stalls, 1);
  cr_assert_eq(c.cycles, 19);
  codec_free(inc);
}

/* A packet of five bursts behind two header bursts, error bound 2^-10:
 *   A  eight zeros                      16 bits
 *   B  eight 0.01 (8-bit fields)        16 + 64  =  80
 *   C  eight 0.5 (16-bit fields)        16 + 128 = 144
 *   D  eight 2.0 (32 bits kept)         16 + 256 = 272
 *   E  four 2.0, four 0.5               16 + 128 + 64 = 208
 * Compression, by hand (carry after each cycle): header 2 cycles; A 16;
 * B 96; C 240; D 512 -> emit, 256; the carry is a whole burst: stall,
 * emit, 0; E 208; flush. 9 cycles, 1 stall, 2 whole bursts, 720 bits.
 * Decompression (buffer before/after, capacity 2 x 256 + 16, 768 bits
 * in): header 2; stall, read -> 256; A 240, read -> 496; B 416; C 272,
 * read -> 528; D 256; E 48. 8 cycles, 1 stall, 5 bursts of floats. */
Test(nic, mixed_packet_by_hand) {
  struct nic_engine e = engine();
  float x[40];
  for (int i = 0; i < 8; i++) {
    x[i] = 0.0f;
    x[8 + i] = i % 2 ? -0.01f : 0.01f;
    x[16 + i] = 0.5f;
    x[24 + i] = 2.0f;
    x[32 + i] = i < 4 ? 2.0f : 0.5f;
  }
  codec_t *c;
  cr_assert_eq(codec_create("inceptionn:eb=-10", &c, NULL, 0), 0);
  unsigned char payload[256];
  struct nic_cost ct, cd;
  ptrdiff_t len = nic_inc_compress_packet(&e, c, x, 40, 2, payload,
                                          sizeof payload, &ct);
  cr_assert_eq(len, 90, "720 bits are 90 bytes: %td", len);
  cr_assert_eq(ct.bits, 720);
  cr_assert_eq(ct.cycles, 9);
  cr_assert_eq(ct.stalls, 1);
  cr_assert_eq(ct.out_bursts, 2);
  cr_assert(ct.flush);
  float y[40];
  cr_assert_eq(nic_inc_decompress_packet(&e, c, payload, (size_t)len, 40, 2,
                                         y, &cd),
               0);
  cr_assert_eq(cd.cycles, 8);
  cr_assert_eq(cd.stalls, 1);
  cr_assert_eq(cd.out_bursts, 5);
  /* The INCEPTIONN reconstruction: 0.01 keeps floor(0.01 x 2^7) / 2^7,
   * 0.5 and 2.0 are exact, zeros stay zero. */
  for (int i = 0; i < 40; i++) {
    float want = x[i];
    if (i >= 8 && i < 16)
      want = i % 2 ? -1.0f / 128 : 1.0f / 128;
    cr_assert_eq(y[i], want, "value %d: %g, want %g", i, y[i], want);
  }
  /* A corrupted payload is refused, not costed. */
  payload[0] = 0xff;
  cr_assert_lt(nic_inc_decompress_packet(&e, c, payload, 3, 40, 2, y, &cd),
               0);
  codec_free(c);
}

Test(nic, packets_and_messages) {
  struct nic_engine e = engine();
  struct nic_framing f;
  nic_framing_default(&f);
  /* 1460 payload bytes hold 365 values (45 bursts and 5 values); 54
   * header bytes (IP, TCP, MAC) are 2 bursts. */
  cr_assert_eq(nic_packet_values(&e, &f), 365);
  cr_assert_eq(nic_header_bursts(&e, &f), 2);
  f.mtu = 9000;
  cr_assert_eq(nic_packet_values(&e, &f), 2240);
  f.mtu = 1500;
  /* 1000 packets of zeros: each 46 vectors of 16 bits (the last of 5
   * values) = 736 bits = 92 bytes, 2 + 46 cycles plus a flush to
   * compress; a message of them sums per packet. */
  size_t n = 365000;
  uint8_t *tags = calloc(n, 1);
  codec_t *inc = inc_codec();
  struct nic_msg m;
  nic_inc_message(&e, &f, inc, tags, n, n, &m);
  cr_assert_eq(m.packets, 1000);
  cr_assert_float_eq(m.payload_bytes, 1000 * 92.0, 1e-9);
  cr_assert_float_eq(m.tx_cycles, 1000 * 49.0, 1e-9);
  /* A sample of a tenth stands for the whole. */
  nic_inc_message(&e, &f, inc, tags, n / 10, n, &m);
  cr_assert_eq(m.packets, 1000);
  cr_assert_float_eq(m.tx_cycles, 1000 * 49.0, 1e-9);
  free(tags);
  codec_free(inc);
  /* The streaming engine: fp32 through, one burst a cycle plus headers;
   * topk adds its selection passes before the first packet. */
  struct nic_stream s = {8, 256, 256, 0};
  cr_assert_eq(nic_stream_cycles(&e, &s, true, 360, 360 * 32, 2), 47);
  cr_assert_eq(nic_stream_cycles(&e, &s, false, 360, 360 * 32, 2), 47);
  /* 3600 values: nine packets of 365 (46 bursts + 2 header bursts) and
   * one of 315 (40 + 2); the four passes read 450 bursts each. */
  s.passes = 4;
  nic_stream_message(&e, &f, &s, 3600, 3600 * 4.0, &m);
  cr_assert_eq(m.packets, 10);
  cr_assert_float_eq(m.tx_cycles, 9 * 48.0 + 42 + 4 * 450.0, 1e-9);
  cr_assert_float_eq(m.rx_cycles, 9 * 48.0 + 42, 1e-9);
}

Test(nic, bad_parameters) {
  struct nic_engine e = engine();
  struct nic_framing f;
  nic_framing_default(&f);
  char err[256];
  cr_assert_eq(nic_check(&e, &f, err, sizeof err), 0);
  e.clock_hz = 0;
  cr_assert_eq(nic_check(&e, &f, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "clock"), "%s", err);
  e = engine();
  e.burst_bits = 100;
  cr_assert_eq(nic_check(&e, &f, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "multiple of 32"), "%s", err);
  e = engine();
  f.mtu = 60;
  cr_assert_eq(nic_check(&e, &f, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "mtu"), "%s", err);
}

/* Sharded data parallel's units: runs of tensors in backward order of
 * one block (the layers' names up to their first all-digit part), a
 * layer outside any block its own unit, a block that comes back later a
 * unit again; per layer, each layer's tensors. */
Test(model, units) {
  static const char text[] =
      "model u\nbatch 1\nlayer emb 0\nlayer blk.0.a 1\nlayer blk.0.b 1\n"
      "layer blk.1.a 1\nlayer head 1\n"
      "tensor emb.w 10 emb\ntensor a0 1 blk.0.a\ntensor b0 2 blk.0.b\n"
      "tensor a1 4 blk.1.a\ntensor h 100 head\ntensor b0x 8 blk.0.b\n";
  struct model *m;
  char err[512];
  cr_assert_eq(model_load_data("u.model", text, sizeof text - 1, NULL, &m, err,
                               sizeof err),
               0, "%s", err);
  size_t n;
  struct model_unit *u = model_units(m, false, &n);
  /* The tensors as listed (backward's order): emb.w; a0 and b0, one run
   * of blk.0; a1; h; b0x, blk.0 again. */
  static const struct model_unit want[] = {
      {0, 1, 10}, {1, 2, 3}, {3, 1, 4}, {4, 1, 100}, {5, 1, 8}};
  cr_assert_eq(n, G_N_ELEMENTS(want));
  for (size_t i = 0; i < n; i++) {
    cr_expect_eq(u[i].first, want[i].first, "unit %zu", i);
    cr_expect_eq(u[i].count, want[i].count, "unit %zu", i);
    cr_expect_eq(u[i].n, want[i].n, "unit %zu", i);
  }
  g_free(u);
  cr_expect_eq(model_largest_unit(m, false), 100);
  u = model_units(m, true, &n);
  cr_expect_eq(n, 6);
  g_free(u);
  model_free(m);
}

Test(model, from_memory) {
  char *path = g_build_filename(model_dir(NULL), "alexnet.model", NULL);
  char *text;
  gsize len;
  cr_assert(g_file_get_contents(path, &text, &len, NULL));
  struct model *a, *b;
  char err[512];
  cr_assert_eq(model_load("alexnet", NULL, &a, err, sizeof err), 0, "%s", err);
  cr_assert_eq(model_load_data(path, text, len, NULL, &b, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(a->params, b->params);
  cr_assert_eq(a->ntensors, b->ntensors);
  cr_assert_eq(a->forward_s, b->forward_s);
  cr_assert_eq(a->backward_s, b->backward_s);
  cr_assert_str_eq(a->path, b->path);
  model_free(a);
  model_free(b);
  /* No NUL at the end: nothing is read past LEN (the copy stops before
   * the last newline). */
  char *exact = g_memdup2(text, len - 1);
  cr_assert_eq(model_load_data("x", exact, len - 1, NULL, &b, err,
                               sizeof err),
               0, "%s", err);
  model_free(b);
  g_free(exact);
  g_free(text);
  g_free(path);
  /* A NUL inside would end the text early. */
  static const char nul[] = "model x\nbatch 4\0\nlayer a 1\ntensor t 5 a\n";
  cr_assert_eq(model_load_data("nul.model", nul, sizeof nul - 1, NULL, &b,
                               err, sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "nul.model: holds a NUL byte"), "%s", err);

  static const struct {
    const char *text, *want;
  } cases[] = {
      /* Elements that used to wrap the 64-bit sum around. */
      {"model x\nbatch 4\nlayer a 1\ntensor t 18446744073709551615 a\n"
       "tensor u 2 a\n",
       ":4: tensor t: elements '18446744073709551615' bring the model over "
       "10000000000000 parameters"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 9999999999999 a\n"
       "tensor u 2 a\n",
       ":5: tensor u"},
      {"model x\nbatch 4\nlayer a 1e300\ntensor t 1 a\n",
       ":3: layer a: FLOPs '1e300' must be a number in 0..1e+18"},
      /* Shapes: a product that is not the elements, a malformed one. */
      {"model x\nbatch 4\nlayer a 1\ntensor t 12 a 3x5\n",
       ":4: tensor t: shape '3x5' must be dimensions AxBx..."},
      {"model x\nbatch 4\nlayer a 1\ntensor t 12 a 3x0x4\n",
       ":4: tensor t: shape '3x0x4'"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 12 a 3*4\n",
       ":4: tensor t: shape '3*4'"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 2 a 1x1x1x1x1x1x1x1x2\n",
       "1 to 8 whole numbers"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct model *m = (struct model *)1;
    int rc = model_load_data("mem.model", cases[i].text,
                             strlen(cases[i].text), NULL, &m, err,
                             sizeof err);
    cr_assert_eq(rc, -EINVAL, "case %zu: %d", i, rc);
    cr_assert_null(m);
    cr_assert(strstr(err, cases[i].want), "case %zu: %s", i, err);
  }
  /* A shape is kept, and gives the matrix codecs see: the first
   * dimension by the rest; a vector or a tensor without one is N x 1. */
  const char *shaped = "model x\nbatch 4\nlayer a 1\ntensor w 96 a 4x3x2x4\n"
                       "tensor b 4 a 4\ntensor c 7 a\n";
  cr_assert_eq(model_load_data("s", shaped, strlen(shaped), NULL, &b, err,
                               sizeof err),
               0, "%s", err);
  uint64_t rows, cols;
  cr_assert_eq(b->tensors[0].ndims, 4);
  model_tensor_matrix(&b->tensors[0], &rows, &cols);
  cr_assert(rows == 4 && cols == 24, "%llux%llu", (unsigned long long)rows,
            (unsigned long long)cols);
  model_tensor_matrix(&b->tensors[1], &rows, &cols);
  cr_assert(rows == 4 && cols == 1);
  cr_assert_eq(b->tensors[2].ndims, 0);
  model_tensor_matrix(&b->tensors[2], &rows, &cols);
  cr_assert(rows == 7 && cols == 1);
  model_free(b);
  /* The synthetic model's shape must fit its tensors. */
  cr_assert_eq(model_synthetic(24, 2, 0, 0, &b, err, sizeof err), 0);
  uint64_t d34[] = {3, 4}, d5[] = {5};
  cr_assert_eq(model_synthetic_shape(b, d34, 2, err, sizeof err), 0);
  cr_assert_eq(b->tensors[1].dims[1], 4);
  cr_assert_eq(model_synthetic_shape(b, d5, 1, err, sizeof err), -EINVAL);
  cr_assert(strstr(err, "does not fit"), "%s", err);
  model_free(b);
  /* At the limits: accepted, and timed with finite times. */
  const char *big = "model x\nbatch 4\nlayer a 1e18\nlayer b 1e18\n"
                    "tensor t 9999999999999 a\ntensor u 1 b\n";
  cr_assert_eq(model_load_data("big", big, strlen(big), NULL, &b, err,
                               sizeof err),
               0, "%s", err);
  cr_assert_eq(b->params, UINT64_C(10000000000000));
  cr_assert(isfinite(b->forward_s) && isfinite(b->backward_s) &&
            isfinite(b->update_s));
  model_free(b);
}

/* ---- model files and device tables in a directory of their own ------- */

/* A fresh directory holding the files NAMES[i] with contents TEXTS[i]
 * (NULL-terminated); g_free() it after rm_dir(). */
static char *make_dir(const char *const *names, const char *const *texts) {
  char *dir = g_dir_make_tmp("gradsim-models-XXXXXX", NULL);
  cr_assert_not_null(dir);
  for (size_t i = 0; names[i]; i++) {
    char *path = g_build_filename(dir, names[i], NULL);
    cr_assert(g_file_set_contents(path, texts[i], -1, NULL), "%s", path);
    g_free(path);
  }
  return dir;
}

static void rm_dir(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  for (const char *f; d && (f = g_dir_read_name(d));) {
    char *path = g_build_filename(dir, f, NULL);
    unlink(path);
    g_free(path);
  }
  if (d)
    g_dir_close(d);
  rmdir(dir);
}

/* tiny: 1e9 forward FLOPs in each of two layers, backward from b only, so
 * 4e9 FLOPs per sample; b's tensors hold 3 and 1 elements. other: 6e9. */
static const char TINY[] = "model tiny\nbatch 32\nbackward_from b\n"
                           "layer a 1e9\nlayer b 1e9\n"
                           "tensor b.w 3 b\ntensor b.b 1 b\ntensor a.w 4 a\n";
static const char OTHER[] = "model other\nbatch 10\nlayer c 2e9\n"
                            "tensor c.w 5 c\n";
/* D measured tiny (efficiency 4e9 * 100 / 1e12 = 0.4), E measured it at
 * 0.2, F and G measured nothing; G has no fp32 peak, F no mixed one. */
static const char DEVICES[] =
    "# comment line\n"
    "device D \"d\"\npeak fp32 1e12 \"s\"\nmemory 2e11 \"s\"\n"
    "measured tiny fp32 32 100 \"s\"\n\n"
    "device E \"e\"\npeak fp32 2e12 \"s\"\nmemory 1e11 \"s\"\n"
    "measured tiny fp32 32 100 \"s\"\n"
    "device F \"f\"\npeak fp32 1e12 \"s\"\nmemory 1e11 \"s\"\n"
    "device G \"g\"\npeak mixed 1e12 \"s\"\nmemory 1e11 \"s\"\n";

/* The three ways a device is timed: its own measurement of the model, the
 * mean efficiency of its measurements, that of every device's; and how
 * the time is spread over layers and tensors. */
Test(model, timing_from_a_device_table) {
  const char *names[] = {"tiny.model", "other.model", "devices.conf", NULL};
  const char *texts[] = {TINY, OTHER, DEVICES};
  char *dir = make_dir(names, texts);
  char err[512] = "";
  struct model *m;

  struct model_opts d = {.device = "D", .precision = NULL, .batch = 0, .dir = dir};
  cr_assert_eq(model_load("tiny", &d, &m, err, sizeof err), 0, "%s", err);
  /* Measured: 32 samples at 100 samples/s, a quarter of the FLOPs in
   * each forward, half in b's backward, none in a's. */
  cr_assert_float_eq(m->forward_s + m->backward_s, 0.32, 1e-12);
  cr_assert_float_eq(m->layers[0].forward_s, 0.08, 1e-12);
  cr_assert_eq(m->layers[0].backward_s, 0);
  cr_assert_float_eq(m->layers[1].backward_s, 0.16, 1e-12);
  cr_assert_str_eq(m->tensors[0].name, "b.w");
  cr_assert_float_eq(m->tensors[0].backward_s, 0.12, 1e-12);
  cr_assert_float_eq(m->tensors[1].backward_s, 0.04, 1e-12);
  cr_assert_eq(m->tensors[2].backward_s, 0);
  cr_assert_float_eq(m->update_s, 20.0 * 8 / 2e11, 1e-20);
  cr_assert_str_eq(m->device, "D");
  cr_assert(strstr(m->timing_source, "measured on D fp32: 100 samples/s"),
            "%s", m->timing_source);
  model_free(m);

  /* E's own efficiency (0.2): 6e9 FLOPs x 10 samples / (2e12 x 0.2). */
  struct model_opts e = {.device = "E", .precision = NULL, .batch = 0, .dir = dir};
  cr_assert_eq(model_load("other", &e, &m, err, sizeof err), 0, "%s", err);
  cr_assert_float_eq(m->forward_s + m->backward_s, 0.15, 1e-12);
  cr_assert(strstr(m->timing_source, "(the mean efficiency of tiny on E)"),
                   "%s", m->timing_source);
  model_free(m);

  /* F measured nothing: every device's mean, (0.4 + 0.2) / 2. */
  struct model_opts f = {.device = "F", .precision = NULL, .batch = 0, .dir = dir};
  cr_assert_eq(model_load("other", &f, &m, err, sizeof err), 0, "%s", err);
  cr_assert_float_eq(m->forward_s + m->backward_s, 6e9 * 10 / (1e12 * 0.3),
                     1e-12);
  cr_assert(strstr(m->timing_source, "efficiency of tiny on D, tiny on E)"),
            "%s", m->timing_source);
  model_free(m);

  struct model_opts fm = {.device = "F", .precision = "mixed", .batch = 0, .dir = dir};
  cr_assert_eq(model_load("other", &fm, &m, err, sizeof err), -EINVAL);
  cr_assert_null(m);
  cr_assert_str_eq(err, "device F has no mixed peak in devices.conf (it "
                        "lists fp32)");
  struct model_opts gm = {.device = "G", .precision = "mixed", .batch = 0, .dir = dir};
  cr_assert_eq(model_load("other", &gm, &m, err, sizeof err), -EINVAL);
  cr_assert_str_eq(err, "devices.conf has no measurement at precision mixed "
                        "to calibrate device G");
  struct model_opts x = {.device = "X", .precision = NULL, .batch = 0, .dir = dir};
  cr_assert_eq(model_load("other", &x, &m, err, sizeof err), -EINVAL);
  cr_assert_str_eq(err, "unknown device 'X' (valid: D, E, F, G)");
  rm_dir(dir);
  g_free(dir);
}

/* What model_device_info() reads of a device: every figure it lists,
 * zeros for those it does not; an unknown device names the valid ones. */
Test(model, device_info) {
  const char *names[] = {"devices.conf", NULL};
  const char *texts[] = {
      "device D \"d\"\npeak fp32 2e12 \"s\"\npeak bf16 9e12 \"s\"\n"
      "memory 3e11 \"s\"\nlaunch 4e-6 \"s\"\ncc 86 \"s\"\n"
      "nvlink 5e10 \"s\"\n"
      "device E \"e\"\npeak mixed 1e12 \"s\"\nmemory 1e11 \"s\"\n"};
  char *dir = make_dir(names, texts);
  struct model_opts o = {.dir = dir};
  struct device_info d;
  char err[512] = "";
  cr_assert_eq(model_device_info("D", &o, &d, err, sizeof err), 0, "%s", err);
  cr_assert_eq(d.memory_Bps, 3e11);
  cr_assert_eq(d.fp32_flops, 2e12);
  cr_assert_eq(d.launch_s, 4e-6);
  cr_assert_eq(d.cc, 86);
  cr_assert_eq(d.nvlink_Bps, 5e10);
  cr_assert_eq(model_device_info("E", &o, &d, err, sizeof err), 0, "%s", err);
  cr_assert_eq(d.memory_Bps, 1e11);
  cr_assert_eq(d.fp32_flops, 0);
  cr_assert_eq(d.launch_s, 0);
  cr_assert_eq(d.cc, 0);
  cr_assert_eq(d.nvlink_Bps, 0);
  cr_assert_eq(model_device_info("F", &o, &d, err, sizeof err), -EINVAL);
  cr_assert_str_eq(err, "unknown device 'F' (valid: D, E)");
  rm_dir(dir);
  g_free(dir);
}

/* Every device of the shipped table has the figures the GPU codec model
 * and NCCL's tuning read: a launch overhead, a compute capability, a
 * memory bandwidth and an fp32 peak. */
Test(model, shipped_devices_have_launch_and_cc) {
  const char *devs[] = {"P100",      "V100",      "TitanXp", "TitanV",
                        "GTX980",    "A100-40GB", "A100-80GB", "H100",
                        "H200",      "B200",      "L40S",    "H20"};
  const int cc[] = {60, 70, 61, 70, 52, 80, 80, 90, 90, 100, 89, 90};
  for (size_t i = 0; i < G_N_ELEMENTS(devs); i++) {
    struct device_info d;
    char err[512] = "";
    cr_assert_eq(model_device_info(devs[i], NULL, &d, err, sizeof err), 0,
                 "%s", err);
    cr_expect(d.launch_s > 0 && d.launch_s < 1e-4, "%s", devs[i]);
    cr_expect_eq(d.cc, cc[i], "%s: cc %d", devs[i], d.cc);
    cr_expect(d.memory_Bps > 0 && d.fp32_flops > 0, "%s", devs[i]);
  }
}

/* Each bad line of devices.conf is named by file and line (blank and
 * comment lines counted), with the form expected. */
Test(model, bad_device_tables) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"peak fp32 1e12 \"s\"\n", "devices.conf:1: 'peak' before any 'device'"},
      {"\n# c\ndevice D \"d\"\npeak fp12 1e12 \"s\"\n",
       "devices.conf:4: expected 'peak PRECISION FLOPS \"SOURCE\"', "
       "PRECISION one of fp32, tf32, bf16, fp16, fp8, mixed"},
      {"device D \"d\"\nmfu bf16 1.5 \"s\"\n",
       "devices.conf:2: expected 'mfu PRECISION FRACTION \"SOURCE\"', "
       "FRACTION in (0, 1]"},
      {"device D \"d\"\nnvlink x \"s\"\n",
       "devices.conf:2: expected 'nvlink BYTES_PER_S \"SOURCE\"'"},
      {"device D \"d\"\npeak fp32 0 \"s\"\n", "devices.conf:2: expected 'peak"},
      {"device D \"d\"\nmemory -1 \"s\"\n",
       "devices.conf:2: expected 'memory BYTES_PER_S \"SOURCE\"'"},
      {"device D \"d\"\nmeasured tiny fp32 32 0 \"s\"\n",
       "devices.conf:2: expected 'measured MODEL PRECISION BATCH "
       "SAMPLES_PER_S \"SOURCE\"'"},
      {"device D \"d\"\nmeasured tiny fp32 x 5 \"s\"\n",
       "devices.conf:2: expected 'measured"},
      {"device D\n", "devices.conf:1: 'device' before any 'device'"},
      {"device D \"d\"\ndevice E\n",
       "devices.conf:2: unknown or malformed line starting 'device' "
       "(expected device, peak, memory, mfu, nvlink, capacity, launch, cc "
       "or measured)"},
      {"device D \"d\"\nlaunch 0 \"s\"\n",
       "devices.conf:2: expected 'launch SECONDS \"SOURCE\"', SECONDS in "
       "(0, 1)"},
      {"device D \"d\"\nlaunch 2 \"s\"\n", "devices.conf:2: expected 'launch"},
      {"device D \"d\"\ncc 7.0 \"s\"\n",
       "devices.conf:2: expected 'cc N \"SOURCE\"', N the compute capability "
       "x 10 + minor (70, 80, 90, 100), 10 to 999"},
      {"device D \"d\"\ncc 5 \"s\"\n", "devices.conf:2: expected 'cc N"},
      {"device D \"d\"\ncc 90\n", "devices.conf:2: unknown or malformed "
                                    "line starting 'cc'"},
      {"device D \"d\"\nspeed 5\n", "devices.conf:2: unknown or malformed "
                                    "line starting 'speed'"},
      {"device D \"d\n", "devices.conf:1: unterminated quote"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *names[] = {"tiny.model", "devices.conf", NULL};
    const char *texts[] = {TINY, cases[i].text};
    char *dir = make_dir(names, texts);
    struct model_opts o = {.device = "D", .precision = NULL, .batch = 0, .dir = dir};
    struct model *m = (struct model *)1;
    char err[512] = "";
    cr_assert_eq(model_load("tiny", &o, &m, err, sizeof err), -EINVAL,
                 "case %zu loaded", i);
    cr_assert_null(m);
    cr_assert(strstr(err, cases[i].want), "case %zu: %s", i, err);
    cr_assert(g_str_has_prefix(err, dir), "case %zu names the file: %s", i,
              err);
    rm_dir(dir);
    g_free(dir);
  }
}

/* The line errors of model files not covered by bad_files, each at its
 * line (comments and blank lines counted) or naming the whole file. */
Test(model, bad_model_lines) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"# only a comment\n\n", "mem.model: no 'model NAME' line"},
      {"model x\nbatch 4\n", "mem.model: a model needs layers and tensors"},
      {"model x\nbatch 4\nlayer a 1\n", "a model needs layers and tensors"},
      {"model x\nmodel y\n",
       "mem.model:2: unknown or malformed line starting 'model'"},
      {"model x\nbatch 4\nlayer a 1 2\n",
       "mem.model:3: unknown or malformed line starting 'layer'"},
      {"model x\nbatch four\n", "mem.model:2: batch 'four' must be a whole"},
      {"model x\nbatch 1000001\n", "mem.model:2: batch '1000001'"},
      {"model x\n# c\n\nbatch 4\nbackward_from z\nlayer a 1\n"
       "tensor t 5 a\n",
       "mem.model:5: backward_from: layer 'z' is not declared"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 5 a\n"
       "expect tensors 2 \"s\"\n",
       "mem.model:5: 1 tensors listed, the file expects 2"},
      {"model x\nbatch 4\nexpect tensors two \"s\"\n",
       "mem.model:3: expected 'expect tensors N \"SOURCE\"'"},
      {"model x\nbatch 4\nexpect params 5 x \"s\"\n",
       "mem.model:3: expected 'expect params N TOLERANCE \"SOURCE\"'"},
      {"model x\nbatch 4\nexpect flops 5 \"s\"\n",
       "mem.model:3: unknown or malformed line starting 'expect'"},
      {"model x\nbatch 4\nlayer a 1\ntensor t 5\n",
       "mem.model:4: unknown or malformed line starting 'tensor'"},
      {"model x\nbatch 4\nlayer a 0\ntensor t 5 a\n",
       "mem.model: the model has no FLOPs"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct model *m = (struct model *)1;
    char err[512] = "";
    int rc = model_load_data("mem.model", cases[i].text,
                             strlen(cases[i].text), NULL, &m, err,
                             sizeof err);
    cr_assert_eq(rc, -EINVAL, "case %zu: %d", i, rc);
    cr_assert_null(m);
    cr_assert(strstr(err, cases[i].want), "case %zu: %s", i, err);
  }
  /* backward_from a declared layer, and the expect lines that hold. */
  const char *ok = "model x\nbatch 4\nbackward_from b\nlayer a 1\n"
                   "layer b 1\ntensor t 5 b\nexpect tensors 1 \"s\"\n"
                   "expect params 5.2 0.05 \"s\"\n";
  struct model *m;
  char err[512] = "";
  cr_assert_eq(model_load_data("ok.model", ok, strlen(ok), NULL, &m, err,
                               sizeof err),
               0, "%s", err);
  cr_assert_eq(m->backward_from, 1);
  cr_assert_eq(m->layers[0].backward_s, 0);
  cr_assert_gt(m->layers[1].backward_s, 0);
  model_free(m);
}

/* ---- gradsim model import (models/model_import.h) ------------------------ */

#include "model_import.h"

#include <glib/gstdio.h>

static char *tmp_file(const char *name, const void *data, size_t len) {
  char *dir = g_dir_make_tmp("gsimport-XXXXXX", NULL);
  cr_assert_not_null(dir);
  char *path = g_build_filename(dir, name, NULL);
  cr_assert(g_file_set_contents(path, data, (gssize)len, NULL));
  g_free(dir);
  return path;
}

static void rm_tmp(char *path) {
  char *dir = g_path_get_dirname(path);
  g_unlink(path);
  g_rmdir(dir);
  g_free(dir);
  g_free(path);
}

static gint cmp_tensor_names(gconstpointer a, gconstpointer b) {
  const struct import_tensor *x = *(const struct import_tensor *const *)a,
                             *y = *(const struct import_tensor *const *)b;
  return strcmp(x->name, y->name);
}

static uint64_t sum_elements(const GPtrArray *t) {
  uint64_t n = 0;
  for (guint i = 0; i < t->len; i++) {
    const struct import_tensor *x = t->pdata[i];
    uint64_t e = 1;
    for (size_t d = 0; d < x->ndims; d++)
      e *= x->dims[d];
    n += e;
  }
  return n;
}

/* A safetensors file: the 8-byte little-endian length, then HEADER. */
static char *safetensors_file(const char *header, uint64_t claimed,
                              size_t extra) {
  size_t n = strlen(header);
  GByteArray *b = g_byte_array_new();
  uint64_t len = claimed ? claimed : n;
  for (int i = 0; i < 8; i++) {
    guint8 c = (guint8)(len >> (8 * i));
    g_byte_array_append(b, &c, 1);
  }
  g_byte_array_append(b, (const guint8 *)header, (guint)n);
  for (size_t i = 0; i < extra; i++) {
    guint8 z = 0;
    g_byte_array_append(b, &z, 1);
  }
  char *path = tmp_file("m.safetensors", b->data, b->len);
  g_byte_array_free(b, TRUE);
  return path;
}

static const char GPT2_CONFIG[] =
    "{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, "
    "\"n_head\": 12, \"n_positions\": 1024, \"vocab_size\": 50257, "
    "\"architectures\": [\"GPT2LMHeadModel\"]}";

/* GPT-2 small and Llama-2-7B have their published parameter counts,
 * derived here by hand from the configs' fields. */
Test(import, published_parameter_counts) {
  /* GPT-2: wte 50257 x 768, wpe 1024 x 768, ln_f 2 x 768, and per block
   * ln_1 and ln_2 (2 x 768 each), c_attn 768 x 2304 + 2304, c_proj 768 x
   * 768 + 768, c_fc 768 x 3072 + 3072, mlp.c_proj 3072 x 768 + 768. */
  uint64_t block = 4 * 768 + 768 * 2304 + 2304 + 768 * 768 + 768 +
                   768 * 3072 + 3072 + 3072 * 768 + 768;
  uint64_t gpt2 = 50257 * 768 + 1024 * 768 + 2 * 768 + 12 * block;
  cr_assert_eq(gpt2, 124439808);
  char *path = tmp_file("config.json", GPT2_CONFIG, strlen(GPT2_CONFIG));
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  struct import_info info = {.name = g_strdup("gpt2")};
  char err[512];
  cr_assert_eq(import_config(path, t, &info, err, sizeof err), 0, "%s", err);
  cr_assert_eq(sum_elements(t), gpt2);
  cr_assert_eq(t->len, 4 + 12 * 12);
  cr_assert_eq(info.seq_len, 1024);
  g_ptr_array_set_size(t, 0);
  rm_tmp(path);
  /* Llama-2-7B: embed and lm_head 32000 x 4096 each, the final norm 4096,
   * and per layer q, k, v, o 4096 x 4096, gate, up and down 4096 x 11008,
   * two norms of 4096. */
  const char *llama =
      "{\"model_type\": \"llama\", \"hidden_size\": 4096, "
      "\"intermediate_size\": 11008, \"num_hidden_layers\": 32, "
      "\"num_attention_heads\": 32, \"num_key_value_heads\": 32, "
      "\"vocab_size\": 32000, \"max_position_embeddings\": 4096, "
      "\"tie_word_embeddings\": false, \"torch_dtype\": \"float16\"}";
  uint64_t layer = 4ull * 4096 * 4096 + 3ull * 4096 * 11008 + 2 * 4096;
  uint64_t l7b = 2ull * 32000 * 4096 + 4096 + 32 * layer;
  cr_assert_eq(l7b, 6738415616ull);
  path = tmp_file("config.json", llama, strlen(llama));
  cr_assert_eq(import_config(path, t, &info, err, sizeof err), 0, "%s", err);
  cr_assert_eq(sum_elements(t), l7b);
  cr_assert_eq(t->len, 2 + 1 + 32 * 9);
  cr_assert_str_eq(((struct import_tensor *)t->pdata[0])->dtype, "fp16");
  /* Grouped-query attention: 8 key-value heads narrow k and v. */
  g_ptr_array_set_size(t, 0);
  rm_tmp(path);
  const char *gqa =
      "{\"model_type\": \"llama\", \"hidden_size\": 4096, "
      "\"intermediate_size\": 14336, \"num_hidden_layers\": 32, "
      "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
      "\"vocab_size\": 128256}";
  path = tmp_file("config.json", gqa, strlen(gqa));
  cr_assert_eq(import_config(path, t, &info, err, sizeof err), 0, "%s", err);
  uint64_t l3 = 2ull * 128256 * 4096 + 4096 +
                32 * (2ull * 4096 * 4096 + 2ull * 1024 * 4096 +
                      3ull * 4096 * 14336 + 2 * 4096);
  cr_assert_eq(sum_elements(t), l3);
  cr_assert_eq(l3, 8030261248ull);
  rm_tmp(path);
  g_ptr_array_free(t, TRUE);
  import_info_clear(&info);
}

/* Today's families, from the shipped configs (models/configs/): each
 * family's tensors sum to its published total, derived here by hand. */
static uint64_t import_shipped(const char *name, struct import_info *info,
                               GPtrArray *t) {
  char *file = g_strdup_printf("%s.json", name);
  char *path = g_build_filename(model_dir(NULL), "configs", file, NULL);
  char err[512];
  cr_assert_eq(import_config(path, t, info, err, sizeof err), 0, "%s", err);
  g_free(file);
  g_free(path);
  return sum_elements(t);
}

Test(import, todays_families) {
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  struct import_info info = {.name = g_strdup("m")};
  /* Qwen2-7B: d 3584, 28 layers, 28 heads of 128, 4 key-value heads,
   * MLP 18944, vocabulary 152064, untied; biases on q, k and v. */
  uint64_t q = 28 * (2ull * 3584 * 3584 + 2ull * 512 * 3584 + 3584 + 2 * 512 +
                     3ull * 3584 * 18944 + 2 * 3584) +
               2ull * 152064 * 3584 + 3584;
  cr_assert_eq(q, 7615616512ull);
  cr_assert_eq(import_shipped("qwen2-7b", &info, t), q);
  cr_assert_eq(info.window, 0); /* use_sliding_window false */
  g_ptr_array_set_size(t, 0);
  /* Gemma-7B: d 3072, 16 heads of 256 (4096 wide), MLP 24576, 28 layers,
   * vocabulary 256000, the head tied (Gemma's default). */
  uint64_t g = 28 * (4ull * 4096 * 3072 + 3ull * 3072 * 24576 + 2 * 3072) +
               256000ull * 3072 + 3072;
  cr_assert_eq(g, 8537680896ull);
  cr_assert_eq(import_shipped("gemma-7b", &info, t), g);
  g_ptr_array_set_size(t, 0);
  /* Gemma-2-9B: d 3584, 16 heads of 256, 8 key-value heads, MLP 14336,
   * 42 layers of four norms, tied; a 4096-token window on even layers. */
  uint64_t g2 = 42 * (2ull * 4096 * 3584 + 2ull * 2048 * 3584 +
                      3ull * 3584 * 14336 + 4 * 3584) +
                256000ull * 3584 + 3584;
  cr_assert_eq(g2, 9241705984ull);
  cr_assert_eq(import_shipped("gemma-2-9b", &info, t), g2);
  cr_assert_eq(info.window, 4096);
  cr_assert(info.window_even);
  g_ptr_array_set_size(t, 0);
  /* Phi-3-mini: d 3072, fused qkv 9216 x 3072 and gate_up 16384 x 3072,
   * down 3072 x 8192, 32 layers, vocabulary 32064, untied. */
  uint64_t ph = 32 * (9216ull * 3072 + 3072ull * 3072 + 16384ull * 3072 +
                      3072ull * 8192 + 2 * 3072) +
                2ull * 32064 * 3072 + 3072;
  cr_assert_eq(ph, 3821079552ull);
  cr_assert_eq(import_shipped("phi-3-mini-4k", &info, t), ph);
  cr_assert_eq(info.query_width, 3072);
  g_ptr_array_set_size(t, 0);
  /* Mixtral-8x7B: Mistral's attention, 8 experts of three 4096 x 14336
   * matrices and a router of 8 x 4096 in each of 32 layers, 2 experts a
   * token. */
  uint64_t mx = 32 * (2ull * 4096 * 4096 + 2ull * 1024 * 4096 +
                      8 * 3ull * 4096 * 14336 + 8 * 4096 + 2 * 4096) +
                2ull * 32000 * 4096 + 4096;
  cr_assert_eq(mx, 46702792704ull);
  cr_assert_eq(import_shipped("mixtral-8x7b", &info, t), mx);
  cr_assert_eq(info.experts, 8);
  cr_assert_eq(info.experts_active, 2);
  g_ptr_array_set_size(t, 0);
  /* Mistral-7B v0.1: 7,241,732,096, a 4096-token window. */
  cr_assert_eq(import_shipped("mistral-7b", &info, t), 7241732096ull);
  cr_assert_eq(info.window, 4096);
  g_ptr_array_set_size(t, 0);
  /* ZeRO++'s 18B GPT: GPT-2's layers (qkv, projection, two MLP matrices
   * with biases, two norms) at d 6144 over 40 layers, 512 positions,
   * GPT-2's vocabulary, the head tied; the final norm. */
  uint64_t gpt = 40 * (12ull * 6144 * 6144 + 13 * 6144) + 50257ull * 6144 +
                 512ull * 6144 + 2 * 6144;
  cr_assert_eq(gpt, 18434525184ull);
  cr_assert_eq(import_shipped("gpt-18b", &info, t), gpt);
  g_ptr_array_free(t, TRUE);
  import_info_clear(&info);
}

/* A mixture of experts costs its active experts' FLOPs, and a sliding
 * window bounds attention's: Mixtral's forward per token is about twice
 * its 12.9B active parameters, and Mistral's attention grows linearly
 * past its window when the model is timed at longer sequences. */
Test(import, experts_and_windows_in_flops) {
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  struct import_info info = {.name = g_strdup("m"), .seq_len = 8192};
  char err[512];
  import_shipped("mixtral-8x7b", &info, t);
  char *text = import_model_text(t, &info, err, sizeof err);
  cr_assert_not_null(text, "%s", err);
  struct model *m;
  struct model_opts mo = {.device = "H100", .precision = "bf16"};
  cr_assert_eq(model_load_data("mixtral.model", text, strlen(text), &mo, &m,
                               err, sizeof err),
               0, "%s", err);
  /* Active: attention 4 x 4096^2 x 10/16 ... per layer: q, o 4096^2, k, v
   * 1024 x 4096, the router, two experts; the head 32000 x 4096. */
  double active = 32 * (2.0 * 4096 * 4096 + 2.0 * 1024 * 4096 + 8 * 4096 +
                        2 * 3.0 * 4096 * 14336) +
                  32000.0 * 4096;
  double attn = 32 * 4.0 * 8192 * 4096; /* 4 s d per token and layer */
  double per_token = 0;
  for (size_t l = 0; l < m->nlayers; l++)
    per_token += m->layers[l].flops / 8192;
  /* Norms add 4 per element, far below the products. */
  cr_assert(fabs(per_token - (2 * active + attn)) / per_token < 1e-3,
            "%.6g FLOPs a token, expected about %.6g", per_token,
            2 * active + attn);
  model_free(m);
  g_free(text);
  g_ptr_array_set_size(t, 0);
  /* Mistral at 8192 and at 32768 tokens: the window of 4096 keeps
   * attention at 4 s 4096 d. */
  import_shipped("mistral-7b", &info, t);
  info.seq_len = 8192;
  text = import_model_text(t, &info, err, sizeof err);
  cr_assert_not_null(text, "%s", err);
  cr_assert_not_null(strstr(text, "attention model.layers.0.self_attn.core "
                                  "4096 4096\n"));
  struct model_opts lo = {.device = "H100", .precision = "bf16",
                          .tokens = 32768};
  cr_assert_eq(model_load_data("mistral.model", text, strlen(text), &lo, &m,
                               err, sizeof err),
               0, "%s", err);
  const struct model_layer *core = NULL;
  for (size_t l = 0; l < m->nlayers && !core; l++)
    if (m->layers[l].attn_d > 0)
      core = &m->layers[l];
  cr_assert_not_null(core);
  cr_assert_eq(core->flops, 4.0 * 32768 * 4096 * 4096);
  model_free(m);
  g_free(text);
  g_ptr_array_free(t, TRUE);
  import_info_clear(&info);
}

/* The model file without its comments and source lines: what the three
 * routes must agree on. */
static char *body_of(const char *text) {
  GString *o = g_string_new(NULL);
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l != '#' && !g_str_has_prefix(*l, "source "))
      g_string_append_printf(o, "%s\n", *l);
  g_strfreev(lines);
  return g_string_free(o, FALSE);
}

/* GPT-2 imported from its config, from a safetensors header (tensors by
 * name, as the safetensors library writes them, with the causal-mask
 * buffers the old checkpoints carry) and from a parameter list (in
 * named_parameters() order): the same model file. */
Test(import, three_routes_one_model) {
  char *cpath = tmp_file("config.json", GPT2_CONFIG, strlen(GPT2_CONFIG));
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  struct import_info ci = {.name = g_strdup("gpt2")};
  char err[512];
  cr_assert_eq(import_config(cpath, t, &ci, err, sizeof err), 0, "%s", err);
  char *from_config = import_model_text(t, &ci, err, sizeof err);
  cr_assert_not_null(from_config, "%s", err);
  cr_assert(ci.tied_head);
  cr_assert_str_eq(ci.family, "gpt2");
  /* The same tensors as a list and as a header. */
  GString *list = g_string_new("# from named_parameters()\n");
  GPtrArray *sorted = g_ptr_array_new();
  for (guint i = 0; i < t->len; i++) {
    const struct import_tensor *x = t->pdata[i];
    GString *sh = g_string_new(NULL);
    for (size_t d = 0; d < x->ndims; d++)
      g_string_append_printf(sh, "%s%llu", d ? "x" : "",
                             (unsigned long long)x->dims[d]);
    g_string_append_printf(list, "%s %s float32\n", x->name, sh->str);
    g_string_free(sh, TRUE);
    g_ptr_array_add(sorted, t->pdata[i]);
  }
  g_ptr_array_sort(sorted, cmp_tensor_names);
  GString *hdr = g_string_new("{\"__metadata__\": {\"format\": \"pt\"}");
  uint64_t off = 0;
  for (guint i = 0; i < sorted->len; i++) {
    const struct import_tensor *x = sorted->pdata[i];
    uint64_t e = 1;
    g_string_append_printf(hdr, ", \"%s\": {\"dtype\": \"F32\", \"shape\": [",
                           x->name);
    for (size_t d = 0; d < x->ndims; d++) {
      g_string_append_printf(hdr, "%s%llu", d ? ", " : "",
                             (unsigned long long)x->dims[d]);
      e *= x->dims[d];
    }
    g_string_append_printf(hdr, "], \"data_offsets\": [%llu, %llu]}",
                           (unsigned long long)off,
                           (unsigned long long)(off + 4 * e));
    off += 4 * e;
  }
  /* A buffer: the causal mask of block 0, stored as a bool tensor. */
  g_string_append(hdr, ", \"h.0.attn.bias\": {\"dtype\": \"BOOL\", "
                       "\"shape\": [1, 1, 1024, 1024], \"data_offsets\": "
                       "[0, 1048576]}}");
  char *spath = safetensors_file(hdr->str, 0, 16);
  char *lpath = tmp_file("params.txt", list->str, list->len);
  GPtrArray *ts = g_ptr_array_new_with_free_func(import_tensor_free);
  GPtrArray *tl = g_ptr_array_new_with_free_func(import_tensor_free);
  size_t skipped;
  const char *paths[] = {spath};
  cr_assert_eq(import_safetensors(paths, 1, ts, &skipped, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(skipped, 1, "the mask is no parameter");
  cr_assert_eq(import_list(lpath, tl, err, sizeof err), 0, "%s", err);
  struct import_info si = {.name = g_strdup("gpt2")},
                     li = {.name = g_strdup("gpt2")};
  char *from_st = import_model_text(ts, &si, err, sizeof err);
  cr_assert_not_null(from_st, "%s", err);
  char *from_list = import_model_text(tl, &li, err, sizeof err);
  cr_assert_not_null(from_list, "%s", err);
  char *a = body_of(from_config), *b = body_of(from_st), *c = body_of(from_list);
  cr_assert_str_eq(a, b, "config and safetensors differ");
  cr_assert_str_eq(a, c, "config and list differ");
  /* And it loads: 124,439,808 parameters, the forward FLOPs per sample
   * of 1024 tokens: 2 x the 85,054,464 block and 2,304 x... as the file
   * says; here just that the tied head's 2 V d per token is in. */
  struct model *m;
  cr_assert_eq(model_load_data("gpt2.model", from_config,
                               strlen(from_config), NULL, &m, err,
                               sizeof err),
               0, "%s", err);
  cr_assert_eq(m->params, 124439808);
  cr_assert_eq(m->file_tokens, 1024);
  size_t head = m->nlayers - 1;
  cr_assert_str_eq(m->layers[head].name, "lm_head");
  cr_assert_float_eq(m->layers[head].flops, 2.0 * 1024 * 50257 * 768, 1);
  model_free(m);
  g_free(a);
  g_free(b);
  g_free(c);
  g_free(from_config);
  g_free(from_st);
  g_free(from_list);
  import_info_clear(&ci);
  import_info_clear(&si);
  import_info_clear(&li);
  g_ptr_array_free(sorted, TRUE);
  g_ptr_array_free(t, TRUE);
  g_ptr_array_free(ts, TRUE);
  g_ptr_array_free(tl, TRUE);
  g_string_free(hdr, TRUE);
  g_string_free(list, TRUE);
  rm_tmp(cpath);
  rm_tmp(spath);
  rm_tmp(lpath);
}

/* Transformer timing: the layers' FLOPs scale with the sequence, the
 * attention part with its square; the time is FLOPs at the device's peak
 * times its model FLOPs utilization, or the one given. */
Test(import, transformer_compute) {
  const char *text =
      "model t\nbatch 2\ntokens_per_sample 100\n"
      "layer w 1000000\nlayer core 4000000\nattention core 100\n"
      "tensor w.weight 5000 w 50x100 bf16\n";
  const char *dev = "device D \"d\"\npeak bf16 1e12 \"s\"\n"
                    "memory 1e11 \"s\"\nmfu bf16 0.5 \"measured\"\n";
  const char *names[] = {"t.model", "devices.conf", NULL};
  const char *texts[] = {text, dev};
  char *dir = make_dir(names, texts);
  char err[512];
  struct model *m;
  struct model_opts o = {.device = "D", .precision = "bf16", .dir = dir};
  cr_assert_eq(model_load("t", &o, &m, err, sizeof err), 0, "%s", err);
  /* 3 x (1e6 + 4e6) FLOPs x 2 samples / (1e12 x 0.5). */
  cr_assert_float_eq(m->forward_s + m->backward_s, 3 * 5e6 * 2 / 5e11, 1e-15);
  cr_assert(strstr(m->timing_source, "0.5 of D's bf16") &&
                strstr(m->timing_source, "measured"),
            "%s", m->timing_source);
  cr_assert_str_eq(m->tensors[0].dtype, "bf16");
  model_free(m);
  /* Twice the tokens: the product doubles, attention (4 s^2 d = 4e6 at
   * s = 100, d = 100) quadruples; [model] mfu replaces the device's. */
  o.tokens = 200;
  o.mfu = 0.25;
  cr_assert_eq(model_load("t", &o, &m, err, sizeof err), 0, "%s", err);
  cr_assert_float_eq(m->layers[0].flops, 2e6, 1e-6);
  cr_assert_float_eq(m->layers[1].flops, 16e6, 1e-6);
  cr_assert_float_eq(m->forward_s + m->backward_s,
                     3 * 18e6 * 2 / (1e12 * 0.25), 1e-15);
  cr_assert(strstr(m->timing_source, "[model] mfu"), "%s",
            m->timing_source);
  model_free(m);
  rm_dir(dir);
  g_free(dir);
}

/* Bad input, each with one message naming the file and what is allowed. */
Test(import, bad_input) {
  char err[512];
  size_t skipped;
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  static const struct {
    const char *header;
    uint64_t claimed;
    size_t extra;
    const char *want;
  } st[] = {
      {"{", 0, 0, "malformed JSON"},
      {"{\"a\": {\"dtype\": \"F12\", \"shape\": [2], \"data_offsets\": [0, "
       "8]}}",
       0, 0, "unknown dtype 'F12'"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], "
       "\"data_offsets\": [0, 8]}}",
       0, 0, "shape's product passes"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
       "\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}",
       0, 0, "'a' appears twice"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2, -1]}}", 0, 0,
       "shape must be"},
      {"{\"a\": 5}", 0, 0, "must be an object"},
      {"[1]", 0, 0, "not an object"},
      {"{}", 64, 0, "past the end of the file"},
      {"{}", (uint64_t)200 << 20, 0, "at most 100 MB"},
  };
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
    char *path = safetensors_file(st[i].header, st[i].claimed, st[i].extra);
    const char *paths[] = {path};
    cr_assert_eq(import_safetensors(paths, 1, t, &skipped, err, sizeof err),
                 -EINVAL, "case %zu: %s", i, err);
    cr_assert(strstr(err, st[i].want), "case %zu: %s", i, err);
    cr_assert(strstr(err, "m.safetensors"), "case %zu names the file: %s", i,
              err);
    rm_tmp(path);
  }
  /* Fewer than the 8 bytes of the length. */
  char *shortf = tmp_file("s.safetensors", "abc", 3);
  const char *sp[] = {shortf};
  cr_assert_eq(import_safetensors(sp, 1, t, &skipped, err, sizeof err),
               -EINVAL);
  cr_assert(strstr(err, "truncated"), "%s", err);
  rm_tmp(shortf);
  /* Configs: a missing field, an unknown family. */
  static const struct {
    const char *text, *want;
  } cf[] = {
      {"{\"model_type\": \"gpt2\", \"n_layer\": 2}", "no 'n_embd'"},
      {"{\"model_type\": \"t5\"}", "model_type 't5' is not a family"},
      {"{\"model_type\": \"llama\", \"hidden_size\": 10, \"num_hidden_layers\": "
       "1, \"vocab_size\": 5, \"num_attention_heads\": 3, "
       "\"intermediate_size\": 4}",
       "not a multiple"},
      {"{\"n_embd\": 2}", "no string 'model_type'"},
      {"{\"model_type\": \"gpt2\", \"n_embd\": 2.5}", "'n_embd' must be"},
  };
  for (size_t i = 0; i < sizeof cf / sizeof cf[0]; i++) {
    char *path = tmp_file("config.json", cf[i].text, strlen(cf[i].text));
    struct import_info info = {.name = g_strdup("x")};
    cr_assert_eq(import_config(path, t, &info, err, sizeof err), -EINVAL,
                 "case %zu", i);
    cr_assert(strstr(err, cf[i].want), "case %zu: %s", i, err);
    import_info_clear(&info);
    rm_tmp(path);
  }
  /* A given head_dim need not divide hidden_size: q_proj is heads x
   * head_dim rows (3 x 4 = 12 of hidden_size 10), k_proj and v_proj
   * num_key_value_heads x head_dim. */
  static const char hd[] =
      "{\"model_type\": \"llama\", \"hidden_size\": 10, "
      "\"num_hidden_layers\": 1, \"vocab_size\": 5, "
      "\"num_attention_heads\": 3, \"num_key_value_heads\": 1, "
      "\"head_dim\": 4, \"intermediate_size\": 4}";
  char *hpath = tmp_file("config.json", hd, strlen(hd));
  struct import_info hinfo = {.name = g_strdup("x")};
  cr_assert_eq(import_config(hpath, t, &hinfo, err, sizeof err), 0, "%s",
               err);
  bool q = false, k = false;
  for (guint i = 0; i < t->len; i++) {
    const struct import_tensor *x = t->pdata[i];
    if (strstr(x->name, "q_proj.weight"))
      q = x->dims[0] == 12 && x->dims[1] == 10;
    if (strstr(x->name, "k_proj.weight"))
      k = x->dims[0] == 4 && x->dims[1] == 10;
  }
  cr_expect(q && k, "q_proj 12 x 10 and k_proj 4 x 10");
  g_ptr_array_set_size(t, 0);
  import_info_clear(&hinfo);
  rm_tmp(hpath);
  /* Lists: a bad line, a repeated name; the line is named. */
  static const struct {
    const char *text, *want;
  } lf[] = {
      {"a 3x4 float32\nb 3x4\n", "params.txt:2: expected 'NAME SHAPE DTYPE'"},
      {"a 3x4 float32\na 4 float32\n", "params.txt:2: tensor 'a' is listed "
                                       "twice"},
      {"a 3x4 int64\n", "params.txt:1: expected"},
      {"# nothing\n", "no 'NAME SHAPE DTYPE' lines"},
  };
  for (size_t i = 0; i < sizeof lf / sizeof lf[0]; i++) {
    char *path = tmp_file("params.txt", lf[i].text, strlen(lf[i].text));
    cr_assert_eq(import_list(path, t, err, sizeof err), -EINVAL, "case %zu",
                 i);
    cr_assert(strstr(err, lf[i].want), "case %zu: %s", i, err);
    rm_tmp(path);
  }
  /* A model whose length no tensor gives needs it from the user. */
  g_ptr_array_set_size(t, 0);
  char *path = tmp_file("params.txt", "w 4x4 bf16\n", 11);
  cr_assert_eq(import_list(path, t, err, sizeof err), 0, "%s", err);
  struct import_info info = {.name = g_strdup("x")};
  cr_assert_null(import_model_text(t, &info, err, sizeof err));
  cr_assert(strstr(err, "--seq-len"), "%s", err);
  info.seq_len = 16;
  char *text = import_model_text(t, &info, err, sizeof err);
  cr_assert_not_null(text, "%s", err);
  g_free(text);
  import_info_clear(&info);
  rm_tmp(path);
  g_ptr_array_free(t, TRUE);
}

/* The shared-pull server's step (server.h): with momentum the pull is
 * v = m v + sum, without it the sum; either way the sum is zeroed for the
 * next step's pushes, and the payload decodes to what was pulled. */
Test(server, pull_with_and_without_momentum) {
  codec_t *c;
  char err[256];
  cr_assert_eq(codec_create("fp32", &c, err, sizeof err), 0, "%s", err);
  codec_state_t *st;
  cr_assert_eq(codec_state_create(c, 3, 1, &st), 0);
  float sum[3] = {1, 2, -4}, vel[3] = {2, 0, 1}, got[3];
  unsigned char buf[64];
  ptrdiff_t len = server_pull(st, sum, vel, 3, 0.5, buf, sizeof buf);
  cr_assert_gt(len, 0);
  cr_assert_eq(codec_decode(c, buf, (size_t)len, got, 3), 0);
  const float want[3] = {2, 2, -3.5f};
  for (int i = 0; i < 3; i++) {
    cr_expect_eq(vel[i], want[i], "vel[%d] = %g", i, vel[i]);
    cr_expect_eq(got[i], want[i], "pull[%d] = %g", i, got[i]);
    cr_expect_eq(sum[i], 0, "sum[%d] not zeroed", i);
  }
  float sum2[3] = {3, 0, 1};
  len = server_pull(st, sum2, NULL, 3, 0.9, buf, sizeof buf);
  cr_assert_eq(codec_decode(c, buf, (size_t)len, got, 3), 0);
  cr_expect(got[0] == 3 && got[1] == 0 && got[2] == 1, "pull without momentum");
  codec_state_free(st);
  codec_free(c);
}

/* The older parts' mixed measurements time the 16-bit tensor-core
 * precisions (bf16, fp16) of a device that lists their peaks, and no
 * other: M measured tiny mixed at efficiency 4e9 * 100 / 1e12 = 0.4; H
 * lists bf16, fp16 and fp8 peaks and measured nothing. */
Test(model, mixed_measurements_time_bf16_and_fp16) {
  static const char devs[] =
      "device M \"m\"\npeak mixed 1e12 \"s\"\nmemory 1e11 \"s\"\n"
      "measured tiny mixed 32 100 \"s\"\n"
      "device H \"h\"\npeak bf16 2e12 \"s\"\npeak fp16 2e12 \"s\"\n"
      "peak fp8 4e12 \"s\"\nmemory 1e11 \"s\"\n";
  const char *names[] = {"tiny.model", "other.model", "devices.conf", NULL};
  const char *texts[] = {TINY, OTHER, devs};
  char *dir = make_dir(names, texts);
  char err[512] = "";
  struct model *m;
  static const char *const half[] = {"bf16", "fp16"};
  for (size_t i = 0; i < 2; i++) {
    struct model_opts h = {.device = "H", .precision = half[i], .batch = 0,
                           .dir = dir};
    cr_assert_eq(model_load("other", &h, &m, err, sizeof err), 0, "%s: %s",
                 half[i], err);
    /* 6e9 FLOPs x 10 samples at 0.4 of 2e12. */
    cr_expect_float_eq(m->forward_s + m->backward_s, 6e9 * 10 / (2e12 * 0.4),
                       1e-12, "%s", half[i]);
    model_free(m);
  }
  struct model_opts f8 = {.device = "H", .precision = "fp8", .batch = 0,
                          .dir = dir};
  cr_assert_eq(model_load("other", &f8, &m, err, sizeof err), -EINVAL);
  cr_expect_str_eq(err, "devices.conf has no measurement at precision fp8 "
                        "to calibrate device H");
  rm_dir(dir);
  g_free(dir);
}
