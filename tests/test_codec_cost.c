/* tests/test_codec_cost.c: the codec cost table (models/codec_cost.h):
 * its line format (comments, sources, replaced entries), the lookup by
 * spec, rgc selector and name, the CPU, GPU and NIC figures, and every
 * bad line named by file and line. Tables live in mkstemp files. */
#include "codec_cost.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* TEXT in a new temporary file; g_free() the path after unlink(). */
static char *write_table(const char *text) {
  char *path = g_build_filename(g_get_tmp_dir(), "gradsim-costs-XXXXXX",
                                NULL);
  int fd = g_mkstemp(path);
  cr_assert(fd >= 0, "mkstemp");
  size_t len = strlen(text);
  cr_assert_eq(write(fd, text, len), (ssize_t)len);
  close(fd);
  return path;
}

static codec_t *codec(const char *spec) {
  codec_t *c;
  char err[CODEC_ERR_MAX];
  cr_assert_eq(codec_create(spec, &c, err, sizeof err), 0, "%s: %s", spec,
               err);
  return c;
}

static const char TABLE[] =
    "# a comment \"with a quote\"\n"
    "gpu_bandwidth 1e9 \"one GB/s\"   # and a comment\n"
    "\n"
    "gpu_launch 1e-6 # a comment before \"a quote\"\n"
    "cpu fp16 2 3 0 \"a source # that is not a comment\"\n"
    "cpu topk 1 0 5\n"
    "\tgpu rgc/trimmed 2 1 \"x\"\n"
    "gpu rgc 7 7\n"
    "cpu fp16 4 6 0 \"a later line replaces an earlier one\"\n"
    "nic q8 4 32 8 1\n"
    "cpu trunc:bits=16 9 2 0\n"
    "cpu trunc:bits=12 7 1 0\n";

Test(codec_cost, figures_and_lookup) {
  char *path = write_table(TABLE);
  struct codec_costs *t;
  char err[512] = "";
  cr_assert_eq(codec_costs_load(path, &t, err, sizeof err), 0, "%s", err);
  codec_t *fp16 = codec("fp16"), *fp32 = codec("fp32"), *topk = codec("topk");
  codec_t *trimmed = codec("rgc:select=trimmed");
  codec_t *exact = codec("rgc:select=exact");
  codec_t *q8 = codec("q8");

  /* CPU: nanoseconds per value, plus per payload byte on decode. */
  cr_assert_float_eq(codec_cost_seconds(t, fp16, COST_CPU, true, 1000, 99),
                     4e-6, 1e-18);
  cr_assert_float_eq(codec_cost_seconds(t, fp16, COST_CPU, false, 1000, 99),
                     6e-6, 1e-18);
  cr_assert_float_eq(codec_cost_seconds(t, topk, COST_CPU, false, 1000, 100),
                     5e-7, 1e-18);
  cr_assert(codec_costs_has(t, topk, COST_CPU), "found by name");
  cr_assert_not(codec_costs_has(t, topk, COST_GPU));
  cr_assert_not(codec_costs_has(t, fp32, COST_CPU));
  cr_assert_eq(codec_cost_seconds(t, fp32, COST_CPU, true, 1000, 4000), 0);
  /* A setting the table does not list costs its codec's first listed one
   * (by the specs' text: bits=12 before bits=16), not nothing. */
  codec_t *r8 = codec("trunc:bits=7"), *r4 = codec("trunc:bits=16");
  cr_assert_float_eq(codec_cost_seconds(t, r8, COST_CPU, true, 1000, 0),
                     7e-6, 1e-18);
  cr_assert_float_eq(codec_cost_seconds(t, r4, COST_CPU, true, 1000, 0),
                     9e-6, 1e-18);
  codec_free(r8);
  codec_free(r4);

  /* GPU: a launch plus passes of 4 bytes per value and the payload over
   * the bandwidth; rgc by selector before rgc by name. */
  cr_assert_float_eq(codec_cost_seconds(t, trimmed, COST_GPU, true, 1000, 10),
                     1e-6 + (2 * 4000.0 + 10) / 1e9, 1e-18);
  cr_assert_float_eq(codec_cost_seconds(t, trimmed, COST_GPU, false, 1000,
                                        10),
                     1e-6 + (1 * 4000.0 + 10) / 1e9, 1e-18);
  cr_assert_float_eq(codec_cost_seconds(t, exact, COST_GPU, true, 1000, 10),
                     1e-6 + (7 * 4000.0 + 10) / 1e9, 1e-18);
  cr_assert_eq(codec_cost_seconds(t, fp16, COST_GPU, true, 1000, 10), 0);

  /* NIC: the engine's parameters as written. */
  struct nic_stream s = {0};
  cr_assert(codec_costs_nic(t, q8, &s));
  cr_assert_eq(s.lanes, 4);
  cr_assert_eq(s.bits_in, 32);
  cr_assert_eq(s.bits_out, 8);
  cr_assert_eq(s.passes, 1);
  cr_assert_not(codec_costs_nic(t, fp16, &s));
  cr_assert_not(codec_costs_nic(NULL, fp16, &s));

  codec_free(fp16);
  codec_free(fp32);
  codec_free(topk);
  codec_free(trimmed);
  codec_free(exact);
  codec_free(q8);
  codec_costs_free(t);
  unlink(path);
  g_free(path);
}

/* The table shipped in models/ loads and covers the codecs the
 * reproductions time on the CPU. */
Test(codec_cost, shipped_table) {
  struct codec_costs *t;
  char err[512] = "";
  cr_assert_eq(codec_costs_load(NULL, &t, err, sizeof err), 0, "%s", err);
  const char *specs[] = {"fp32", "inceptionn:eb=-10", "3lc:s=1,zre=1",
                         "rgc:ratio=0.001,select=trimmed,asq=0"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    codec_t *c = codec(specs[i]);
    cr_assert(codec_costs_has(t, c, COST_CPU), "%s", specs[i]);
    cr_assert_gt(codec_cost_seconds(t, c, COST_CPU, true, 1000, 0), 0, "%s",
                 specs[i]);
    codec_free(c);
  }
  codec_costs_free(t);
  codec_costs_free(NULL);
}

/* The shipped table prices every paper setting of every codec on the
 * CPU and the GPU, and on the NIC's streaming engine every codec without
 * value classes (inceptionn's engine is modelled cycle by cycle): a new
 * codec without its rows would cost nothing there. */
Test(codec_cost, shipped_table_covers_every_setting) {
  struct codec_costs *t;
  char err[512] = "";
  cr_assert_eq(codec_costs_load(NULL, &t, err, sizeof err), 0, "%s", err);
  for (size_t i = 0; i < codec_setting_count(); i++) {
    codec_t *c = codec(codec_setting(i));
    cr_expect(codec_costs_has(t, c, COST_CPU), "no cpu line for %s",
              codec_spec(c));
    cr_expect(codec_costs_has(t, c, COST_GPU), "no gpu line for %s",
              codec_spec(c));
    struct nic_stream nic;
    /* The tagged engine costs its own codec; a linear compressor's
     * products are refused on the NIC (README, "Collectives"). */
    if (!nic_tagged(c) && !codec_is_linear(c))
      cr_expect(codec_costs_nic(t, c, &nic), "no nic line for %s",
                codec_spec(c));
    codec_free(c);
  }
  codec_costs_free(t);
}

/* Each bad line is named by file and line (comments and blank lines
 * counted), the message right after the file name. */
Test(codec_cost, bad_tables) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"gpu_bandwidth 1e9\ncpu fp16 1 2\n",
       ":2: unknown line 'cpu' (expected cpu, gpu, nic, gpu_bandwidth or "
       "gpu_launch)"},
      {"# c\n\ncpu fp16 1 -2 0\n",
       ":3: expected 'cpu CODEC ENCODE_NS DECODE_NS DECODE_NS_PER_BYTE "
       "\"SOURCE\"' with numbers >= 0"},
      {"cpu fp16 1 2 x\n", ":1: expected 'cpu CODEC"},
      {"gpu fp16 1 nan\n",
       ":1: expected 'gpu CODEC ENCODE_PASSES DECODE_PASSES \"SOURCE\"'"},
      {"nic q8 0 32 8 1\n",
       ":1: expected 'nic CODEC LANES BITS_IN BITS_OUT PASSES \"SOURCE\"' "
       "with LANES, BITS_IN, BITS_OUT > 0 and PASSES >= 0"},
      {"nic q8 4 32 8 -1\n", ":1: expected 'nic CODEC"},
      {"nic q8 4 32 0 1\n", ":1: expected 'nic CODEC"},
      {"gpu_bandwidth 0\n", ":1: gpu_bandwidth must be > 0"},
      {"gpu_bandwidth 1e9\ngpu_launch -1e-6\n",
       ":2: gpu_launch must be seconds >= 0"},
      {"gpu_bandwidth 1e9 2e9\n", ":1: unknown line 'gpu_bandwidth'"},
      {"frobnicate 1\n", ":1: unknown line 'frobnicate'"},
      {"# only a comment\ncpu fp16 1 2 0\n", ": no gpu_bandwidth line"},
      {"", ": no gpu_bandwidth line"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = write_table(cases[i].text);
    struct codec_costs *t = (struct codec_costs *)1;
    char err[512] = "";
    cr_assert_eq(codec_costs_load(path, &t, err, sizeof err), -EINVAL,
                 "case %zu loaded", i);
    cr_assert_null(t, "case %zu", i);
    cr_assert(g_str_has_prefix(err, path), "case %zu names the file: %s", i,
              err);
    cr_assert(g_str_has_prefix(err + strlen(path), cases[i].want),
              "case %zu: %s", i, err);
    unlink(path);
    g_free(path);
  }
  /* A missing file: GLib's message, which names it. */
  struct codec_costs *t = (struct codec_costs *)1;
  char err[512] = "";
  cr_assert_eq(codec_costs_load("/nonexistent/costs.conf", &t, err,
                                sizeof err),
               -EINVAL);
  cr_assert_null(t);
  cr_assert(strstr(err, "/nonexistent/costs.conf"), "%s", err);
}
