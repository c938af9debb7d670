/* tests/test_experiment.c: experiment files (config/experiment.h) without
 * simulating: reading from memory, sweeps and their limit, --set,
 * stragglers, and the effective configuration read back. */
#include "experiment.h"

#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

static const char BASE[] = "[platform]\nnodes = 4\n[model]\nname = synthetic\n";

/* Load TEXT (with the --set expressions SETS, NULL-terminated) from
 * memory; on failure *ERR holds the message. */
static struct experiment *load(const char *text, char **sets, size_t max_points,
                               char **err) {
  return experiment_load_data("t.ini", text, strlen(text), sets, max_points,
                              err);
}

static void fails_with(const char *text, char **sets, const char *want) {
  char *err = NULL;
  struct experiment *e = load(text, sets, 0, &err);
  cr_assert_null(e, "loaded: %s", text);
  cr_assert_not_null(err);
  cr_assert(strstr(err, want), "'%s' not in '%s'", want, err);
  cr_assert(!strchr(err, '\n'), "%s", err);
  g_free(err);
}

Test(experiment, from_memory) {
  char *err = NULL;
  /* No NUL at the end: nothing is read past LEN. */
  char *exact = g_memdup2(BASE, sizeof BASE - 1);
  struct experiment *e =
      experiment_load_data("mem.ini", exact, sizeof BASE - 1, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_str_eq(e->path, "mem.ini");
  cr_assert_eq(e->points->len, 1);
  const struct point *p = g_ptr_array_index(e->points, 0);
  cr_assert_eq(p->nodes, 4);
  cr_assert_str_eq(p->model, "synthetic");
  experiment_free(e);
  g_free(exact);

  static const char nul[] = "[platform]\nnodes = 4\0\n[model]\nname = x\n";
  e = experiment_load_data("nul.ini", nul, sizeof nul - 1, NULL, 0, &err);
  cr_assert_null(e);
  cr_assert_str_eq(err, "nul.ini: holds a NUL byte (not a text file)");
  g_free(err);
}

Test(experiment, sweep_limit) {
  char *err = NULL;
  char *text = g_strconcat(BASE, "[gradients]\nseed = 1,2,3,4,5\n", NULL);
  struct experiment *e = load(text, NULL, 5, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_eq(e->points->len, 5);
  cr_assert_eq(e->swept->len, 1);
  cr_assert_str_eq(g_ptr_array_index(e->swept, 0), "gradients.seed");
  experiment_free(e);
  e = load(text, NULL, 4, &err);
  cr_assert_null(e);
  cr_assert_str_eq(err, "t.ini: the sweep has over 4 points; split it into "
                        "several experiments");
  g_free(err);
  g_free(text);

  /* 300^7 combinations: refused at once, before any point is made. */
  static const char *const keys[] = {"seed",  "corr", "zeros", "decay",
                                     "scale", "nu",   "dist"};
  GString *s = g_string_new(BASE);
  g_string_append(s, "[gradients]\n");
  for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
    g_string_append_printf(s, "%s = 1", keys[k]);
    for (int i = 1; i < 300; i++)
      g_string_append(s, ",1");
    g_string_append(s, "\n");
  }
  e = load(s->str, NULL, 0, &err);
  cr_assert_null(e);
  cr_assert(strstr(err, "over 100000 points"), "%s", err);
  g_free(err);
  g_string_free(s, TRUE);
}

Test(experiment, sets) {
  char *ok[] = {"platform.nodes=2,3",
                "exchange.codec=none,rgc:ratio=0.01,asq=1", NULL};
  char *err = NULL;
  struct experiment *e = load(BASE, ok, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_eq(e->points->len, 4);
  const struct point *p = g_ptr_array_index(e->points, 3);
  cr_assert_eq(p->nodes, 3);
  cr_assert_str_eq(p->codec, "rgc:ratio=0.01,asq=1");
  experiment_free(e);

  fails_with(BASE, (char *[]){"platform.nodes", NULL},
             "--set platform.nodes: expected section.key=value");
  fails_with(BASE, (char *[]){".nodes=1", NULL}, "expected section.key");
  fails_with(BASE, (char *[]){"platform.=1", NULL}, "expected section.key");
  fails_with(BASE, (char *[]){"nosuch.key=1", NULL},
             "unknown section 'nosuch'");
  fails_with(BASE, (char *[]){"platform.nodez=1", NULL},
             "unknown key 'nodez' in [platform] (valid: topology, nodes,");
  fails_with(BASE, (char *[]){"platform.nodes=0", NULL},
             "--set: [platform] nodes = 0: must be a whole number in "
             "1..1048576");
}

Test(experiment, stragglers) {
  char *err = NULL;
  char *text =
      g_strconcat(BASE, "[training]\nstragglers = 0:2; 3 : 1.5\n", NULL);
  /* "3 : 1.5": no space before the colon. */
  fails_with(text, NULL, "[training] stragglers item ' 3 : 1.5'");
  g_free(text);
  text = g_strconcat(BASE, "[training]\nstragglers = 0:2; 3: 1.5 \n", NULL);
  struct experiment *e = load(text, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  const struct point *p = g_ptr_array_index(e->points, 0);
  cr_assert_eq(p->slowdown[0], 2);
  cr_assert_eq(p->slowdown[1], 1);
  cr_assert_eq(p->slowdown[2], 1);
  cr_assert_eq(p->slowdown[3], 1.5);
  experiment_free(e);
  g_free(text);
  /* Without stragglers a point holds no per-worker array (a sweep of
   * huge clusters must be refused before it takes memory). */
  e = load(BASE, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_null(((const struct point *)g_ptr_array_index(e->points, 0))
                     ->slowdown);
  experiment_free(e);

  static const char *const bad[] = {
      "4:2",                    /* no such worker */
      "-1:2",                   /* negative */
      "99999999999999999999:2", /* beyond long (was sscanf %d: undefined) */
      "2147483648:2",           /* beyond int */
      "1:0.5",                  /* a speed-up */
      "1:nan",
      "1:inf",
      "1:2x",
      "1",
      ":2",
      "1:",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    text = g_strdup_printf("%s[training]\nstragglers = %s\n", BASE, bad[i]);
    fails_with(text, NULL, "must be W:F with W a worker in 0..3 and F >= 1");
    g_free(text);
  }
}

Test(experiment, config_reads_back) {
  char *err = NULL;
  char *text = g_strconcat(
      BASE,
      "[exchange]\ncodec = rgc:ratio=0.01,asq=1, q8\nalgorithm = ps\n"
      "[platform]\naggregators = 1\nbandwidth = 1.25GBps\n"
      "[training]\nstragglers = 1:3\n",
      NULL);
  struct experiment *e = load(text, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_eq(e->points->len, 2);
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    struct experiment *again = experiment_load_data(
        "c.ini", p->config, strlen(p->config), NULL, 0, &err);
    cr_assert_not_null(again, "%s", err);
    cr_assert_eq(again->points->len, 1);
    const struct point *q = g_ptr_array_index(again->points, 0);
    cr_assert_str_eq(q->config, p->config);
    cr_assert_str_eq(q->hash, p->hash);
    experiment_free(again);
  }
  experiment_free(e);
  g_free(text);
}

Test(experiment, line_of_repeated_key) {
  /* GKeyFile keeps the last value of a repeated key, even in a repeated
   * section: the message points at that line. */
  fails_with("[platform]\nnodes = 4\nnodes = 0\n[model]\nname = a\n", NULL,
             "t.ini:3: [platform] nodes = 0:");
  fails_with("[platform]\nnodes = 4\n[model]\nname = a\n[platform]\n"
             "nodes = 0\n",
             NULL, "t.ini:6: [platform] nodes = 0:");
}

/* The question a file asks, for plot titles: the first sentence of its
 * opening comment block. */
Test(experiment, question) {
  static const struct {
    const char *text, *want; /* want NULL: none */
  } cases[] = {
      {"# How much does a codec buy\n# as the cluster grows? The main job.\n"
       "[platform]\n",
       "How much does a codec buy as the cluster grows?"},
      {"\n#   Where   should the codec run?\n", "Where should the codec run?"},
      {"# GradientFlow Fig. 8: FP32 allreduce throughput (Section 2.4).\n"
       "#\n#   build/gradsim reproduce x\n",
       "GradientFlow Fig. 8: FP32 allreduce throughput (Section 2.4)."},
      {"# A statement (with a stop. Inside) that ends here. Not this.\n",
       "A statement (with a stop. Inside) that ends here."},
      {"# \"Would 8-bit gradients buy anything?\" Llama on H100s.\n",
       "\"Would 8-bit gradients buy anything?\""},
      {"# First paragraph without a stop\n#\n# second paragraph.\n",
       "First paragraph without a stop"},
      {"[platform]\n# a comment inside\nnodes = 4\n", NULL},
      {"#\n#\n", NULL},
      {"", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *q = experiment_question(cases[i].text);
    if (cases[i].want)
      cr_expect_str_eq(q ? q : "(null)", cases[i].want, "case %zu", i);
    else
      cr_expect_null(q, "case %zu: '%s'", i, q);
    g_free(q);
  }
  char *err = NULL;
  char *text = g_strconcat("# Does it load?\n", BASE, NULL);
  struct experiment *e = load(text, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_expect_str_eq(e->question, "Does it load?");
  experiment_free(e);
  e = load(BASE, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_expect_null(e->question);
  experiment_free(e);
  g_free(text);
}

/* [platform] preset: its values for every key the experiment does not
 * give itself, written into the effective configuration; the file's and
 * --set's values win; every preset's values are valid keys and values
 * (each preset loads). */
Test(experiment, presets) {
  char *err = NULL;
  const char *text = "[platform]\npreset = dgx-h100\nnodes = 16\n"
                     "bandwidth = 200Gbps\n[model]\nname = synthetic\n";
  char *sets[] = {"platform.nvlink_latency=2us", NULL};
  struct experiment *e = load(text, sets, 0, &err);
  cr_assert_not_null(e, "%s", err);
  const struct point *p = g_ptr_array_index(e->points, 0);
  cr_expect_eq(p->topology, TOPO_NVSWITCH);
  cr_expect_eq(p->gpus_per_node, 8);
  cr_expect_eq(p->nics_per_node, 8);
  cr_expect_eq(p->fabric, FABRIC_RAIL);
  cr_expect_float_eq(p->nvlink_Bps, 370.8e9, 1);
  cr_expect_float_eq(p->bandwidth_Bps, 200e9 / 8, 1); /* the file's */
  cr_expect_float_eq(p->nvlink_latency_s, 2e-6, 1e-15); /* --set's */
  cr_expect(isinf(p->reduce_Bps), "reduce_rate = fused");
  cr_expect_str_eq(p->device, "H100");
  cr_expect(strstr(p->config, "nics_per_node = 8\n"), "%s", p->config);
  cr_expect(strstr(p->config, "preset = dgx-h100\n"), "%s", p->config);
  experiment_free(e);
  /* A sweep of presets: each point takes its own. */
  e = load("[platform]\npreset = dgx-a100, p4d, p3dn, hgx-h100\nnodes = 16\n"
           "[model]\nname = synthetic\n",
           NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_eq(e->points->len, 4);
  int nics[] = {8, 4, 1, 8};
  for (int i = 0; i < 4; i++) {
    p = g_ptr_array_index(e->points, (guint)i);
    cr_expect_eq(p->nics_per_node, nics[i], "point %d", i);
  }
  cr_expect_float_eq(((const struct point *)g_ptr_array_index(e->points, 0))
                         ->nvlink_Bps,
                     240e9, 1);
  experiment_free(e);
}

Test(experiment, nvswitch_bad_input) {
  fails_with("[platform]\npreset = dgx-h200\nnodes = 8\n[model]\nname = "
             "synthetic\n",
             NULL, "must be none or one of dgx-a100, dgx-h100");
  fails_with("[platform]\ntopology = nvswitch\nnodes = 12\n[model]\nname = "
             "synthetic\n",
             NULL, "multiple of gpus_per_node = 8 on nvswitch");
  fails_with("[platform]\ntopology = nvswitch\nnodes = 8\nnics_per_node = 3\n"
             "[model]\nname = synthetic\n",
             NULL, "nics_per_node = 3 must divide gpus_per_node = 8");
  fails_with("[platform]\ntopology = nvswitch\nnodes = 8\nnics_per_node = 8\n"
             "fabric = fat-tree\nleaf = 4\n[model]\nname = synthetic\n",
             NULL, "leaf = 4 ports cannot take a machine's 8 NICs");
  fails_with("[platform]\ntopology = nvswitch\nnodes = 8\nfabric = star\n"
             "[model]\nname = synthetic\n",
             NULL, "must be one of rail, fat-tree");
  fails_with("[platform]\ntopology = mesh\nnodes = 8\n[model]\nname = "
             "synthetic\n",
             NULL, "must be one of star, fat-tree, dragonfly, gpu-cluster, "
                   "torus, nvswitch, or file:PATH");
  fails_with("[platform]\nnodes = 8\n[model]\nname = synthetic\n"
             "[exchange]\nchannels = 65\n",
             NULL, "must be auto (one per NIC) or a whole number in 1..64");
  fails_with("[platform]\nnodes = 8\n[model]\nname = synthetic\n"
             "[exchange]\nreduce_rate = fast\n",
             NULL, "is not a rate (e.g. 5GBps) or fused");
}
