/* cli/codec.c: `gradsim codec`: the codec library on the command line.
 *
 *   list        every codec, its parameters and their ranges
 *   roundtrip   encode and decode training steps of a gradient dump
 *   encode      one vector into a self-describing container
 *   decode      a container back to float32
 *   bench       encode/decode throughput beside memcpy
 *   compare     every codec on synthetic gradients: size and error
 *   calibrate   codec costs on this CPU into a simulator cost table
 *
 * What roundtrip and compare measure is computed by models/codec_eval.h;
 * this file parses their options, reports their errors and writes their
 * results. */
#include "cli.h"

#include "array_io.h"
#include "codec.h"
#include "codec_bench.h"
#include "codec_eval.h"
#include "container.h"
#include "gradgen.h"
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <unistd.h>

static codec_t *need_codec(const char *spec, const char *where) {
  if (!spec)
    cli_bad_input("%s: --codec SPEC is required (see 'gradsim codec list')",
                  where);
  char err[CODEC_ERR_MAX];
  codec_t *c;
  if (codec_create(spec, &c, err, sizeof err) != 0)
    cli_bad_input("%s: --codec %s: %s", where, spec, err);
  return c;
}

static void *xmalloc(size_t bytes, const char *what) {
  void *p = g_try_malloc(bytes ? bytes : 1);
  if (!p)
    cli_env_failure("out of memory allocating %zu bytes for %s", bytes, what);
  return p;
}

/* The codecs named by SPECS (NULL-terminated; NULL or empty: the seed
 * papers' settings), parsed, or exit 2. *COUNT gets their number. */
static codec_t **need_codecs(char **specs, const char *where, size_t *count) {
  size_t n =
      specs && specs[0] ? g_strv_length(specs) : codec_setting_count();
  codec_t **c = g_new0(codec_t *, n);
  for (size_t i = 0; i < n; i++)
    c[i] = need_codec(specs && specs[0] ? specs[i] : codec_setting(i),
                      where);
  *count = n;
  return c;
}

static void free_codecs(codec_t **c, size_t n) {
  for (size_t i = 0; i < n; i++)
    codec_free(c[i]);
  g_free(c);
}

/* Exit for a failed encode of WHAT with C: -EDOM is the user's data
 * (status 2), anything else a bug (status 1). */
static G_NORETURN void encode_failed(const codec_t *c, int rc,
                                     const char *what) {
  if (rc == -EDOM)
    cli_bad_input("%s: holds NaN or infinity; codec %s needs finite values",
                  what, codec_spec(c));
  cli_env_failure("%s: encoding with %s failed: %s", what, codec_spec(c),
                  codec_strerror(rc));
}

/* Encoded payload into a buffer of the codec's bound, or exit. */
static size_t encode_or_die(codec_state_t *s, const float *x, size_t n,
                            unsigned char *out, size_t cap, const char *what) {
  ptrdiff_t r = codec_encode(s, x, n, out, cap);
  if (r < 0)
    encode_failed(codec_state_codec(s), (int)r, what);
  return (size_t)r;
}

/* ---- list ----------------------------------------------------------- */

static int cmd_list(int argc, char **argv) {
  cli_parse(&argc, &argv, "",
            "List every codec, its parameters and their "
            "ranges.",
            (GOptionEntry[]){{NULL, 0, 0, 0, NULL, NULL, NULL}});
  cli_no_extra_args(argc, argv, "codec list");
  for (size_t i = 0; i < codec_count(); i++) {
    const struct codec_info *ci = codec_info(i);
    printf("%-11s %s\n", ci->name, ci->description);
    printf("%-11s parameters: %s\n", "", *ci->params ? ci->params : "none");
  }
  return 0;
}

/* ---- output formats ------------------------------------------------- */

/* A JSON string literal (quotes, backslashes and control characters
 * escaped); file names may hold any of them. */
static void json_string(GString *s, const char *v) {
  g_string_append_c(s, '"');
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_printf(s, "\\%c", *p);
    else if (*p < 0x20)
      g_string_append_printf(s, "\\u%04x", *p);
    else
      g_string_append_c(s, (char)*p);
  }
  g_string_append_c(s, '"');
}

/* A CSV field: quoted (RFC 4180) when it holds a comma or a quote, as
 * codec specs with several parameters do. */
static void csv_field(FILE *f, const char *v) {
  if (!strpbrk(v, ",\"\n")) {
    fputs(v, f);
    return;
  }
  fputc('"', f);
  for (; *v; v++) {
    if (*v == '"')
      fputc('"', f);
    fputc(*v, f);
  }
  fputc('"', f);
}

static void json_number(GString *s, double v) {
  if (isfinite(v))
    g_string_append_printf(s, "%.9g", v);
  else
    g_string_append(s, "null");
}

/* ---- roundtrip ------------------------------------------------------ */

struct roundtrip_args {
  char *spec, *outdir;
  char **inputs;
  gint64 seed;
};

/* The options of `codec roundtrip` into A, and its codec; exit 2 on bad
 * ones. */
static codec_t *roundtrip_parse(int argc, char **argv,
                                struct roundtrip_args *a) {
  GOptionEntry opts[] = {
      {"codec", 'c', 0, G_OPTION_ARG_STRING, &a->spec, "codec spec", "SPEC"},
      {"in", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &a->inputs,
       "one training step: .npy (float32) or .f32; repeat for more steps",
       "FILE"},
      {"out-dir", 'o', 0, G_OPTION_ARG_FILENAME, &a->outdir,
       "where step-K.f32 and stats.json go", "DIR"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &a->seed,
       "seed of the codec's random choices (default 1)", "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Encode and decode training steps of one gradient with one "
            "codec state (residuals carry from step to step); write the "
            "decoded steps and per-step statistics.",
            opts);
  const char *where = "codec roundtrip";
  cli_no_extra_args(argc, argv, where);
  codec_t *c = need_codec(a->spec, where);
  if (!a->inputs || !a->inputs[0])
    cli_bad_input("%s: at least one --in FILE is required", where);
  if (!a->outdir)
    cli_bad_input("%s: --out-dir DIR is required", where);
  cli_output_dir(a->outdir, "--out-dir", where);
  return c;
}

/* The steps INPUTS name (malloc'ed, one per file), every one of the same
 * length *N; exit 2 on a bad file. */
static float **roundtrip_read(char **inputs, size_t *n) {
  const char *where = "codec roundtrip";
  size_t steps = g_strv_length(inputs);
  float **x = g_new0(float *, steps);
  for (size_t k = 0; k < steps; k++) {
    char err[512];
    size_t nk;
    if (array_read(inputs[k], &x[k], &nk, err, sizeof err) != 0)
      cli_bad_input("%s: %s", where, err);
    if (k == 0)
      *n = nk;
    else if (nk != *n)
      cli_bad_input("%s: step %zu (%s) has %zu values but step 0 (%s) has "
                    "%zu: every step must have the same length",
                    where, k, inputs[k], nk, inputs[0], *n);
  }
  return x;
}

/* One step X (read from FILE) encoded through ST into PAYLOAD and
 * decoded: the decoded values (g_malloc'ed) and their statistics *S;
 * exit on failure. */
static float *roundtrip_step(codec_state_t *st, const float *x, size_t n,
                             unsigned char *payload, size_t cap,
                             const char *file, struct codec_step_stats *s) {
  const codec_t *c = codec_state_codec(st);
  float *y = xmalloc(4 * n, "decoded step");
  enum codec_eval_stage failed;
  int rc = codec_eval_step(st, x, n, payload, cap, y, s, &failed);
  if (rc != 0 && failed == CODEC_EVAL_ENCODE)
    encode_failed(c, rc, file);
  if (rc != 0)
    cli_env_failure("internal error: %s cannot decode its own payload: %s",
                    codec_spec(c), codec_strerror(rc));
  return y;
}

/* Step K's object in stats.json (docs/codecs.md, "gradsim codec roundtrip"). */
static void roundtrip_json(GString *json, size_t k, const char *file,
                           const codec_t *c, size_t n,
                           const struct codec_step_stats *s, bool last) {
  g_string_append_printf(json, "  {\"step\": %zu, \"file\": ", k);
  json_string(json, file);
  g_string_append(json, ", \"codec\": ");
  json_string(json, codec_spec(c));
  g_string_append_printf(json,
                         ", \"n\": %zu, \"bytes\": %zu, "
                         "\"bits_per_value\": ",
                         n, s->bytes);
  json_number(json, s->bits_per_value);
  g_string_append(json, ", \"ratio\": ");
  json_number(json, s->ratio);
  g_string_append(json, ", \"max_abs_err\": ");
  json_number(json, s->max_abs_err);
  g_string_append(json, ", \"rmse\": ");
  json_number(json, s->rmse);
  for (size_t j = 0; j < s->nclasses; j++)
    g_string_append_printf(json, ", \"class_%ubit\": %" PRIu64,
                           codec_class_bits(c, j), s->classes[j]);
  g_string_append_printf(json, "}%s\n", last ? "" : ",");
}

static int cmd_roundtrip(int argc, char **argv) {
  const char *where = "codec roundtrip";
  struct roundtrip_args a = {NULL, NULL, NULL, 1};
  codec_t *c = roundtrip_parse(argc, argv, &a);
  size_t steps = g_strv_length(a.inputs), n = 0;
  float **x = roundtrip_read(a.inputs, &n);
  size_t cap = codec_bound(c, n);
  if (!codec_accepts(c, n))
    cli_bad_input("%s: %zu values are too many for codec %s", where, n,
                  codec_spec(c));
  codec_state_t *st;
  if (codec_state_create(c, n, (uint64_t)a.seed, &st) != 0)
    cli_env_failure("%s: cannot create a codec state for %zu values", where, n);
  unsigned char *payload = xmalloc(cap, "payload");

  cli_outputs *outs = cli_outputs_new();
  GString *json = g_string_new("[\n");
  for (size_t k = 0; k < steps; k++) {
    struct codec_step_stats s;
    float *y = roundtrip_step(st, x[k], n, payload, cap, a.inputs[k], &s);
    char *path = g_strdup_printf("%s/step-%zu.f32", a.outdir, k);
    cli_outputs_add(outs, path, y, 4 * n);
    g_free(path);
    roundtrip_json(json, k, a.inputs[k], c, n, &s, k + 1 == steps);
  }
  g_string_append(json, "]\n");
  char *path = g_strdup_printf("%s/stats.json", a.outdir);
  size_t jlen = json->len;
  cli_outputs_add(outs, path, g_string_free(json, FALSE), jlen);
  g_free(path);

  if (g_mkdir_with_parents(a.outdir, 0755) != 0)
    cli_env_failure("%s: cannot create %s: %s", where, a.outdir,
                    g_strerror(errno));
  cli_outputs_commit(outs);
  for (size_t k = 0; k < steps; k++)
    free(x[k]);
  g_free(x);
  g_free(payload);
  codec_state_free(st);
  codec_free(c);
  g_strfreev(a.inputs);
  g_free(a.spec);
  g_free(a.outdir);
  return 0;
}

/* ---- encode / decode ------------------------------------------------ */

static int cmd_encode(int argc, char **argv) {
  char *spec = NULL, *in = NULL, *out = NULL;
  gint64 seed = 1;
  GOptionEntry opts[] = {
      {"codec", 'c', 0, G_OPTION_ARG_STRING, &spec, "codec spec", "SPEC"},
      {"in", 'i', 0, G_OPTION_ARG_FILENAME, &in, ".npy (float32) or .f32",
       "FILE"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "codec container", "FILE"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed,
       "seed of the codec's random choices (default 1)", "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Encode one vector (a first step: residuals start at zero) into "
            "a self-describing container that 'codec decode' reads.",
            opts);
  const char *where = "codec encode";
  cli_no_extra_args(argc, argv, where);
  codec_t *c = need_codec(spec, where);
  if (!in || !out)
    cli_bad_input("%s: --in FILE and --out FILE are required", where);
  char err[512];
  float *x;
  size_t n;
  if (array_read(in, &x, &n, err, sizeof err) != 0)
    cli_bad_input("%s: %s", where, err);
  size_t cap = codec_bound(c, n);
  if (!codec_accepts(c, n))
    cli_bad_input("%s: %zu values are too many for codec %s", where, n,
                  codec_spec(c));
  codec_state_t *st;
  if (codec_state_create(c, n, (uint64_t)seed, &st) != 0)
    cli_env_failure("%s: cannot create a codec state", where);
  unsigned char *payload = xmalloc(cap, "payload");
  size_t len = encode_or_die(st, x, n, payload, cap, in);
  size_t total = container_size(codec_spec(c), len);
  unsigned char *file = xmalloc(total, "container");
  if (container_write(file, total, codec_spec(c), n, payload, len) < 0)
    cli_env_failure("internal error writing the container");
  cli_outputs *outs = cli_outputs_new();
  cli_outputs_add(outs, out, file, total);
  cli_outputs_commit(outs);
  free(x);
  g_free(payload);
  codec_state_free(st);
  codec_free(c);
  g_free(spec);
  g_free(in);
  g_free(out);
  return 0;
}

/* The values of the container in file IN (g_malloc'ed), *N of them; exit
 * 2 when the file is not a container gradsim can decode. */
static float *decode_container(const char *in, size_t *n) {
  const char *where = "codec decode";
  char *bytes;
  gsize blen;
  GError *gerr = NULL;
  if (!g_file_get_contents(in, &bytes, &blen, &gerr))
    cli_bad_input("%s: %s", where, gerr->message);
  struct container_view v;
  char err[CODEC_ERR_MAX];
  if (container_read(bytes, blen, &v, err, sizeof err) != 0)
    cli_bad_input("%s: %s: %s", where, in, err);
  codec_t *c;
  if (codec_create(v.spec, &c, err, sizeof err) != 0)
    cli_bad_input("%s: %s names codec '%s': %s", where, in, v.spec, err);
  if (v.n == 0 || v.n > SIZE_MAX / 8 || !codec_accepts(c, (size_t)v.n))
    cli_bad_input("%s: %s announces %" PRIu64 " values, which codec %s "
                  "cannot hold",
                  where, in, v.n, v.spec);
  *n = (size_t)v.n;
  float *y = g_try_malloc(4 * *n);
  if (!y)
    cli_bad_input("%s: %s announces %zu values (%.3g GB), more than this "
                  "machine can allocate",
                  where, in, *n, 4e-9 * (double)*n);
  int rc = codec_decode(c, v.payload, v.len, y, *n);
  if (rc != 0)
    cli_bad_input("%s: %s: the payload is not %zu values of %s (%s)", where, in,
                  *n, v.spec, codec_strerror(rc));
  codec_free(c);
  g_free(bytes);
  return y;
}

static int cmd_decode(int argc, char **argv) {
  char *in = NULL, *out = NULL;
  GOptionEntry opts[] = {
      {"in", 'i', 0, G_OPTION_ARG_FILENAME, &in, "codec container", "FILE"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "decoded values: raw float32 (.f32) or NumPy (.npy)", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Decode a container written by 'codec encode'; the codec and the "
            "length come from the container.",
            opts);
  const char *where = "codec decode";
  cli_no_extra_args(argc, argv, where);
  if (!in || !out)
    cli_bad_input("%s: --in FILE and --out FILE are required", where);
  bool npy = g_str_has_suffix(out, ".npy");
  if (!npy && !g_str_has_suffix(out, ".f32"))
    cli_bad_input("%s: --out %s: expected a name ending in .f32 (raw float32) "
                  "or .npy",
                  where, out);
  size_t n;
  float *y = decode_container(in, &n);
  cli_outputs *outs = cli_outputs_new();
  if (npy) {
    unsigned char *file;
    size_t flen;
    if (npy_encode(y, n, &file, &flen) != 0)
      cli_env_failure("%s: out of memory", where);
    g_free(y);
    /* npy_encode allocates with malloc; hand GLib a g_malloc copy. */
    void *copy = xmalloc(flen, "output");
    memcpy(copy, file, flen);
    free(file);
    cli_outputs_add(outs, out, copy, flen);
  } else {
    cli_outputs_add(outs, out, y, 4 * n);
  }
  cli_outputs_commit(outs);
  g_free(in);
  g_free(out);
  return 0;
}

/* ---- bench ---------------------------------------------------------- */

/* A failed measurement of models/codec_bench.h: the codec or the data is
 * the user's (status 2), anything else the environment's or a bug's. */
static G_NORETURN void bench_failed(int rc, const char *where,
                                    const char *err) {
  if (rc == -EINVAL || rc == -EOVERFLOW || rc == -EDOM)
    cli_bad_input("%s: %s", where, err);
  cli_env_failure("%s: %s", where, err);
}

/* The codec specs to measure: SPEC, or the seed papers' settings for NULL
 * or "all"; each parsed first, so that a bad one exits 2 before any
 * measurement. Returns a NULL-terminated g_strdup'ed list. */
static char **bench_specs(const char *spec, const char *where) {
  char **specs;
  if (spec && strcmp(spec, "all") != 0) {
    specs = g_new0(char *, 2);
    specs[0] = g_strdup(spec);
  } else {
    size_t n = codec_setting_count();
    specs = g_new0(char *, n + 1);
    for (size_t i = 0; i < n; i++)
      specs[i] = g_strdup(codec_setting(i));
  }
  for (char **s = specs; *s; s++)
    codec_free(need_codec(*s, where));
  return specs;
}

/* One row; the bound columns are empty (csv) or "-" (table) for a codec
 * that states fewer than two passes (codec_encode_passes). */
static void bench_print(bool csv, const struct codec_bench_result *r) {
  bool bound = r->passes >= 2;
  if (csv) {
    csv_field(stdout, r->spec);
    printf(",%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f", r->n, r->encode_gbps,
           r->decode_gbps, r->memcpy_gbps, r->encode_x_memcpy,
           r->decode_x_memcpy, r->bits_per_value);
    if (bound)
      printf(",%.3f,%.3f\n", r->bound_gbps, r->encode_x_bound);
    else
      printf(",,\n");
  } else {
    printf("%-38s %12.2f %12.2f %12.2f %8.2f %8.2f %8.3f", r->spec,
           r->encode_gbps, r->decode_gbps, r->memcpy_gbps, r->encode_x_memcpy,
           r->decode_x_memcpy, r->bits_per_value);
    if (bound)
      printf(" %11.2f %8.2f\n", r->bound_gbps, r->encode_x_bound);
    else
      printf(" %11s %8s\n", "-", "-");
  }
  fflush(stdout);
}

static int cmd_bench(int argc, char **argv) {
  char *spec = NULL, *format = NULL;
  struct codec_bench_config cfg;
  codec_bench_defaults(&cfg);
  gint64 n64 = (gint64)cfg.n, runs = (gint64)cfg.runs, seed = 1;
  gboolean warm = FALSE;
  GOptionEntry opts[] = {
      {"codec", 'c', 0, G_OPTION_ARG_STRING, &spec,
       "codec spec, or 'all' for the settings of the seed papers (default)",
       "SPEC|all"},
      {"n", 'n', 0, G_OPTION_ARG_INT64, &n64,
       "values per vector (default 16777216: 64 MB of float32)", "N"},
      {"runs", 'r', 0, G_OPTION_ARG_INT64, &runs,
       "timed runs, each on a fresh vector; the median is reported "
       "(default 5, at least 5)",
       "R"},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &format, "table (default) or csv",
       "FORMAT"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "data seed (default 1)", "N"},
      {"warm", 0, 0, G_OPTION_ARG_NONE, &warm,
       "from the caches: each operation's data is read just before it "
       "instead of flushing the caches (with a small --n: compute rates)",
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Encode and decode throughput (GB/s of float32) on synthetic "
            "gradients, beside memcpy measured in the same process: median "
            "of R runs, each on fresh data and from cold caches. For a codec "
            "whose encoder must pass over memory twice, the bound that "
            "traffic sets, measured the same way.",
            opts);
  const char *where = "codec bench";
  cli_no_extra_args(argc, argv, where);
  bool csv = cli_format_csv(format, where);
  if (n64 < 1 || n64 > (gint64)1 << 32)
    cli_bad_input("%s: --n %" G_GINT64_FORMAT " must be in [1, 2^32]", where,
                  n64);
  if (runs < 5 || runs > 1000)
    cli_bad_input("%s: --runs %" G_GINT64_FORMAT " must be in [5, 1000]", where,
                  runs);
  cfg.n = (size_t)n64;
  cfg.runs = (size_t)runs;
  cfg.seed = (uint64_t)seed;
  cfg.warm = warm;
  char **specs = bench_specs(spec, where);
  codec_bench_t *b;
  if (codec_bench_create(&cfg, &b) != 0)
    cli_env_failure("%s: out of memory for %zu values", where, cfg.n);

  if (csv)
    printf("codec,n,encode_gbps,decode_gbps,memcpy_gbps,encode_x_memcpy,"
           "decode_x_memcpy,bits_per_value,bound_gbps,encode_x_bound\n");
  else
    printf("%-38s %12s %12s %12s %8s %8s %8s %11s %8s\n", "codec",
           "encode GB/s", "decode GB/s", "memcpy GB/s", "enc/mcp", "dec/mcp",
           "bits/val", "bound GB/s", "enc/bnd");
  GString *kernels = g_string_new(NULL);
  for (char **s = specs; *s; s++) {
    struct codec_bench_result r;
    char err[512];
    int rc = codec_bench_measure(b, *s, &r, err, sizeof err);
    if (rc != 0)
      bench_failed(rc, where, err);
    bench_print(csv, &r);
    if (!strstr(kernels->str, r.kernels))
      g_string_append_printf(kernels, "%s%s", kernels->len ? ", " : "",
                             r.kernels);
  }
  if (!csv) {
    /* Which machine and which kernels: a table is read against them. */
    char cpu[256];
    codec_bench_cpu_name(cpu, sizeof cpu);
    printf("\nprocessor: %s; codec kernels: %s; %s\n", cpu, kernels->str,
           warm ? "warm: data read just before each operation"
                : "cold: caches flushed before each operation");
  }
  g_string_free(kernels, TRUE);
  codec_bench_free(b);
  g_strfreev(specs);
  g_free(spec);
  g_free(format);
  return 0;
}

/* ---- compare -------------------------------------------------------- */

struct compare_args {
  char **specs;
  char *format;
  gint64 n, steps, seed;
};

/* The options of `codec compare` into A; true for CSV output; exit 2 on
 * bad ones. */
static bool compare_parse(int argc, char **argv, struct compare_args *a) {
  GOptionEntry opts[] = {
      {"codec", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &a->specs,
       "codec spec; repeat for more (default: the seed papers' settings)",
       "SPEC"},
      {"n", 'n', 0, G_OPTION_ARG_INT64, &a->n,
       "values per gradient (default 1048576)", "N"},
      {"steps", 's', 0, G_OPTION_ARG_INT64, &a->steps,
       "training steps, each a fresh gradient (default 10)", "S"},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
       "table (default) or csv", "FORMAT"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &a->seed, "data seed (default 1)",
       "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Run codecs over S steps of synthetic gradients (the default "
            "distribution of 'gradsim gradients') and print payload size "
            "and error: bits per value, compression ratio, RMSE and max "
            "error per step, and the relative error of the sum over all "
            "steps (which error feedback keeps small).",
            opts);
  const char *where = "codec compare";
  cli_no_extra_args(argc, argv, where);
  bool csv = cli_format_csv(a->format, where);
  if (a->n < 1 || a->n > (gint64)1 << 28)
    cli_bad_input("%s: --n %" G_GINT64_FORMAT " must be in [1, 2^28]", where,
                  a->n);
  if (a->steps < 1 || a->steps > 100000)
    cli_bad_input("%s: --steps %" G_GINT64_FORMAT " must be in [1, 100000]",
                  where, a->steps);
  return csv;
}

/* One codec's row: a fresh stream state, STEPS steps; exit on failure. */
static void compare_codec(const codec_t *c, const struct gradgen_params *gp,
                          size_t n, size_t steps,
                          const struct codec_eval_scratch *w,
                          struct codec_compare_row *row) {
  const char *where = "codec compare";
  size_t cap = codec_bound(c, n);
  codec_state_t *st;
  if (!codec_accepts(c, n) || codec_state_create(c, n, gp->seed, &st) != 0)
    cli_env_failure("%s: cannot create a codec state", where);
  unsigned char *out = xmalloc(cap, "payload");
  enum codec_eval_stage failed;
  int rc = codec_eval_compare(st, gp, n, steps, out, cap, w, row, &failed);
  if (rc != 0 && failed == CODEC_EVAL_GENERATE)
    cli_env_failure("%s: generating the synthetic gradient failed: %s", where,
                    g_strerror(-rc));
  if (rc != 0 && failed == CODEC_EVAL_ENCODE)
    encode_failed(c, rc, "synthetic gradient");
  if (rc != 0)
    cli_env_failure("internal error: %s cannot decode its own payload",
                    codec_spec(c));
  g_free(out);
  codec_state_free(st);
}

/* SEED as given (the table shows a negative one as such). */
static void compare_print_header(bool csv, size_t n, size_t steps,
                                 const struct gradgen_params *gp,
                                 gint64 seed) {
  if (csv)
    printf("codec,n,steps,bits_per_value,ratio,rmse,max_abs_err,"
           "sum_rel_err,sum_cosine\n");
  else
    printf("%d steps of %zu synthetic gradient values (%s, scale %g, seed "
           "%" G_GINT64_FORMAT ")\n\n%-38s %9s %9s %11s %11s %11s %10s\n",
           (int)steps, n, gradgen_dist_name(gp->dist), gp->scale, seed, "codec",
           "bits/val", "ratio", "rmse", "max |err|", "sum relerr", "sum cos");
}

static void compare_print_row(bool csv, const codec_t *c, size_t n,
                              size_t steps,
                              const struct codec_compare_row *r) {
  if (csv) {
    csv_field(stdout, codec_spec(c));
    printf(",%zu,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", n, steps,
           r->bits_per_value, r->ratio, r->rmse, r->max_abs_err, r->sum_rel_err,
           r->sum_cosine);
  } else
    printf("%-38s %9.3f %9.2f %11.3e %11.3e %11.3e %10.6f\n", codec_spec(c),
           r->bits_per_value, r->ratio, r->rmse, r->max_abs_err, r->sum_rel_err,
           r->sum_cosine);
}

static int cmd_compare(int argc, char **argv) {
  struct compare_args a = {NULL, NULL, 1 << 20, 10, 1};
  bool csv = compare_parse(argc, argv, &a);
  size_t n = (size_t)a.n, steps = (size_t)a.steps;
  size_t ncodecs;
  codec_t **codecs = need_codecs(a.specs, "codec compare", &ncodecs);

  struct gradgen_params gp;
  gradgen_defaults(&gp);
  gp.seed = (uint64_t)a.seed;
  struct codec_eval_scratch w;
  w.x = xmalloc(4 * n, "gradient");
  w.y = xmalloc(4 * n, "decoded");
  w.sum_x = xmalloc(8 * n, "sum");
  w.sum_y = xmalloc(8 * n, "sum");

  compare_print_header(csv, n, steps, &gp, a.seed);
  for (size_t ci = 0; ci < ncodecs; ci++) {
    struct codec_compare_row row;
    compare_codec(codecs[ci], &gp, n, steps, &w, &row);
    compare_print_row(csv, codecs[ci], n, steps, &row);
  }
  g_free(w.x);
  g_free(w.y);
  g_free(w.sum_x);
  g_free(w.sum_y);
  free_codecs(codecs, ncodecs);
  g_strfreev(a.specs);
  g_free(a.format);
  return 0;
}

/* ---- calibrate ------------------------------------------------------ */

/* Codec work as the simulator charges it (models/codec_cost.h): encode
 * and decode-and-add times on this machine's CPU, measured by
 * models/codec_bench.h. */
static int cmd_calibrate(int argc, char **argv) {
  char *out = NULL;
  gint64 n64 = 1 << 22, runs = 5, seed = 1;
  GOptionEntry opts[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "cost table to write (models/codec_costs.conf format)", "FILE"},
      {"n", 'n', 0, G_OPTION_ARG_INT64, &n64,
       "values per vector (default 4194304)", "N"},
      {"runs", 'r', 0, G_OPTION_ARG_INT64, &runs,
       "timed runs per codec, median kept (default 5, at least 5)", "R"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "data seed (default 1)", "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Measure the CPU cost of every codec setting of the seed papers "
            "(encode, and decode added into an accumulator, in nanoseconds "
            "per value) and write the cost table the simulator reads for "
            "placement = cpu; the GPU and NIC lines of the shipped table are "
            "copied unchanged.",
            opts);
  const char *where = "codec calibrate";
  cli_no_extra_args(argc, argv, where);
  if (!out)
    cli_bad_input("%s: --out FILE is required", where);
  if (n64 < 1024 || n64 > (gint64)1 << 28)
    cli_bad_input("%s: --n %" G_GINT64_FORMAT " must be in [1024, 2^28]",
                  where, n64);
  if (runs < 5 || runs > 1000)
    cli_bad_input("%s: --runs %" G_GINT64_FORMAT " must be in [5, 1000]",
                  where, runs);
  struct codec_bench_config cfg = {(size_t)n64, (size_t)runs, (uint64_t)seed, 0,
                                   false};
  char **specs = bench_specs(NULL, where);
  size_t count = g_strv_length(specs);
  codec_bench_t *b;
  if (codec_bench_create(&cfg, &b) != 0)
    cli_env_failure("%s: out of memory for %zu values", where, cfg.n);
  struct codec_cost_line *lines = g_new0(struct codec_cost_line, count);
  for (size_t i = 0; i < count; i++) {
    char err[512];
    int rc = codec_bench_calibrate(b, specs[i], &lines[i], err, sizeof err);
    if (rc != 0)
      bench_failed(rc, where, err);
  }
  char cpu[256];
  codec_bench_cpu_name(cpu, sizeof cpu);
  GDateTime *now = g_date_time_new_now_utc();
  char *date = g_date_time_format(now, "%Y-%m-%d");
  char *shipped = g_build_filename(model_dir(NULL), "codec_costs.conf", NULL);
  char *table = codec_bench_cost_table(lines, count, cpu, date, cfg.n,
                                       cfg.runs, shipped);
  cli_outputs *outs = cli_outputs_new();
  cli_outputs_add(outs, out, table, strlen(table));
  cli_outputs_commit(outs);
  g_free(shipped);
  g_free(date);
  g_date_time_unref(now);
  g_free(lines);
  codec_bench_free(b);
  g_strfreev(specs);
  g_free(out);
  return 0;
}

/* ---- dispatch ------------------------------------------------------- */

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
} subcommands[] = {
    {"list", cmd_list, "every codec, its parameters and their ranges"},
    {"roundtrip", cmd_roundtrip,
     "encode and decode training steps of a gradient dump"},
    {"encode", cmd_encode, "one vector into a self-describing container"},
    {"decode", cmd_decode, "a container back to float32"},
    {"bench", cmd_bench, "encode/decode throughput beside memcpy"},
    {"compare", cmd_compare, "codecs on synthetic gradients: size and error"},
    {"calibrate", cmd_calibrate,
     "measure codec costs on this CPU into a simulator cost table"},
};

static void codec_usage(FILE *f) {
  fprintf(f, "Usage: gradsim codec SUBCOMMAND [OPTIONS]\n\nSubcommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
    fprintf(f, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(f, "\nA codec is named by a spec 'name[:key=value,...]', e.g. "
             "inceptionn:eb=-10 or 3lc:s=1.75.\nRun 'gradsim codec "
             "SUBCOMMAND --help' for its options.\n");
}

int cli_codec(int argc, char **argv) {
  if (argc < 2)
    cli_bad_input("codec: missing subcommand (valid: list, roundtrip, "
                  "encode, decode, bench, compare, calibrate; see gradsim "
                  "codec --help)");
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    codec_usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(subcommands); i++)
    if (strcmp(argv[1], subcommands[i].name) == 0) {
      char *prg = g_strdup_printf("gradsim codec %s", subcommands[i].name);
      g_set_prgname(prg);
      g_free(prg);
      return subcommands[i].run(argc - 1, argv + 1);
    }
  cli_bad_input("codec: unknown subcommand '%s' (valid: list, roundtrip, "
                "encode, decode, bench, compare, calibrate)",
                argv[1]);
}
