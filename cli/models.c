/* cli/models.c: the commands over models/: `gradsim formula`,
 * `gradsim gradients` and `gradsim model`. */
#include "cli.h"

#include "array_io.h"
#include "formula.h"
#include "gradgen.h"
#include "model.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sys/stat.h>

static void no_extra_args(int argc, char **argv, const char *where) {
  if (argc > 1)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where,
                  argv[1]);
}

/* ---- formula ----------------------------------------------------------- */

/* A whole number in 1..1e9 at the start of S; *END after it. */
static bool count_prefix(const char *s, double *v, const char **end) {
  if (*s < '0' || *s > '9')
    return false;
  char *e;
  errno = 0;
  guint64 x = g_ascii_strtoull(s, &e, 10);
  if (errno || x < 1 || x > 1000000000)
    return false;
  *v = (double)x;
  *end = e;
  return true;
}

/* "4", "2,4,8", "2..1024" (every integer) or "2..1024x2" (times 2). */
static GArray *parse_p_list(const char *s) {
  GArray *ps = g_array_new(FALSE, FALSE, sizeof(double));
  char **parts = g_strsplit(s, ",", -1);
  bool ok = parts[0] != NULL;
  for (char **p = parts; *p && ok; p++) {
    double lo, hi, mul = 0;
    const char *e;
    ok = count_prefix(*p, &lo, &e);
    if (ok && *e == '\0') {
      g_array_append_val(ps, lo);
      continue;
    }
    ok = ok && strncmp(e, "..", 2) == 0 && count_prefix(e + 2, &hi, &e) &&
         hi >= lo;
    if (ok && *e == 'x') {
      char *e2;
      mul = g_ascii_strtod(e + 1, &e2);
      ok = e[1] && *e2 == '\0' && mul > 1 && isfinite(mul);
    } else {
      ok = ok && *e == '\0' && hi - lo <= 100000;
    }
    for (double v = lo; ok && v <= hi; v = mul ? ceil(v * mul) : v + 1) {
      g_array_append_val(ps, v);
      ok = ps->len <= 100000; /* a factor barely above 1 counts by ones */
    }
  }
  g_strfreev(parts);
  if (!ok || ps->len == 0) {
    g_array_free(ps, TRUE);
    return NULL;
  }
  return ps;
}

static void print_formulas(FILE *f) {
  for (size_t i = 0; i < formula_count(); i++) {
    const struct formula *fm = formula_at(i);
    fprintf(f, "%-19s %s\n%-19s   %s\n%-19s   source: %s; needs:", fm->name,
            fm->description, "", fm->expression, "", fm->source);
    for (int k = 0; k < FP_COUNT; k++)
      if (fm->needs & (1ul << k))
        fprintf(f, " --%s", formula_param_name((enum formula_param)k));
    fprintf(f, "%s\n", fm->pow2 ? " (p a power of two)" : "");
  }
}

int cli_formula(int argc, char **argv) {
  const char *where = "formula";
  char *vals[FP_COUNT] = {0};
  char *bandwidth = NULL, *bw_intra = NULL, *reduce_rate = NULL;
  char *format = NULL;
  gboolean list = FALSE;
  GOptionEntry opts[FP_COUNT + 6];
  size_t no = 0;
  char *descs[FP_COUNT];
  for (int k = 0; k < FP_COUNT; k++) {
    const char *unit = formula_param_unit((enum formula_param)k);
    descs[k] = g_strdup_printf(
        "%s%s%s%s", formula_param_help((enum formula_param)k),
        *unit ? " (" : "",
        *unit ? (strcmp(unit, "s") == 0   ? "seconds, e.g. 5us"
                 : strcmp(unit, "B") == 0 ? "bytes, e.g. 64MB"
                                          : "seconds per byte")
              : "",
        *unit ? ")" : "");
    opts[no++] = (GOptionEntry){formula_param_name((enum formula_param)k), 0,
                                0, G_OPTION_ARG_STRING, &vals[k], descs[k],
                                "V"};
  }
  opts[no++] = (GOptionEntry){"bandwidth", 0, 0, G_OPTION_ARG_STRING,
                              &bandwidth,
                              "link rate, instead of --beta (e.g. 10Gbps)",
                              "RATE"};
  opts[no++] = (GOptionEntry){"bandwidth-intra", 0, 0, G_OPTION_ARG_STRING,
                              &bw_intra, "rate inside a node (hierarchical)",
                              "RATE"};
  opts[no++] = (GOptionEntry){
      "reduce-rate", 0, 0, G_OPTION_ARG_STRING, &reduce_rate,
      "bytes summed per second, instead of --gamma (e.g. 4GBps)", "RATE"};
  opts[no++] = (GOptionEntry){"format", 'f', 0, G_OPTION_ARG_STRING, &format,
                              "table (default) or csv", "FORMAT"};
  opts[no++] = (GOptionEntry){"list", 'l', 0, G_OPTION_ARG_NONE, &list,
                              "list the formulas and their parameters",
                              NULL};
  opts[no] = (GOptionEntry){NULL, 0, 0, 0, NULL, NULL, NULL};
  cli_parse(&argc, &argv, "NAME",
            "Evaluate an analytic timing model of the seed papers (or of a "
            "collective gradsim simulates) and print its terms. --p takes a "
            "number, a list (2,4,8), a range of every integer (2..64) or a "
            "geometric range (2..1024x2), and prints one row per p. Units "
            "as in SimGrid: 10Gbps, 1.25GBps, 5us, 64MB. 'gradsim formula "
            "--list' lists the formulas.",
            opts);
  for (int k = 0; k < FP_COUNT; k++)
    g_free(descs[k]);
  if (list) {
    no_extra_args(argc, argv, where);
    print_formulas(stdout);
    return 0;
  }
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < formula_count(); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "",
                           formula_at(i)->name);
  if (argc < 2)
    cli_bad_input("%s: name a formula (valid: %s; see gradsim formula "
                  "--list)",
                  where, names->str);
  const struct formula *f = formula_find(argv[1]);
  if (!f)
    cli_bad_input("%s: unknown formula '%s' (valid: %s)", where, argv[1],
                  names->str);
  g_string_free(names, TRUE);
  if (argc > 2)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where,
                  argv[2]);
  bool csv = false;
  if (format && strcmp(format, "csv") == 0)
    csv = true;
  else if (format && strcmp(format, "table") != 0)
    cli_bad_input("%s: --format %s: expected table or csv", where, format);

  struct formula_in in;
  formula_in_init(&in);
  char err[256];
  for (int k = 0; k < FP_COUNT; k++) {
    if (!vals[k] || k == FP_P)
      continue;
    const char *unit = formula_param_unit((enum formula_param)k);
    const char *nm = formula_param_name((enum formula_param)k);
    int rc;
    if (strcmp(unit, "s") == 0)
      rc = units_time(vals[k], &in.v[k], err, sizeof err);
    else if (strcmp(unit, "B") == 0)
      rc = units_size(vals[k], &in.v[k], err, sizeof err);
    else if (strcmp(unit, "s/B") == 0)
      rc = units_time_per_byte(vals[k], &in.v[k], err, sizeof err);
    else {
      char *end;
      in.v[k] = g_ascii_strtod(vals[k], &end);
      rc = (*vals[k] && *end == '\0' && isfinite(in.v[k])) ? 0 : -EINVAL;
      if (rc)
        snprintf(err, sizeof err, "'%s' is not a number", vals[k]);
    }
    if (rc)
      cli_bad_input("%s: --%s: %s", where, nm, err);
  }
  struct {
    char *text;
    enum formula_param param;
    const char *name, *instead;
    bool rate_of_time;
  } alts[] = {{bandwidth, FP_BETA, "bandwidth", "beta", true},
              {bw_intra, FP_BETA_IN, "bandwidth-intra", "beta-intra", true},
              {reduce_rate, FP_GAMMA, "reduce-rate", "gamma", true}};
  for (size_t i = 0; i < G_N_ELEMENTS(alts); i++) {
    if (!alts[i].text)
      continue;
    if (!isnan(in.v[alts[i].param]))
      cli_bad_input("%s: give --%s or --%s, not both", where, alts[i].name,
                    alts[i].instead);
    double rate;
    if (units_bandwidth(alts[i].text, &rate, err, sizeof err) != 0)
      cli_bad_input("%s: --%s: %s", where, alts[i].name, err);
    in.v[alts[i].param] = 1.0 / rate;
  }
  GArray *ps = NULL;
  if (vals[FP_P]) {
    ps = parse_p_list(vals[FP_P]);
    if (!ps)
      cli_bad_input("%s: --p %s: expected a whole number >= 1, a list "
                    "(2,4,8), a range (2..64) or a geometric range "
                    "(2..1024x2)",
                    where, vals[FP_P]);
  } else {
    ps = g_array_new(FALSE, FALSE, sizeof(double));
    double nan = NAN;
    g_array_append_val(ps, nan);
  }

  /* Evaluate everything before printing anything. */
  struct formula_out *outs = g_new(struct formula_out, ps->len);
  for (guint i = 0; i < ps->len; i++) {
    in.v[FP_P] = g_array_index(ps, double, i);
    if (formula_eval(f, &in, &outs[i], err, sizeof err) != 0)
      cli_bad_input("%s: %s", where, err);
  }
  if (csv) {
    printf("formula,p,n_bytes,alpha_s,beta_s_per_byte,gamma_s_per_byte,"
           "total%s",
           *f->unit ? "_s" : "");
    for (size_t t = 0; t < outs[0].nterms; t++)
      printf(",%s", outs[0].terms[t].name);
    printf("\n");
    for (guint i = 0; i < ps->len; i++) {
      /* Parameters the formula does not take are empty fields. */
      double cols[] = {g_array_index(ps, double, i), in.v[FP_N],
                       in.v[FP_ALPHA], in.v[FP_BETA], in.v[FP_GAMMA]};
      printf("%s", f->name);
      for (size_t c = 0; c < G_N_ELEMENTS(cols); c++)
        if (isnan(cols[c]))
          printf(",");
        else
          printf(",%.17g", cols[c]);
      printf(",%.17g", outs[i].total);
      for (size_t t = 0; t < outs[i].nterms; t++)
        printf(",%.17g", outs[i].terms[t].value);
      printf("\n");
    }
  } else {
    printf("%s (%s)\n  %s\n", f->name, f->source, f->expression);
    for (size_t t = 0; t < outs[0].nterms; t++)
      printf("  %-16s %s\n", outs[0].terms[t].name, outs[0].terms[t].expr);
    printf("\n%8s %14s", "p", *f->unit ? "total (s)" : "total");
    for (size_t t = 0; t < outs[0].nterms; t++)
      printf(" %14s", outs[0].terms[t].name);
    printf("\n");
    for (guint i = 0; i < ps->len; i++) {
      printf("%8.0f %14.6g", g_array_index(ps, double, i), outs[i].total);
      for (size_t t = 0; t < outs[i].nterms; t++)
        printf(" %14.6g", outs[i].terms[t].value);
      printf("\n");
    }
  }
  g_free(outs);
  g_array_free(ps, TRUE);
  for (int k = 0; k < FP_COUNT; k++)
    g_free(vals[k]);
  g_free(bandwidth);
  g_free(bw_intra);
  g_free(reduce_rate);
  g_free(format);
  return 0;
}

/* ---- gradient distribution options (shared with the simulator) ------- */

struct grad_opts {
  char *dist;
  double scale, nu, zeros, corr, decay;
  gint64 seed;
};

static void grad_opts_apply(const struct grad_opts *o,
                            struct gradgen_params *p, const char *where) {
  gradgen_defaults(p);
  if (o->dist && gradgen_dist_parse(o->dist, &p->dist) != 0)
    cli_bad_input("%s: --dist %s: expected normal, laplace, student or "
                  "spike",
                  where, o->dist);
  if (!isnan(o->scale))
    p->scale = o->scale;
  if (!isnan(o->nu))
    p->nu = o->nu;
  if (!isnan(o->zeros))
    p->zeros = o->zeros;
  if (!isnan(o->corr))
    p->corr = o->corr;
  if (!isnan(o->decay))
    p->decay = o->decay;
  if (o->seed < 0)
    cli_bad_input("%s: --seed %" G_GINT64_FORMAT " must be >= 0", where,
                  o->seed);
  p->seed = (uint64_t)o->seed;
  char err[256];
  if (gradgen_validate(p, err, sizeof err) != 0)
    cli_bad_input("%s: %s", where, err);
}

/* ---- gradients -------------------------------------------------------- */

int cli_gradients(int argc, char **argv) {
  const char *where = "gradients";
  char *model_name = NULL, *tensor = NULL, *out = NULL;
  gint64 worker = 0, iteration = 0;
  struct grad_opts g = {NULL, NAN, NAN, NAN, NAN, NAN, 1};
  GOptionEntry opts[] = {
      {"model", 'm', 0, G_OPTION_ARG_STRING, &model_name,
       "model name or .model file (see gradsim model list)", "M"},
      {"worker", 'w', 0, G_OPTION_ARG_INT64, &worker, "worker (default 0)",
       "W"},
      {"iteration", 'i', 0, G_OPTION_ARG_INT64, &iteration,
       "iteration (default 0)", "T"},
      {"tensor", 't', 0, G_OPTION_ARG_STRING, &tensor,
       "one tensor (default: all, in backward order)", "NAME"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "output .npy or .f32",
       "FILE"},
      {"dist", 0, 0, G_OPTION_ARG_STRING, &g.dist,
       "normal, laplace (default), student or spike", "D"},
      {"scale", 0, 0, G_OPTION_ARG_DOUBLE, &g.scale,
       "scale of the distribution (default 5e-4)", "S"},
      {"nu", 0, 0, G_OPTION_ARG_DOUBLE, &g.nu,
       "Student-t degrees of freedom (default 3)", "NU"},
      {"zeros", 0, 0, G_OPTION_ARG_DOUBLE, &g.zeros,
       "spike-and-slab: fraction of exact zeros (default 0.5)", "Z"},
      {"corr", 0, 0, G_OPTION_ARG_DOUBLE, &g.corr,
       "correlation between workers in [0, 1] (default 0)", "C"},
      {"decay", 0, 0, G_OPTION_ARG_DOUBLE, &g.decay,
       "scale factor per iteration in (0, 1] (default 1)", "D"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &g.seed, "seed (default 1)", "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "",
            "Write the synthetic gradient of one worker at one iteration "
            "(one tensor, or every tensor of the model concatenated in "
            "backward order) for inspection or for 'gradsim codec'.",
            opts);
  no_extra_args(argc, argv, where);
  if (!model_name || !out)
    cli_bad_input("%s: --model M and --out FILE are required", where);
  bool npy = g_str_has_suffix(out, ".npy");
  if (!npy && !g_str_has_suffix(out, ".f32"))
    cli_bad_input("%s: --out %s: expected a name ending in .npy or .f32",
                  where, out);
  if (worker < 0 || worker > UINT32_MAX)
    cli_bad_input("%s: --worker %" G_GINT64_FORMAT " must be in 0..%u",
                  where, worker, UINT32_MAX);
  if (iteration < 0)
    cli_bad_input("%s: --iteration %" G_GINT64_FORMAT " must be >= 0", where,
                  iteration);
  struct gradgen_params gp;
  grad_opts_apply(&g, &gp, where);
  struct model *m;
  char err[512];
  if (model_load(model_name, NULL, &m, err, sizeof err) != 0)
    cli_bad_input("%s: %s", where, err);
  size_t first = 0, last = m->ntensors;
  if (tensor) {
    size_t i = 0;
    while (i < m->ntensors && strcmp(m->tensors[i].name, tensor) != 0)
      i++;
    if (i == m->ntensors)
      cli_bad_input("%s: model %s has no tensor '%s' (see gradsim model "
                    "show %s)",
                    where, m->name, tensor, m->name);
    first = i;
    last = i + 1;
  }
  uint64_t n = 0;
  for (size_t i = first; i < last; i++)
    n += m->tensors[i].elements;

  /* Stream to a temporary file next to OUT, renamed at the end: memory
   * stays at one chunk, and an error leaves nothing behind. */
  char *dir = g_path_get_dirname(out);
  char *tmpl = g_build_filename(dir, ".gradsim-XXXXXX", NULL);
  int fd = g_mkstemp(tmpl);
  if (fd < 0)
    cli_env_failure("%s: cannot create a file in %s: %s", where, dir,
                    g_strerror(errno));
  /* mkstemp makes the file private; give it the mode any new file gets. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  FILE *f = fdopen(fd, "wb");
  bool ok = f != NULL;
  if (ok && npy) {
    unsigned char hdr[NPY_HEADER_MAX];
    size_t hl = npy_header(n, hdr);
    ok = fwrite(hdr, 1, hl, f) == hl;
  }
  enum { CHUNK = 1 << 20 };
  float *buf = g_new(float, CHUNK);
  for (size_t i = first; i < last && ok; i++)
    for (uint64_t off = 0; off < m->tensors[i].elements && ok; off += CHUNK) {
      size_t c = (size_t)MIN((uint64_t)CHUNK, m->tensors[i].elements - off);
      ok = gradgen_fill(&gp, (uint32_t)worker, (uint32_t)i,
                        (uint64_t)iteration, 1.0, off, buf, c) == 0 &&
           fwrite(buf, sizeof(float), c, f) == c;
    }
  g_free(buf);
  if (f && fclose(f) != 0)
    ok = false;
  if (!ok || g_rename(tmpl, out) != 0) {
    g_unlink(tmpl);
    cli_env_failure("%s: writing %s failed: %s", where, out,
                    g_strerror(errno));
  }
  g_free(tmpl);
  g_free(dir);
  model_free(m);
  g_free(model_name);
  g_free(tensor);
  g_free(out);
  g_free(g.dist);
  return 0;
}

/* ---- model ------------------------------------------------------------ */

int cli_model(int argc, char **argv) {
  const char *where = "model";
  char *device = NULL, *precision = NULL, *format = NULL;
  gint64 batch = 0;
  GOptionEntry opts[] = {
      {"device", 'd', 0, G_OPTION_ARG_STRING, &device,
       "device to time on (default P100; see models/devices.conf)", "D"},
      {"precision", 0, 0, G_OPTION_ARG_STRING, &precision,
       "fp32 (default) or mixed", "P"},
      {"batch", 'b', 0, G_OPTION_ARG_INT64, &batch,
       "per-worker batch (default: the model file's)", "B"},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &format,
       "table (default) or csv", "FORMAT"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "list | show NAME",
            "List the DNN workloads, or show one: its gradient tensors in "
            "backward order with their sizes and backward times, and its "
            "forward, backward and update times on a device.",
            opts);
  if (argc < 2 ||
      (strcmp(argv[1], "list") != 0 && strcmp(argv[1], "show") != 0))
    cli_bad_input("%s: expected 'list' or 'show NAME' (see gradsim model "
                  "--help)",
                  where);
  if (batch < 0 || batch > 1000000)
    cli_bad_input("%s: --batch %" G_GINT64_FORMAT " must be in 1..1000000",
                  where, batch);
  bool csv = false;
  if (format && strcmp(format, "csv") == 0)
    csv = true;
  else if (format && strcmp(format, "table") != 0)
    cli_bad_input("%s: --format %s: expected table or csv", where, format);
  struct model_opts mo = {device, precision, (int)batch, NULL};
  char err[512];
  if (strcmp(argv[1], "list") == 0) {
    no_extra_args(argc - 1, argv + 1, where);
    char *names = model_list(&mo);
    char **list = g_strsplit(names, ", ", -1);
    /* Load every model first: a bad --device or --precision must stop
     * before anything is printed. */
    GPtrArray *ms = g_ptr_array_new_with_free_func((GDestroyNotify)model_free);
    for (char **n = list; *n; n++) {
      struct model *m;
      if (model_load(*n, &mo, &m, err, sizeof err) != 0)
        cli_bad_input("%s: %s", where, err);
      g_ptr_array_add(ms, m);
    }
    if (csv)
      printf("model,dataset,params,mbytes,tensors,batch,forward_s,"
             "backward_s,update_s\n");
    else
      printf("%-18s %-10s %12s %9s %8s %6s %11s %11s %11s\n", "model",
             "dataset", "params", "MB", "tensors", "batch", "forward s",
             "backward s", "update s");
    for (guint i = 0; i < ms->len; i++) {
      struct model *m = g_ptr_array_index(ms, i);
      if (csv)
        printf("%s,%s,%" PRIu64 ",%.6g,%zu,%d,%.6g,%.6g,%.6g\n", m->name,
               m->dataset, m->params, 4e-6 * (double)m->params, m->ntensors,
               m->batch, m->forward_s, m->backward_s, m->update_s);
      else
        printf("%-18s %-10s %12" PRIu64 " %9.2f %8zu %6d %11.4g %11.4g "
               "%11.4g\n",
               m->name, m->dataset, m->params, 4e-6 * (double)m->params,
               m->ntensors, m->batch, m->forward_s, m->backward_s,
               m->update_s);
    }
    g_ptr_array_free(ms, TRUE);
    if (!csv)
      printf("\nTimes per iteration on %s (%s). 'synthetic' takes params, "
             "tensors, compute and update in an experiment.\n",
             device ? device : "P100", precision ? precision : "fp32");
    g_strfreev(list);
    g_free(names);
  } else {
    if (argc < 3)
      cli_bad_input("%s: show needs a model name (see gradsim model list)",
                    where);
    no_extra_args(argc - 2, argv + 2, where);
    struct model *m;
    if (model_load(argv[2], &mo, &m, err, sizeof err) != 0)
      cli_bad_input("%s: %s", where, err);
    if (csv) {
      printf("tensor,elements,layer,backward_s\n");
      for (size_t i = 0; i < m->ntensors; i++)
        printf("%s,%" PRIu64 ",%s,%.6g\n", m->tensors[i].name,
               m->tensors[i].elements, m->layers[m->tensors[i].layer].name,
               m->tensors[i].backward_s);
    } else {
      printf("%s (%s): %" PRIu64 " parameters (%.2f MB of fp32), %zu "
             "gradient tensors, %zu layers\n",
             m->name, m->path, m->params, 4e-6 * (double)m->params,
             m->ntensors, m->nlayers);
      printf("on %s %s at batch %d: forward %.4g s, backward %.4g s, update "
             "%.4g s per iteration\n  %s\n\n",
             m->device, m->precision, m->batch, m->forward_s, m->backward_s,
             m->update_s, m->timing_source);
      printf("%-28s %12s %-20s %12s\n", "tensor (backward order)",
             "elements", "layer", "backward s");
      for (size_t i = 0; i < m->ntensors; i++)
        printf("%-28s %12" PRIu64 " %-20s %12.4g\n", m->tensors[i].name,
               m->tensors[i].elements, m->layers[m->tensors[i].layer].name,
               m->tensors[i].backward_s);
    }
    model_free(m);
  }
  g_free(device);
  g_free(precision);
  g_free(format);
  return 0;
}

