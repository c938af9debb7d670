/* repro/spec.c: loading the [reproduce] sections of an experiment file
 * (repro.h): the reproduction's parameters, its variants, --quick
 * overrides, derived columns and claims, every one checked. */
#include "repro.h"

#include "experiment.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static void variant_free(struct repro_variant *v) {
  g_free(v->label);
  g_ptr_array_free(v->sets, TRUE);
  g_ptr_array_free(v->quick_sets, TRUE);
  g_free(v);
}

static void variant_free_cb(gpointer v) { variant_free(v); }

static void claim_free(struct repro_claim *c) {
  g_free(c->id);
  g_free(c->text);
  g_free(c->source);
  g_free(c->note);
  g_free(c->not_evaluable);
  g_free(c->tol_why);
  g_free(c->value);
  expr_free(c->expr);
  g_free(c->by);
  if (c->groups)
    g_ptr_array_free(c->groups, TRUE);
  if (c->paper) {
    for (guint i = 0; i < c->paper->len; i++)
      g_free(g_array_index(c->paper, struct paper_value, i).text);
    g_array_free(c->paper, TRUE);
  }
  g_free(c);
}

static void claim_free_cb(gpointer c) { claim_free(c); }

static void mechanism_free(struct repro_mechanism *m) {
  g_free(m->name);
  g_free(m->text);
  g_free(m->source);
  g_ptr_array_free(m->off_sets, TRUE);
  g_ptr_array_free(m->calibrate, TRUE);
  g_ptr_array_free(m->derive, TRUE);
  g_free(m);
}

static void mechanism_free_cb(gpointer m) { mechanism_free(m); }

void repro_free(struct repro *r) {
  if (!r)
    return;
  g_free(r->name);
  g_free(r->path);
  g_free(r->title);
  g_free(r->source);
  g_free(r->setup);
  g_free(r->discussion);
  g_free(r->plot);
  if (r->variants)
    g_ptr_array_free(r->variants, TRUE);
  if (r->sets)
    g_ptr_array_free(r->sets, TRUE);
  if (r->params)
    g_hash_table_destroy(r->params);
  if (r->derive_names)
    g_ptr_array_free(r->derive_names, TRUE);
  if (r->derive_exprs)
    g_ptr_array_free(r->derive_exprs, TRUE);
  if (r->claims)
    g_ptr_array_free(r->claims, TRUE);
  if (r->calibrate)
    g_ptr_array_free(r->calibrate, TRUE);
  if (r->mechanisms)
    g_ptr_array_free(r->mechanisms, TRUE);
  g_free(r);
}

const char *repro_param(const struct repro *r, const char *key,
                        const char *def) {
  const char *v = g_hash_table_lookup(r->params, key);
  return v ? v : def;
}

/* A whole number string: the entire text is one finite number. */
static bool parse_number(const char *s, double *out) {
  char *end;
  while (*s == ' ')
    s++;
  double v = g_ascii_strtod(s, &end);
  if (end == s)
    return false;
  while (*end == ' ')
    end++;
  if (*end || !isfinite(v))
    return false;
  *out = v;
  return true;
}

static int parse_paper(const char *s, struct paper_value *pv) {
  const char *t = s;
  while (*t == ' ')
    t++;
  memset(pv, 0, sizeof *pv);
  const char *dots = strstr(t, "..");
  bool ok;
  if (*t == '>' || *t == '<') {
    pv->kind = *t == '>' ? PAPER_GT : PAPER_LT;
    ok = parse_number(t + 1, &pv->lo);
    pv->hi = pv->lo;
  } else if (dots) {
    /* LO..HI: "1..2" must not read as "1." then ".2". */
    char *lo = g_strndup(t, (gsize)(dots - t));
    pv->kind = PAPER_RANGE;
    ok = parse_number(lo, &pv->lo) && parse_number(dots + 2, &pv->hi) &&
         pv->lo <= pv->hi;
    g_free(lo);
  } else {
    pv->kind = PAPER_VALUE;
    ok = parse_number(t, &pv->lo);
    pv->hi = pv->lo;
  }
  if (!ok)
    return -EINVAL;
  pv->text = g_strstrip(g_strdup(s));
  return 0;
}

static const char *const repro_keys[] = {
    "title", "source", "setup", "discussion", "kind", "plot",
    /* kind parameters */
    "codecs", "labels", "sample", "warmup", "steps", "end_to_end",
    "pull_momentum", "sizes", "runs", "allreduce"};

static const char *const claim_keys[] = {"kind",      "text", "source",
                                         "value",     "by",   "paper",
                                         "tolerance", "note", "not_evaluable"};

static const char *const calibrate_keys[] = {
    "fit", "claim", "group", "range", "unit", "variants", "apply",
    "precision"};
static const char *const mechanism_keys[] = {"text", "source", "off",
                                             "calibrate", "derive"};

/* What --quick may change: sizes and step counts, never a design or a
 * schedule. */
static const char *const quick_sim_keys[] = {
    "training.iterations", "exchange.warmup_steps", "exchange.sample",
    "platform.nodes", "model.params"};
static const char *const quick_params[] = {"sample", "warmup", "steps",
                                           "sizes", "runs"};

static const char *const kind_names[CLAIM_KIND_COUNT] = {
    "validation", "calibration", "check", "contradicted"};

const char *claim_kind_name(enum claim_kind kind) { return kind_names[kind]; }

static bool in_list(const char *k, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(k, list[i]))
      return true;
  return false;
}

static char *join(const char *const *list, size_t n) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", list[i]);
  return g_string_free(s, FALSE);
}

/* "section.key" with a known section of the simulation. */
static bool is_sim_key(const char *k) {
  static const char *const sec[] = {"platform.", "model.",     "exchange.",
                                    "training.", "gradients.", "nic."};
  for (size_t i = 0; i < G_N_ELEMENTS(sec); i++)
    if (g_str_has_prefix(k, sec[i]) && k[strlen(sec[i])])
      return true;
  return false;
}

static char *get(GKeyFile *kf, const char *group, const char *key) {
  /* get_string: "\n" in a long text is a line break. */
  char *v = g_key_file_get_string(kf, group, key, NULL);
  return v ? g_strstrip(v) : NULL;
}

/* Every key of GROUP is one of VALID (N of them); -1 with *ERR. */
static int known_keys(GKeyFile *kf, const char *group, const char *path,
                      const char *const *valid, size_t n, char **err) {
  char **keys = g_key_file_get_keys(kf, group, NULL, NULL);
  int rc = 0;
  for (char **k = keys; *k && !rc; k++)
    if (!in_list(*k, valid, n)) {
      char *v = join(valid, n);
      *err = g_strdup_printf("%s: [%s] unknown key '%s' (valid: %s)", path,
                             group, *k, v);
      g_free(v);
      rc = -1;
    }
  g_strfreev(keys);
  return rc;
}

/* by = COLUMN: v1, v2, ...: C's groups (one "" without by). */
static int claim_groups(struct repro_claim *c, GKeyFile *kf, const char *group,
                        const char *path, char **err) {
  c->groups = g_ptr_array_new_with_free_func(g_free);
  char *by = get(kf, group, "by");
  if (by) {
    char *colon = strchr(by, ':');
    if (!colon || colon == by) {
      *err = g_strdup_printf("%s: [%s] by = %s: expected COLUMN: value, "
                             "value, ...",
                             path, group, by);
      g_free(by);
      return -1;
    }
    *colon = '\0';
    c->by = g_strstrip(g_strdup(by));
    char **vals = g_strsplit(colon + 1, ",", -1);
    for (char **v = vals; *v; v++)
      if (*g_strstrip(*v))
        g_ptr_array_add(c->groups, g_strdup(*v));
    g_strfreev(vals);
    g_free(by);
    if (!c->groups->len) {
      *err = g_strdup_printf("%s: [%s] by names no value of %s (expected "
                             "COLUMN: value, value, ...)",
                             path, group, c->by);
      return -1;
    }
  }
  if (!c->groups->len)
    g_ptr_array_add(c->groups, g_strdup(""));
  return 0;
}

/* paper = one value, or one per group. */
static int claim_papers(struct repro_claim *c, const char *paper,
                        const char *group, const char *path, char **err) {
  c->paper = g_array_new(FALSE, FALSE, sizeof(struct paper_value));
  char **ps = g_strsplit(paper, ",", -1);
  guint np = g_strv_length(ps);
  int rc = 0;
  if (np != 1 && np != c->groups->len) {
    *err = g_strdup_printf("%s: [%s] paper has %u values for %u groups (give "
                           "one, or one per value of 'by')",
                           path, group, np, c->groups->len);
    rc = -1;
  }
  for (guint i = 0; i < c->groups->len && !rc; i++) {
    struct paper_value pv;
    if (parse_paper(ps[np == 1 ? 0 : i], &pv) != 0) {
      *err = g_strdup_printf("%s: [%s] paper = %s: expected a number, LO..HI, "
                             ">X or <X",
                             path, group, ps[np == 1 ? 0 : i]);
      rc = -1;
    } else {
      g_array_append_val(c->paper, pv);
    }
  }
  g_strfreev(ps);
  return rc;
}

/* tolerance = rel R | abs A, then `: REASON` (default rel 0.25); a
 * validation claim wider than rel 0.25 needs the reason. */
static int claim_tolerance(struct repro_claim *c, GKeyFile *kf,
                           const char *group, const char *path, char **err) {
  c->tol = 0.25;
  char *tol = get(kf, group, "tolerance");
  if (!tol)
    return 0;
  char *colon = strchr(tol, ':');
  if (colon) {
    *colon = '\0';
    c->tol_why = g_strstrip(g_strdup(colon + 1));
    g_strstrip(tol);
  }
  char **w = g_strsplit_set(tol, " \t", -1);
  GPtrArray *words = g_ptr_array_new();
  for (char **x = w; *x; x++)
    if (**x)
      g_ptr_array_add(words, *x);
  char *end = NULL;
  bool ok = words->len == 2 && (!strcmp(g_ptr_array_index(words, 0), "rel") ||
                                !strcmp(g_ptr_array_index(words, 0), "abs"));
  if (ok) {
    c->tol_abs = !strcmp(g_ptr_array_index(words, 0), "abs");
    c->tol = g_ascii_strtod(g_ptr_array_index(words, 1), &end);
    ok = *end == '\0' && c->tol >= 0 && isfinite(c->tol);
  }
  g_ptr_array_free(words, TRUE);
  g_strfreev(w);
  if (!ok)
    *err = g_strdup_printf("%s: [%s] tolerance = %s: expected 'rel R' or "
                           "'abs A' with R, A >= 0, then ': why' if wider "
                           "than rel 0.25",
                           path, group, tol);
  else if (c->kind == CLAIM_VALIDATION && !c->tol_abs && c->tol > 0.25 &&
           !(c->tol_why && *c->tol_why)) {
    *err = g_strdup_printf("%s: [%s] tolerance = %s: a validation claim "
                           "wider than rel 0.25 says why (tolerance = rel "
                           "%g: REASON)",
                           path, group, tol, c->tol);
    ok = false;
  }
  g_free(tol);
  return ok ? 0 : -1;
}

static struct repro_claim *load_claim(GKeyFile *kf, const char *group,
                                      const char *path, char **err) {
  if (known_keys(kf, group, path, claim_keys, G_N_ELEMENTS(claim_keys), err) !=
      0)
    return NULL;
  struct repro_claim *c = g_new0(struct repro_claim, 1);
  c->id = g_strdup(group + strlen("reproduce.claim "));
  g_strstrip(c->id);
  c->text = get(kf, group, "text");
  c->source = get(kf, group, "source");
  c->note = get(kf, group, "note");
  c->value = get(kf, group, "value");
  c->not_evaluable = get(kf, group, "not_evaluable");
  char *paper = get(kf, group, "paper"), *perr = NULL;
  char *kind = get(kf, group, "kind");
  int rc = 0, k = -1;
  for (int i = 0; kind && i < CLAIM_KIND_COUNT; i++)
    if (!strcmp(kind, kind_names[i]))
      k = i;
  c->kind = k < 0 ? CLAIM_VALIDATION : (enum claim_kind)k;
  if (!c->text || !c->value || !paper || !c->source || !kind) {
    *err = g_strdup_printf("%s: [%s] needs kind, text, source, value and "
                           "paper",
                           path, group);
    rc = -1;
  } else if (k < 0) {
    *err = g_strdup_printf("%s: [%s] kind = %s: must be validation (a paper "
                           "measurement gradsim predicts), calibration (a "
                           "paper number a parameter was set to), check "
                           "(arithmetic, or true by construction) or "
                           "contradicted (a paper number its own paper "
                           "contradicts)",
                           path, group, kind);
    rc = -1;
  } else if (c->kind == CLAIM_CONTRADICTED && !(c->note && *c->note)) {
    *err = g_strdup_printf("%s: [%s] kind = contradicted needs a note: the "
                           "paper's lines that contradict the number, and "
                           "the arithmetic",
                           path, group);
    rc = -1;
  } else if (c->not_evaluable &&
             (!*c->not_evaluable || c->kind != CLAIM_VALIDATION)) {
    *err = g_strdup_printf("%s: [%s] not_evaluable needs a reason and a "
                           "validation claim",
                           path, group);
    rc = -1;
  } else if (!(c->expr = expr_parse(c->value, &perr))) {
    *err = g_strdup_printf("%s: [%s] value: %s", path, group, perr);
    g_free(perr);
    rc = -1;
  }
  if (!rc)
    rc = claim_groups(c, kf, group, path, err);
  if (!rc)
    rc = claim_papers(c, paper, group, path, err);
  if (!rc)
    rc = claim_tolerance(c, kf, group, path, err);
  g_free(paper);
  g_free(kind);
  if (rc) {
    claim_free(c);
    return NULL;
  }
  return c;
}

static void calibrate_free_cb(gpointer c);

static struct repro *repro_new(const char *path) {
  struct repro *r = g_new0(struct repro, 1);
  r->path = g_strdup(path);
  char *base = g_path_get_basename(path);
  if (g_str_has_suffix(base, ".ini"))
    base[strlen(base) - 4] = '\0';
  r->name = base;
  r->variants = g_ptr_array_new_with_free_func(variant_free_cb);
  r->sets = g_ptr_array_new_with_free_func(g_free);
  r->params = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  r->derive_names = g_ptr_array_new_with_free_func(g_free);
  r->derive_exprs = g_ptr_array_new_with_free_func(expr_free_cb);
  r->claims = g_ptr_array_new_with_free_func(claim_free_cb);
  r->calibrate = g_ptr_array_new_with_free_func(calibrate_free_cb);
  r->mechanisms = g_ptr_array_new_with_free_func(mechanism_free_cb);
  return r;
}

/* [reproduce]: the parameters. */
static void load_params(struct repro *r, GKeyFile *kf, char **err) {
  if (known_keys(kf, "reproduce", r->path, repro_keys,
                 G_N_ELEMENTS(repro_keys), err) != 0)
    return;
  char **keys = g_key_file_get_keys(kf, "reproduce", NULL, NULL);
  for (char **k = keys; *k; k++)
    g_hash_table_insert(r->params, g_strdup(*k), get(kf, "reproduce", *k));
  g_strfreev(keys);
}

/* Whether --quick may set KEY (a simulation key or a [reproduce]
 * parameter) in section G; false with *ERR. */
static bool quick_allowed(const struct repro *r, const char *g, const char *key,
                          char **err) {
  if (in_list(key, quick_sim_keys, G_N_ELEMENTS(quick_sim_keys)) ||
      in_list(key, quick_params, G_N_ELEMENTS(quick_params)))
    return true;
  char *a = join(quick_sim_keys, G_N_ELEMENTS(quick_sim_keys));
  char *b = join(quick_params, G_N_ELEMENTS(quick_params));
  *err = g_strdup_printf("%s: [%s] --quick may not change %s: it cuts "
                         "sizes only, never a design or a schedule (allowed: "
                         "%s; parameters %s)",
                         r->path, g, key, a, b);
  g_free(a);
  g_free(b);
  return false;
}

/* [reproduce.variant LABEL]: section.key = value overrides, and
 * quick.section.key ones that apply with --quick only. */
static void load_variant(struct repro *r, GKeyFile *kf, const char *g,
                         bool quick, char **err) {
  struct repro_variant *v = g_new0(struct repro_variant, 1);
  v->label = g_strstrip(g_strdup(g + strlen("reproduce.variant ")));
  char *hash = strchr(v->label, '#');
  if (hash)
    *hash = '\0';
  v->sets = g_ptr_array_new_with_free_func(g_free);
  v->quick_sets = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(r->variants, v);
  if (!*v->label)
    *err = g_strdup_printf("%s: [%s] needs a label", r->path, g);
  char **ks = g_key_file_get_keys(kf, g, NULL, NULL);
  for (char **k = ks; *k && !*err; k++) {
    char *val = get(kf, g, *k);
    if (g_str_has_prefix(*k, "quick.") && is_sim_key(*k + 6)) {
      if (quick_allowed(r, g, *k + 6, err) && quick)
        g_ptr_array_add(v->quick_sets, g_strdup_printf("%s=%s", *k + 6, val));
    } else if (!is_sim_key(*k)) {
      *err = g_strdup_printf("%s: [%s] key '%s' must be section.key of "
                             "the simulation (e.g. exchange.codec), or "
                             "quick.section.key",
                             r->path, g, *k);
    } else {
      g_ptr_array_add(v->sets, g_strdup_printf("%s=%s", *k, val));
    }
    g_free(val);
  }
  g_strfreev(ks);
}

/* [reproduce.quick]: simulation keys and [reproduce] parameters that
 * --quick overrides. */
static void load_quick(struct repro *r, GKeyFile *kf, const char *g, bool quick,
                       char **err) {
  char **ks = g_key_file_get_keys(kf, g, NULL, NULL);
  for (char **k = ks; *k && !*err; k++) {
    char *val = get(kf, g, *k);
    if (is_sim_key(*k)) {
      if (quick_allowed(r, g, *k, err) && quick)
        g_ptr_array_add(r->sets, g_strdup_printf("%s=%s", *k, val));
      g_free(val);
    } else if (in_list(*k, repro_keys, G_N_ELEMENTS(repro_keys))) {
      if (quick_allowed(r, g, *k, err) && quick)
        g_hash_table_insert(r->params, g_strdup(*k), val);
      else
        g_free(val);
    } else {
      *err = g_strdup_printf("%s: [%s] unknown key '%s' (section.key of "
                             "the simulation, or a [reproduce] key)",
                             r->path, g, *k);
      g_free(val);
    }
  }
  g_strfreev(ks);
}

/* [reproduce.derive]: NAME = EXPR. */
static void load_derive(struct repro *r, GKeyFile *kf, const char *g,
                        char **err) {
  char **ks = g_key_file_get_keys(kf, g, NULL, NULL);
  for (char **k = ks; *k && !*err; k++) {
    char *val = get(kf, g, *k), *perr = NULL;
    struct expr *e = expr_parse(val, &perr);
    if (!e) {
      *err = g_strdup_printf("%s: [%s] %s: %s", r->path, g, *k, perr);
      g_free(perr);
    } else {
      g_ptr_array_add(r->derive_names, g_strdup(*k));
      g_ptr_array_add(r->derive_exprs, e);
    }
    g_free(val);
  }
  g_strfreev(ks);
}

static void calibrate_free(struct repro_calibrate *c) {
  g_free(c->name);
  g_free(c->fit);
  g_free(c->claim_id);
  g_free(c->group);
  g_free(c->unit);
  if (c->variants)
    g_ptr_array_free(c->variants, TRUE);
  if (c->apply)
    g_ptr_array_free(c->apply, TRUE);
  g_free(c);
}

static void calibrate_free_cb(gpointer c) { calibrate_free(c); }

/* LO..HI with LO < HI, both finite. */
static bool parse_range(const char *s, double *lo, double *hi) {
  struct paper_value pv;
  if (!s || parse_paper(s, &pv) != 0)
    return false;
  g_free(pv.text);
  *lo = pv.lo, *hi = pv.hi;
  return pv.kind == PAPER_RANGE && pv.lo < pv.hi;
}

/* KEY = L1, L2, ...: variant labels (empty without the key). */
static GPtrArray *labels_of(GKeyFile *kf, const char *g, const char *key) {
  GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
  char *vs = get(kf, g, key);
  char **items = g_strsplit(vs ? vs : "", ",", -1);
  for (char **v = items; *v; v++)
    if (*g_strstrip(*v))
      g_ptr_array_add(a, g_strdup(*v));
  g_strfreev(items);
  g_free(vs);
  return a;
}

/* [reproduce.calibrate NAME]: fit, claim, group, range, variants (the
 * claim and the variants are checked once every section is read). */
static void load_calibrate(struct repro *r, GKeyFile *kf, const char *g,
                           char **err) {
  if (known_keys(kf, g, r->path, calibrate_keys, G_N_ELEMENTS(calibrate_keys),
                 err) != 0)
    return;
  struct repro_calibrate *c = g_new0(struct repro_calibrate, 1);
  g_ptr_array_add(r->calibrate, c);
  c->name = g_strstrip(g_strdup(g + strlen("reproduce.calibrate ")));
  c->fit = get(kf, g, "fit");
  c->claim_id = get(kf, g, "claim");
  c->group = get(kf, g, "group");
  if (!c->group)
    c->group = g_strdup("");
  c->variants = labels_of(kf, g, "variants");
  c->apply = labels_of(kf, g, "apply");
  char *range = get(kf, g, "range"), *prec = get(kf, g, "precision");
  c->precision = 1e-3;
  c->unit = get(kf, g, "unit");
  if (!c->unit)
    c->unit = g_strdup("");
  bool unit_ok = true;
  for (const char *u = c->unit; *u; u++)
    unit_ok = unit_ok && g_ascii_isalpha(*u);
  if (!*c->name || !c->fit || !c->claim_id || !range)
    *err = g_strdup_printf("%s: [%s] needs a name, fit (section.key), "
                           "claim and range",
                           r->path, g);
  else if (!is_sim_key(c->fit))
    *err = g_strdup_printf("%s: [%s] fit = %s: must be section.key of the "
                           "simulation (e.g. model.compute_scale)",
                           r->path, g, c->fit);
  else if (!parse_range(range, &c->lo, &c->hi))
    *err = g_strdup_printf("%s: [%s] range = %s: expected LO..HI with LO < "
                           "HI",
                           r->path, g, range);
  else if (!unit_ok)
    *err = g_strdup_printf("%s: [%s] unit = %s: expected letters, the "
                           "unit the key's values take (e.g. GBps, us)",
                           r->path, g, c->unit);
  else if (prec && (!parse_number(prec, &c->precision) ||
                    !(c->precision > 0 && c->precision < 1)))
    *err = g_strdup_printf("%s: [%s] precision = %s: expected a share of "
                           "the paper's value in (0, 1), e.g. 1e-3",
                           r->path, g, prec);
  g_free(range);
  g_free(prec);
}

/* "NAME = VALUE; NAME = VALUE" of KEY in G: "NAME=VALUE" strings into
 * OUT, each NAME accepted by OK (NULL: any non-empty name); false with
 * *ERR. */
static bool assignments(const struct repro *r, const char *g, const char *key,
                        const char *text, bool (*ok)(const char *),
                        GPtrArray *out, char **err) {
  char **parts = g_strsplit(text, ";", -1);
  for (char **a = parts; *a && !*err; a++) {
    char *eq = strchr(*a, '=');
    char *name = eq ? g_strstrip(g_strndup(*a, (gsize)(eq - *a))) : NULL;
    char *val = eq ? g_strstrip(g_strdup(eq + 1)) : NULL;
    if (!name || !*name || !*val || (ok && !ok(name)))
      *err = g_strdup_printf("%s: [%s] %s = %s: expected NAME = VALUE; ... "
                             "(%s)",
                             r->path, g, key, text,
                             ok ? "NAME a simulation key, section.key"
                                : "NAME a derived column");
    else
      g_ptr_array_add(out, g_strdup_printf("%s=%s", name, val));
    g_free(name);
    g_free(val);
  }
  g_strfreev(parts);
  return !*err;
}

/* [reproduce.mechanism NAME]: text, source, and what turning it off
 * changes (off, calibrate, derive; at least one). */
static void load_mechanism(struct repro *r, GKeyFile *kf, const char *g,
                           char **err) {
  if (known_keys(kf, g, r->path, mechanism_keys, G_N_ELEMENTS(mechanism_keys),
                 err) != 0)
    return;
  struct repro_mechanism *m = g_new0(struct repro_mechanism, 1);
  g_ptr_array_add(r->mechanisms, m);
  m->name = g_strstrip(g_strdup(g + strlen("reproduce.mechanism ")));
  m->text = get(kf, g, "text");
  m->source = get(kf, g, "source");
  m->off_sets = g_ptr_array_new_with_free_func(g_free);
  m->derive = g_ptr_array_new_with_free_func(g_free);
  m->calibrate = labels_of(kf, g, "calibrate");
  char *off = get(kf, g, "off"), *derive = get(kf, g, "derive");
  if (!*m->name || strchr(m->name, ',') || !strcmp(m->name, "all") ||
      !m->text || !m->source)
    *err = g_strdup_printf("%s: [%s] needs a name (not 'all', no comma), "
                           "text and source",
                           r->path, g);
  else if (!off && !derive && !m->calibrate->len)
    *err = g_strdup_printf("%s: [%s] says what turning it off changes: off "
                           "(section.key = value; ...), calibrate (names) "
                           "or derive (NAME = EXPR; ...)",
                           r->path, g);
  else if (off)
    assignments(r, g, "off", off, is_sim_key, m->off_sets, err);
  if (!*err && derive)
    assignments(r, g, "derive", derive, NULL, m->derive, err);
  g_free(off);
  g_free(derive);
}

static struct repro_claim *find_claim(const struct repro *r,
                                      const char *id) {
  for (guint i = 0; i < r->claims->len; i++) {
    struct repro_claim *c = g_ptr_array_index(r->claims, i);
    if (!strcmp(c->id, id))
      return c;
  }
  return NULL;
}

static bool has_variant(const struct repro *r, const char *label) {
  for (guint i = 0; i < r->variants->len; i++)
    if (!strcmp(
            ((struct repro_variant *)g_ptr_array_index(r->variants, i))->label,
            label))
      return true;
  return false;
}

static bool variant_sets(const struct repro *r, const char *key) {
  for (guint i = 0; i < r->variants->len; i++) {
    const struct repro_variant *v = g_ptr_array_index(r->variants, i);
    for (guint k = 0; k < v->sets->len; k++) {
      const char *set = g_ptr_array_index(v->sets, k);
      if (!strncmp(set, key, strlen(key)) && set[strlen(key)] == '=')
        return true;
    }
  }
  return false;
}

/* A calibration names a calibration claim (and one of its groups), the
 * experiment's variants, and a key no variant sets. */
static void check_calibration(const struct repro *r, struct repro_calibrate *c,
                              char **err) {
  const struct repro_claim *cl = find_claim(r, c->claim_id);
  bool group = false;
  for (guint i = 0; cl && i < cl->groups->len && !group; i++)
    if (!strcmp(g_ptr_array_index(cl->groups, i), c->group)) {
      group = true;
      c->group_index = i;
    }
  const struct paper_value *pv =
      group ? &g_array_index(cl->paper, struct paper_value, c->group_index)
            : NULL;
  for (guint i = 0; i < c->variants->len && !*err; i++)
    if (!has_variant(r, g_ptr_array_index(c->variants, i)))
      *err = g_strdup_printf("%s: [reproduce.calibrate %s] variants: no "
                             "variant '%s'",
                             r->path, c->name,
                             (char *)g_ptr_array_index(c->variants, i));
  for (guint i = 0; i < c->apply->len && !*err; i++)
    if (!has_variant(r, g_ptr_array_index(c->apply, i)))
      *err = g_strdup_printf("%s: [reproduce.calibrate %s] apply: no "
                             "variant '%s'",
                             r->path, c->name,
                             (char *)g_ptr_array_index(c->apply, i));
  if (*err)
    return;
  if (!cl || cl->kind != CLAIM_CALIBRATION)
    *err = g_strdup_printf("%s: [reproduce.calibrate %s] claim = %s: no "
                           "claim of kind calibration with that ID",
                           r->path, c->name, c->claim_id);
  else if (!group)
    *err = g_strdup_printf("%s: [reproduce.calibrate %s] group = %s: claim "
                           "%s has no such group%s",
                           r->path, c->name, c->group, c->claim_id,
                           cl->by ? " (give one of its 'by' values)" : "");
  else if (pv->kind == PAPER_GT || pv->kind == PAPER_LT)
    *err = g_strdup_printf("%s: [reproduce.calibrate %s] claim %s: a bound "
                           "cannot be fitted to (give a value or a range)",
                           r->path, c->name, c->claim_id);
  else if (variant_sets(r, c->fit))
    *err = g_strdup_printf("%s: [reproduce.calibrate %s] fit = %s: a variant "
                           "sets that key, which the fitted value would "
                           "override",
                           r->path, c->name, c->fit);
  c->claim = cl;
}

static void load_sections(struct repro *r, GKeyFile *kf, bool quick,
                          char **err) {
  gsize ngroups;
  char **groups = g_key_file_get_groups(kf, &ngroups);
  for (gsize gi = 0; gi < ngroups && !*err; gi++) {
    const char *g = groups[gi];
    if (!g_str_has_prefix(g, "reproduce."))
      continue;
    if (g_str_has_prefix(g, "reproduce.variant ")) {
      load_variant(r, kf, g, quick, err);
    } else if (!strcmp(g, "reproduce.quick")) {
      load_quick(r, kf, g, quick, err);
    } else if (!strcmp(g, "reproduce.derive")) {
      load_derive(r, kf, g, err);
    } else if (g_str_has_prefix(g, "reproduce.claim ")) {
      struct repro_claim *c = load_claim(kf, g, r->path, err);
      if (c)
        g_ptr_array_add(r->claims, c);
    } else if (g_str_has_prefix(g, "reproduce.calibrate ")) {
      load_calibrate(r, kf, g, err);
    } else if (g_str_has_prefix(g, "reproduce.mechanism ")) {
      load_mechanism(r, kf, g, err);
    } else {
      *err = g_strdup_printf("%s: unknown section [%s] (valid: reproduce, "
                             "reproduce.quick, reproduce.variant LABEL, "
                             "reproduce.derive, reproduce.claim ID, "
                             "reproduce.calibrate NAME, reproduce.mechanism "
                             "NAME)",
                             r->path, g);
    }
  }
  g_strfreev(groups);
}

static struct repro_calibrate *find_calibrate(const struct repro *r,
                                              const char *name, guint *at) {
  for (guint i = 0; i < r->calibrate->len; i++) {
    struct repro_calibrate *c = g_ptr_array_index(r->calibrate, i);
    if (!strcmp(c->name, name)) {
      if (at)
        *at = i;
      return c;
    }
  }
  return NULL;
}

static int find_derive(const struct repro *r, const char *name) {
  for (guint i = 0; i < r->derive_names->len; i++)
    if (!strcmp(g_ptr_array_index(r->derive_names, i), name))
      return (int)i;
  return -1;
}

/* A mechanism's redefinition D ("NAME=EXPR"): the index of the derived
 * column NAME into *AT (-1: R has none) and EXPR parsed (NULL with
 * *PERR). */
static struct expr *mechanism_derive(const struct repro *r, const char *d,
                                     int *at, char **perr) {
  const char *eq = strchr(d, '=');
  char *name = g_strndup(d, (gsize)(eq - d));
  *at = find_derive(r, name);
  g_free(name);
  return expr_parse(eq + 1, perr);
}

/* Every mechanism names calibrations and derived columns that exist,
 * and redefines them by expressions that parse. */
static void check_mechanisms(const struct repro *r, char **err) {
  for (guint i = 0; i < r->mechanisms->len && !*err; i++) {
    const struct repro_mechanism *m = g_ptr_array_index(r->mechanisms, i);
    for (guint k = 0; k < m->calibrate->len && !*err; k++)
      if (!find_calibrate(r, g_ptr_array_index(m->calibrate, k), NULL))
        *err = g_strdup_printf("%s: [reproduce.mechanism %s] calibrate: no "
                               "[reproduce.calibrate %s]",
                               r->path, m->name,
                               (char *)g_ptr_array_index(m->calibrate, k));
    for (guint k = 0; k < m->derive->len && !*err; k++) {
      const char *d = g_ptr_array_index(m->derive, k);
      int at, len = (int)(strchr(d, '=') - d);
      char *perr = NULL;
      struct expr *e = mechanism_derive(r, d, &at, &perr);
      if (at < 0)
        *err = g_strdup_printf("%s: [reproduce.mechanism %s] derive: no "
                               "derived column %.*s in [reproduce.derive]",
                               r->path, m->name, len, d);
      else if (!e)
        *err = g_strdup_printf("%s: [reproduce.mechanism %s] derive %.*s: %s",
                               r->path, m->name, len, d, perr);
      if (e)
        expr_free(e);
      g_free(perr);
    }
  }
}

/* Turn mechanism M off: its overrides for every variant, its
 * calibrations dropped (a claim no calibration fits any more is then a
 * paper measurement gradsim predicts: validation), its derived columns
 * redefined. */
static void mechanism_off(struct repro *r, struct repro_mechanism *m) {
  m->off = true;
  for (guint k = 0; k < m->off_sets->len; k++)
    g_ptr_array_add(r->sets, g_strdup(g_ptr_array_index(m->off_sets, k)));
  GPtrArray *unfitted = g_ptr_array_new_with_free_func(g_free);
  for (guint k = 0; k < m->calibrate->len; k++) {
    guint at;
    struct repro_calibrate *c =
        find_calibrate(r, g_ptr_array_index(m->calibrate, k), &at);
    if (c) {
      g_ptr_array_add(unfitted, g_strdup(c->claim_id));
      g_ptr_array_remove_index(r->calibrate, at);
    }
  }
  for (guint k = 0; k < unfitted->len; k++) {
    const char *id = g_ptr_array_index(unfitted, k);
    bool fitted = false;
    for (guint i = 0; i < r->calibrate->len && !fitted; i++)
      fitted = !strcmp(
          ((struct repro_calibrate *)g_ptr_array_index(r->calibrate, i))
              ->claim_id,
          id);
    struct repro_claim *c = fitted ? NULL : find_claim(r, id);
    if (c)
      c->kind = CLAIM_VALIDATION;
  }
  g_ptr_array_free(unfitted, TRUE);
  /* check_mechanisms found each column and parsed each expression. */
  for (guint k = 0; k < m->derive->len; k++) {
    int at;
    char *perr = NULL;
    struct expr *e =
        mechanism_derive(r, g_ptr_array_index(m->derive, k), &at, &perr);
    expr_free(r->derive_exprs->pdata[at]);
    r->derive_exprs->pdata[at] = e;
    g_free(perr);
  }
}

/* The mechanisms OFF names ("all": every one) turned off. With FOUND
 * (one flag per name), a name R does not have is skipped and FOUND says
 * which ones R had ("all" always); without, it is an error in *ERR. */
static void apply_off(struct repro *r, const char *const *off, bool *found,
                      char **err) {
  for (guint k = 0; off && off[k] && !*err; k++) {
    bool all = !strcmp(off[k], "all"), has = all;
    for (guint i = 0; i < r->mechanisms->len; i++) {
      struct repro_mechanism *m = g_ptr_array_index(r->mechanisms, i);
      if (all || !strcmp(m->name, off[k])) {
        has = true;
        if (!m->off)
          mechanism_off(r, m);
      }
    }
    if (found)
      found[k] |= has;
    else if (!has) {
      GString *names = g_string_new(NULL);
      for (guint i = 0; i < r->mechanisms->len; i++)
        g_string_append_printf(
            names, "%s%s", i ? ", " : "",
            ((struct repro_mechanism *)g_ptr_array_index(r->mechanisms, i))
                ->name);
      *err = g_strdup_printf("%s: no mechanism '%s' to turn off (%s%s)",
                             r->path, off[k],
                             names->len ? "valid: " : "this reproduction "
                                                      "has none",
                             names->str);
      g_string_free(names, TRUE);
    }
  }
}

void repro_off_known(struct repro *r, const char *const *off, bool *found) {
  char *err = NULL;
  apply_off(r, off, found, &err);
}

/* The kind, and what every reproduction needs. */
static void check_whole(struct repro *r, char **err) {
  static const char *const kinds[] = {"run", "codec-ratio", "select-time"};
  const char *kind = repro_param(r, "kind", "run");
  int k = -1;
  for (int i = 0; i < 3; i++)
    if (!strcmp(kind, kinds[i]))
      k = i;
  if (k < 0)
    *err = g_strdup_printf("%s: [reproduce] kind = %s: must be run, "
                           "codec-ratio or select-time",
                           r->path, kind);
  r->kind = (enum repro_kind)(k < 0 ? 0 : k);
  if (!*err &&
      (!repro_param(r, "title", NULL) || !repro_param(r, "source", NULL)))
    *err =
        g_strdup_printf("%s: [reproduce] needs a title and a source", r->path);
  if (!*err && r->kind == REPRO_RUN && !r->variants->len)
    *err = g_strdup_printf("%s: kind = run needs at least one [reproduce."
                           "variant LABEL] section",
                           r->path);
  if (!*err && !r->claims->len)
    *err = g_strdup_printf("%s: no [reproduce.claim ID] section: a "
                           "reproduction states the paper's claims",
                           r->path);
  for (guint i = 0; i < r->calibrate->len && !*err; i++)
    check_calibration(r, g_ptr_array_index(r->calibrate, i), err);
}

struct repro *repro_load(const char *path, bool quick, const char *const *off,
                         char **err) {
  *err = NULL;
  GKeyFile *kf = experiment_key_file(path, err);
  if (!kf)
    return NULL;
  if (!g_key_file_has_group(kf, "reproduce")) {
    *err =
        g_strdup_printf("%s: no [reproduce] section: not a reproduction", path);
    g_key_file_free(kf);
    return NULL;
  }
  struct repro *r = repro_new(path);
  load_params(r, kf, err);
  if (!*err)
    load_sections(r, kf, quick, err);
  g_key_file_free(kf);
  if (!*err)
    check_mechanisms(r, err);
  if (!*err)
    apply_off(r, off, NULL, err);
  if (!*err)
    check_whole(r, err);
  if (*err) {
    repro_free(r);
    return NULL;
  }
  r->title = g_strdup(repro_param(r, "title", ""));
  r->source = g_strdup(repro_param(r, "source", ""));
  r->setup = g_strdup(repro_param(r, "setup", ""));
  r->discussion = g_strdup(repro_param(r, "discussion", ""));
  r->plot = g_strdup(repro_param(r, "plot", r->name));
  return r;
}
