/* cli/gradients.c: `gradsim gradients`: the synthetic gradient of one
 * worker at one iteration (models/gradgen.h), written to a file by
 * models/grad_dump.h. */
#include "cli.h"

#include "grad_dump.h"
#include "gradgen.h"
#include "model.h"

#include <math.h>
#include <stdint.h>

/* The gradient distribution's options; NAN or NULL: not given. */
struct grad_opts {
  char *dist;
  double scale, nu, zeros, corr, persist, decay;
  gint64 seed;
};

struct gradients_args {
  char *model_name, *tensor, *out;
  gint64 worker, iteration;
  struct grad_opts g;
};

/* The distribution O describes, over the defaults; exit 2 naming WHERE
 * on a bad value. */
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
  if (!isnan(o->persist))
    p->persist = o->persist;
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

/* The options of `gradsim gradients` into A; exit 2 on an unknown option
 * or a malformed value. */
static void gradients_parse(int *argc, char ***argv, struct gradients_args *a) {
  struct grad_opts *g = &a->g;
  GOptionEntry opts[] = {
      {"model", 'm', 0, G_OPTION_ARG_STRING, &a->model_name,
       "model name or .model file (see gradsim model list)", "M"},
      {"worker", 'w', 0, G_OPTION_ARG_INT64, &a->worker, "worker (default 0)",
       "W"},
      {"iteration", 'i', 0, G_OPTION_ARG_INT64, &a->iteration,
       "iteration (default 0)", "T"},
      {"tensor", 't', 0, G_OPTION_ARG_STRING, &a->tensor,
       "one tensor (default: all, in backward order)", "NAME"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out, "output .npy or .f32",
       "FILE"},
      {"dist", 0, 0, G_OPTION_ARG_STRING, &g->dist,
       "normal, laplace (default), student or spike", "D"},
      {"scale", 0, 0, G_OPTION_ARG_DOUBLE, &g->scale,
       "scale of the distribution (default 5e-4)", "S"},
      {"nu", 0, 0, G_OPTION_ARG_DOUBLE, &g->nu,
       "Student-t degrees of freedom (default 3)", "NU"},
      {"zeros", 0, 0, G_OPTION_ARG_DOUBLE, &g->zeros,
       "spike-and-slab: fraction of exact zeros (default 0.5)", "Z"},
      {"corr", 0, 0, G_OPTION_ARG_DOUBLE, &g->corr,
       "correlation between workers in [0, 1] (default 0)", "C"},
      {"persist", 0, 0, G_OPTION_ARG_DOUBLE, &g->persist,
       "correlation between iterations in [0, 1) (default 0)", "P"},
      {"decay", 0, 0, G_OPTION_ARG_DOUBLE, &g->decay,
       "scale factor per iteration in (0, 1] (default 1)", "D"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &g->seed, "seed (default 1)", "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(argc, argv, "",
            "Write the synthetic gradient of one worker at one iteration "
            "(one tensor, or every tensor of the model concatenated in "
            "backward order) for inspection or for 'gradsim codec'.",
            opts);
}

int cli_gradients(int argc, char **argv) {
  const char *where = "gradients";
  struct gradients_args a = {
      NULL, NULL, NULL, 0, 0, {NULL, NAN, NAN, NAN, NAN, NAN, NAN, 1}};
  gradients_parse(&argc, &argv, &a);
  cli_no_extra_args(argc, argv, where);
  if (!a.model_name || !a.out)
    cli_bad_input("%s: --model M and --out FILE are required", where);
  bool npy = g_str_has_suffix(a.out, ".npy");
  if (!npy && !g_str_has_suffix(a.out, ".f32"))
    cli_bad_input("%s: --out %s: expected a name ending in .npy or .f32",
                  where, a.out);
  if (a.worker < 0 || a.worker > UINT32_MAX)
    cli_bad_input("%s: --worker %" G_GINT64_FORMAT " must be in 0..%u", where,
                  a.worker, UINT32_MAX);
  if (a.iteration < 0)
    cli_bad_input("%s: --iteration %" G_GINT64_FORMAT " must be >= 0", where,
                  a.iteration);
  struct gradgen_params gp;
  grad_opts_apply(&a.g, &gp, where);
  struct model *m;
  char err[512];
  if (model_load(a.model_name, NULL, &m, err, sizeof err) != 0)
    cli_bad_input("%s: %s", where, err);
  struct grad_dump_range r;
  if (grad_dump_range(m, a.tensor, &r) != 0)
    cli_bad_input("%s: model %s has no tensor '%s' (see gradsim model "
                  "show %s)",
                  where, m->name, a.tensor, m->name);
  if (grad_dump_write(a.out, npy, m, &r, &gp, (uint32_t)a.worker,
                      (uint64_t)a.iteration, err, sizeof err) != 0)
    cli_env_failure("%s: %s", where, err);
  model_free(m);
  g_free(a.model_name);
  g_free(a.tensor);
  g_free(a.out);
  g_free(a.g.dist);
  return 0;
}
