/* cli/reproduce.c: `gradsim reproduce [NAME ...|all] [--quick]
 * [--jobs N] [--out DIR]`: run the paper reproductions (experiment files
 * with a [reproduce] section, repro.h), and write per experiment
 * DIR/NAME/runs.csv, the plots of plots/NAME.gp and NAME.md (the paper's
 * claims beside gradsim's figures), then DIR/REPORT.md linking them.
 *
 * Simulated designs (kind run) go through `gradsim run` itself, one child
 * process per variant (its points cached in DIR/NAME/sim/), so that a
 * reproduction simulates exactly what `gradsim run` would. */
#include "cli.h"

#include "experiment.h"
#include "inputs.h"
#include "model.h"
#include "repro.h"
#include "measure.h"
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#ifndef GRADSIM_SOURCE_DIR
#define GRADSIM_SOURCE_DIR "."
#endif

static char *source_subdir(const char *env, const char *sub) {
  const char *v = g_getenv(env);
  if (v && *v)
    return g_strdup(v);
  return g_build_filename(GRADSIM_SOURCE_DIR, sub, NULL);
}

/* Every experiment of DIR with a [reproduce] section, sorted. */
static GPtrArray *reproductions(const char *dir) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d)
    return names;
  const char *f;
  while ((f = g_dir_read_name(d))) {
    if (!g_str_has_suffix(f, ".ini"))
      continue;
    char *path = g_build_filename(dir, f, NULL);
    GKeyFile *kf = g_key_file_new();
    if (g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, NULL) &&
        g_key_file_has_group(kf, "reproduce"))
      g_ptr_array_add(names, g_strndup(f, strlen(f) - 4));
    g_key_file_free(kf);
    g_free(path);
  }
  g_dir_close(d);
  return names;
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *joined(const GPtrArray *a) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < a->len; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "",
                           (char *)g_ptr_array_index(a, i));
  return g_string_free(s, FALSE);
}

/* One reproduction, loaded and checked. */
struct job {
  struct repro *r;
  GPtrArray *exps; /* struct experiment *: one per variant (kind run), or
                      the experiment itself (the other kinds) */
};

static char **sets_of(const struct repro *r, const struct repro_variant *v) {
  GPtrArray *s = g_ptr_array_new();
  for (guint i = 0; v && i < v->sets->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(v->sets, i)));
  for (guint i = 0; i < r->sets->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(r->sets, i)));
  for (guint i = 0; v && i < v->quick_sets->len; i++)
    g_ptr_array_add(s, g_strdup(g_ptr_array_index(v->quick_sets, i)));
  g_ptr_array_add(s, NULL);
  return (char **)g_ptr_array_free(s, FALSE);
}

static struct job *job_load(const char *path, bool quick) {
  char *err = NULL;
  struct repro *r = repro_load(path, quick, &err);
  if (!r)
    cli_bad_input("reproduce: %s", err);
  struct job *j = g_new0(struct job, 1);
  j->r = r;
  j->exps = g_ptr_array_new_with_free_func((GDestroyNotify)experiment_free);
  guint nv = r->kind == REPRO_RUN ? r->variants->len : 1;
  for (guint v = 0; v < nv; v++) {
    const struct repro_variant *var =
        r->kind == REPRO_RUN ? g_ptr_array_index(r->variants, v) : NULL;
    char **sets = sets_of(r, var);
    struct experiment *e = experiment_load(path, sets, &err);
    g_strfreev(sets);
    if (!e)
      cli_bad_input("reproduce: %s%s%s: %s", r->name,
                    var ? ": variant " : "", var ? var->label : "", err);
    experiment_seal_inputs(e);
    if (r->kind == REPRO_RUN)
      for (guint i = 0; i < e->points->len; i++)
        if (run_check(g_ptr_array_index(e->points, i), &err) != 0)
          cli_bad_input("reproduce: %s: variant %s: point %u: %s", r->name,
                        var->label, i, err);
    g_ptr_array_add(j->exps, e);
  }
  if (r->kind != REPRO_RUN &&
      repro_measure_check(r, g_ptr_array_index(j->exps, 0), &err) != 0)
    cli_bad_input("reproduce: %s", err);
  return j;
}

static void job_free(struct job *j) {
  repro_free(j->r);
  g_ptr_array_free(j->exps, TRUE);
  g_free(j);
}

static void mkdir_or_die(const char *dir) {
  if (g_mkdir_with_parents(dir, 0755) != 0)
    cli_env_failure("reproduce: cannot create %s: %s", dir, g_strerror(errno));
}

static void write_or_die(const char *path, const char *text) {
  GError *ge = NULL;
  if (!g_file_set_contents(path, text, -1, &ge))
    cli_env_failure("reproduce: %s", ge->message);
}

/* What runs.csv does not say about point P's model: the per-device
 * batch (its [model] batch, or the model file's), its parameters and
 * gradient tensors. */
struct model_facts {
  int batch;
  double params, tensors;
};

static struct model_facts facts_of(const struct point *p, GHashTable *cache) {
  struct model_facts f = {p->batch, (double)p->params, p->tensors};
  if (!strcmp(p->model, "synthetic"))
    return f;
  struct model_facts *c = g_hash_table_lookup(cache, p->model);
  if (!c) {
    c = g_new0(struct model_facts, 1);
    struct model *m;
    char msg[512];
    struct model_opts o = {p->device, p->precision, 0, NULL};
    if (model_load(p->model, &o, &m, msg, sizeof msg) == 0) {
      c->batch = m->file_batch;
      c->params = (double)m->params;
      c->tensors = (double)m->ntensors;
      model_free(m);
    }
    g_hash_table_insert(cache, g_strdup(p->model), c);
  }
  f = *c;
  if (p->batch)
    f.batch = p->batch;
  return f;
}

/* The value of KEY ("section.key") in point P's effective configuration. */
static char *config_value(const struct point *p, const char *key) {
  GKeyFile *kf = g_key_file_new();
  char *v = NULL;
  if (g_key_file_load_from_data(kf, p->config, (gsize)-1, G_KEY_FILE_NONE,
                                NULL)) {
    char *sec = g_strdup(key), *dot = strchr(sec, '.');
    if (dot) {
      *dot = '\0';
      v = g_key_file_get_value(kf, sec, dot + 1, NULL);
    }
    g_free(sec);
  }
  g_key_file_free(kf);
  return v ? v : g_strdup("");
}

/* The keys every variant's points may differ in (swept, or set by a
 * variant), "section.key", in first-seen order. */
static GPtrArray *varying_keys(const struct job *j) {
  GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
  for (guint v = 0; v < j->exps->len; v++) {
    const struct experiment *e = g_ptr_array_index(j->exps, v);
    GPtrArray *add = g_ptr_array_new_with_free_func(g_free);
    for (guint k = 0; k < e->swept->len; k++)
      g_ptr_array_add(add, g_strdup(g_ptr_array_index(e->swept, k)));
    const struct repro_variant *var = g_ptr_array_index(j->r->variants, v);
    for (guint k = 0; k < var->sets->len; k++) {
      const char *set = g_ptr_array_index(var->sets, k);
      g_ptr_array_add(add, g_strndup(set, strcspn(set, "=")));
    }
    for (guint k = 0; k < add->len; k++) {
      bool seen = false;
      for (guint i = 0; i < keys->len; i++)
        seen |= !strcmp(g_ptr_array_index(keys, i), g_ptr_array_index(add, k));
      if (!seen)
        g_ptr_array_add(keys, g_strdup(g_ptr_array_index(add, k)));
    }
    g_ptr_array_free(add, TRUE);
  }
  return keys;
}

/* Simulate every variant with `gradsim run` (a child process each) and
 * merge their runs.csv: a leading `variant` column, then runs.csv's, then
 * `batch` (the per-device batch), `model_params`, `model_tensors`, and
 * the keys the points differ in that runs.csv lacks, named by the key
 * alone (`params` for model.params). */
static struct table *run_variants(const struct job *j, const char *dir,
                                  gint64 jobs) {
  const struct repro *r = j->r;
  struct table *all = NULL;
  GPtrArray *keys = varying_keys(j), *extra = NULL;
  GHashTable *batches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                              g_free);
  for (guint v = 0; v < r->variants->len; v++) {
    const struct repro_variant *var = g_ptr_array_index(r->variants, v);
    char *out = g_strdup_printf("%s/sim/%u", dir, v);
    GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(args, g_strdup("run"));
    g_ptr_array_add(args, g_strdup(r->path));
    g_ptr_array_add(args, g_strdup("--quiet"));
    g_ptr_array_add(args, g_strdup_printf("--jobs=%" G_GINT64_FORMAT, jobs));
    g_ptr_array_add(args, g_strdup_printf("--out=%s", out));
    char **sets = sets_of(r, var);
    for (char **s = sets; *s; s++)
      g_ptr_array_add(args, g_strdup_printf("--set=%s", *s));
    g_strfreev(sets);
    g_ptr_array_add(args, NULL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
      cli_env_failure("reproduce: fork failed: %s", g_strerror(errno));
    if (pid == 0) {
      /* cli_run parses (and may reorder) its argv: a copy. */
      char **argv = g_strdupv((char **)args->pdata);
      int rc = cli_run((int)args->len - 1, argv);
      fflush(NULL);
      _exit(rc);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
    g_ptr_array_free(args, TRUE);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
      fprintf(stderr, "gradsim: reproduce: %s: variant %s failed (gradsim "
                      "run, status %d)\n",
              r->name, var->label, code);
      exit(code == EXIT_BAD_INPUT ? EXIT_BAD_INPUT : EXIT_ENV_FAILURE);
    }
    char *csv_path = g_build_filename(out, "runs.csv", NULL);
    char *text = NULL, *err = NULL;
    if (!g_file_get_contents(csv_path, &text, NULL, NULL))
      cli_env_failure("reproduce: cannot read %s", csv_path);
    struct table *t = table_parse_csv(text, &err);
    if (!t)
      cli_env_failure("reproduce: %s: %s", csv_path, err);
    g_free(text);
    g_free(csv_path);
    g_free(out);
    const struct experiment *e = g_ptr_array_index(j->exps, v);
    if (!all) {
      all = table_new();
      table_add_col(all, "variant");
      for (guint c = 0; c < t->cols->len; c++)
        table_add_col(all, g_ptr_array_index(t->cols, c));
      table_add_col(all, "batch");
      table_add_col(all, "model_params");
      table_add_col(all, "model_tensors");
      extra = g_ptr_array_new_with_free_func(g_free);
      for (guint k = 0; k < keys->len; k++) {
        const char *key = g_ptr_array_index(keys, k);
        const char *bare = strchr(key, '.') + 1;
        if (table_col(all, bare) < 0) {
          table_add_col(all, bare);
          g_ptr_array_add(extra, g_strdup(key));
        }
      }
    }
    if (t->cols->len + 4 + extra->len != all->cols->len)
      cli_env_failure("reproduce: %s: variants wrote different runs.csv "
                      "columns",
                      r->name);
    for (guint row = 0; row < t->rows->len; row++) {
      GPtrArray *f = g_ptr_array_new();
      g_ptr_array_add(f, g_strdup(var->label));
      for (guint c = 0; c < t->cols->len; c++)
        g_ptr_array_add(f, g_strdup(table_get(t, row, c)));
      const struct point *p =
          row < e->points->len ? g_ptr_array_index(e->points, row) : NULL;
      struct model_facts mf = {0, 0, 0};
      if (p)
        mf = facts_of(p, batches);
      g_ptr_array_add(f, g_strdup_printf("%d", mf.batch));
      g_ptr_array_add(f, g_strdup_printf("%.0f", mf.params));
      g_ptr_array_add(f, g_strdup_printf("%.0f", mf.tensors));
      for (guint k = 0; k < extra->len; k++)
        g_ptr_array_add(f, p ? config_value(p, g_ptr_array_index(extra, k))
                             : g_strdup(""));
      table_add_row(all, f);
    }
    table_free(t);
  }
  g_hash_table_destroy(batches);
  if (extra)
    g_ptr_array_free(extra, TRUE);
  g_ptr_array_free(keys, TRUE);
  return all;
}

/* plots/PLOT.gp, once per terminal: gnuplot -e "dir='D'; term='png'". */
static GPtrArray *draw(const struct repro *r, const char *dir,
                       const char *plots_dir) {
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  char *script = g_strdup_printf("%s/%s.gp", plots_dir, r->plot);
  char *gp = g_find_program_in_path("gnuplot");
  if (!g_file_test(script, G_FILE_TEST_IS_REGULAR)) {
    fprintf(stderr, "gradsim: reproduce: %s: no plot script %s\n", r->name,
            script);
  } else if (!gp) {
    fprintf(stderr, "gradsim: reproduce: gnuplot (Debian package "
                    "gnuplot-nox) is not installed: no plots\n");
  } else {
    static const char *const terms[] = {"png", "svg"};
    for (int t = 0; t < 2; t++) {
      char *cmd = g_strdup_printf("gnuplot -e \"dir='%s'; term='%s'; "
                                  "lib='%s/common.gp'\" '%s'",
                                  dir, terms[t], plots_dir, script);
      if (system(cmd) != 0)
        fprintf(stderr, "gradsim: reproduce: %s: gnuplot failed on %s\n",
                r->name, script);
      g_free(cmd);
    }
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *f;
    while (d && (f = g_dir_read_name(d)))
      if (g_str_has_suffix(f, ".png"))
        g_ptr_array_add(files, g_strdup(f));
    if (d)
      g_dir_close(d);
    g_ptr_array_sort(files, cmp_str);
  }
  g_free(gp);
  g_free(script);
  return files;
}

struct done {
  char *name, *title;
  GArray *res;
  double wall_s;
  char *md;
};

int cli_reproduce(int argc, char **argv) {
  gboolean quick = FALSE;
  gint64 jobs = 0;
  char *out = NULL;
  GOptionEntry opts[] = {
      {"quick", 0, 0, G_OPTION_ARG_NONE, &quick,
       "fewer iterations and smaller sizes: a smoke test of every "
       "reproduction (a few minutes for all)",
       NULL},
      {"jobs", 'j', 0, G_OPTION_ARG_INT64, &jobs,
       "points simulated at once (default: the number of CPUs)", "N"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "results directory (default results)", "DIR"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "[NAME ...|all]",
            "Reproduce the seed papers' figures and tables: run each "
            "experiment with a [reproduce] section (default: all) and write "
            "DIR/NAME/runs.csv, its plots and NAME.md (the paper's claims "
            "beside gradsim's), and DIR/REPORT.md.",
            opts);
  if (jobs < 0 || jobs > 4096)
    cli_bad_input("reproduce: --jobs %" G_GINT64_FORMAT " must be in 1..4096",
                  jobs);
  if (jobs == 0)
    jobs = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN)
                                              : 1;
  if (!out)
    out = g_strdup("results");
  char *exp_dir = source_subdir("GRADSIM_EXPERIMENTS_DIR", "experiments");
  char *plots_dir = source_subdir("GRADSIM_PLOTS_DIR", "plots");
  GPtrArray *known = reproductions(exp_dir);
  g_ptr_array_sort(known, cmp_str);
  if (!known->len)
    cli_bad_input("reproduce: no experiment with a [reproduce] section in %s",
                  exp_dir);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  bool all = argc < 2;
  for (int i = 1; i < argc; i++)
    all |= !strcmp(argv[i], "all");
  if (all && argc > 2)
    cli_bad_input("reproduce: 'all' takes no other names");
  for (int i = 1; i < argc && !all; i++) {
    bool found = false;
    for (guint k = 0; k < known->len; k++)
      found |= !strcmp(argv[i], g_ptr_array_index(known, k));
    if (!found) {
      char *valid = joined(known);
      cli_bad_input("reproduce: unknown experiment '%s' (valid: %s, or all)",
                    argv[i], valid);
    }
    bool dup = false;
    for (guint k = 0; k < names->len; k++)
      dup |= !strcmp(argv[i], g_ptr_array_index(names, k));
    if (!dup)
      g_ptr_array_add(names, g_strdup(argv[i]));
  }
  if (all)
    for (guint k = 0; k < known->len; k++)
      g_ptr_array_add(names, g_strdup(g_ptr_array_index(known, k)));
  if (g_file_test(out, G_FILE_TEST_EXISTS) &&
      !g_file_test(out, G_FILE_TEST_IS_DIR))
    cli_bad_input("reproduce: --out %s exists and is not a directory", out);
  /* Relative paths inside experiments (file: platforms, cost tables) are
   * from the repository root, the experiments directory's parent: work
   * from there, with every path of our own made absolute first. */
  char *cwd = g_get_current_dir();
  char *paths[] = {out, exp_dir, plots_dir};
  for (int i = 0; i < 3; i++)
    if (!g_path_is_absolute(paths[i])) {
      char *abs = g_build_filename(cwd, paths[i], NULL);
      g_free(paths[i]);
      paths[i] = abs;
    }
  out = paths[0], exp_dir = paths[1], plots_dir = paths[2];
  char *root = g_path_get_dirname(exp_dir);
  if (chdir(root) != 0)
    cli_bad_input("reproduce: cannot enter %s: %s", root, g_strerror(errno));
  g_free(root);
  g_free(cwd);

  /* Everything is loaded and checked before anything runs or is written. */
  GPtrArray *jobs_ = g_ptr_array_new_with_free_func((GDestroyNotify)job_free);
  for (guint i = 0; i < names->len; i++) {
    char *path = g_strdup_printf("%s/%s.ini", exp_dir,
                                 (char *)g_ptr_array_index(names, i));
    g_ptr_array_add(jobs_, job_load(path, quick));
    g_free(path);
  }

  mkdir_or_die(out);
  GArray *done = g_array_new(FALSE, TRUE, sizeof(struct done));
  for (guint i = 0; i < jobs_->len; i++) {
    const struct job *j = g_ptr_array_index(jobs_, i);
    const struct repro *r = j->r;
    double t0 = cli_now();
    fprintf(stderr, "reproduce: %s (%u/%u)...\n", r->name, i + 1, jobs_->len);
    char *dir = g_build_filename(out, r->name, NULL);
    mkdir_or_die(dir);
    struct table *t = NULL;
    char *err = NULL;
    switch (r->kind) {
    case REPRO_RUN:
      t = run_variants(j, dir, jobs);
      break;
    case REPRO_CODEC_RATIO:
      t = repro_codec_ratio(r, g_ptr_array_index(j->exps, 0), &err);
      break;
    case REPRO_SELECT_TIME:
      t = repro_select_time(r, g_ptr_array_index(j->exps, 0), &err);
      break;
    }
    if (!t)
      cli_env_failure("reproduce: %s", err ? err : "no results");
    if (repro_derive(r, t, &err) != 0)
      cli_bad_input("reproduce: %s: %s", r->name, err);
    char *csv = table_to_csv(t);
    char *csv_path = g_build_filename(dir, "runs.csv", NULL);
    write_or_die(csv_path, csv);
    g_free(csv_path);
    g_free(csv);
    GArray *res = repro_evaluate(r, t);
    char *cl = repro_claims_csv(res);
    char *cl_path = g_build_filename(dir, "claims.csv", NULL);
    write_or_die(cl_path, cl);
    g_free(cl_path);
    g_free(cl);
    GPtrArray *plots = draw(r, dir, plots_dir);
    char *cmd = g_strdup_printf("gradsim reproduce %s%s", r->name,
                                quick ? " --quick" : "");
    char *md = repro_markdown(r, res, plots, quick, cmd);
    char *md_name = g_strdup_printf("%s.md", r->name);
    char *md_path = g_build_filename(dir, md_name, NULL);
    write_or_die(md_path, md);
    struct done d = {g_strdup(r->name), g_strdup(r->title), res,
                     cli_now() - t0, md};
    g_array_append_val(done, d);
    guint yes = 0, na = 0;
    for (guint k = 0; k < res->len; k++) {
      yes += g_array_index(res, struct claim_result, k).within == 1;
      na += g_array_index(res, struct claim_result, k).within == -1;
    }
    fprintf(stderr, "reproduce: %s: %u of %u claims within tolerance, %u "
                    "not evaluated (%.1f s)\n",
            r->name, yes, res->len, na, d.wall_s);
    g_free(md_name);
    g_free(md_path);
    g_free(cmd);
    g_ptr_array_free(plots, TRUE);
    table_free(t);
    g_free(dir);
  }

  /* REPORT.md: a summary line per experiment, then every claims table. */
  GString *rep = g_string_new("# gradsim: reproductions of the seed papers\n\n");
  if (quick)
    g_string_append(rep, "**Quick run** (`gradsim reproduce --quick`): a "
                         "smoke test with fewer iterations and smaller "
                         "sizes; the README quotes the full run.\n\n");
  g_string_append(rep, "| experiment | what | claims within tolerance | not "
                       "evaluated |\n|---|---|---|---|\n");
  guint tot = 0, tot_yes = 0;
  for (guint i = 0; i < done->len; i++) {
    struct done *d = &g_array_index(done, struct done, i);
    guint yes = 0, na = 0;
    for (guint k = 0; k < d->res->len; k++) {
      yes += g_array_index(d->res, struct claim_result, k).within == 1;
      na += g_array_index(d->res, struct claim_result, k).within == -1;
    }
    tot += d->res->len;
    tot_yes += yes;
    g_string_append_printf(rep, "| [%s](%s/%s.md) | %s | %u of %u | %u |\n",
                           d->name, d->name, d->name, d->title, yes,
                           d->res->len, na);
  }
  g_string_append_printf(rep, "\n%u of %u claims within tolerance.\n\n",
                         tot_yes, tot);
  for (guint i = 0; i < done->len; i++) {
    struct done *d = &g_array_index(done, struct done, i);
    /* The claims table of NAME.md, under the experiment's name. */
    const char *start = strstr(d->md, "| claim |");
    const char *end = start ? strstr(start, "\n\n") : NULL;
    g_string_append_printf(rep, "## [%s](%s/%s.md): %s\n\n", d->name, d->name,
                           d->name, d->title);
    if (start && end)
      g_string_append_len(rep, start, end - start + 2);
  }
  char *rep_path = g_build_filename(out, "REPORT.md", NULL);
  write_or_die(rep_path, rep->str);
  printf("%-24s %8s %8s\n", "experiment", "claims", "wall s");
  for (guint i = 0; i < done->len; i++) {
    struct done *d = &g_array_index(done, struct done, i);
    guint yes = 0;
    for (guint k = 0; k < d->res->len; k++)
      yes += g_array_index(d->res, struct claim_result, k).within == 1;
    printf("%-24s %3u / %-3u %8.1f\n", d->name, yes, d->res->len, d->wall_s);
  }
  printf("\n%u of %u claims within tolerance; report in %s\n", tot_yes, tot,
         rep_path);
  g_free(rep_path);
  g_string_free(rep, TRUE);
  for (guint i = 0; i < done->len; i++) {
    struct done *d = &g_array_index(done, struct done, i);
    g_free(d->name);
    g_free(d->title);
    g_free(d->md);
    claim_results_free(d->res);
  }
  g_array_free(done, TRUE);
  g_ptr_array_free(jobs_, TRUE);
  g_ptr_array_free(names, TRUE);
  g_ptr_array_free(known, TRUE);
  g_free(exp_dir);
  g_free(plots_dir);
  g_free(out);
  return 0;
}
