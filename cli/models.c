/* cli/models.c: `gradsim model`. */
#include "cli.h"

#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>


static void no_extra_args(int argc, char **argv, const char *where) {
  if (argc > 1)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where,
                  argv[1]);
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

