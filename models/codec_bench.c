/* models/codec_bench.c: codec throughput beside memcpy, and codec costs
 * for the simulator's cost table. */
#include "codec_bench.h"

#include "gradgen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>
#include <unistd.h>

/* Write a formatted message into ERR when it is not NULL. */
G_GNUC_PRINTF(3, 4)
static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  g_vsnprintf(err, (gulong)errlen, fmt, ap);
  va_end(ap);
}

void codec_bench_defaults(struct codec_bench_config *cfg) {
  cfg->n = (size_t)16 << 20;
  cfg->runs = 5;
  cfg->seed = 1;
  cfg->flush_bytes = (size_t)256 << 20;
  cfg->warm = false;
}

/* The timed operations of a run. */
enum { T_ENCODE, T_DECODE, T_MEMCPY, T_BOUND, T_COUNT };

struct codec_bench {
  struct codec_bench_config cfg;
  float **pool;         /* runs + 1 vectors of n values */
  float *dec;           /* decode target, n values */
  float *copy;          /* memcpy target, n values */
  float *resid;         /* the traffic bound's residual, n values */
  unsigned char *flush; /* cfg.flush_bytes, or NULL */
  double *t[T_COUNT];   /* per-run times of each operation */
  uint32_t sink;        /* what the warm reads and the bound computed */
};

void codec_bench_free(codec_bench_t *b) {
  if (!b)
    return;
  for (size_t r = 0; b->pool && r <= b->cfg.runs; r++)
    g_free(b->pool[r]);
  g_free(b->pool);
  g_free(b->dec);
  g_free(b->copy);
  g_free(b->resid);
  g_free(b->flush);
  for (int k = 0; k < T_COUNT; k++)
    g_free(b->t[k]);
  g_free(b);
}

/* A buffer of BYTES, written once so that its pages are mapped. */
static void *touched(size_t bytes) {
  void *p = g_try_malloc(bytes ? bytes : 1);
  if (p)
    memset(p, 0, bytes);
  return p;
}

int codec_bench_create(const struct codec_bench_config *cfg,
                       codec_bench_t **out) {
  if (!cfg || !out || cfg->n == 0 || cfg->runs == 0 || cfg->n > SIZE_MAX / 8 ||
      cfg->runs > 100000)
    return -EINVAL;
  *out = NULL;
  codec_bench_t *b = g_new0(codec_bench_t, 1);
  b->cfg = *cfg;
  size_t bytes = 4 * cfg->n, R = cfg->runs;
  struct gradgen_params gp;
  gradgen_defaults(&gp);
  gp.seed = cfg->seed;
  bool ok = (b->pool = g_try_new0(float *, R + 1)) != NULL;
  for (size_t r = 0; ok && r <= R; r++)
    ok = (b->pool[r] = g_try_malloc(bytes)) != NULL &&
         gradgen_fill(&gp, 0, 0, r, 1.0, 0, b->pool[r], cfg->n) == 0;
  ok = ok && (b->dec = touched(bytes)) && (b->copy = touched(bytes)) &&
       (b->resid = touched(bytes));
  ok = ok && (cfg->warm || !cfg->flush_bytes ||
              (b->flush = touched(cfg->flush_bytes)));
  for (int k = 0; ok && k < T_COUNT; k++)
    ok = (b->t[k] = g_try_new(double, R)) != NULL;
  if (!ok) {
    codec_bench_free(b);
    return -ENOMEM;
  }
  *out = b;
  return 0;
}

double codec_bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double codec_bench_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Write the flush buffer (a different byte each time, so that no
 * zero-page or same-value shortcut applies): the next operation starts
 * from memory, as memcpy's does. */
static void flush_caches(codec_bench_t *b, unsigned round) {
  if (b->flush)
    memset(b->flush, (int)(round & 0xffu), b->cfg.flush_bytes);
}

/* One byte of every 64 of P[0, BYTES): every cache line read. */
static uint32_t read_lines(const void *p, size_t bytes) {
  const unsigned char *c = p;
  uint32_t s = 0;
  for (size_t i = 0; i < bytes; i += 64)
    s += c[i];
  return s;
}

/* Before a timed operation that reads IN (and IN2, may be NULL) and writes
 * OUT: flush the caches, or, warm, read the inputs and write the output so
 * that the operation finds them in the caches. */
static void prepare(codec_bench_t *b, unsigned round, const void *in,
                    const void *in2, size_t in_bytes, void *out,
                    size_t out_bytes) {
  if (!b->cfg.warm) {
    flush_caches(b, round);
    return;
  }
  b->sink += read_lines(in, in_bytes);
  if (in2)
    b->sink += read_lines(in2, in_bytes);
  memset(out, (int)(round & 0xffu), out_bytes);
}

/* The bound's loops are compiled for x86-64-v3 too, as the codecs' hot
 * loops are (codecs/codec_impl.h, CODEC_HOT), so that the bound is not
 * held back by baseline code where the encoders run AVX2. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    !defined(__SANITIZE_ADDRESS__)
#define BENCH_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BENCH_HOT
#endif

/* The largest |X[i] + B[i]| (|X[i]| without B) as bits: one read of each
 * array, as 3lc's first pass. */
static BENCH_HOT uint32_t traffic_read(const float *x, const float *b,
                                       size_t n) {
  uint32_t m = 0;
  for (size_t i = 0; i < n; i++) {
    float f = b ? x[i] + b[i] : x[i];
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u &= 0x7fffffffu;
    m = u > m ? u : m;
  }
  return m;
}

/* B += X, the last pass's read and write. */
static BENCH_HOT void traffic_add(const float *x, float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    b[i] += x[i];
}

uint32_t codec_bench_traffic(unsigned passes, const float *x, float *b,
                             size_t n, unsigned char *out,
                             size_t payload_bytes) {
  uint32_t m = 0;
  for (unsigned p = 1; p < passes; p++)
    m |= traffic_read(x, b, n);
  /* The last pass in blocks of 4096 values (16 KB), each followed by its
   * share of the payload, as an encoder writes it along the way. */
  enum { BLOCK = 4096 };
  size_t w = 0;
  for (size_t i = 0; i < n; i += BLOCK) {
    size_t k = n - i < BLOCK ? n - i : BLOCK;
    if (b)
      traffic_add(x + i, b + i, k);
    else
      m |= traffic_read(x + i, NULL, k);
    size_t e =
        i + k == n
            ? payload_bytes
            : (size_t)((double)payload_bytes * (double)(i + k) / (double)n);
    memset(out + w, (int)(m & 0xffu), e - w);
    w = e;
  }
  return m;
}

/* SPEC parsed, and a stream state and a payload buffer for B's vectors;
 * the caller frees all three. */
static int open_codec(const codec_bench_t *b, const char *spec, codec_t **c,
                      codec_state_t **st, unsigned char **buf, char *err,
                      size_t errlen) {
  char msg[CODEC_ERR_MAX];
  int rc = codec_create(spec, c, msg, sizeof msg);
  if (rc != 0) {
    set_err(err, errlen, "--codec %s: %s", spec ? spec : "(none)", msg);
    return rc;
  }
  size_t n = b->cfg.n;
  if (!codec_accepts(*c, n)) {
    set_err(err, errlen, "--n %zu is too many values for %s", n,
            codec_spec(*c));
    codec_free(*c);
    return -EOVERFLOW;
  }
  rc = codec_state_create(*c, n, b->cfg.seed, st);
  *buf = rc == 0 ? touched(codec_bound(*c, n)) : NULL;
  if (rc != 0 || !*buf) {
    set_err(err, errlen, "cannot create a codec state for %zu values", n);
    codec_state_free(*st);
    codec_free(*c);
    return -ENOMEM;
  }
  return 0;
}

static void close_codec(codec_t *c, codec_state_t *st, unsigned char *buf) {
  g_free(buf);
  codec_state_free(st);
  codec_free(c);
}

/* The message for a failed encode (RC) or decode of C. */
static int coding_failed(const codec_t *c, int rc, bool encode, char *err,
                         size_t errlen) {
  if (encode && rc == -EDOM)
    set_err(err, errlen,
            "the data holds NaN or infinity; codec %s needs "
            "finite values",
            codec_spec(c));
  else if (encode)
    set_err(err, errlen, "encoding with %s failed: %s", codec_spec(c),
            codec_strerror(rc));
  else
    set_err(err, errlen,
            "internal error: %s cannot decode its own "
            "payload: %s",
            codec_spec(c), codec_strerror(rc));
  return encode ? rc : -EBADMSG;
}

/* Run R of a bench: flush, encode, flush, decode, flush, memcpy, and for a
 * codec of two or more passes flush, its traffic bound; the times go to
 * B->t[k][R - 1] (R = 0 is the warm-up). A failure's error, with
 * *DECODING telling whose it is. */
static int bench_run(codec_bench_t *b, codec_state_t *st, unsigned char *buf,
                     size_t cap, size_t r, size_t *len, bool *decoding) {
  const codec_t *c = codec_state_codec(st);
  size_t n = b->cfg.n;
  prepare(b, (unsigned)r, b->pool[r], codec_state_residual(st), 4 * n, buf,
          cap);
  double t0 = codec_bench_now();
  ptrdiff_t e = codec_encode(st, b->pool[r], n, buf, cap);
  double t1 = codec_bench_now();
  *decoding = false;
  if (e < 0)
    return (int)e;
  *len = (size_t)e;
  prepare(b, (unsigned)r + 1, buf, NULL, *len, b->dec, 4 * n);
  double t2 = codec_bench_now();
  int rc = codec_decode(c, buf, *len, b->dec, n);
  double t3 = codec_bench_now();
  *decoding = rc != 0;
  if (rc != 0)
    return rc;
  prepare(b, (unsigned)r + 2, b->pool[r], NULL, 4 * n, b->copy, 4 * n);
  double t4 = codec_bench_now();
  memcpy(b->copy, b->pool[r], 4 * n);
  double t5 = codec_bench_now(), t6 = 0, t7 = 0;
  unsigned passes = codec_encode_passes(c);
  if (passes >= 2) {
    float *res = codec_is_stateful(c) ? b->resid : NULL;
    prepare(b, (unsigned)r + 3, b->pool[r], res, 4 * n, buf, cap);
    t6 = codec_bench_now();
    b->sink += codec_bench_traffic(passes, b->pool[r], res, n, buf, cap);
    t7 = codec_bench_now();
  }
  if (r > 0) {
    b->t[T_ENCODE][r - 1] = t1 - t0;
    b->t[T_DECODE][r - 1] = t3 - t2;
    b->t[T_MEMCPY][r - 1] = t5 - t4;
    b->t[T_BOUND][r - 1] = t7 - t6;
  }
  return 0;
}

int codec_bench_measure(codec_bench_t *b, const char *spec,
                        struct codec_bench_result *out, char *err,
                        size_t errlen) {
  codec_t *c;
  codec_state_t *st;
  unsigned char *buf;
  if (!b || !out)
    return -EINVAL;
  int rc = open_codec(b, spec, &c, &st, &buf, err, errlen);
  if (rc != 0)
    return rc;
  size_t n = b->cfg.n, R = b->cfg.runs, cap = codec_bound(c, n);
  double bits = 0;
  for (size_t r = 0; r <= R && rc == 0; r++) {
    size_t len = 0;
    bool decoding;
    rc = bench_run(b, st, buf, cap, r, &len, &decoding);
    if (rc != 0)
      rc = coding_failed(c, rc, !decoding, err, errlen);
    else if (r > 0)
      bits += 8.0 * (double)len / (double)n / (double)R;
  }
  if (rc == 0) {
    double bytes = 4.0 * (double)n;
    memset(out, 0, sizeof *out);
    snprintf(out->spec, sizeof out->spec, "%s", codec_spec(c));
    snprintf(out->kernels, sizeof out->kernels, "%s", codec_kernels(c));
    out->n = n;
    out->encode_gbps = bytes / codec_bench_median(b->t[T_ENCODE], R) / 1e9;
    out->decode_gbps = bytes / codec_bench_median(b->t[T_DECODE], R) / 1e9;
    out->memcpy_gbps = bytes / codec_bench_median(b->t[T_MEMCPY], R) / 1e9;
    out->encode_x_memcpy = out->encode_gbps / out->memcpy_gbps;
    out->decode_x_memcpy = out->decode_gbps / out->memcpy_gbps;
    out->bits_per_value = bits;
    out->passes = codec_encode_passes(c);
    if (out->passes >= 2) {
      out->bound_gbps = bytes / codec_bench_median(b->t[T_BOUND], R) / 1e9;
      out->encode_x_bound = out->encode_gbps / out->bound_gbps;
    }
  }
  close_codec(c, st, buf);
  return rc;
}

/* ---- calibration -------------------------------------------------- */

void codec_bench_fit(double *encode_s, double *decode_s, size_t runs, size_t n,
                     double payload_bytes, bool sparse,
                     struct codec_cost_line *out) {
  double enc = codec_bench_median(encode_s, runs) / (double)n * 1e9;
  double dec = codec_bench_median(decode_s, runs) * 1e9;
  out->encode_ns = enc;
  out->decode_ns = sparse ? 0 : dec / (double)n;
  out->decode_ns_per_byte = sparse ? dec / payload_bytes : 0;
}

int codec_bench_calibrate(codec_bench_t *b, const char *spec,
                          struct codec_cost_line *out, char *err,
                          size_t errlen) {
  codec_t *c;
  codec_state_t *st;
  unsigned char *buf;
  if (!b || !out)
    return -EINVAL;
  int rc = open_codec(b, spec, &c, &st, &buf, err, errlen);
  if (rc != 0)
    return rc;
  size_t n = b->cfg.n, R = b->cfg.runs, cap = codec_bound(c, n);
  double bytes = 0;
  for (size_t r = 0; r <= R && rc == 0; r++) {
    double t0 = codec_bench_now();
    ptrdiff_t len = codec_encode(st, b->pool[r], n, buf, cap);
    double t1 = codec_bench_now();
    if (len < 0) {
      rc = coding_failed(c, (int)len, true, err, errlen);
      break;
    }
    rc = codec_decode_add(c, buf, (size_t)len, b->dec, n);
    double t2 = codec_bench_now();
    if (rc != 0)
      rc = coding_failed(c, rc, false, err, errlen);
    else if (r > 0) {
      b->t[T_ENCODE][r - 1] = t1 - t0;
      b->t[T_DECODE][r - 1] = t2 - t1;
      bytes += (double)len / (double)R;
    }
  }
  if (rc == 0) {
    memset(out, 0, sizeof *out);
    snprintf(out->spec, sizeof out->spec, "%s", codec_spec(c));
    codec_bench_fit(b->t[T_ENCODE], b->t[T_DECODE], R, n, bytes,
                    codec_is_sparse(c), out);
  }
  close_codec(c, st, buf);
  return rc;
}

void codec_bench_cpu_name(char *buf, size_t len) {
  if (!buf || !len)
    return;
  snprintf(buf, len, "this machine");
  gethostname(buf, len);
  buf[len - 1] = '\0';
  gchar *cpuinfo = NULL;
  if (!g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL))
    return;
  const char *mn = strstr(cpuinfo, "model name");
  const char *colon = mn ? strchr(mn, ':') : NULL;
  if (colon) {
    colon += 1 + strspn(colon + 1, " \t");
    int namelen = (int)strcspn(colon, "\n");
    snprintf(buf, len, "%.*s, %ld cores", namelen, colon,
             sysconf(_SC_NPROCESSORS_ONLN));
  }
  g_free(cpuinfo);
}

char *codec_bench_cost_table(const struct codec_cost_line *lines, size_t count,
                             const char *cpu, const char *date, size_t n,
                             size_t runs, const char *shipped) {
  GString *t = g_string_new(NULL);
  g_string_append_printf(
      t,
      "# Codec cost table for the simulator (models/codec_cost.h).\n"
      "# cpu lines: written by 'gradsim codec calibrate' on %s (%s), %zu "
      "values,\n# median of %zu runs: CODEC ENCODE_NS DECODE_NS "
      "DECODE_NS_PER_BYTE (per value; decode\n# is decode-and-add into an "
      "accumulator; the sparse codecs' decode is charged per\n# payload "
      "byte instead).\n",
      cpu, date, n, runs);
  for (size_t i = 0; i < count; i++)
    g_string_append_printf(t, "cpu %s %.4g %.4g %.4g\n", lines[i].spec,
                           lines[i].encode_ns, lines[i].decode_ns,
                           lines[i].decode_ns_per_byte);
  /* The GPU and NIC models and their sources, from the shipped table. */
  char *text = NULL;
  if (shipped && g_file_get_contents(shipped, &text, NULL, NULL)) {
    char **ls = g_strsplit(text, "\n", -1);
    bool gpu = false;
    for (char **l = ls; *l; l++) {
      gpu |= g_str_has_prefix(*l, "# GPU");
      if (gpu)
        g_string_append_printf(t, "%s\n", *l);
    }
    g_strfreev(ls);
    g_free(text);
  }
  return g_string_free(t, FALSE);
}
