/* tests/test_experiment.c: experiment files (config/experiment.h) without
 * simulating: reading from memory, sweeps and their limit, --set,
 * stragglers, and the effective configuration read back. */
#include "experiment.h"
#include "engine.h"
#include "estimate.h"

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

/* P and Q hold the same typed configuration: every field a key sets. */
static void same_point(const struct point *p, const struct point *q) {
  cr_expect_eq(q->topology, p->topology);
  cr_expect_eq(q->nodes, p->nodes);
  cr_expect_eq(q->aggregators, p->aggregators);
  cr_expect_eq(q->bandwidth_Bps, p->bandwidth_Bps);
  cr_expect_eq(q->latency_s, p->latency_s);
  cr_expect_eq(q->ideal, p->ideal);
  cr_expect_eq(q->gpus_per_node, p->gpus_per_node);
  cr_expect_eq(q->gpus_per_switch, p->gpus_per_switch);
  cr_expect_eq(q->pcie_Bps, p->pcie_Bps);
  cr_expect_eq(q->pcie_latency_s, p->pcie_latency_s);
  cr_expect_eq(q->nics_per_node, p->nics_per_node);
  cr_expect_eq(q->nvlink_Bps, p->nvlink_Bps);
  cr_expect_eq(q->nvlink_latency_s, p->nvlink_latency_s);
  cr_expect_eq(q->fabric, p->fabric);
  cr_expect_eq(q->leaf, p->leaf);
  cr_expect_eq(q->oversubscription, p->oversubscription);
  cr_expect_eq(q->group_size, p->group_size);
  for (int i = 0; i < 3; i++)
    cr_expect_eq(q->torus_dims[i], p->torus_dims[i]);
  cr_expect_str_eq(q->hosts_file, p->hosts_file);
  cr_expect_str_eq(q->model, p->model);
  cr_expect_eq(q->params, p->params);
  cr_expect_eq(q->tensors, p->tensors);
  cr_expect_eq(q->shape_dims, p->shape_dims);
  for (size_t i = 0; i < p->shape_dims && i < q->shape_dims; i++)
    cr_expect_eq(q->shape[i], p->shape[i]);
  cr_expect_eq(q->compute_s, p->compute_s);
  cr_expect_eq(q->update_s, p->update_s);
  cr_expect_eq(q->compute_scale, p->compute_scale);
  cr_expect_eq(q->update_Bps, p->update_Bps);
  cr_expect_str_eq(q->device, p->device);
  cr_expect_str_eq(q->precision, p->precision);
  cr_expect_eq(q->batch, p->batch);
  cr_expect_eq(q->seq_len, p->seq_len);
  cr_expect_eq(q->micro_batch, p->micro_batch);
  cr_expect_str_eq(q->grad_dtype, p->grad_dtype);
  cr_expect_eq(q->grad_bytes, p->grad_bytes);
  cr_expect_eq(q->mfu, p->mfu);
  cr_expect_str_eq(q->algorithm, p->algorithm);
  cr_expect_str_eq(q->codec, p->codec);
  cr_expect_eq(q->placement, p->placement);
  cr_expect_eq(q->reduce_Bps, p->reduce_Bps);
  cr_expect_eq(q->payload, p->payload);
  cr_expect_eq(q->sample, p->sample);
  cr_expect_eq(q->compress_min, p->compress_min);
  cr_expect_eq(q->pull_direct, p->pull_direct);
  cr_expect_eq(q->warmup_steps, p->warmup_steps);
  cr_expect_eq(q->server_momentum, p->server_momentum);
  cr_expect_eq(q->group, p->group);
  cr_expect_eq(q->chunk, p->chunk);
  cr_expect_eq(q->channels, p->channels);
  cr_expect_eq(q->tree_chunk, p->tree_chunk);
  cr_expect_eq(q->csc_ratio, p->csc_ratio);
  cr_expect_eq(q->fast_forward, p->fast_forward);
  cr_expect_eq(q->eager_bytes, p->eager_bytes);
  cr_expect_eq(q->envelope_bytes, p->envelope_bytes);
  cr_expect_str_eq(q->costs, p->costs);
  cr_expect_eq(q->nic.clock_hz, p->nic.clock_hz);
  cr_expect_eq(q->nic.burst_bits, p->nic.burst_bits);
  cr_expect_eq(q->framing.packets, p->framing.packets);
  cr_expect_eq(q->framing.mtu, p->framing.mtu);
  cr_expect_eq(q->framing.header_bytes, p->framing.header_bytes);
  cr_expect_eq(q->framing.frame_bytes, p->framing.frame_bytes);
  cr_expect_eq(q->framing.driver_s, p->framing.driver_s);
  cr_expect_eq(q->mode, p->mode);
  cr_expect_eq(q->iterations, p->iterations);
  cr_expect_eq(q->k, p->k);
  cr_expect_eq(q->fusion_bytes, p->fusion_bytes);
  cr_expect_eq(q->fusion_cycle_s, p->fusion_cycle_s);
  cr_expect_eq(q->local_steps, p->local_steps);
  cr_expect_str_eq(q->stragglers, p->stragglers);
  cr_expect_eq(q->step_overhead_s, p->step_overhead_s);
  cr_expect_eq(!q->slowdown, !p->slowdown);
  for (int w = 0; p->slowdown && q->slowdown && w < p->nodes; w++)
    cr_expect_eq(q->slowdown[w], p->slowdown[w], "worker %d", w);
  cr_expect_eq(q->grad.dist, p->grad.dist);
  cr_expect_eq(q->grad.scale, p->grad.scale);
  cr_expect_eq(q->grad.nu, p->grad.nu);
  cr_expect_eq(q->grad.zeros, p->grad.zeros);
  cr_expect_eq(q->grad.corr, p->grad.corr);
  cr_expect_eq(q->grad.persist, p->grad.persist);
  cr_expect_eq(q->grad.decay, p->grad.decay);
  cr_expect_eq(q->grad.seed, p->grad.seed);
}

/* The effective configuration of each point (config.txt) parses back to
 * the same text and hash, and to the same typed values: the values the
 * file gave (none a default, so that a key missing from the text would
 * show), the defaults it did not give, and every other field. */
Test(experiment, config_reads_back) {
  char *err = NULL;
  char *text = g_strconcat(
      BASE,
      "[platform]\naggregators = 1\nbandwidth = 1.25GBps\nlatency = 7us\n"
      "ideal = true\n"
      "[model]\nparams = 3000\ntensors = 3\ncompute = 0.002\n"
      "update = 0.0005\ncompute_scale = 1.5\n"
      "[exchange]\ncodec = rgc:ratio=0.01,asq=1, q8\nalgorithm = ps\n"
      "placement = gpu\nreduce_rate = 2GBps\npayload = sampled\n"
      "sample = 1024\ncompress_min = 16\npull = direct\nwarmup_steps = 2\n"
      "server_momentum = 0.9\neager_bytes = 64KiB\nenvelope_bytes = 58B\n"
      "[training]\nmode = overlap\niterations = 5\nfusion_bytes = 1MB\n"
      "stragglers = 1:3\nstep_overhead = 1ms\n"
      "[gradients]\ndist = student\nscale = 1e-3\nnu = 4\nzeros = 0.25\n"
      "corr = 0.5\npersist = 0.125\nseed = 42\n",
      NULL);
  struct experiment *e = load(text, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_eq(e->points->len, 2);
  static const char *const codecs[] = {"rgc:ratio=0.01,asq=1", "q8"};
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    /* What the file says. */
    cr_expect_eq(p->topology, TOPO_STAR);
    cr_expect_eq(p->nodes, 4);
    cr_expect_eq(p->aggregators, 1);
    cr_expect_eq(p->bandwidth_Bps, 1.25e9);
    cr_expect_float_eq(p->latency_s, 7e-6, 1e-18);
    cr_expect(p->ideal);
    cr_expect_str_eq(p->model, "synthetic");
    cr_expect_eq(p->params, 3000);
    cr_expect_eq(p->tensors, 3);
    cr_expect_eq(p->compute_s, 0.002);
    cr_expect_eq(p->update_s, 0.0005);
    cr_expect_eq(p->compute_scale, 1.5);
    cr_expect_str_eq(p->codec, codecs[i]);
    cr_expect_str_eq(p->algorithm, "ps");
    cr_expect_eq(p->placement, PLACE_GPU);
    cr_expect_eq(p->reduce_Bps, 2e9);
    cr_expect_eq(p->payload, PAYLOAD_SAMPLED);
    cr_expect_eq(p->sample, 1024);
    cr_expect_eq(p->compress_min, 16);
    cr_expect(p->pull_direct);
    cr_expect_eq(p->warmup_steps, 2);
    cr_expect_eq(p->server_momentum, 0.9);
    cr_expect_eq(p->eager_bytes, 65536);
    cr_expect_eq(p->envelope_bytes, 58);
    cr_expect_eq(p->mode, MODE_OVERLAP);
    cr_expect_eq(p->iterations, 5);
    cr_expect_eq(p->fusion_bytes, 1e6);
    cr_expect_str_eq(p->stragglers, "1:3");
    cr_assert_not_null(p->slowdown);
    for (int w = 0; w < 4; w++)
      cr_expect_eq(p->slowdown[w], w == 1 ? 3 : 1, "worker %d", w);
    cr_expect_float_eq(p->step_overhead_s, 1e-3, 1e-15);
    cr_expect_eq(p->grad.dist, GRADGEN_STUDENT);
    cr_expect_eq(p->grad.scale, 1e-3);
    cr_expect_eq(p->grad.nu, 4);
    cr_expect_eq(p->grad.zeros, 0.25);
    cr_expect_eq(p->grad.corr, 0.5);
    cr_expect_eq(p->grad.persist, 0.125);
    cr_expect_eq(p->grad.seed, 42);
    /* Defaults it did not give. */
    cr_expect_str_eq(p->device, "P100");
    cr_expect_str_eq(p->grad_dtype, "fp32");
    cr_expect_eq(p->grad_bytes, 4);
    cr_expect_eq(p->k, 2);
    cr_expect_eq(p->local_steps, 1);
    cr_expect_eq(p->chunk, 32000);
    cr_expect_eq(p->grad.decay, 1);

    /* Read back from its effective configuration. */
    struct experiment *again = experiment_load_data(
        "c.ini", p->config, strlen(p->config), NULL, 0, &err);
    cr_assert_not_null(again, "%s", err);
    cr_assert_eq(again->points->len, 1);
    const struct point *q = g_ptr_array_index(again->points, 0);
    cr_assert_str_eq(q->config, p->config);
    cr_assert_str_eq(q->hash, p->hash);
    same_point(p, q);
    experiment_free(again);
  }
  experiment_free(e);
  g_free(text);
}

Test(experiment, repeated_key) {
  /* GKeyFile would keep the last value of a repeated key, even in a
   * repeated section: it is refused, naming both lines. */
  fails_with("[platform]\nnodes = 4\nnodes = 0\n[model]\nname = a\n", NULL,
             "t.ini:3: [platform] nodes is given twice (first on line 2)");
  fails_with("[platform]\nnodes = 4\n[model]\nname = a\n[platform]\n"
             "# a comment\n  nodes=8\n",
             NULL, "t.ini:7: [platform] nodes is given twice (first on line "
                   "2)");
  /* The same name in two sections is two keys (a reproduction's claims
   * each have a kind). */
  char *err = NULL;
  struct experiment *e = load("[platform]\nnodes = 4\n[model]\nname = "
                              "synthetic\n[reproduce.claim a]\nkind = check\n"
                              "[reproduce.claim b]\nkind = check\n",
                              NULL, 0, &err);
  cr_assert_not_null(e, "%s", err ? err : "?");
  experiment_free(e);
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
  e = load("[platform]\npreset = dgx-a100, p4d, p3dn, hgx-h100, p5\n"
           "nodes = 16\n[model]\nname = synthetic\n",
           NULL, 0, &err);
  cr_assert_not_null(e, "%s", err);
  cr_assert_eq(e->points->len, 5);
  int nics[] = {8, 4, 1, 8, 8};
  /* What AWS's network plugin reports to NCCL's tuner (presets.c). */
  double net_lat[] = {0, 75e-6, 150e-6, 0, 75e-6};
  for (int i = 0; i < 5; i++) {
    p = g_ptr_array_index(e->points, (guint)i);
    cr_expect_eq(p->nics_per_node, nics[i], "point %d", i);
    cr_expect_float_eq(p->nccl_net_latency_s, net_lat[i], 1e-12, "point %d", i);
  }
  /* The p5: NVLink SHARP, and AWS's plugin's NVLS-tree chunk. */
  const struct point *p5 = g_ptr_array_index(e->points, 4);
  cr_expect(p5->nvls, "p5: no NVLS");
  cr_expect_float_eq(p5->nvlstree_max_chunk, 524288, 0.5);
  cr_expect_float_eq(p5->latency_s, 20e-6, 1e-12);
  /* EFA's rate as an all-to-all measures it, not the adapters' 400. */
  cr_expect_float_eq(p5->bandwidth_Bps, 335e9 / 8, 1);
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
             NULL,
             "must be fused or a rate with its unit (bps or Bps after "
             "k, M, G, T or Ki, Mi, Gi, Ti), 1kbps to 100Tbps (e.g. "
             "5GBps)");
  fails_with("[platform]\nnodes = 8\n[model]\nname = synthetic\n"
             "[training]\nfusion_bytes = 512KB\n",
             NULL,
             "fusion_bytes = 512KB: must be all, 0 or a size with its "
             "unit (B after k, M, G, T, P or Ki, Mi, Gi, Ti, Pi), up "
             "to 1PB (e.g. 25MB)");
}

/* The estimate of the one point of experiment TEXT. */
static struct estimate estimate_of(const char *text) {
  char *err = NULL;
  struct experiment *e = load(text, NULL, 0, &err);
  cr_assert_not_null(e, "%s", err ? err : "?");
  const struct point *p = g_ptr_array_index(e->points, 0);
  struct estimate est;
  cr_assert_eq(estimate_point(p, &est, &err), 0, "%s", err ? err : "?");
  experiment_free(e);
  return est;
}

/* Stacks without guard pages above SimGrid's mapping limit, and then
 * counted whole in the estimate (calloc touches every page): the estimate
 * of a point past the limit grows by at least a stack per actor. */
Test(estimate, unguarded_stacks_counted) {
  cr_assert(run_stack_guards(1000));
  cr_assert(!run_stack_guards(100000));
  cr_assert_eq(run_stack_bytes(1000), 0);
  double per_host[2];
  const int nodes[2] = {8000, 40000};
  for (int k = 0; k < 2; k++) {
    char *text = g_strdup_printf("[platform]\ntopology = star\nnodes = %d\n"
                                 "[model]\nname = synthetic\nparams = 1024\n"
                                 "[training]\nmode = overlap\n",
                                 nodes[k]);
    per_host[k] = estimate_of(text).hosts_bytes / nodes[k];
    g_free(text);
  }
  /* overlap: two actors a worker, 80,000 in all at 40,000 workers */
  cr_expect_geq(per_host[1] - per_host[0], 2 * RUN_STACK_KIB * 1024 - 1,
                "%g against %g bytes a host", per_host[1], per_host[0]);
}

/* allgather-rdb's workers each hold a reference to every worker's message:
 * the estimate counts p^2 of them (11 bytes a pair), so that 65,536
 * workers are refused before the run instead of running out of memory. */
Test(estimate, allgather_pairs_counted) {
  double host_bytes[2];
  const char *algorithm[2] = {"rabenseifner", "allgather-rdb"};
  for (int k = 0; k < 2; k++) {
    char *text = g_strdup_printf("[platform]\ntopology = star\nnodes = 8192\n"
                                 "[model]\nname = synthetic\nparams = 1024\n"
                                 "[exchange]\nalgorithm = %s\n",
                                 algorithm[k]);
    host_bytes[k] = estimate_of(text).hosts_bytes;
    g_free(text);
  }
  cr_expect_geq(host_bytes[1] - host_bytes[0], 11.0 * 8192 * 8192,
                "allgather-rdb %g bytes, rabenseifner %g", host_bytes[1],
                host_bytes[0]);
}

/* inceptionn's balanced ring fast-forwards a leg only when p divides the
 * bucket's values: with one value more, the estimate counts every step
 * (2 (p - 1) messages a worker), not the few simulated before the skip. */
Test(estimate, unequal_blocks_counted_in_full) {
  double messages[2];
  for (int k = 0; k < 2; k++) {
    char *text = g_strdup_printf("[platform]\ntopology = star\nnodes = 4096\n"
                                 "[model]\nname = synthetic\nparams = %d\n"
                                 "[exchange]\nalgorithm = inceptionn\n"
                                 "payload = none\n[training]\niterations = 1\n",
                                 4096 * 256 + k);
    messages[k] = estimate_of(text).messages;
    g_free(text);
  }
  cr_expect_lt(messages[0], 1e6, "%g messages", messages[0]);
  cr_expect_geq(messages[1], 2.0 * 4095 * 4096, "%g messages", messages[1]);
}

/* Every name of the engine's enum tables is the key value that selects
 * it, and nothing else is accepted (the tables are the one spelling). */
Test(experiment, enum_names_select_their_values) {
  static const struct {
    const char *key;
    const char *const *names;
    int count;
  } tables[] = {
      {"platform.fabric", fabric_names, FABRIC_COUNT},
      {"exchange.payload", payload_names, PAYLOAD_COUNT},
      {"exchange.placement", placement_names, PLACE_COUNT},
      {"training.mode", mode_names, MODE_COUNT},
  };
  for (size_t t = 0; t < G_N_ELEMENTS(tables); t++)
    for (int i = 0; i < tables[t].count; i++) {
      cr_assert_not_null(tables[t].names[i], "%s %d", tables[t].key, i);
      char *set = g_strdup_printf("%s=%s", tables[t].key, tables[t].names[i]);
      char *sets[] = {set, NULL}, *err = NULL;
      struct experiment *e = load(BASE, sets, 0, &err);
      cr_assert_not_null(e, "%s: %s", set, err ? err : "?");
      const struct point *p = g_ptr_array_index(e->points, 0);
      int got = t == 0   ? (int)p->fabric
                : t == 1 ? (int)p->payload
                : t == 2 ? (int)p->placement
                         : (int)p->mode;
      cr_expect_eq(got, i, "%s", set);
      experiment_free(e);
      g_free(set);
    }
  char *sets[] = {"training.mode=Sync", NULL}, *err = NULL;
  cr_expect_null(load(BASE, sets, 0, &err));
  cr_expect(err && strstr(err, "sync, overlap, pipe"), "%s", err ? err : "");
  g_free(err);
}

/* ingress_bandwidth: the star's one-way links; elsewhere refused with the
 * key and where it applies; a rate or "same". */
Test(experiment, ingress_only_on_the_star) {
  char *sets[] = {"platform.ingress_bandwidth=1Gbps", NULL};
  char *err = NULL;
  struct experiment *e = load(BASE, sets, 0, &err);
  cr_assert_not_null(e, "%s", err ? err : "?");
  const struct point *p = g_ptr_array_index(e->points, 0);
  cr_expect_float_eq(p->ingress_Bps, 1.25e8, 1);
  experiment_free(e);
  char *tree[] = {"platform.ingress_bandwidth=1Gbps",
                  "platform.topology=fat-tree", NULL};
  fails_with(BASE, tree,
             "ingress_bandwidth applies to the star topology, not to "
             "fat-tree");
  char *bad[] = {"platform.ingress_bandwidth=fast", NULL};
  fails_with(BASE, bad, "must be same or a rate");
}

/* host_stack is a limiter link of the <cluster> topologies whose
 * switches carry none (the dragonfly's routers would: refused); the
 * others refuse it with a message naming the key and where it applies. */
Test(experiment, host_stack_only_on_cluster_topologies) {
  char *sets[] = {"platform.host_stack=10Gbps", "platform.topology=star",
                  NULL};
  char *err = NULL;
  struct experiment *e = load(BASE, sets, 0, &err);
  cr_assert_not_null(e, "%s", err ? err : "?");
  const struct point *p = g_ptr_array_index(e->points, 0);
  cr_expect_float_eq(p->host_stack_Bps, 1.25e9, 1);
  experiment_free(e);
  char *gpu[] = {"platform.host_stack=10Gbps",
                 "platform.topology=gpu-cluster", NULL};
  fails_with("[platform]\nnodes = 8\n[model]\nname = synthetic\n", gpu,
             "host_stack applies to the star");
  char *df[] = {"platform.host_stack=10Gbps", "platform.topology=dragonfly",
                NULL};
  fails_with("[platform]\nnodes = 8\n[model]\nname = synthetic\n", df,
             "not to dragonfly");
  char *bad[] = {"platform.host_stack=fast", NULL};
  fails_with(BASE, bad, "must be none or a rate");
}
