/* cli/models.c: the commands over models/: `gradsim gradients` and
 * `gradsim model`. */
#include "cli.h"

#include "array_io.h"
#include "gradgen.h"
#include "model.h"

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

