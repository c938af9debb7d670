/* advise/report.c: the answer of a search: candidates.csv, the ranked
 * table, the recommendation, best.ini with its results, and the plot of
 * time against error. */
#include "advise_impl.h"

#include "codec.h"
#include "experiment.h"
#include "inputs.h"
#include "sweep.h"

#include <math.h>
#include <string.h>

/* Published results on a codec's accuracy, by codec name: what the
 * recommendation cites (a bibliography, not a capability: nothing the
 * search does depends on it). gradsim has no convergence model; a codec
 * not here has an unknown cost in accuracy. */
static const struct {
  const char *codec, *note;
} NOTES[] = {
    {"powersgd", "Vogels et al. (NeurIPS 2019), Section 5: PowerSGD at low "
                 "rank (2 on ResNet-18/CIFAR-10, 4 on an LSTM on "
                 "WikiText-2) reached the test accuracy of full-precision "
                 "SGD"},
    {"3lc", "3LC (seeds/004, Section 1): ResNet-110 on CIFAR-10 reached "
            "similar test accuracy"},
    {"rgc", "RedSync (seeds/002, Section 1): RGC with ASQ trained its CNNs "
            "and LSTMs with no accuracy loss"},
    {"inceptionn", "INCEPTIONN (seeds/000, Section VIII-C): at its loosest "
                   "bound, 2^-6, final accuracy within 2% absolute, made up "
                   "by a few extra epochs"},
    {"terngrad", "3LC (seeds/004, Section 5.3): stochastic 3-value "
                 "quantization (TernGrad's) reached lower accuracy than "
                 "3LC"},
};

static const char *note_of(const struct cand *c) {
  if (!c->codec)
    return NULL;
  size_t n = strcspn(c->p->codec, ":");
  for (size_t i = 0; i < G_N_ELEMENTS(NOTES); i++)
    if (strlen(NOTES[i].codec) == n &&
        strncmp(NOTES[i].codec, c->p->codec, n) == 0)
      return NOTES[i].note;
  return NULL;
}

static double samples_per_s(const struct cand *c) {
  return c->p->nodes * (double)c->pred.batch / c->iter_s;
}

/* Simulated candidates by time per sample (then by order of the space). */
static gint by_time(gconstpointer a, gconstpointer b) {
  const struct cand *x = *(struct cand *const *)a,
                    *y = *(struct cand *const *)b;
  double u = cand_per_sample(x, x->iter_s), v = cand_per_sample(y, y->iter_s);
  if (u != v)
    return u < v ? -1 : 1;
  return 0;
}

/* How many times C's throughput is BASE's. */
static double speedup(const struct cand *c, const struct cand *base) {
  return samples_per_s(c) / samples_per_s(base);
}

/* The simulated candidates that fit, fastest first. */
static GPtrArray *ranked(const struct search *s) {
  GPtrArray *r = g_ptr_array_new();
  for (guint i = 0; i < s->cands->len; i++) {
    struct cand *c = g_ptr_array_index(s->cands, i);
    if (c->state == CAND_SIMULATED && strcmp(c->fits, "no") != 0)
      g_ptr_array_add(r, c);
  }
  g_ptr_array_sort(r, by_time);
  return r;
}

/* The fastest of RANK with a codec (CODEC) or without one, or NULL. */
static const struct cand *first_with(GPtrArray *rank, bool codec) {
  for (guint i = 0; i < rank->len; i++) {
    const struct cand *c = g_ptr_array_index(rank, i);
    if (c->codec == codec)
      return c;
  }
  return NULL;
}

static void num(GString *s, double v) {
  if (isfinite(v))
    g_string_append_printf(s, ",%.6g", v);
  else
    g_string_append(s, ",");
}

static char *candidates_csv(const struct search *s, GPtrArray *rank,
                            const struct cand *base) {
  GString *o = g_string_new("rank,state");
  for (guint k = 0; k < s->keys->len; k++) {
    g_string_append_c(o, ',');
    csv_text(o, g_ptr_array_index(s->keys, k));
  }
  g_string_append(o, ",predicted_s,simulated_s,simulated_over_predicted,"
                     "samples_per_s,speedup,exposed_comm_s,exposed_codec_s,"
                     "codec_bits_per_value,relative_error,cosine,"
                     "memory_bytes,fits,formula,estimate_s,round,reason\n");
  for (guint i = 0; i < s->cands->len; i++) {
    const struct cand *c = g_ptr_array_index(s->cands, i);
    guint r = 0;
    for (guint j = 0; j < rank->len && !r; j++)
      r = g_ptr_array_index(rank, j) == c ? j + 1 : 0;
    if (r)
      g_string_append_printf(o, "%u", r);
    g_string_append_printf(o, ",%s", cand_state_names[c->state]);
    for (guint k = 0; k < s->keys->len; k++) {
      g_string_append_c(o, ',');
      const char *key = g_ptr_array_index(s->keys, k);
      char *v = c->p ? point_config_value(c->p, key) : g_strdup("");
      if (!c->p)
        for (guint j = 0; j < c->kv->len; j++) {
          const char *item = g_ptr_array_index(c->kv, j);
          size_t kl = strlen(key);
          if (strncmp(item, key, kl) == 0 && item[kl] == '=') {
            g_free(v);
            v = g_strdup(item + kl + 1);
          }
        }
      csv_text(o, v);
      g_free(v);
    }
    bool sim = c->state == CAND_SIMULATED, pred = c->p && c->pred.formula;
    num(o, pred ? c->pred.iteration_s : NAN);
    num(o, sim ? c->iter_s : NAN);
    num(o, sim && pred ? c->iter_s / c->pred.iteration_s : NAN);
    num(o, sim ? samples_per_s(c) : NAN);
    num(o, sim && base ? speedup(c, base) : NAN);
    num(o, sim ? c->exposed_comm_s : NAN);
    num(o, sim ? c->exposed_codec_s : NAN);
    num(o, c->bits);
    num(o, c->err);
    num(o, c->cosine);
    num(o, sim ? c->memory_bytes : pred ? c->pred.memory_bytes : NAN);
    g_string_append_printf(o, ",%s,%s", sim ? c->fits : "",
                           pred ? c->pred.formula : "");
    num(o, c->p ? c->est_s : NAN);
    if (c->round)
      g_string_append_printf(o, ",%u,", c->round);
    else
      g_string_append(o, ",,");
    csv_text(o, c->why ? c->why : "");
    g_string_append_c(o, '\n');
  }
  return g_string_free(o, FALSE);
}

static char *table_text(const struct search *s, GPtrArray *rank,
                        const struct cand *base) {
  GString *t = g_string_new(NULL);
  g_string_append_printf(t, "%4s %11s %10s %8s %11s %10s %9s  %s\n", "rank",
                         "iteration_s", "samples/s", "speed-up", "exp. comm",
                         "rel. error", "memory", "configuration");
  enum { SHOWN = 12 };
  for (guint i = 0; i < rank->len && i < SHOWN; i++) {
    const struct cand *c = g_ptr_array_index(rank, i);
    g_string_append_printf(
        t, "%4u %11.4g %10.4g %7.3gx %10.3gs %10.2g %7.1fGB  %s\n", i + 1,
        c->iter_s, samples_per_s(c), base ? speedup(c, base) : NAN,
        c->exposed_comm_s, c->err, c->memory_bytes / 1e9, c->label);
  }
  if (rank->len > SHOWN)
    g_string_append_printf(t, "   ... %u more in candidates.csv\n",
                           rank->len - SHOWN);
  double lo = INFINITY, hi = 0;
  for (guint i = 0; i < rank->len; i++) {
    const struct cand *c = g_ptr_array_index(rank, i);
    double q = c->iter_s / c->pred.iteration_s;
    lo = fmin(lo, q);
    hi = fmax(hi, q);
  }
  unsigned n[CAND_STATE_COUNT] = {0};
  for (guint i = 0; i < s->cands->len; i++)
    n[((const struct cand *)g_ptr_array_index(s->cands, i))->state]++;
  g_string_append_printf(
      t,
      "\n%u candidates: %u simulated in %u round%s, %u pruned by their "
      "lower bounds, %u over the budget, %u excluded by --max-error, %u "
      "not fitting the GPU, %u refused by the engine.\n",
      s->cands->len, n[CAND_SIMULATED], s->rounds, s->rounds == 1 ? "" : "s",
      n[CAND_PRUNED], n[CAND_OVER_BUDGET], n[CAND_EXCLUDED], n[CAND_NO_FIT],
      n[CAND_REFUSED]);
  if (rank->len)
    g_string_append_printf(t,
                           "Simulated over predicted time: %.3g to %.3g "
                           "(the formulas' residuals; a lower bound is the "
                           "predicted compute plus the rest of the "
                           "prediction x %.3g x %.2g).\n",
                           lo, hi, s->rho, ADVISE_MARGIN);
  return g_string_free(t, FALSE);
}

static char *recommendation(const struct search *s, GPtrArray *rank,
                            const char *ini) {
  const struct cand *best = rank->len ? g_ptr_array_index(rank, 0) : NULL;
  const struct cand *plain = first_with(rank, false);
  const struct cand *coded = first_with(rank, true);
  GString *r = g_string_new(NULL);
  if (!best) {
    g_string_append_printf(r,
                           "No candidate that fits was simulated within "
                           "the budget (--budget %g s of estimated "
                           "simulation); raise it.\n",
                           s->o->budget_s);
    return g_string_free(r, FALSE);
  }
  if (!best->codec) {
    g_string_append_printf(
        r,
        "Use no codec: %s is the fastest, %.4g s an iteration (%.4g "
        "samples/s)",
        best->label, best->iter_s, samples_per_s(best));
    if (coded)
      g_string_append_printf(
          r,
          "; the best codec, %s, is %.3gx its speed: its %.3g s of "
          "exposed codec work and %.3g s of exposed communication "
          "against %.3g s of communication without it",
          coded->label, speedup(coded, best), coded->exposed_codec_s,
          coded->exposed_comm_s, best->exposed_comm_s);
    else
      g_string_append(r, "; no codec could beat it by its lower bound");
    g_string_append(r, ".");
  } else {
    g_string_append_printf(r, "Use %s: %.4g s an iteration (%.4g samples/s)",
                           best->label, best->iter_s, samples_per_s(best));
    if (plain)
      g_string_append_printf(
          r,
          ", %.3gx the speed of the best configuration without a codec "
          "(%s, %.4g s): %.3g s of exposed communication instead of "
          "%.3g s, for %.3g s of exposed codec work",
          speedup(best, plain), plain->label, plain->iter_s,
          best->exposed_comm_s, plain->exposed_comm_s, best->exposed_codec_s);
    g_string_append_printf(r,
                           ". Its summed update is off by %.2g (relative; "
                           "cosine %.6f) after %d steps with error "
                           "feedback; ",
                           best->err, best->cosine, ADVISE_ERROR_STEPS);
    const char *note = note_of(best);
    if (note)
      g_string_append_printf(r, "on accuracy, %s.", note);
    else
      g_string_append(r, "its cost in accuracy is unknown (gradsim has no "
                         "convergence model, and no published result for "
                         "this codec is cited).");
  }
  /* What the budget left out, and whether it could have won. */
  unsigned over = 0, could = 0;
  double est = 0;
  for (guint i = 0; i < s->cands->len; i++) {
    const struct cand *c = g_ptr_array_index(s->cands, i);
    if (c->state != CAND_OVER_BUDGET)
      continue;
    over++;
    est += c->est_s;
    could += cand_per_sample(c, search_lower_bound(s, c)) <
             cand_per_sample(best, best->iter_s);
  }
  if (over)
    g_string_append_printf(
        r,
        " %u candidate%s not simulated within the budget (%.0f s of "
        "simulation estimated); %s (--budget %.0f covers them).",
        over, over == 1 ? " was" : "s were", est,
        could ? "by their lower bounds some could be faster"
              : "none could be faster by its lower bound",
        s->o->budget_s - s->budget_left + est);
  g_string_append_printf(r, "\n`gradsim run %s` reproduces it.\n", ini);
  return g_string_free(r, FALSE);
}

/* best.ini: the winner's effective configuration (without the [inputs]
 * that gradsim run adds back) under a comment naming the question. */
static char *best_ini(const struct search *s, const struct cand *c) {
  const char *cfg = c->p->config;
  const char *inputs = strstr(cfg, "\n[inputs]");
  GString *t = g_string_new(NULL);
  g_string_append_printf(t,
                         "# Which configuration trains %s fastest on this "
                         "cluster? gradsim advise's answer: %s\n#\n# The "
                         "winner's every key, as it was simulated "
                         "(docs/advise.md).\n\n",
                         s->o->model, c->label);
  g_string_append_len(t, cfg, inputs ? inputs - cfg + 1 : (gssize)strlen(cfg));
  return g_string_free(t, FALSE);
}

/* Candidates by error (lossless first), then by time. */
static gint by_error(gconstpointer a, gconstpointer b) {
  const struct cand *x = *(struct cand *const *)a,
                    *y = *(struct cand *const *)b;
  if (x->err != y->err)
    return x->err < y->err ? -1 : 1;
  return by_time(a, b);
}

/* C's time on the plot: its iteration (SAME: every candidate trains as
 * many samples an iteration), or its time per sample in ms. */
static double plot_time(const struct cand *c, bool same) {
  return same ? c->iter_s : 1e3 * cand_per_sample(c, c->iter_s);
}

/* OUT/NAME with TEXT (taken) into OUTS. */
static void add_file(outputs *outs, const char *out, const char *name,
                     char *text) {
  char *path = g_build_filename(out, name, NULL);
  outputs_add(outs, path, text, strlen(text));
  g_free(path);
}

/* advice.dat (simulated candidates: error, time; then the Pareto front)
 * and advice.gp. Lossless candidates sit at FLOOR, a decade below the
 * least error measured. */
static void plot_files(const struct search *s, GPtrArray *rank, outputs *outs) {
  double least = INFINITY;
  for (guint i = 0; i < rank->len; i++) {
    const struct cand *c = g_ptr_array_index(rank, i);
    if (c->err > 0)
      least = fmin(least, c->err);
  }
  double floor_ = isfinite(least) ? least / 10 : 1e-6, most = floor_;
  for (guint i = 0; i < rank->len; i++)
    most = fmax(most, ((const struct cand *)g_ptr_array_index(rank, i))->err);
  /* Time: the iteration's where every candidate trains as many samples
   * an iteration, else per sample (ms). */
  bool same = true;
  for (guint i = 1; i < rank->len; i++)
    same = same && cand_per_sample(g_ptr_array_index(rank, i), 1) ==
                       cand_per_sample(g_ptr_array_index(rank, 0), 1);
  GString *d = g_string_new(NULL);
  g_string_append_printf(d, "# relative_error %s label\n",
                         same ? "iteration_s" : "ms_per_sample");
  GPtrArray *byerr = g_ptr_array_copy(rank, NULL, NULL);
  for (guint i = 0; i < rank->len; i++) {
    const struct cand *c = g_ptr_array_index(rank, i);
    g_string_append_printf(d, "%.6g %.6g \"%s\"\n", fmax(c->err, floor_),
                           plot_time(c, same), c->label);
  }
  /* The front: by error, each candidate faster than every one with less
   * error. */
  g_string_append(d, "\n\n");
  g_ptr_array_sort(byerr, by_error);
  double fastest = INFINITY;
  for (guint i = 0; i < byerr->len; i++) {
    const struct cand *c = g_ptr_array_index(byerr, i);
    if (plot_time(c, same) < fastest) {
      fastest = plot_time(c, same);
      g_string_append_printf(d, "%.6g %.6g \"%s\"\n", fmax(c->err, floor_),
                             fastest, c->label);
    }
  }
  g_ptr_array_free(byerr, TRUE);
  GString *g = g_string_new(NULL);
  for (int t = 0; t < 2; t++)
    g_string_append_printf(
        g,
        "set terminal %s size 960,640 font 'Sans,11'\n"
        "set output 'advice.%s'\n"
        "set title \"gradsim advise: %s\" noenhanced\n"
        "set logscale x\nset grid\nset key top right\n"
        "set xrange [%.6g:%.6g]\nset format x '%%g'\n"
        "set xlabel 'relative error of the summed update (%d steps, error "
        "feedback; lossless at the left edge)'\n"
        "set ylabel '%s'\n"
        "plot 'advice.dat' index 0 using 1:2 with points pt 7 ps 1.2 "
        "title 'simulated', '' index 1 using 1:2 with linespoints lw 2 pt 6 "
        "ps 2 title 'Pareto front', '' index 1 using 1:2:3 with labels "
        "left offset 1,0.6 font ',9' noenhanced notitle\n",
        t ? "svg" : "pngcairo", t ? "svg" : "png", s->o->model, floor_ / 2,
        most * 30, ADVISE_ERROR_STEPS,
        same ? "iteration time (s)" : "time per trained sample (ms)");
  add_file(outs, s->o->out, "advice.dat", g_string_free(d, FALSE));
  add_file(outs, s->o->out, "advice.gp", g_string_free(g, FALSE));
}

/* gnuplot on advice.gp in OUT; a line in WARNINGS when it cannot. */
static void plot_run(const char *out, GString *warnings) {
  char *gp = g_find_program_in_path("gnuplot");
  if (!gp) {
    g_string_append(warnings, "advise: no gnuplot (Debian package "
                              "gnuplot-nox): advice.png not drawn\n");
    return;
  }
  char *argv[] = {gp, (char *)"advice.gp", NULL};
  gint status = 0;
  if (!g_spawn_sync(out, argv, NULL,
                    G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                    NULL, NULL, NULL, NULL, &status, NULL) ||
      !g_spawn_check_wait_status(status, NULL))
    g_string_append(warnings, "advise: gnuplot failed on advice.gp\n");
  g_free(gp);
}

int report_write(struct search *s, struct advise_report *r, char **err) {
  GPtrArray *rank = ranked(s);
  const struct cand *best = rank->len ? g_ptr_array_index(rank, 0) : NULL;
  const struct cand *base = first_with(rank, false);
  char *ini = g_build_filename(s->o->out, "best.ini", NULL);
  outputs *outs = outputs_new();
  add_file(outs, s->o->out, "candidates.csv", candidates_csv(s, rank, base));
  char *text = best ? best_ini(s, best) : NULL;
  if (text)
    add_file(outs, s->o->out, "best.ini", g_strdup(text));
  plot_files(s, rank, outs);
  int rc = 0;
  if (outputs_commit(outs, err) != 0)
    rc = ADVISE_ENV_FAILURE;
  GString *warn = g_string_new(NULL);
  /* The winner's results, joined from its simulated point as `gradsim
   * run best.ini` joins them. */
  if (rc == 0 && text) {
    struct experiment *e =
        experiment_load_data(ini, text, strlen(text), NULL, 0, err);
    if (!e) {
      rc = ADVISE_ENV_FAILURE;
    } else {
      experiment_seal_inputs(e);
      struct sweep_opts so = {.out = s->o->out, .jobs = s->o->jobs};
      struct sweep_report sr;
      rc = sweep_run(e, &so, &sr, err);
      if (rc == 0)
        sweep_report_clear(&sr);
      experiment_free(e);
    }
  }
  if (rc == 0 && rank->len)
    plot_run(s->o->out, warn);
  if (rc == 0) {
    r->table = table_text(s, rank, base);
    r->recommendation = recommendation(s, rank, ini);
    r->best_label = g_strdup(best ? best->label : "");
    for (guint i = 0; i < s->cands->len; i++) {
      const struct cand *c = g_ptr_array_index(s->cands, i);
      r->candidates++;
      r->refused += c->state == CAND_REFUSED;
      r->excluded += c->state == CAND_EXCLUDED;
      r->simulated += c->state == CAND_SIMULATED;
      r->pruned += c->state == CAND_PRUNED;
      r->over_budget += c->state == CAND_OVER_BUDGET;
    }
  }
  r->warnings = g_string_free(warn, FALSE);
  g_free(text);
  g_free(ini);
  g_ptr_array_free(rank, TRUE);
  return rc;
}
