/* cli/model.c: `gradsim model list | show NAME`: the DNN workloads of
 * models/ (model.h, model_catalog.h), timed on a device, as a table or
 * CSV. */
#include "cli.h"

#include "model.h"
#include "model_catalog.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct model_args {
  char *device, *precision, *format;
  gint64 batch;
};

/* The options of `gradsim model` into A; exit 2 on an unknown option or
 * a malformed value. */
static void model_parse(int *argc, char ***argv, struct model_args *a) {
  GOptionEntry opts[] = {
      {"device", 'd', 0, G_OPTION_ARG_STRING, &a->device,
       "device to time on (default P100; see models/devices.conf)", "D"},
      {"precision", 0, 0, G_OPTION_ARG_STRING, &a->precision,
       "fp32 (default) or mixed", "P"},
      {"batch", 'b', 0, G_OPTION_ARG_INT64, &a->batch,
       "per-worker batch (default: the model file's)", "B"},
      {"format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
       "table (default) or csv", "FORMAT"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(argc, argv, "list | show NAME",
            "List the DNN workloads, or show one: its gradient tensors in "
            "backward order with their sizes and backward times, and its "
            "forward, backward and update times on a device.",
            opts);
}

static void print_list(const struct model_catalog *cat, bool csv,
                       const struct model_args *a) {
  if (csv)
    printf("model,dataset,params,mbytes,tensors,batch,forward_s,"
           "backward_s,update_s\n");
  else
    printf("%-18s %-10s %12s %9s %8s %6s %11s %11s %11s\n", "model", "dataset",
           "params", "MB", "tensors", "batch", "forward s", "backward s",
           "update s");
  for (size_t i = 0; i < cat->n; i++) {
    const struct model *m = cat->models[i];
    if (csv)
      printf("%s,%s,%" PRIu64 ",%.6g,%zu,%d,%.6g,%.6g,%.6g\n", m->name,
             m->dataset, m->params, 4e-6 * (double)m->params, m->ntensors,
             m->batch, m->forward_s, m->backward_s, m->update_s);
    else
      printf("%-18s %-10s %12" PRIu64 " %9.2f %8zu %6d %11.4g %11.4g "
             "%11.4g\n",
             m->name, m->dataset, m->params, 4e-6 * (double)m->params,
             m->ntensors, m->batch, m->forward_s, m->backward_s, m->update_s);
  }
  if (!csv)
    printf("\nTimes per iteration on %s (%s). 'synthetic' takes params, "
           "tensors, compute and update in an experiment.\n",
           a->device ? a->device : "P100", a->precision ? a->precision : "fp32");
}

/* A tensor's shape as written in a model file ("512x256x3x3"; "-" when
 * the file gives none), into BUF. */
static const char *shape_text(const struct model_tensor *t, char *buf,
                              size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t d = 0; d < t->ndims && used < len; d++)
    used += (size_t)snprintf(buf + used, len - used, "%s%" PRIu64,
                             d ? "x" : "", t->dims[d]);
  return t->ndims ? buf : "-";
}

static void print_show(const struct model *m, bool csv) {
  char shape[MODEL_MAX_DIMS * 21];
  if (csv) {
    printf("tensor,elements,layer,backward_s,shape\n");
    for (size_t i = 0; i < m->ntensors; i++)
      printf("%s,%" PRIu64 ",%s,%.6g,%s\n", m->tensors[i].name,
             m->tensors[i].elements, m->layers[m->tensors[i].layer].name,
             m->tensors[i].backward_s,
             shape_text(&m->tensors[i], shape, sizeof shape));
    return;
  }
  printf("%s (%s): %" PRIu64 " parameters (%.2f MB of fp32), %zu "
         "gradient tensors, %zu layers\n",
         m->name, m->path, m->params, 4e-6 * (double)m->params, m->ntensors,
         m->nlayers);
  printf("on %s %s at batch %d: forward %.4g s, backward %.4g s, update "
         "%.4g s per iteration\n  %s\n\n",
         m->device, m->precision, m->batch, m->forward_s, m->backward_s,
         m->update_s, m->timing_source);
  printf("%-28s %12s %-20s %12s  %s\n", "tensor (backward order)",
         "elements", "layer", "backward s", "shape");
  for (size_t i = 0; i < m->ntensors; i++)
    printf("%-28s %12" PRIu64 " %-20s %12.4g  %s\n", m->tensors[i].name,
           m->tensors[i].elements, m->layers[m->tensors[i].layer].name,
           m->tensors[i].backward_s,
           shape_text(&m->tensors[i], shape, sizeof shape));
}

int cli_model(int argc, char **argv) {
  const char *where = "model";
  struct model_args a = {NULL, NULL, NULL, 0};
  model_parse(&argc, &argv, &a);
  if (argc < 2 ||
      (strcmp(argv[1], "list") != 0 && strcmp(argv[1], "show") != 0))
    cli_bad_input("%s: expected 'list' or 'show NAME' (see gradsim model "
                  "--help)",
                  where);
  if (a.batch < 0 || a.batch > 1000000)
    cli_bad_input("%s: --batch %" G_GINT64_FORMAT " must be in 1..1000000",
                  where, a.batch);
  bool csv = cli_format_csv(a.format, where);
  struct model_opts mo = {a.device, a.precision, (int)a.batch, NULL};
  char err[512];
  if (strcmp(argv[1], "list") == 0) {
    cli_no_extra_args(argc - 1, argv + 1, where);
    /* Every model is loaded first: a bad --device or --precision stops
     * before anything is printed. */
    struct model_catalog cat;
    if (model_catalog_load(&mo, &cat, err, sizeof err) != 0)
      cli_bad_input("%s: %s", where, err);
    print_list(&cat, csv, &a);
    model_catalog_fini(&cat);
  } else {
    if (argc < 3)
      cli_bad_input("%s: show needs a model name (see gradsim model list)",
                    where);
    cli_no_extra_args(argc - 2, argv + 2, where);
    struct model *m;
    if (model_load(argv[2], &mo, &m, err, sizeof err) != 0)
      cli_bad_input("%s: %s", where, err);
    print_show(m, csv);
    model_free(m);
  }
  g_free(a.device);
  g_free(a.precision);
  g_free(a.format);
  return 0;
}
