/* cli/model.c: `gradsim model list | show NAME`: the DNN workloads of
 * models/ (model.h, model_catalog.h), timed on a device, as a table or
 * CSV. */
#include "cli.h"

#include "memory.h"
#include "model.h"
#include "model_catalog.h"
#include "model_import.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct model_args {
  char *device, *precision, *format;
  gint64 batch;
  /* import */
  char **safetensors;
  char *config, *list, *name, *out;
  gint64 seq_len;
  /* show: memory per GPU */
  char *optimizer;
  gint64 stage, gpus;
  gboolean checkpoint;
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
      {"safetensors", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->safetensors,
       "import: a safetensors file (its header is read; once per shard)",
       "FILE"},
      {"config", 0, 0, G_OPTION_ARG_FILENAME, &a->config,
       "import: a Hugging Face config.json (gpt2, bert, llama, mistral)",
       "FILE"},
      {"list", 0, 0, G_OPTION_ARG_FILENAME, &a->list,
       "import: a list of 'NAME SHAPE DTYPE' lines", "FILE"},
      {"name", 0, 0, G_OPTION_ARG_STRING, &a->name,
       "import: the model's name (default: the output file's)", "NAME"},
      {"seq-len", 0, 0, G_OPTION_ARG_INT64, &a->seq_len,
       "import: tokens per sample (default: the config's context, or a "
       "position table's rows)",
       "N"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out,
       "import: the model file to write", "FILE.model"},
      {"optimizer", 0, 0, G_OPTION_ARG_STRING, &a->optimizer,
       "show: the optimizer whose states and update count: sgd, momentum "
       "(default), adam, adamw",
       "O"},
      {"stage", 0, 0, G_OPTION_ARG_INT64, &a->stage,
       "show: ZeRO stage the memory is for: 0 (replicated, default), 1 "
       "(optimizer states sharded), 2 (and gradients), 3 (and parameters: "
       "FSDP's FULL_SHARD)",
       "S"},
      {"gpus", 0, 0, G_OPTION_ARG_INT64, &a->gpus,
       "show: GPUs the sharded states are divided among (default 1)", "N"},
      {"checkpoint", 0, 0, G_OPTION_ARG_NONE, &a->checkpoint,
       "show: activation checkpointing (each block keeps its input; "
       "backward recomputes forward)",
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(argc, argv, "list | show NAME | import (--safetensors FILE... | "
            "--config FILE | --list FILE) --out FILE.model",
            "List the DNN workloads, or show one: its gradient tensors in "
            "backward order with their sizes, shapes and backward times, and "
            "its forward, backward and update times on a device. Import "
            "writes a model file from a safetensors checkpoint's header, a "
            "Hugging Face config.json or a parameter list.",
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
  return t->ndims ? model_format_shape(t->dims, t->ndims, buf, len) : "-";
}

/* One GPU's memory for M under O, a line. */
static void print_memory(const struct model *m, const struct memory_opts *o) {
  struct memory mem;
  model_memory(m, o, &mem);
  printf("memory per GPU (%s, ZeRO stage %d over %d GPU%s%s): parameters "
         "%.4g GB, gradients %.4g GB, optimizer states %.4g GB, "
         "activations ",
         optimizer_names[o->optimizer], o->stage, o->shards,
         o->shards == 1 ? "" : "s",
         o->checkpoint ? ", activation checkpointing" : "", mem.params / 1e9,
         mem.grads / 1e9, mem.optimizer / 1e9);
  if (mem.activations_known)
    printf("%.4g GB", mem.activations / 1e9);
  else
    printf("not modelled");
  if (o->stage >= 3)
    printf(", gathered units %.4g GB", mem.buffers / 1e9);
  printf(", total %.4g GB", mem.total / 1e9);
  if (m->capacity > 0)
    printf(" of the %s's %.4g GB: %s", m->device, m->capacity / 1e9,
           mem.total <= m->capacity ? "fits" : "does not fit");
  printf("\n");
}

static void print_show(const struct model *m, const struct memory_opts *o,
                       bool csv) {
  char shape[MODEL_SHAPE_TEXT_MAX];
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
         "%.4g s per iteration\n  %s\n",
         m->device, m->precision, m->batch, m->forward_s, m->backward_s,
         m->update_s, m->timing_source);
  print_memory(m, o);
  printf("\n");
  printf("%-28s %12s %-20s %12s  %s\n", "tensor (backward order)",
         "elements", "layer", "backward s", "shape");
  for (size_t i = 0; i < m->ntensors; i++)
    printf("%-28s %12" PRIu64 " %-20s %12.4g  %s\n", m->tensors[i].name,
           m->tensors[i].elements, m->layers[m->tensors[i].layer].name,
           m->tensors[i].backward_s,
           shape_text(&m->tensors[i], shape, sizeof shape));
}

/* `gradsim model import`: the tensors by one route, the model file's text,
 * checked by loading it as gradsim will, then written. */
static void import_model(const struct model_args *a) {
  const char *where = "model import";
  int routes = (a->safetensors != NULL) + (a->config != NULL) +
               (a->list != NULL);
  if (routes != 1)
    cli_bad_input("%s: give exactly one of --safetensors FILE (repeated for "
                  "the shards of one checkpoint), --config FILE or --list "
                  "FILE",
                  where);
  if (!a->out || !g_str_has_suffix(a->out, ".model"))
    cli_bad_input("%s: --out FILE.model names the model file to write", where);
  if (a->seq_len < 0 || a->seq_len > 100000000)
    cli_bad_input("%s: --seq-len %" G_GINT64_FORMAT " must be in 1..1e8",
                  where, a->seq_len);
  if (a->batch < 0 || a->batch > 1000000)
    cli_bad_input("%s: --batch %" G_GINT64_FORMAT " must be in 1..1000000",
                  where, a->batch);
  char *base = g_path_get_basename(a->out);
  base[strlen(base) - strlen(".model")] = '\0';
  const char *name = a->name ? a->name : base;
  for (const char *c = name; *c; c++)
    if (!g_ascii_isalnum(*c) && !strchr("-_.", *c))
      cli_bad_input("%s: model name '%s' may hold letters, digits, '-', '_' "
                    "and '.' only",
                    where, name);
  if (!*name)
    cli_bad_input("%s: the model needs a name (--name)", where);
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  struct import_info info = {.name = g_strdup(name),
                             .seq_len = (uint64_t)a->seq_len,
                             .batch = (int)a->batch};
  char err[1024];
  int rc;
  size_t skipped = 0;
  if (a->safetensors) {
    rc = import_safetensors((const char *const *)a->safetensors,
                            g_strv_length(a->safetensors), t, &skipped, err,
                            sizeof err);
    info.source = g_strdup_printf("the header of %s%s", a->safetensors[0],
                                  a->safetensors[1] ? " and its shards" : "");
  } else if (a->config) {
    rc = import_config(a->config, t, &info, err, sizeof err);
    info.source = g_strdup_printf("the Hugging Face config %s", a->config);
  } else {
    rc = import_list(a->list, t, err, sizeof err);
    info.source = g_strdup_printf("the parameter list %s", a->list);
  }
  if (rc)
    cli_bad_input("%s: %s", where, err);
  char *text = import_model_text(t, &info, err, sizeof err);
  if (!text)
    cli_bad_input("%s: %s", where, err);
  /* What gradsim would read back: a model it cannot time is no import. */
  struct model *m;
  struct model_opts mo = {.device = a->device, .precision = a->precision};
  if (model_load_data(a->out, text, strlen(text), &mo, &m, err, sizeof err))
    cli_bad_input("%s: the imported model does not load: %s", where, err);
  cli_outputs *o = cli_outputs_new();
  cli_outputs_add(o, a->out, text, strlen(text));
  cli_outputs_commit(o);
  printf("%s: %s, %" PRIu64 " parameters in %zu tensors, %zu layers, "
         "%" PRIu64 " tokens per sample%s",
         a->out, *info.family ? info.family : "unknown family", m->params,
         m->ntensors, m->nlayers, info.seq_len,
         info.tied_head ? ", head tied to the embedding" : "");
  if (skipped)
    printf("; %zu non-float buffers left out", skipped);
  printf("\n");
  model_free(m);
  import_info_clear(&info);
  g_ptr_array_free(t, TRUE);
  g_free(base);
}

int cli_model(int argc, char **argv) {
  const char *where = "model";
  struct model_args a = {0};
  model_parse(&argc, &argv, &a);
  if (argc >= 2 && strcmp(argv[1], "import") == 0) {
    cli_no_extra_args(argc - 1, argv + 1, "model import");
    import_model(&a);
    return 0;
  }
  if (a.safetensors || a.config || a.list || a.name || a.out || a.seq_len)
    cli_bad_input("%s: --safetensors, --config, --list, --name, --seq-len "
                  "and --out belong to 'model import'",
                  where);
  if (argc < 2 ||
      (strcmp(argv[1], "list") != 0 && strcmp(argv[1], "show") != 0))
    cli_bad_input("%s: expected 'list', 'show NAME' or 'import' (see "
                  "gradsim model --help)",
                  where);
  if (a.batch < 0 || a.batch > 1000000)
    cli_bad_input("%s: --batch %" G_GINT64_FORMAT " must be in 1..1000000",
                  where, a.batch);
  bool csv = cli_format_csv(a.format, where);
  struct model_opts mo = {.device = a.device,
                          .precision = a.precision,
                          .batch = (int)a.batch};
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
    int opt = optimizer_find(a.optimizer ? a.optimizer : "momentum");
    if (opt < 0)
      cli_bad_input("%s: --optimizer %s must be one of sgd, momentum, adam, "
                    "adamw",
                    where, a.optimizer);
    if (a.stage < 0 || a.stage > 3)
      cli_bad_input("%s: --stage %" G_GINT64_FORMAT " must be 0, 1, 2 or 3",
                    where, a.stage);
    if (a.gpus < 0 || a.gpus > 10000000)
      cli_bad_input("%s: --gpus %" G_GINT64_FORMAT " must be in 1..1e7",
                    where, a.gpus);
    struct model *m;
    if (model_load(argv[2], &mo, &m, err, sizeof err) != 0)
      cli_bad_input("%s: %s", where, err);
    /* The update as the optimizer streams it, on the shard a GPU holds
     * from stage 1 on. */
    int gpus = a.gpus ? (int)a.gpus : 1;
    m->update_s = optimizer_update_s((enum optimizer)opt,
                                     (double)m->params /
                                         (a.stage >= 1 ? gpus : 1),
                                     m->memory_Bps, m->fp32_flops);
    if (a.checkpoint) /* the recompute, as a run charges it (sim/run.c) */
      m->backward_s += m->forward_s;
    struct memory_opts o = {.optimizer = (enum optimizer)opt,
                            .precision = m->precision,
                            .stage = (int)a.stage,
                            .shards = gpus,
                            .batch = m->batch,
                            .checkpoint = a.checkpoint,
                            /* Stage 3: FSDP's blocks, the next one
                             * prefetched (mode = overlap's). */
                            .unit_params =
                                (double)model_largest_unit(m, false),
                            .units_held = 2};
    print_show(m, &o, csv);
    model_free(m);
  }
  g_free(a.device);
  g_free(a.precision);
  g_free(a.format);
  g_free(a.optimizer);
  return 0;
}
