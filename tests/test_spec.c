/* tests/test_spec.c: the [reproduce] sections of an experiment file
 * (repro/spec.c, repro_load() of repro.h): every section read back into
 * its typed fields, --quick and its limits, and every refusal: one line
 * that starts with the file's name and names the section and key. Files
 * are written into a fresh g_dir_make_tmp directory, removed at the
 * end. */
#include "repro.h"

#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

static char *Dir;

static void setup(void) {
  Dir = g_dir_make_tmp("gsspec-XXXXXX", NULL);
  cr_assert_not_null(Dir);
}

static void teardown(void) {
  GDir *d = g_dir_open(Dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    char *p = g_build_filename(Dir, name, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(Dir);
  g_free(Dir);
}

TestSuite(spec, .init = setup, .fini = teardown);

/* TEXT written to DIR/NAME (g_free). */
static char *write_file(const char *name, const char *text) {
  char *path = g_build_filename(Dir, name, NULL);
  cr_assert(g_file_set_contents(path, text, -1, NULL), "%s", path);
  return path;
}

static struct repro *load_ok(const char *text, bool quick) {
  char *path = write_file("spec.ini", text), *err = NULL;
  struct repro *r = repro_load(path, quick, NULL, &err);
  cr_assert_not_null(r, "%s", err ? err : "?");
  cr_assert_null(err);
  g_free(path);
  return r;
}

/* TEXT is refused with one line "DIR/bad.ini: " WANT... (WANT is the
 * start of what follows the file's name). */
static void refused(const char *text, bool quick, const char *want) {
  char *path = write_file("bad.ini", text), *err = NULL;
  struct repro *r = repro_load(path, quick, NULL, &err);
  cr_assert_null(r, "loaded, wanted '%s':\n%s", want, text);
  cr_assert_not_null(err);
  char *head = g_strconcat(path, ": ", want, NULL);
  cr_expect(g_str_has_prefix(err, head), "'%s'\ndoes not start with\n'%s'",
            err, head);
  cr_expect(!strchr(err, '\n'), "more than one line: %s", err);
  g_free(head);
  g_free(err);
  g_free(path);
}

/* What every valid reproduction needs (a run, one variant, one claim). */
#define HEAD "[reproduce]\ntitle = T\nsource = S\n"
#define VARIANT "[reproduce.variant A]\nexchange.algorithm = ring\n"
#define CLAIM                                                                 \
  "[reproduce.claim c]\nkind = validation\ntext = x\nsource = y\n"           \
  "value = 1\npaper = 1\n"

static const char FULL[] =
    "[platform]\nnodes = 4\n[model]\nname = synthetic\n"
    "[reproduce]\n"
    "kind = run\n"
    "title = Table 9: the ring against WA\n"
    "source = seeds/001, Section 5\n"
    "setup = four workers\n"
    "discussion = First.\\nSecond.\n"
    "codecs = none, q8\n"
    "steps = 100\n"
    "[reproduce.quick]\n"
    "platform.nodes = 2\n"
    "steps = 10\n"
    "[reproduce.variant WA]\n"
    "exchange.algorithm = ps\n"
    "platform.aggregators = 1\n"
    "quick.training.iterations = 1\n"
    "[reproduce.variant WA#big]\n"
    "platform.nodes = 8\n"
    "[reproduce.variant ring]\n"
    "exchange.algorithm = ring\n"
    "[reproduce.derive]\n"
    "per_node = iteration_s / nodes\n"
    "twice = 2 * per_node\n"
    "[reproduce.claim faster]\n"
    "kind = validation\n"
    "text = the ring is faster\n"
    "source = Fig. 3\n"
    "value = iteration_s{variant=WA} / iteration_s{variant=ring}\n"
    "paper = 2.5\n"
    "tolerance = rel 0.4: read off a plot\n"
    "note = a note\n"
    "[reproduce.claim scale]\n"
    "kind = check\n"
    "text = time grows\n"
    "source = Table 9\n"
    "value = iteration_s{variant=ring}\n"
    "by = nodes: 4, , 8\n"
    "paper = 1..2, >3\n"
    "tolerance = abs 0.01\n"
    "[reproduce.claim gpu]\n"
    "kind = validation\n"
    "text = GPU time\n"
    "source = Table 2\n"
    "value = 1\n"
    "paper = <0.5\n"
    "not_evaluable = GPU timings on a CPU\n"
    "[reproduce.claim cal]\n"
    "kind = calibration\n"
    "text = bandwidth\n"
    "source = Table 1\n"
    "value = iteration_s{variant=WA}\n"
    "by = nodes: 4, 8\n"
    "paper = 1.5, 2..3\n"
    "[reproduce.calibrate bw]\n"
    "fit = platform.bandwidth\n"
    "claim = cal\n"
    "group = 8\n"
    "range = 1..100\n"
    "unit = Gbps\n"
    "variants = WA, ring\n"
    "apply = ring\n"
    "precision = 1e-2\n"
    "[reproduce.calibrate lat]\n"
    "fit = platform.latency\n"
    "claim = cal\n"
    "group = 4\n"
    "range = 0..1e-5\n";

static const char *str(const GPtrArray *a, guint i) {
  return g_ptr_array_index(a, i);
}

static const struct repro_claim *claim(const struct repro *r, guint i) {
  return g_ptr_array_index(r->claims, i);
}

static const struct paper_value *paper(const struct repro_claim *c,
                                       guint i) {
  return &g_array_index(c->paper, struct paper_value, i);
}

/* E over the table "variant,nodes,iteration_s": WA 4 2, ring 4 0.5. */
static double eval(const struct expr *e, const char *bind_col,
                   const char *bind_val) {
  char *err = NULL;
  struct table *t = table_parse_csv("variant,nodes,iteration_s\n"
                                    "WA,4,2\nring,4,0.5\nring,8,1.5\n",
                                    &err);
  cr_assert_not_null(t, "%s", err);
  double v = NAN;
  int rc = expr_eval(e, t, bind_col, bind_val, -1, &v, &err);
  cr_assert_eq(rc, 0, "%s", err ? err : "");
  table_free(t);
  return v;
}

Test(spec, reads_back_typed_values) {
  struct repro *r = load_ok(FULL, false);
  cr_expect(g_str_has_suffix(r->path, "/spec.ini"), "%s", r->path);
  cr_expect_str_eq(r->name, "spec");
  cr_expect_eq(r->kind, REPRO_RUN);
  cr_expect_str_eq(r->title, "Table 9: the ring against WA");
  cr_expect_str_eq(r->source, "seeds/001, Section 5");
  cr_expect_str_eq(r->setup, "four workers");
  cr_expect_str_eq(r->discussion, "First.\nSecond.");
  cr_expect_str_eq(r->plot, "spec"); /* the default: the name */
  cr_expect_str_eq(repro_param(r, "codecs", NULL), "none, q8");
  cr_expect_str_eq(repro_param(r, "steps", NULL), "100");
  cr_expect_str_eq(repro_param(r, "sizes", "dflt"), "dflt");
  cr_expect_eq(r->sets->len, 0, "--quick's keys without --quick");

  /* Variants in file order; LABEL#part is another variant of LABEL. */
  cr_assert_eq(r->variants->len, 3);
  static const char *const labels[] = {"WA", "WA", "ring"};
  static const guint nsets[] = {2, 1, 1};
  for (guint i = 0; i < 3; i++) {
    const struct repro_variant *v = g_ptr_array_index(r->variants, i);
    cr_expect_str_eq(v->label, labels[i]);
    cr_expect_eq(v->sets->len, nsets[i], "variant %u", i);
    cr_expect_eq(v->quick_sets->len, 0, "variant %u", i);
  }
  const struct repro_variant *wa = g_ptr_array_index(r->variants, 0);
  cr_expect_str_eq(str(wa->sets, 0), "exchange.algorithm=ps");
  cr_expect_str_eq(str(wa->sets, 1), "platform.aggregators=1");
  cr_expect_str_eq(
      str(((const struct repro_variant *)g_ptr_array_index(r->variants, 1))
              ->sets,
          0),
      "platform.nodes=8");

  /* Derived columns in file order, their expressions parsed. */
  cr_assert_eq(r->derive_names->len, 2);
  cr_expect_str_eq(str(r->derive_names, 0), "per_node");
  cr_expect_str_eq(str(r->derive_names, 1), "twice");
  cr_assert_eq(r->derive_exprs->len, 2);

  /* Claims. */
  cr_assert_eq(r->claims->len, 4);
  const struct repro_claim *c = claim(r, 0);
  cr_expect_str_eq(c->id, "faster");
  cr_expect_eq(c->kind, CLAIM_VALIDATION);
  cr_expect_str_eq(c->text, "the ring is faster");
  cr_expect_str_eq(c->source, "Fig. 3");
  cr_expect_str_eq(c->note, "a note");
  cr_expect_null(c->by);
  cr_assert_eq(c->groups->len, 1);
  cr_expect_str_eq(str(c->groups, 0), "");
  cr_assert_eq(c->paper->len, 1);
  cr_expect_eq(paper(c, 0)->kind, PAPER_VALUE);
  cr_expect_eq(paper(c, 0)->lo, 2.5);
  cr_expect_eq(paper(c, 0)->hi, 2.5);
  cr_expect_str_eq(paper(c, 0)->text, "2.5");
  cr_expect_eq(c->tol, 0.4);
  cr_expect(!c->tol_abs);
  cr_expect_str_eq(c->tol_why, "read off a plot");
  cr_expect_null(c->not_evaluable);
  cr_expect_float_eq(eval(c->expr, "nodes", "4"), 4, 1e-12);

  c = claim(r, 1);
  cr_expect_str_eq(c->id, "scale");
  cr_expect_eq(c->kind, CLAIM_CHECK);
  cr_expect_str_eq(c->by, "nodes");
  cr_assert_eq(c->groups->len, 2, "empty values of by are skipped");
  cr_expect_str_eq(str(c->groups, 0), "4");
  cr_expect_str_eq(str(c->groups, 1), "8");
  cr_assert_eq(c->paper->len, 2);
  cr_expect_eq(paper(c, 0)->kind, PAPER_RANGE);
  cr_expect_eq(paper(c, 0)->lo, 1);
  cr_expect_eq(paper(c, 0)->hi, 2);
  cr_expect_str_eq(paper(c, 0)->text, "1..2");
  cr_expect_eq(paper(c, 1)->kind, PAPER_GT);
  cr_expect_eq(paper(c, 1)->lo, 3);
  cr_expect_str_eq(paper(c, 1)->text, ">3");
  cr_expect(c->tol_abs);
  cr_expect_eq(c->tol, 0.01);
  cr_expect_null(c->tol_why);
  cr_expect_float_eq(eval(c->expr, c->by, "8"), 1.5, 1e-12);

  c = claim(r, 2);
  cr_expect_str_eq(c->id, "gpu");
  cr_expect_eq(paper(c, 0)->kind, PAPER_LT);
  cr_expect_eq(paper(c, 0)->lo, 0.5);
  cr_expect_str_eq(c->not_evaluable, "GPU timings on a CPU");
  cr_expect_eq(c->tol, 0.25, "the default tolerance");
  cr_expect(!c->tol_abs);

  c = claim(r, 3);
  cr_expect_eq(c->kind, CLAIM_CALIBRATION);
  cr_expect_eq(paper(c, 0)->kind, PAPER_VALUE);
  cr_expect_eq(paper(c, 1)->kind, PAPER_RANGE);
  cr_expect_eq(paper(c, 1)->lo, 2);
  cr_expect_eq(paper(c, 1)->hi, 3);

  /* Calibrations in file order, their claim and group resolved. */
  cr_assert_eq(r->calibrate->len, 2);
  const struct repro_calibrate *k = g_ptr_array_index(r->calibrate, 0);
  cr_expect_str_eq(k->name, "bw");
  cr_expect_str_eq(k->fit, "platform.bandwidth");
  cr_expect_str_eq(k->claim_id, "cal");
  cr_expect_eq(k->claim, c);
  cr_expect_str_eq(k->group, "8");
  cr_expect_eq(k->group_index, 1);
  cr_expect_eq(k->lo, 1);
  cr_expect_eq(k->hi, 100);
  cr_expect_str_eq(k->unit, "Gbps");
  cr_expect_eq(k->precision, 1e-2);
  cr_assert_eq(k->variants->len, 2);
  cr_expect_str_eq(str(k->variants, 0), "WA");
  cr_expect_str_eq(str(k->variants, 1), "ring");
  cr_assert_eq(k->apply->len, 1);
  cr_expect_str_eq(str(k->apply, 0), "ring");
  k = g_ptr_array_index(r->calibrate, 1);
  cr_expect_str_eq(k->name, "lat");
  cr_expect_eq(k->group_index, 0);
  cr_expect_eq(k->lo, 0);
  cr_expect_eq(k->hi, 1e-5);
  cr_expect_eq(k->precision, 1e-3, "the default precision");
  cr_expect_str_eq(k->unit, "", "no unit: a plain number");
  cr_expect_eq(k->variants->len, 0);
  cr_expect_eq(k->apply->len, 0);
  repro_free(r);
}

/* --quick: [reproduce.quick]'s simulation keys and parameters, and the
 * variants' quick. keys, apply; nothing else changes. */
Test(spec, quick_applies_its_keys) {
  struct repro *r = load_ok(FULL, true);
  cr_assert_eq(r->sets->len, 1);
  cr_expect_str_eq(str(r->sets, 0), "platform.nodes=2");
  cr_expect_str_eq(repro_param(r, "steps", NULL), "10");
  cr_expect_str_eq(repro_param(r, "codecs", NULL), "none, q8");
  const struct repro_variant *wa = g_ptr_array_index(r->variants, 0);
  cr_assert_eq(wa->quick_sets->len, 1);
  cr_expect_str_eq(str(wa->quick_sets, 0), "training.iterations=1");
  cr_expect_eq(wa->sets->len, 2);
  repro_free(r);
}

/* The other kinds need no variant; the plot key names the plot. */
Test(spec, kinds) {
  struct repro *r = load_ok(HEAD "kind = codec-ratio\nplot = ratios\n" CLAIM,
                            false);
  cr_expect_eq(r->kind, REPRO_CODEC_RATIO);
  cr_expect_eq(r->variants->len, 0);
  cr_expect_str_eq(r->plot, "ratios");
  repro_free(r);
  r = load_ok(HEAD "kind = select-time\n" CLAIM, false);
  cr_expect_eq(r->kind, REPRO_SELECT_TIME);
  repro_free(r);
  /* A check (not a validation) may be wider than rel 0.25 without a
   * reason. */
  r = load_ok(HEAD VARIANT CLAIM "[reproduce.claim w]\nkind = check\n"
                                 "text = x\nsource = y\nvalue = 1\n"
                                 "paper = 1\ntolerance = rel 0.9\n",
              false);
  cr_expect_eq(claim(r, 1)->tol, 0.9);
  repro_free(r);
  /* A contradicted paper number with the note that says why. */
  r = load_ok(HEAD VARIANT CLAIM "[reproduce.claim x]\nkind = contradicted\n"
                                 "text = x\nsource = y\nvalue = 1\n"
                                 "paper = 1\nnote = Fig. 2 gives 2\n",
              false);
  cr_expect_eq(claim(r, 1)->kind, CLAIM_CONTRADICTED);
  cr_expect_str_eq(claim_kind_name(claim(r, 1)->kind), "contradicted");
  repro_free(r);
}

Test(spec, refuses_files) {
  char *missing = g_build_filename(Dir, "none.ini", NULL), *err = NULL;
  cr_expect_null(repro_load(missing, false, NULL, &err));
  cr_assert_not_null(err);
  char *head = g_strconcat(missing, ": ", NULL);
  cr_expect(g_str_has_prefix(err, head) && !strchr(err, '\n'), "%s", err);
  g_free(head);
  g_free(err);
  g_free(missing);
  refused("this is no key file\n", false, "Key file contains line");
  refused("[platform]\nnodes = 4\n", false,
          "no [reproduce] section: not a reproduction");
  refused(HEAD VARIANT CLAIM "[reproduce.extra]\nx = 1\n", false,
          "unknown section [reproduce.extra] (valid: reproduce, "
          "reproduce.quick, reproduce.variant LABEL, reproduce.derive, "
          "reproduce.claim ID, reproduce.calibrate NAME, reproduce.mechanism "
          "NAME)");
}

Test(spec, refuses_the_whole) {
  refused(HEAD "colour = red\n" VARIANT CLAIM, false,
          "[reproduce] unknown key 'colour' (valid: title, source, setup, "
          "discussion, kind, plot, codecs,");
  refused(HEAD "kind = magic\n" VARIANT CLAIM, false,
          "[reproduce] kind = magic: must be run, codec-ratio or "
          "select-time");
  refused("[reproduce]\ntitle = T\n" VARIANT CLAIM, false,
          "[reproduce] needs a title and a source");
  refused("[reproduce]\nsource = S\n" VARIANT CLAIM, false,
          "[reproduce] needs a title and a source");
  refused(HEAD CLAIM, false,
          "kind = run needs at least one [reproduce.variant LABEL] "
          "section");
  refused(HEAD VARIANT, false,
          "no [reproduce.claim ID] section: a reproduction states the "
          "paper's claims");
}

Test(spec, refuses_variants_and_quick) {
  refused(HEAD CLAIM "[reproduce.variant #part]\nexchange.codec = q8\n",
          false, "[reproduce.variant #part] needs a label");
  refused(HEAD CLAIM "[reproduce.variant B]\niterations = 3\n", false,
          "[reproduce.variant B] key 'iterations' must be section.key of "
          "the simulation (e.g. exchange.codec), or quick.section.key");
  refused(HEAD CLAIM "[reproduce.variant B]\nnosuch.key = 3\n", false,
          "[reproduce.variant B] key 'nosuch.key' must be section.key");
  static const char *const quick_err =
      "--quick may not change exchange.codec: it cuts sizes only, never a "
      "design or a schedule (allowed: training.iterations, "
      "exchange.warmup_steps, exchange.sample, platform.nodes, "
      "model.params; parameters sample, warmup, steps, sizes, runs)";
  /* Refused with or without --quick. */
  for (int quick = 0; quick < 2; quick++) {
    char *want = g_strconcat("[reproduce.variant B] ", quick_err, NULL);
    refused(HEAD CLAIM "[reproduce.variant B]\nquick.exchange.codec = q8\n",
            quick, want);
    g_free(want);
    want = g_strconcat("[reproduce.quick] ", quick_err, NULL);
    refused(HEAD VARIANT CLAIM "[reproduce.quick]\nexchange.codec = q8\n",
            quick, want);
    g_free(want);
  }
  refused(HEAD VARIANT CLAIM "[reproduce.quick]\ntitle = Quick\n", false,
          "[reproduce.quick] --quick may not change title");
  refused(HEAD VARIANT CLAIM "[reproduce.quick]\ncolour = red\n", false,
          "[reproduce.quick] unknown key 'colour' (section.key of the "
          "simulation, or a [reproduce] key)");
  refused(HEAD VARIANT CLAIM "[reproduce.derive]\nbad = 1 +\n", false,
          "[reproduce.derive] bad: ");
}

/* A claim section with BODY after its kind, text and source. */
#define BAD_CLAIM(body)                                                       \
  HEAD VARIANT "[reproduce.claim d]\nkind = validation\ntext = x\n"          \
               "source = y\n" body

Test(spec, refuses_claims) {
  refused(BAD_CLAIM("value = 1\npaper = 1\ncolour = red\n"), false,
          "[reproduce.claim d] unknown key 'colour' (valid: kind, text, "
          "source, value, by, paper, tolerance, note, not_evaluable)");
  refused(BAD_CLAIM("value = 1\n"), false,
          "[reproduce.claim d] needs kind, text, source, value and paper");
  refused(BAD_CLAIM("paper = 1\n"), false,
          "[reproduce.claim d] needs kind, text, source, value and paper");
  refused(HEAD VARIANT "[reproduce.claim d]\ntext = x\nsource = y\n"
                       "value = 1\npaper = 1\n",
          false,
          "[reproduce.claim d] needs kind, text, source, value and paper");
  refused(HEAD VARIANT "[reproduce.claim d]\nkind = guess\ntext = x\n"
                       "source = y\nvalue = 1\npaper = 1\n",
          false,
          "[reproduce.claim d] kind = guess: must be validation (a paper "
          "measurement gradsim predicts), calibration (a paper number a "
          "parameter was set to), check (arithmetic, or true by "
          "construction) or contradicted (a paper number its own paper "
          "contradicts)");
  /* A contradicted number is not scored, so it must say why. */
  refused(HEAD VARIANT "[reproduce.claim d]\nkind = contradicted\ntext = x\n"
                       "source = y\nvalue = 1\npaper = 1\n",
          false,
          "[reproduce.claim d] kind = contradicted needs a note: the "
          "paper's lines that contradict the number, and the arithmetic");
  refused(HEAD VARIANT "[reproduce.claim d]\nkind = check\ntext = x\n"
                       "source = y\nvalue = 1\npaper = 1\n"
                       "not_evaluable = no GPU\n",
          false,
          "[reproduce.claim d] not_evaluable needs a reason and a "
          "validation claim");
  refused(BAD_CLAIM("value = 1\npaper = 1\nnot_evaluable =\n"), false,
          "[reproduce.claim d] not_evaluable needs a reason");
  refused(BAD_CLAIM("value = 1 +\npaper = 1\n"), false,
          "[reproduce.claim d] value: ");
  refused(BAD_CLAIM("value = 1\npaper = 1\nby = nodes\n"), false,
          "[reproduce.claim d] by = nodes: expected COLUMN: value, value, "
          "...");
  refused(BAD_CLAIM("value = 1\npaper = 1\nby = : 4, 8\n"), false,
          "[reproduce.claim d] by = : 4, 8: expected COLUMN: value");
  /* A column without values: every group's binding would match nothing. */
  refused(BAD_CLAIM("value = 1\npaper = 1\nby = nodes:\n"), false,
          "[reproduce.claim d] by names no value of nodes (expected "
          "COLUMN: value, value, ...)");
  refused(BAD_CLAIM("value = 1\npaper = 1\nby = nodes: , \n"), false,
          "[reproduce.claim d] by names no value of nodes");
  refused(BAD_CLAIM("value = 1\npaper = 1, 2\nby = nodes: 4, 8, 16\n"),
          false,
          "[reproduce.claim d] paper has 2 values for 3 groups (give one, "
          "or one per value of 'by')");
  static const char *const papers[] = {"abc", "2..1", "1..", "..2", ">",
                                       "<x",  "1 2",  "inf", "nan"};
  for (size_t i = 0; i < G_N_ELEMENTS(papers); i++) {
    char *text = g_strdup_printf(BAD_CLAIM("value = 1\npaper = %s\n"),
                                 papers[i]);
    char *want = g_strdup_printf("[reproduce.claim d] paper = %s: expected "
                                 "a number, LO..HI, >X or <X",
                                 papers[i]);
    refused(text, false, want);
    g_free(want);
    g_free(text);
  }
  refused(BAD_CLAIM("value = 1\npaper =\n"), false,
          "[reproduce.claim d] paper has 0 values for 1 groups");
  static const char *const tols[] = {"rel", "pct 0.1", "rel -1", "rel x",
                                     "rel nan", "abs 1 2", "rel inf"};
  for (size_t i = 0; i < G_N_ELEMENTS(tols); i++) {
    char *text = g_strdup_printf(BAD_CLAIM("value = 1\npaper = 1\n"
                                           "tolerance = %s\n"),
                                 tols[i]);
    char *want = g_strdup_printf("[reproduce.claim d] tolerance = %s: "
                                 "expected 'rel R' or 'abs A' with R, A >= "
                                 "0, then ': why' if wider than rel 0.25",
                                 tols[i]);
    refused(text, false, want);
    g_free(want);
    g_free(text);
  }
  refused(BAD_CLAIM("value = 1\npaper = 1\ntolerance = rel 0.5\n"), false,
          "[reproduce.claim d] tolerance = rel 0.5: a validation claim "
          "wider than rel 0.25 says why (tolerance = rel 0.5: REASON)");
  refused(BAD_CLAIM("value = 1\npaper = 1\ntolerance = rel 0.5:\n"), false,
          "[reproduce.claim d] tolerance = rel 0.5: a validation claim "
          "wider than rel 0.25 says why");
}

/* A calibration section NAME k with BODY, beside a calibration claim cal
 * by nodes (4, 8) and a validation claim c. */
#define BAD_CAL(body)                                                         \
  HEAD VARIANT CLAIM "[reproduce.claim cal]\nkind = calibration\n"           \
                     "text = x\nsource = y\nvalue = 1\nby = nodes: 4, 8\n"   \
                     "paper = 1, >2\n"                                        \
                     "[reproduce.calibrate k]\n" body

Test(spec, refuses_calibrations) {
  /* The well-formed one loads. */
  struct repro *r = load_ok(
      BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 4\n"
              "range = 0.1..10\n"),
      false);
  repro_free(r);
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 4\n"
                  "range = 0.1..10\ncolour = red\n"),
          false,
          "[reproduce.calibrate k] unknown key 'colour' (valid: fit, claim, "
          "group, range, unit, variants, apply, precision)");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 4\n"
                  "range = 0.1..10\nunit = G bps\n"),
          false,
          "[reproduce.calibrate k] unit = G bps: expected letters, the unit "
          "the key's values take (e.g. GBps, us)");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 4\n"),
          false,
          "[reproduce.calibrate k] needs a name, fit (section.key), claim "
          "and range");
  refused(BAD_CAL("claim = cal\ngroup = 4\nrange = 0.1..10\n"), false,
          "[reproduce.calibrate k] needs a name");
  refused(BAD_CAL("fit = compute_scale\nclaim = cal\ngroup = 4\n"
                  "range = 0.1..10\n"),
          false,
          "[reproduce.calibrate k] fit = compute_scale: must be section.key "
          "of the simulation (e.g. model.compute_scale)");
  static const char *const ranges[] = {"2..1", "1..1", "5", ">1", "a..b"};
  for (size_t i = 0; i < G_N_ELEMENTS(ranges); i++) {
    char *text = g_strdup_printf(BAD_CAL("fit = model.compute_scale\n"
                                         "claim = cal\ngroup = 4\n"
                                         "range = %s\n"),
                                 ranges[i]);
    char *want = g_strdup_printf("[reproduce.calibrate k] range = %s: "
                                 "expected LO..HI with LO < HI",
                                 ranges[i]);
    refused(text, false, want);
    g_free(want);
    g_free(text);
  }
  static const char *const precs[] = {"0", "1", "-1e-3", "x", "nan"};
  for (size_t i = 0; i < G_N_ELEMENTS(precs); i++) {
    char *text = g_strdup_printf(BAD_CAL("fit = model.compute_scale\n"
                                         "claim = cal\ngroup = 4\n"
                                         "range = 1..2\nprecision = %s\n"),
                                 precs[i]);
    char *want = g_strdup_printf("[reproduce.calibrate k] precision = %s: "
                                 "expected a share of the paper's value in "
                                 "(0, 1), e.g. 1e-3",
                                 precs[i]);
    refused(text, false, want);
    g_free(want);
    g_free(text);
  }
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 4\n"
                  "range = 1..2\nvariants = A, Z\n"),
          false, "[reproduce.calibrate k] variants: no variant 'Z'");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 4\n"
                  "range = 1..2\napply = Z\n"),
          false, "[reproduce.calibrate k] apply: no variant 'Z'");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = c\nrange = 1..2\n"),
          false,
          "[reproduce.calibrate k] claim = c: no claim of kind calibration "
          "with that ID");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = nosuch\n"
                  "range = 1..2\n"),
          false,
          "[reproduce.calibrate k] claim = nosuch: no claim of kind "
          "calibration with that ID");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 9\n"
                  "range = 1..2\n"),
          false,
          "[reproduce.calibrate k] group = 9: claim cal has no such group "
          "(give one of its 'by' values)");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\nrange = 1..2\n"),
          false, "[reproduce.calibrate k] group = : claim cal has no such "
                 "group (give one of its 'by' values)");
  refused(BAD_CAL("fit = model.compute_scale\nclaim = cal\ngroup = 8\n"
                  "range = 1..2\n"),
          false,
          "[reproduce.calibrate k] claim cal: a bound cannot be fitted to "
          "(give a value or a range)");
  refused(BAD_CAL("fit = exchange.algorithm\nclaim = cal\ngroup = 4\n"
                  "range = 1..2\n"),
          false,
          "[reproduce.calibrate k] fit = exchange.algorithm: a variant sets "
          "that key, which the fitted value would override");
}

/* [reproduce.mechanism NAME]: read back, and turned off: its overrides
 * added to every variant's, its calibration dropped and the claim it was
 * fitted to scored as validation, its derived column redefined. */
#define MECHS                                                                 \
  HEAD VARIANT                                                                \
  "[reproduce.derive]\nsummed = exchange_s + 1\n"                             \
  "[reproduce.calibrate lat]\nfit = platform.latency\nclaim = t\n"            \
  "range = 1e-6..1e-4\n"                                                      \
  "[reproduce.claim t]\nkind = calibration\ntext = x\nsource = y\n"           \
  "value = exchange_s\npaper = 1\n"                                           \
  "[reproduce.mechanism stack]\ntext = a stack\nsource = p. 1\n"              \
  "off = platform.host_stack = none; exchange.reduce_rate = 1GBps\n"          \
  "calibrate = lat\nderive = summed = exchange_s\n"                           \
  "[reproduce.mechanism other]\ntext = t2\nsource = p. 2\n"                   \
  "off = platform.latency = 9us\n"

/* R's derived column "summed" on a row with exchange_s = 2. */
static double summed(const struct repro *r) {
  char *err = NULL;
  struct table *t = table_parse_csv("exchange_s\n2\n", &err);
  cr_assert_not_null(t, "%s", err);
  double v = NAN;
  cr_assert_eq(r->derive_names->len, 1);
  int rc = expr_eval(g_ptr_array_index(r->derive_exprs, 0), t, NULL, NULL, 0,
                     &v, &err);
  cr_assert_eq(rc, 0, "%s", err ? err : "");
  table_free(t);
  return v;
}

static struct repro *load_off(const char *text, const char *const *off,
                              char **err) {
  char *path = write_file("mech.ini", text);
  struct repro *r = repro_load(path, false, off, err);
  g_free(path);
  return r;
}

Test(spec, mechanisms) {
  char *err = NULL;
  struct repro *r = load_off(MECHS, NULL, &err);
  cr_assert_not_null(r, "%s", err ? err : "?");
  cr_assert_eq(r->mechanisms->len, 2);
  const struct repro_mechanism *m = g_ptr_array_index(r->mechanisms, 0);
  cr_expect_str_eq(m->name, "stack");
  cr_expect_str_eq(m->text, "a stack");
  cr_expect_str_eq(m->source, "p. 1");
  cr_assert_eq(m->off_sets->len, 2);
  cr_expect_str_eq(str(m->off_sets, 0), "platform.host_stack=none");
  cr_expect_str_eq(str(m->off_sets, 1), "exchange.reduce_rate=1GBps");
  cr_expect_str_eq(str(m->calibrate, 0), "lat");
  cr_expect_str_eq(str(m->derive, 0), "summed=exchange_s");
  cr_expect(!m->off);
  cr_expect_eq(r->calibrate->len, 1);
  cr_expect_eq(claim(r, 0)->kind, CLAIM_CALIBRATION);
  cr_expect_eq(r->sets->len, 0);
  cr_expect_float_eq(summed(r), 3, 1e-12);
  repro_free(r);

  const char *off[] = {"stack", NULL};
  r = load_off(MECHS, off, &err);
  cr_assert_not_null(r, "%s", err ? err : "?");
  m = g_ptr_array_index(r->mechanisms, 0);
  cr_expect(m->off);
  cr_expect(!((const struct repro_mechanism *)g_ptr_array_index(
                  r->mechanisms, 1))
                 ->off);
  cr_expect_eq(r->calibrate->len, 0, "its calibration is not fitted");
  cr_expect_eq(claim(r, 0)->kind, CLAIM_VALIDATION,
               "the number it was fitted to is scored");
  cr_assert_eq(r->sets->len, 2);
  cr_expect_str_eq(str(r->sets, 0), "platform.host_stack=none");
  cr_expect_float_eq(summed(r), 2, 1e-12, "summed redefined");
  repro_free(r);

  const char *all[] = {"all", NULL};
  r = load_off(MECHS, all, &err);
  cr_assert_not_null(r, "%s", err ? err : "?");
  cr_expect_eq(r->sets->len, 3, "both mechanisms' overrides");
  repro_free(r);

  const char *nosuch[] = {"nosuch", NULL};
  cr_expect_null(load_off(MECHS, nosuch, &err));
  cr_expect(err && strstr(err, "no mechanism 'nosuch' to turn off (valid: "
                               "stack, other)"),
            "%s", err ? err : "");
  g_free(err);
}

Test(spec, refuses_mechanisms) {
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\nsource = s\n"
                             "off = platform.latency = 1us\n",
          false,
          "[reproduce.mechanism m] needs a name (not 'all', no comma), "
          "text and source");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\ntext = t\n"
                             "source = s\n",
          false, "[reproduce.mechanism m] says what turning it off changes");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism all]\ntext = t\n"
                             "source = s\noff = platform.latency = 1us\n",
          false, "[reproduce.mechanism all] needs a name (not 'all'");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\ntext = t\n"
                             "source = s\noff = latency = 1us\n",
          false,
          "[reproduce.mechanism m] off = latency = 1us: expected NAME = "
          "VALUE");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\ntext = t\n"
                             "source = s\ncalibrate = nope\n",
          false, "[reproduce.mechanism m] calibrate: no [reproduce.calibrate "
                 "nope]");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\ntext = t\n"
                             "source = s\nderive = nope = 1\n",
          false, "[reproduce.mechanism m] derive: no derived column nope");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\ntext = t\n"
                             "source = s\nderive = x\n",
          false, "[reproduce.mechanism m] derive = x: expected NAME = VALUE");
  refused(HEAD VARIANT CLAIM "[reproduce.mechanism m]\ntext = t\n"
                             "source = s\ncolour = red\n",
          false, "[reproduce.mechanism m] unknown key 'colour'");
}
