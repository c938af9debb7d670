/* codecs/powersgd.c: PowerSGD, rank-r power-iteration compression with
 * error feedback (Vogels, Karimireddy and Jaggi, "PowerSGD: Practical
 * Low-Rank Gradient Compression for Distributed Optimization", NeurIPS
 * 2019). Algorithm 1 ("Rank-r PowerSGD compression"), for each tensor
 * viewed as a matrix M (rows x cols) of the gradient plus the residual:
 *
 *   P = M Q                  (Q: cols x r, the previous step's, warm start)
 *   P = ALL-REDUCE(P)
 *   P^ = ORTHOGONALIZE(P)    (Gram-Schmidt: orthonormal columns)
 *   Q = M^T P^
 *   Q = ALL-REDUCE(Q)
 *   DECOMPRESS: P^ Q^T
 *
 * with error feedback (Algorithm 2): M = g + e; e = M - P^ Q_w^T, Q_w the
 * worker's own Q before the second all-reduce (the decompression of its
 * own compression). gradsim's collectives sum rather than average: P's
 * scale does not survive orthogonalization, and the sum of Q over the
 * workers decompresses to the sum of their approximations, P^ P^T sum(M).
 * (PyTorch's powerSGD_hook takes the residual against the averaged Q
 * instead; this follows the paper.) Vector-shaped tensors, and matrices
 * that rank-r factors would not shrink (rows x cols <= (rows + cols) r, as
 * PyTorch's hook decides), travel uncompressed, summed with P (the paper:
 * "biases ... are aggregated uncompressed").
 *
 * The initial Q is standard normal (the paper's initialization), drawn
 * from a counter-based generator keyed by the tensor's index and shape, so
 * that every worker starts from the same Q. The products go through GSL's
 * CBLAS (a departure from codecs/ taking the C library only: matrix
 * products are what a BLAS is for, and GSL's CBLAS is itself plain C with
 * no further dependency; its reference kernels are deterministic).
 *
 * One stream alone (codec_encode, for the benchmarks and measurements) is
 * one worker: its payload is, after a u32 count of runs, per run a u64
 * rows, u64 cols and u32 rank r, then P^ (rows x r f32, row-major) and
 * Q (cols x r) when r > 0, or the rows x cols values of a run of
 * uncompressed tensors (r = 0, consecutive ones merged, cols 1). */
#include "codec_impl.h"

#include <gsl/gsl_cblas.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>

struct psgd_params {
  unsigned rank;
};
_Static_assert(sizeof(struct psgd_params) <= CODEC_PARAMS_MAX, "params");

enum { RANK_MAX = 1024 };

/* One tensor of the stream: its values [off, off + rows cols), and,
 * compressed (r > 0), where its factors sit in the rounds' messages and
 * buffers; uncompressed, where its values sit in round 0's message. */
struct seg {
  uint64_t off, rows, cols;
  unsigned r;
  uint64_t p_off, q_off, raw_off;
};

/* What a stream keeps (codec_state.ext). */
struct psgd {
  size_t nseg;
  struct seg *segs;
  uint64_t plen, qlen, rawlen; /* floats of P, Q and raw values */
  uint64_t most;               /* values of the largest compressed one */
  float *q;      /* warm start: the last step's summed Q (qlen) */
  float *phat;   /* this step's orthogonalized P (plen) */
  float *qown;   /* this step's own Q (qlen) */
  float *raw;    /* round 0's summed raw values (rawlen) */
  float *rawown; /* this worker's own raw values (rawlen) */
  float *approx; /* P^ Q_own^T of one segment (most) */
  float *pbuf;   /* one stream alone: its round 0 message (plen + rawlen) */
  int stage;     /* 0: idle, 1: after round 0, 2: after round 1 */
};

static void psgd_init(codec_t *c) {
  CODEC_PARAMS(c, struct psgd_params)->rank = 4;
}

static int psgd_configure(codec_t *c, const char *key, const char *value,
                          char *err, size_t errlen) {
  if (strcmp(key, "rank") != 0)
    return codec_unknown_key("powersgd", key, "rank", err, errlen);
  long v;
  int rc = codec_parse_int("powersgd", "rank", value, 1, RANK_MAX, &v, err,
                           errlen);
  if (rc == 0)
    CODEC_PARAMS(c, struct psgd_params)->rank = (unsigned)v;
  return rc;
}

static void psgd_describe(const codec_t *c, char *buf, size_t len) {
  snprintf(buf, len, "rank=%u", CODEC_CPARAMS(c, struct psgd_params)->rank);
}

/* The rank a ROWS x COLS matrix is compressed at, 0 when it travels
 * uncompressed: the factors must be smaller than the matrix. */
static unsigned rank_of(const codec_t *c, uint64_t rows, uint64_t cols) {
  uint64_t r = CODEC_CPARAMS(c, struct psgd_params)->rank;
  r = r < rows ? r : rows;
  r = r < cols ? r : cols;
  /* rows cols <= (rows + cols) r, without overflow: compare as doubles
   * (exact below 2^53; beyond, a matrix is far larger than its factors).
   * CBLAS takes int dimensions: a longer side travels uncompressed. */
  return rows <= INT32_MAX && cols <= INT32_MAX &&
                 (double)rows * (double)cols >
                     ((double)rows + (double)cols) * (double)r
             ? (unsigned)r
             : 0;
}

/* Without shapes, one matrix: R the largest divisor of N not above its
 * square root, C = N / R. */
static struct codec_shape default_shape(uint64_t n) {
  uint64_t r = 1;
  for (uint64_t d = 1; d * d <= n; d++)
    if (n % d == 0)
      r = d;
  return (struct codec_shape){r, n ? n / r : 0};
}

/* The segments of K shapes (or of N values without shapes): lengths of
 * the rounds' messages. SEGS may be NULL (lengths only). */
static size_t layout(const codec_t *c, const struct codec_shape *shapes,
                     size_t k, uint64_t n, struct seg *segs, uint64_t *plen,
                     uint64_t *qlen, uint64_t *rawlen) {
  struct codec_shape one = default_shape(n);
  if (k == 0 && n) {
    shapes = &one;
    k = 1;
  }
  uint64_t off = 0, p = 0, q = 0, raw = 0;
  for (size_t i = 0; i < k; i++) {
    uint64_t rows = shapes[i].rows, cols = shapes[i].cols;
    unsigned r = rank_of(c, rows, cols);
    if (segs)
      segs[i] = (struct seg){off, rows, cols, r, p, q, raw};
    if (r) {
      p += rows * r;
      q += cols * r;
    } else {
      raw += rows * cols;
    }
    off += rows * cols;
  }
  *plen = p;
  *qlen = q;
  *rawlen = raw;
  return k;
}

static uint64_t psgd_lin_len(const codec_t *c, const struct codec_shape *shapes,
                             size_t k, int round) {
  uint64_t n = 0, p, q, raw;
  for (size_t i = 0; i < k; i++)
    n += shapes[i].rows * shapes[i].cols;
  layout(c, shapes, k, n, NULL, &p, &q, &raw);
  return round == 0 ? p + raw : q;
}

/* ---- the stream's buffers -------------------------------------------- */

/* splitmix64, then Box-Muller: standard normal draws, the I-th of a
 * stream keyed by KEY. */
static uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static float normal_draw(uint64_t key, uint64_t i) {
  uint64_t a = mix64(key ^ mix64(2 * i)), b = mix64(key ^ mix64(2 * i + 1));
  double u1 = ((double)(a >> 11) + 0.5) * 0x1p-53;
  double u2 = (double)(b >> 11) * 0x1p-53;
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void psgd_state_free(codec_state_t *s) {
  struct psgd *g = s->ext;
  if (!g)
    return;
  free(g->segs);
  free(g->q);
  free(g->phat);
  free(g->qown);
  free(g->raw);
  free(g->rawown);
  free(g->approx);
  free(g->pbuf);
  free(g);
  s->ext = NULL;
}

/* Every worker's initial Q of segment I: the same normal draws. */
static void initial_q(struct psgd *g) {
  for (size_t i = 0; i < g->nseg; i++) {
    const struct seg *sg = &g->segs[i];
    uint64_t key = mix64(mix64(i) ^ mix64(sg->rows) ^ (sg->cols << 1));
    for (uint64_t j = 0; sg->r && j < sg->cols * sg->r; j++)
      g->q[sg->q_off + j] = normal_draw(key, j);
  }
}

/* state_init: at creation and on every reset. A failed allocation leaves
 * S->ext NULL, which every entry point reports as -ENOMEM. */
static void psgd_state_init(codec_state_t *s) {
  struct psgd *g = s->ext;
  if (g) {
    g->stage = 0;
    initial_q(g);
    return;
  }
  size_t k = s->nshapes ? s->nshapes : (s->n ? 1 : 0);
  g = calloc(1, sizeof *g);
  if (!g)
    return;
  g->segs = calloc(k ? k : 1, sizeof *g->segs);
  if (!g->segs) {
    free(g);
    return;
  }
  g->nseg =
      layout(s->codec, s->shapes, s->nshapes, s->n, g->segs, &g->plen,
             &g->qlen, &g->rawlen);
  for (size_t i = 0; i < g->nseg; i++)
    if (g->segs[i].r && g->segs[i].rows * g->segs[i].cols > g->most)
      g->most = g->segs[i].rows * g->segs[i].cols;
  g->q = malloc((g->qlen ? g->qlen : 1) * sizeof(float));
  g->qown = malloc((g->qlen ? g->qlen : 1) * sizeof(float));
  g->phat = malloc((g->plen ? g->plen : 1) * sizeof(float));
  g->raw = malloc((g->rawlen ? g->rawlen : 1) * sizeof(float));
  g->rawown = malloc((g->rawlen ? g->rawlen : 1) * sizeof(float));
  g->approx = malloc((g->most ? g->most : 1) * sizeof(float));
  g->pbuf = malloc((g->plen + g->rawlen + 1) * sizeof(float));
  s->ext = g;
  if (!g->q || !g->qown || !g->phat || !g->raw || !g->rawown || !g->approx ||
      !g->pbuf) {
    psgd_state_free(s);
    return;
  }
  initial_q(g);
}

/* ---- the algebra --------------------------------------------------------- */

/* Gram-Schmidt on the R columns of P (ROWS x R, row-major), in double:
 * each column less its projections on the ones before, then normalised;
 * a column with nothing left becomes zero (it then contributes nothing). */
static void orthogonalize(float *p, uint64_t rows, unsigned r) {
  for (unsigned k = 0; k < r; k++) {
    for (unsigned j = 0; j < k; j++) {
      double dot = 0;
      for (uint64_t i = 0; i < rows; i++)
        dot += (double)p[i * r + k] * (double)p[i * r + j];
      for (uint64_t i = 0; i < rows; i++)
        p[i * r + k] = (float)((double)p[i * r + k] - dot * p[i * r + j]);
    }
    double norm = 0;
    for (uint64_t i = 0; i < rows; i++)
      norm += (double)p[i * r + k] * (double)p[i * r + k];
    norm = sqrt(norm);
    double inv = norm > 0 && isfinite(norm) ? 1.0 / norm : 0.0;
    for (uint64_t i = 0; i < rows; i++)
      p[i * r + k] = (float)((double)p[i * r + k] * inv);
  }
}

/* OUT (rows x cols) = P^ Q^T of segment SG. */
static void decompress(const struct seg *sg, const float *phat,
                       const float *q, float *out) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)sg->rows,
              (int)sg->cols, (int)sg->r, 1.0f, phat, (int)sg->r, q,
              (int)sg->r, 0.0f, out, (int)sg->cols);
}

static bool all_finite(const float *x, size_t n) {
  return kern_absmax_bits(x, n) < 0x7f800000u;
}

/* Round 0: M = e + IN in the residual; OUT = P of every compressed
 * segment, then the values of the uncompressed ones. */
static int round0(codec_state_t *s, const float *in, float *out) {
  struct psgd *g = s->ext;
  if (!all_finite(in, s->n))
    return -EDOM;
  float *m = s->residual;
  for (size_t i = 0; i < s->n; i++)
    m[i] += in[i];
  for (size_t i = 0; i < g->nseg; i++) {
    const struct seg *sg = &g->segs[i];
    float *mi = m + sg->off;
    if (!sg->r) {
      /* Sent whole: nothing is kept back, from round 0 on (codec.h). */
      memcpy(out + g->plen + sg->raw_off, mi,
             sg->rows * sg->cols * sizeof(float));
      memcpy(g->rawown + sg->raw_off, mi, sg->rows * sg->cols * sizeof(float));
      memset(mi, 0, sg->rows * sg->cols * sizeof(float));
      continue;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)sg->rows,
                (int)sg->r, (int)sg->cols, 1.0f, mi, (int)sg->cols,
                g->q + sg->q_off, (int)sg->r, 0.0f, out + sg->p_off,
                (int)sg->r);
  }
  g->stage = 1;
  return 0;
}

/* Round 1: from SUM (the summed P, then the summed raw values): P^, the
 * own Q (into OUT and qown), and the residual e = M - P^ Q_own^T (zero
 * for the uncompressed values, sent whole). */
static int round1(codec_state_t *s, const float *sum, float *out) {
  struct psgd *g = s->ext;
  if (g->stage != 1)
    return -EINVAL;
  memcpy(g->phat, sum, g->plen * sizeof(float));
  memcpy(g->raw, sum + g->plen, g->rawlen * sizeof(float));
  float *m = s->residual, *approx = g->approx;
  for (size_t i = 0; i < g->nseg; i++) {
    const struct seg *sg = &g->segs[i];
    float *mi = m + sg->off;
    if (!sg->r) {
      memset(mi, 0, sg->rows * sg->cols * sizeof(float));
      continue;
    }
    float *ph = g->phat + sg->p_off, *qo = g->qown + sg->q_off;
    orthogonalize(ph, sg->rows, sg->r);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)sg->cols,
                (int)sg->r, (int)sg->rows, 1.0f, mi, (int)sg->cols, ph,
                (int)sg->r, 0.0f, qo, (int)sg->r);
    decompress(sg, ph, qo, approx);
    for (uint64_t j = 0; j < sg->rows * sg->cols; j++)
      mi[j] -= approx[j];
  }
  if (out)
    memcpy(out, g->qown, g->qlen * sizeof(float));
  g->stage = 2;
  return 0;
}

static int psgd_round(codec_state_t *s, int round, const float *in,
                      float *out) {
  if (!s->ext)
    return -ENOMEM;
  return round == 0 ? round0(s, in, out) : round1(s, in, out);
}

/* Finish: OUT = P^ SUM^T per compressed segment, the summed values of the
 * others; SUM is the next step's warm start. */
static int psgd_finish(codec_state_t *s, const float *sum, float *out) {
  struct psgd *g = s->ext;
  if (!g)
    return -ENOMEM;
  if (g->stage != 2)
    return -EINVAL;
  memcpy(g->q, sum, g->qlen * sizeof(float));
  for (size_t i = 0; i < g->nseg; i++) {
    const struct seg *sg = &g->segs[i];
    if (sg->r)
      decompress(sg, g->phat + sg->p_off, g->q + sg->q_off, out + sg->off);
    else
      memcpy(out + sg->off, g->raw + sg->raw_off,
             sg->rows * sg->cols * sizeof(float));
  }
  g->stage = 0;
  s->step++;
  return 0;
}

/* ---- one stream alone: the payload --------------------------------------- */

/* The payload's runs: each compressed segment, and each run of
 * consecutive uncompressed ones. */
static size_t runs_of(const struct psgd *g) {
  size_t k = 0;
  for (size_t i = 0; i < g->nseg; i++)
    k += g->segs[i].r || i == 0 || g->segs[i - 1].r;
  return k;
}

static ptrdiff_t psgd_payload_size(const codec_state_t *s) {
  const struct psgd *g = s->ext;
  if (!g)
    return -ENOMEM;
  return (ptrdiff_t)(4 + 20 * runs_of(g) +
                     4 * (g->plen + g->qlen + g->rawlen));
}

static size_t psgd_bound(const codec_t *c, size_t n) {
  (void)c;
  /* Every run's data is at most its values, and there are at most as many
   * runs as values or as shapes a stream may have. */
  size_t runs = n < CODEC_SHAPES_MAX ? n : CODEC_SHAPES_MAX;
  return 4 + 20 * runs + 4 * n;
}

static unsigned char *put64(unsigned char *p, uint64_t v) {
  kern_store32(p, (uint32_t)v);
  kern_store32(p + 4, (uint32_t)(v >> 32));
  return p + 8;
}

static ptrdiff_t psgd_encode(codec_state_t *s, const float *in,
                             unsigned char *out) {
  struct psgd *g = s->ext;
  if (!g)
    return -ENOMEM;
  /* One worker: the sum of P is its own P, the sum of Q its own Q. Nothing
   * below allocates, so a failure (non-finite input) leaves the state. */
  int rc = round0(s, in, g->pbuf);
  if (rc == 0)
    rc = round1(s, g->pbuf, NULL);
  if (rc)
    return rc;
  memcpy(g->q, g->qown, g->qlen * sizeof(float));
  g->stage = 0;
  unsigned char *o = out + 4;
  uint32_t runs = 0;
  for (size_t i = 0; i < g->nseg; i++) {
    const struct seg *sg = &g->segs[i];
    if (sg->r) {
      o = put64(put64(o, sg->rows), sg->cols);
      kern_store32(o, sg->r);
      o += 4;
      memcpy(o, g->phat + sg->p_off, sg->rows * sg->r * sizeof(float));
      o += sg->rows * sg->r * sizeof(float);
      memcpy(o, g->q + sg->q_off, sg->cols * sg->r * sizeof(float));
      o += sg->cols * sg->r * sizeof(float);
      runs++;
      continue;
    }
    /* A run of uncompressed tensors: their values, as one column. */
    uint64_t len = 0;
    size_t j = i;
    while (j < g->nseg && !g->segs[j].r)
      len += g->segs[j].rows * g->segs[j].cols, j++;
    o = put64(put64(o, len), 1);
    kern_store32(o, 0);
    o += 4;
    memcpy(o, g->raw + sg->raw_off, len * sizeof(float));
    o += len * sizeof(float);
    runs++;
    i = j - 1;
  }
  kern_store32(out, runs);
  return o - out;
}

static uint64_t get64(const unsigned char *p) {
  return (uint64_t)kern_load32(p) | (uint64_t)kern_load32(p + 4) << 32;
}

static int psgd_decode(const codec_t *c, const unsigned char *in, size_t len,
                       float *out, size_t n, bool add) {
  (void)c;
  if (len < 4)
    return -EBADMSG;
  uint32_t runs = kern_load32(in);
  if (runs > (n < CODEC_SHAPES_MAX ? n : CODEC_SHAPES_MAX) ||
      (runs == 0) != (n == 0))
    return -EBADMSG;
  /* Validate every run before writing anything. */
  size_t at = 4;
  uint64_t total = 0, most = 0;
  for (uint32_t k = 0; k < runs; k++) {
    if (len - at < 20)
      return -EBADMSG;
    uint64_t rows = get64(in + at), cols = get64(in + at + 8);
    uint32_t r = kern_load32(in + at + 16);
    at += 20;
    if (rows == 0 || cols == 0 || rows > (n - total) / cols ||
        (r && (r > rows || r > cols || rows > INT32_MAX ||
               cols > INT32_MAX)) ||
        (!r && cols != 1))
      return -EBADMSG;
    uint64_t floats = r ? (rows + cols) * r : rows;
    if (floats > (len - at) / 4)
      return -EBADMSG;
    at += 4 * floats;
    total += rows * cols;
    most = r && rows * cols > most ? rows * cols : most;
  }
  if (at != len || total != n)
    return -EBADMSG;
  float *tmp = add && most ? malloc(most * sizeof(float)) : NULL;
  if (add && most && !tmp)
    return -ENOMEM;
  at = 4;
  uint64_t off = 0;
  for (uint32_t k = 0; k < runs; k++) {
    struct seg sg = {off, get64(in + at), get64(in + at + 8),
                     kern_load32(in + at + 16), 0, 0, 0};
    at += 20;
    uint64_t vals = sg.rows * sg.cols;
    if (sg.r) {
      /* The factors may be unaligned in the payload: copy them out. */
      float *f = malloc((sg.rows + sg.cols) * sg.r * sizeof(float));
      if (!f) {
        free(tmp);
        return -ENOMEM;
      }
      memcpy(f, in + at, (sg.rows + sg.cols) * sg.r * sizeof(float));
      at += 4 * (sg.rows + sg.cols) * sg.r;
      float *dst = add ? tmp : out + off;
      decompress(&sg, f, f + sg.rows * sg.r, dst);
      free(f);
      for (uint64_t j = 0; add && j < vals; j++)
        out[off + j] += tmp[j];
    } else {
      for (uint64_t j = 0; j < vals; j++) {
        float v = kern_loadf(in + at + 4 * j);
        out[off + j] = add ? out[off + j] + v : v;
      }
      at += 4 * vals;
    }
    off += vals;
  }
  free(tmp);
  return 0;
}

/* One stream alone decodes P^ Q^T, the same product its encode took the
 * residual against: what was not sent is M - P^ Q^T, up to the roundings
 * of M = e + x and of e = M - P^ Q^T (kern_feedback_bounds). */

/* ---- the oracle's bound for the exchange ------------------------------- */

/* ACC: the sum over the workers of |Q_w| (qlen), the least and the
 * largest P^_w (plen each), the sum of |M_w| over the uncompressed values
 * (rawlen). */
static size_t psgd_acc_len(const codec_state_t *s) {
  const struct psgd *g = s->ext;
  return g ? g->qlen + 2 * g->plen + g->rawlen : 0;
}


static void psgd_acc_init(const codec_state_t *s, double *acc) {
  const struct psgd *g = s->ext;
  if (!g)
    return;
  double *qabs = acc, *pmin = qabs + g->qlen, *pmax = pmin + g->plen;
  for (uint64_t i = 0; i < g->qlen; i++)
    qabs[i] = 0;
  for (uint64_t i = 0; i < g->plen; i++) {
    pmin[i] = INFINITY;
    pmax[i] = -INFINITY;
  }
  for (uint64_t i = 0; i < g->rawlen; i++)
    pmax[g->plen + i] = 0;
}


/* After round 1: this worker's own Q and P^, and the values it sent
 * uncompressed. */
static void psgd_acc_add(const codec_state_t *s, double *acc) {
  const struct psgd *g = s->ext;
  if (!g)
    return;
  double *qabs = acc, *pmin = qabs + g->qlen, *pmax = pmin + g->plen,
         *rawabs = pmax + g->plen;
  for (uint64_t i = 0; i < g->qlen; i++)
    qabs[i] += fabs((double)g->qown[i]);
  for (uint64_t i = 0; i < g->plen; i++) {
    pmin[i] = fmin(pmin[i], (double)g->phat[i]);
    pmax[i] = fmax(pmax[i], (double)g->phat[i]);
  }
  for (uint64_t i = 0; i < g->rawlen; i++)
    rawabs[i] += fabs((double)g->rawown[i]);
}

/* gamma_k = k u / (1 - k u), the relative bound of k roundings (Higham,
 * Accuracy and Stability of Numerical Algorithms, Lemma 3.1). */
static double gamma_of(double k) {
  double u = 0x1p-24;
  return k * u / (1 - k * u);
}

/* After this worker's finish, per value: the finish is P^_v sum(Q)^T where
 * the exact aggregate is the sum of the workers' P^_w Q_w^T; the
 * difference is at most
 *   gamma_r sum_k |P^_v,ik| |Qs_jk|                 (this product)
 * + sum_k gamma_(p-1) |P^_v,ik| qabs_jk            (the sum of the Q_w)
 * + sum_k (pmax - pmin)_ik qabs_jk                 (P^ differing by worker)
 * + sum_k gamma_r max(|pmin|, |pmax|)_ik qabs_jk   (each P^_w Q_w^T)
 * and for the uncompressed values the rounding of their sum over the
 * workers, gamma_(p-1) of the sum of their magnitudes. */
static void psgd_bounds(const codec_state_t *s, const double *acc, size_t p,
                        double *out) {
  const struct psgd *g = s->ext;
  if (!g) {
    for (size_t i = 0; i < s->n; i++)
      out[i] = INFINITY;
    return;
  }
  const double *qabs = acc, *pmin = qabs + g->qlen, *pmax = pmin + g->plen,
               *rawabs = pmax + g->plen;
  double gp = gamma_of((double)(p > 1 ? p - 1 : 0) + 1);
  for (size_t i = 0; i < g->nseg; i++) {
    const struct seg *sg = &g->segs[i];
    double *o = out + sg->off;
    if (!sg->r) {
      for (uint64_t j = 0; j < sg->rows * sg->cols; j++)
        o[j] = gp * rawabs[sg->raw_off + j] * (1 + 0x1p-20);
      continue;
    }
    unsigned r = sg->r;
    double gr = gamma_of((double)r + 1);
    const float *ph = g->phat + sg->p_off, *qs = g->q + sg->q_off;
    const double *qa = qabs + sg->q_off, *lo = pmin + sg->p_off,
                 *hi = pmax + sg->p_off;
    for (uint64_t a = 0; a < sg->rows; a++)
      for (uint64_t b = 0; b < sg->cols; b++) {
        double e = 0;
        for (unsigned k = 0; k < r; k++) {
          double pv = fabs((double)ph[a * r + k]);
          double spread = hi[a * r + k] - lo[a * r + k];
          double pm = fmax(fabs(lo[a * r + k]), fabs(hi[a * r + k]));
          e += gr * pv * fabs((double)qs[b * r + k]) +
               (gp * pv + spread + gr * pm) * qa[b * r + k];
        }
        o[a * sg->cols + b] = e * (1 + 0x1p-20);
      }
  }
}

static const struct codec_lin_ops psgd_lin = {
    .len = psgd_lin_len,
    .round = psgd_round,
    .finish = psgd_finish,
    .acc_len = psgd_acc_len,
    .acc_init = psgd_acc_init,
    .acc_add = psgd_acc_add,
    .bounds = psgd_bounds,
};

static const char *const psgd_settings[] = {
    "powersgd:rank=1", "powersgd:rank=2", "powersgd:rank=4", NULL};

const struct codec_ops codec_powersgd_ops = {
    .info = {.name = "powersgd",
             .params = "rank=R  rank of the factors, integer 1..1024 "
                       "(default 4; the paper uses 1, 2 and 4)",
             .description = "PowerSGD: rank-r power iteration with error "
                            "feedback, two all-reduces of the factors "
                            "(Vogels et al. 2019, Algorithm 1)",
             .settings = psgd_settings},
    .init = psgd_init,
    .configure = psgd_configure,
    .describe = psgd_describe,
    .bound = psgd_bound,
    .encode_passes = 0, /* a factorisation: M Q, then M^T P, then b */
    .has_residual = true,
    .size_varies = true,
    .error_bounds = kern_feedback_bounds,
    .payload_size = psgd_payload_size,
    .finite_only = true,
    .lin = &psgd_lin,
    .state_free = psgd_state_free,
    .encode = psgd_encode,
    .decode = psgd_decode,
    .state_init = psgd_state_init,
};
