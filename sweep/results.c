/* sweep/results.c: runs.csv's row of a point, and the result files of a
 * sweep joined from its points' files (docs/outputs.md). */
#include "sweep_impl.h"

#include "memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

static const char RUNS_HEADER[] =
    "point,model,nodes,aggregators,topology,bandwidth_bps,latency_s,"
    "algorithm,codec,placement,payload,mode,iterations,fusion_bytes,k,"
    "local_steps,seed,exchange_s,iteration_s,compute_s,codec_s,comm_s,"
    "reduce_s,idle_s,wire_bytes,formula_exchange_s,formula_rel_err,oracle,"
    "fast_forwarded_steps,packets,header_bytes,driver_s,nic_s,nic_busy,"
    "nic_stall_cycles,fast_forwarded_iterations,device,precision,"
    "grad_dtype,split_compute_s,exposed_comm_s,exposed_codec_s,"
    "exposed_reduce_s,split_idle_s,aggr_reduce_s,fast_forwarded_buckets,"
    "compression,implementation,optimizer,activation_checkpointing,sharding,"
    "memory_params_bytes,memory_grads_bytes,memory_optimizer_bytes,"
    "memory_activations_bytes,memory_residual_bytes,memory_bytes,"
    "capacity_bytes,fits,memory_buffers_bytes\n";
static const char ITER_HEADER[] =
    "point,iteration,worker,start_s,end_s,compute_s,codec_s,comm_s,"
    "reduce_s,idle_s,exchange_s,wire_bytes\n";
static const char LINKS_HEADER[] =
    "point,link,bytes,mean_bytes_per_s,utilisation\n";
static const char NCCL_HEADER[] =
    "point,collective,bytes,algorithm,protocol,channels,calls,model_us,"
    "time_us\n";

char *point_file(const char *out, const struct point *p, const char *ext) {
  char *name = g_strconcat(p->hash, ext, NULL);
  char *path = g_build_filename(out, "points", name, NULL);
  g_free(name);
  return path;
}

static const char *topo_name(const struct point *p) {
  return topology_name(p->topology);
}

void csv_text(GString *s, const char *v) {
  if (!strpbrk(v, ",\"\n")) {
    g_string_append(s, v);
    return;
  }
  g_string_append_c(s, '"');
  for (; *v; v++) {
    if (*v == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *v);
  }
  g_string_append_c(s, '"');
}

static void csv_num(GString *s, double v) {
  if (isfinite(v))
    g_string_append_printf(s, ",%.9g", v);
  else
    g_string_append(s, ",");
}

/* The point's configuration columns, model to seed. */
static void config_fields(GString *s, const struct point *p) {
  csv_text(s, p->model);
  g_string_append_printf(s, ",%d,%d,%s", p->nodes, p->aggregators,
                         topo_name(p));
  csv_num(s, 8 * p->bandwidth_Bps);
  csv_num(s, p->latency_s);
  g_string_append_c(s, ',');
  csv_text(s, p->algorithm);
  g_string_append_c(s, ',');
  csv_text(s, p->codec);
  g_string_append_printf(s, ",%s,%s,%s,%d", placement_names[p->placement],
                         payload_names[p->payload], mode_names[p->mode],
                         p->iterations);
  if (isinf(p->fusion_bytes))
    g_string_append(s, ",all");
  else
    csv_num(s, p->fusion_bytes);
  g_string_append_printf(s, ",%d,%d,%" G_GUINT64_FORMAT, p->k,
                         p->local_steps, p->grad.seed);
}

char *results_row(const struct point *p, const struct run_result *r) {
  GString *s = g_string_new(NULL);
  config_fields(s, p);
  csv_num(s, r->exchange_s);
  csv_num(s, r->iteration_s);
  csv_num(s, r->compute_s);
  csv_num(s, r->codec_s);
  csv_num(s, r->comm_s);
  csv_num(s, r->reduce_s);
  csv_num(s, r->idle_s);
  csv_num(s, r->wire_bytes);
  csv_num(s, r->formula_s);
  csv_num(s, isfinite(r->formula_s) && r->formula_s > 0
                 ? fabs(r->exchange_s - r->formula_s) / r->formula_s
                 : NAN);
  g_string_append_printf(s, ",%s,%" G_GUINT64_FORMAT, r->oracle,
                         r->ff_steps);
  csv_num(s, r->packets);
  csv_num(s, r->header_bytes);
  csv_num(s, r->driver_s);
  csv_num(s, r->nic_s);
  csv_num(s, r->nic_busy);
  csv_num(s, r->nic_stall_cycles);
  g_string_append_printf(s, ",%" G_GUINT64_FORMAT ",", r->ff_iterations);
  csv_text(s, p->device);
  g_string_append_c(s, ',');
  csv_text(s, p->precision);
  g_string_append_printf(s, ",%s", p->grad_dtype);
  csv_num(s, r->split_compute_s);
  csv_num(s, r->exposed_comm_s);
  csv_num(s, r->exposed_codec_s);
  csv_num(s, r->exposed_reduce_s);
  csv_num(s, r->split_idle_s);
  csv_num(s, r->aggr_reduce_s);
  g_string_append_printf(s, ",%" G_GUINT64_FORMAT ",%s,%s,%s,%s,%s",
                         r->ff_buckets, compression_names[p->compression],
                         implementation_names[p->implementation],
                         optimizer_names[p->optimizer],
                         p->checkpoint ? "true" : "false",
                         sharding_names[p->sharding]);
  csv_num(s, r->mem_params);
  csv_num(s, r->mem_grads);
  csv_num(s, r->mem_optimizer);
  csv_num(s, r->mem_activations);
  csv_num(s, r->mem_residual);
  csv_num(s, r->mem_total);
  csv_num(s, r->capacity);
  g_string_append_printf(s, ",%s", run_fits(r));
  csv_num(s, r->mem_buffers);
  g_string_append_c(s, '\n');
  return g_string_free(s, FALSE);
}

GPtrArray *csv_split(const char *c) {
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  for (;;) {
    GString *field = g_string_new(NULL);
    if (*c == '"') {
      for (c++; *c && !(*c == '"' && c[1] != '"'); c++) {
        if (*c == '"')
          c++;
        g_string_append_c(field, *c);
      }
      if (*c)
        c++;
    } else {
      while (*c && *c != ',')
        g_string_append_c(field, *c++);
    }
    g_ptr_array_add(f, g_string_free(field, FALSE));
    if (*c != ',')
      break;
    c++;
  }
  return f;
}

void csv_row_free_cb(gpointer row) { g_ptr_array_unref(row); }

bool results_row_current(const char *text) {
  char *line = g_strndup(text, strcspn(text, "\n"));
  GPtrArray *f = csv_split(line);
  bool ok = f->len + 1 == NCOLS;
  g_ptr_array_unref(f);
  g_free(line);
  return ok;
}

GPtrArray *sweep_runs_columns(void) {
  char *line = g_strndup(RUNS_HEADER, strcspn(RUNS_HEADER, "\n"));
  GPtrArray *f = csv_split(line);
  g_free(line);
  return f;
}

static char *read_text(const char *path) {
  char *t = NULL;
  g_file_get_contents(path, &t, NULL, NULL);
  return t ? t : g_strdup("");
}

GPtrArray *sweep_point_row(const char *out, const struct point *p,
                           unsigned index) {
  /* Read once: done is a row with this version's columns (point_done). */
  char *path = point_file(out, p, ".row"), *text = read_text(path);
  g_free(path);
  GPtrArray *f = NULL;
  if (results_row_current(text)) {
    char *line =
        g_strdup_printf("%u,%.*s", index, (int)strcspn(text, "\n"), text);
    f = csv_split(line);
    g_free(line);
  }
  g_free(text);
  return f;
}

static void prefix_lines(GString *out, guint index, const char *text) {
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      g_string_append_printf(out, "%u,%s\n", index, *l);
  g_strfreev(lines);
}

/* The joined texts of a sweep's result files. */
struct joined {
  GString *runs, *iters, *links, *nccl, *notes;
};

/* Each point's row, iteration and link lines, and oracle note, in sweep
 * order. */
static void join_points(const char *out, const struct experiment *e,
                        struct joined *j) {
  j->runs = g_string_new(RUNS_HEADER);
  j->iters = g_string_new(ITER_HEADER);
  j->links = g_string_new(LINKS_HEADER);
  j->nccl = g_string_new(NCCL_HEADER);
  j->notes = g_string_new(NULL);
  for (guint i = 0; i < e->points->len; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    static const char *const exts[] = {".row", ".iter", ".links", ".note",
                                       ".nccl"};
    char *text[G_N_ELEMENTS(exts)];
    for (size_t k = 0; k < G_N_ELEMENTS(exts); k++) {
      char *path = point_file(out, p, exts[k]);
      text[k] = read_text(path);
      g_free(path);
    }
    g_string_append_printf(j->runs, "%u,%s", i, text[0]);
    prefix_lines(j->iters, i, text[1]);
    prefix_lines(j->links, i, text[2]);
    if (*text[3])
      g_string_append_printf(j->notes, "point %u: oracle: %s\n", i, text[3]);
    prefix_lines(j->nccl, i, text[4]);
    for (size_t k = 0; k < G_N_ELEMENTS(exts); k++)
      g_free(text[k]);
  }
}

/* The rows of RUNS (runs.csv text), parsed back for the plot and the
 * summary; NULL with *ERR when one has not this version's columns. */
static GPtrArray *parse_rows(const char *runs, const char *where,
                             char **err) {
  GPtrArray *rows =
      g_ptr_array_new_with_free_func(csv_row_free_cb);
  char **lines = g_strsplit(runs, "\n", -1);
  for (char **l = lines + 1; *l && **l; l++) {
    GPtrArray *f = csv_split(*l);
    if (f->len != NCOLS) {
      *err = g_strdup_printf("%s: internal error: a runs.csv row has %u "
                             "fields",
                             where, f->len);
      g_ptr_array_unref(f);
      g_ptr_array_free(rows, TRUE);
      rows = NULL;
      break;
    }
    g_ptr_array_add(rows, f);
  }
  g_strfreev(lines);
  return rows;
}

/* A note for each point of ROWS that does not fit its GPU: its figures in
 * GB, and the keys that would shrink them. */
static void fit_notes(const GPtrArray *rows, GString *notes) {
  for (guint i = 0; i < rows->len; i++) {
    const char *const *v =
        (const char *const *)((GPtrArray *)g_ptr_array_index(rows, i))->pdata;
    if (strcmp(v[COL_FITS], "no") != 0)
      continue;
#define GB(c) (g_ascii_strtod(v[c], NULL) / 1e9)
    char act[32];
    if (*v[COL_MEM_ACTIVATIONS])
      g_snprintf(act, sizeof act, "%.4g", GB(COL_MEM_ACTIVATIONS));
    else
      g_strlcpy(act, "not modelled", sizeof act);
    g_string_append_printf(
        notes,
        "point %u: does not fit the %s's %.4g GB: it needs %.4g GB a GPU "
        "(parameters %.4g, gradients %.4g, optimizer states %.4g, "
        "activations %s, codec residual %.4g, gathered units %.4g)",
        i, v[COL_DEVICE], GB(COL_CAPACITY), GB(COL_MEMORY),
        GB(COL_MEM_PARAMS), GB(COL_MEM_GRADS), GB(COL_MEM_OPTIMIZER), act,
        GB(COL_MEM_RESIDUAL), GB(COL_MEM_BUFFERS));
#undef GB
    if (*v[COL_MEM_ACTIVATIONS] && strcmp(v[COL_CHECKPOINT], "true") != 0)
      g_string_append(notes, "; [training] activation_checkpointing = true "
                             "keeps only each block's input");
    if (*v[COL_MEM_ACTIVATIONS])
      g_string_append(notes, "; a smaller [model] batch keeps fewer "
                             "activations");
    bool z2 = strcmp(v[COL_SHARDING], "zero2") == 0,
         z3 = strcmp(v[COL_SHARDING], "zero3") == 0;
    if (!z2 && !z3)
      g_string_append(notes, "; [training] sharding = zero2 divides the "
                             "optimizer states and gradients among the GPUs "
                             "(zero1 the states only)");
    if (!z3)
      g_string_append(notes, "; sharding = zero3 (FSDP) the weights too");
    g_string_append_c(notes, '\n');
  }
}

int results_join(const char *out, const struct experiment *e, bool plot,
                 struct sweep_report *report, char **err) {
  struct joined j;
  join_points(out, e, &j);
  GPtrArray *rows = parse_rows(j.runs->str, e->path, err);
  struct {
    const char *name;
    GString *text;
  } files[] = {{"iterations.csv", j.iters},
               {"links.csv", j.links},
               {"nccl.csv", j.nccl},
               {"config.txt", manifest_config_text(e)},
               {"runs.csv", j.runs}};
  outputs *o = outputs_new();
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    char *path = g_build_filename(out, files[i].name, NULL);
    if (rows)
      g_unlink(path);
    size_t len = files[i].text->len;
    outputs_add(o, path, g_string_free(files[i].text, FALSE), len);
    g_free(path);
  }
  if (!rows) {
    outputs_free(o);
    g_string_free(j.notes, TRUE);
    return SWEEP_ENV_FAILURE;
  }
  if (outputs_commit(o, err) != 0) {
    g_ptr_array_free(rows, TRUE);
    g_string_free(j.notes, TRUE);
    return SWEEP_ENV_FAILURE;
  }
  GString *warnings = g_string_new(NULL);
  if (plot)
    plot_sweep(out, e, rows, warnings);
  report->warnings = g_string_free(warnings, FALSE);
  fit_notes(rows, j.notes);
  report->notes = g_string_free(j.notes, FALSE);
  report->table = plot_summary(e, rows);
  g_ptr_array_free(rows, TRUE);
  return 0;
}
