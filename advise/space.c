/* advise/space.c: the base experiment, the space of candidates (a --space
 * file or the default one), and the neighbours the search refines. */
#include "advise_impl.h"

#include "codec.h"
#include "estimate.h"
#include "experiment.h"
#include "inputs.h"

#include <math.h>
#include <string.h>

void family_free(gpointer f) {
  struct family *fm = f;
  g_ptr_array_unref(fm->keys);
  g_ptr_array_unref(fm->values);
  g_free(fm);
}

void cand_free(gpointer c) {
  struct cand *x = c;
  g_ptr_array_unref(x->kv);
  g_free(x->label);
  point_free(x->p);
  g_free(x->why);
  g_free(x);
}

char *space_message(char *why) {
  const char *m = why;
  if (g_str_has_prefix(m, "advise:")) {
    m += strlen("advise:");
    while (g_ascii_isdigit(*m))
      m++;
    m += *m == ':';
    while (*m == ' ')
      m++;
  }
  char *out = g_strdup(m);
  g_free(why);
  return out;
}

/* Whether --set gives KEY ("section.key"). */
static bool user_sets(const struct advise_opts *o, const char *key) {
  size_t n = strlen(key);
  for (char **s = o->sets; s && *s; s++)
    if (strncmp(*s, key, n) == 0 && (*s)[n] == '=')
      return true;
  return false;
}

int space_base(const struct advise_opts *o, GString *base, char **err) {
  g_string_append_printf(base,
                         "# Which configuration trains %s fastest on this "
                         "cluster? (gradsim advise)\n[platform]\n",
                         o->model);
  const char *pl = o->platform;
  if (strchr(pl, '=')) {
    char **items = g_strsplit(pl, ",", -1);
    for (char **it = items; *it; it++) {
      char *eq = strchr(*it, '=');
      char *k = eq ? g_strstrip(g_strndup(*it, (size_t)(eq - *it))) : NULL;
      if (!eq || !*k || strchr(k, '.') || strchr(k, '[')) {
        *err = g_strdup_printf("--platform: '%s' is not KEY=VALUE (a key "
                               "of [platform], such as preset=dgx-h100 or "
                               "nodes=8; items separated by commas)",
                               *it);
        g_free(k);
        g_strfreev(items);
        return -1;
      }
      g_string_append_printf(base, "%s = %s\n", k, eq + 1);
      g_free(k);
    }
    g_strfreev(items);
  } else {
    if (!g_file_test(pl, G_FILE_TEST_IS_REGULAR)) {
      *err = g_strdup_printf("--platform %s: no such file (give a SimGrid "
                             "platform XML, or KEY=VALUE,... of [platform] "
                             "keys such as preset=dgx-h100,nodes=8)",
                             pl);
      return -1;
    }
    g_string_append_printf(base, "topology = file:%s\n", pl);
    if (!user_sets(o, "platform.nodes")) {
      size_t hosts;
      char *why = NULL;
      if (platform_file_check(pl, &hosts, &why) != 0) {
        *err = g_strdup_printf("--platform %s: %s", pl, why);
        g_free(why);
        return -1;
      }
      g_string_append_printf(base, "nodes = %zu\n", hosts);
    }
  }
  /* What advise runs unless told otherwise: PyTorch DDP's schedule and
   * its 25 MiB buckets, codecs on the GPU, three iterations (the first
   * waits for no earlier exchange, the others are the steady state; more
   * cost NCCL's kernel their whole time), and sampled payloads where a
   * codec's sizes depend on the data (cand_load() drops them where they
   * do not). */
  g_string_append_printf(base,
                         "[model]\nname = %s\n[training]\nmode = overlap\n"
                         "iterations = 3\nfusion_bytes = 26214400B\n"
                         "[exchange]\nplacement = gpu\npayload = sampled\n",
                         o->model);
  return 0;
}

/* One experiment of the base with SETS then --set (NULL with *ERR). */
static struct experiment *load_with(struct search *s, GPtrArray *kv,
                                    char **err) {
  GPtrArray *all = g_ptr_array_new();
  for (guint i = 0; kv && i < kv->len; i++)
    g_ptr_array_add(all, g_ptr_array_index(kv, i));
  for (char **u = s->o->sets; u && *u; u++)
    g_ptr_array_add(all, *u);
  g_ptr_array_add(all, NULL);
  struct experiment *e = experiment_load_data(
      "advise", s->base->str, s->base->len, (char **)all->pdata, 0, err);
  g_ptr_array_free(all, TRUE);
  return e;
}

/* A family from SPEC, "section.key=value|value|..." each (NULL-ended),
 * without the keys --set gives. */
static struct family *family_of(struct search *s, const char *const *spec) {
  struct family *f = g_new0(struct family, 1);
  f->keys = g_ptr_array_new_with_free_func(g_free);
  f->values = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  for (const char *const *k = spec; *k; k++) {
    char *key = g_strndup(*k, strcspn(*k, "="));
    if (user_sets(s->o, key)) {
      g_free(key);
      continue;
    }
    GPtrArray *v = g_ptr_array_new_with_free_func(g_free);
    char **items = g_strsplit(*k + strlen(key) + 1, "|", -1);
    for (char **it = items; *it; it++)
      g_ptr_array_add(v, g_strdup(*it));
    g_strfreev(items);
    g_ptr_array_add(f->keys, key);
    g_ptr_array_add(f->values, v);
  }
  return f;
}

/* Whether the base with KV (and --set) is predicted to fit its GPU. */
static bool fits_with(struct search *s, const char *const *kv) {
  GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
  for (const char *const *k = kv; *k; k++)
    g_ptr_array_add(a, g_strdup(*k));
  char *why = NULL;
  struct experiment *e = load_with(s, a, &why);
  g_ptr_array_free(a, TRUE);
  bool fits = true;
  struct run_prediction pr;
  if (e && run_predict(g_ptr_array_index(e->points, 0), NAN, &pr, &why) == 0)
    fits = isnan(pr.capacity) || pr.memory_bytes <= pr.capacity;
  g_free(why);
  experiment_free(e);
  return fits;
}

/* What the default space needs to fit the model in memory: the first
 * rung of a ladder of ZeRO's stages (zero2 also searching zero3, which
 * holds less) and activation checkpointing (a forward again) that fits;
 * NULL where the keys are left alone (--set gives them, or nothing fits
 * anyway, which the candidates then say). */
static void memory_rung(struct search *s, const char **shard,
                        const char **ckpt) {
  static const char *const rungs[][3] = {
      {NULL},
      {"training.sharding=zero2", NULL},
      {"training.sharding=zero3", NULL},
      {"training.activation_checkpointing=true", NULL},
      {"training.activation_checkpointing=true", "training.sharding=zero2",
       NULL},
      {"training.activation_checkpointing=true", "training.sharding=zero3",
       NULL}};
  static const char *const shards[] = {NULL, "zero2|zero3", "zero3"};
  *shard = *ckpt = NULL;
  for (size_t r = 0; r < G_N_ELEMENTS(rungs); r++)
    if (fits_with(s, rungs[r])) {
      if (!user_sets(s->o, "training.sharding"))
        *shard = shards[r % 3];
      if (r >= 3 && !user_sets(s->o, "training.activation_checkpointing"))
        *ckpt = "true";
      return;
    }
}

/* The default space for the base point BASE (docs/advise.md): no codec
 * in fp32 and bf16, overlapped with backward or not; the codecs
 * PyTorch's communication hooks apply once per bucket; the seeds' codecs
 * applied at every hop, on the GPU or the host's CPU; each over the
 * collectives a cluster of its kind runs. ZeRO's stages are searched
 * only where the model does not fit a GPU without them. */
static GPtrArray *default_space(struct search *s, const struct point *base) {
  bool machines = topology_node_size(base) > 0;
  const char *algos =
      machines ? "nccl|nccl-ring|nccl-tree|ring" : "ring|nccl|rabenseifner";
  const char *shard = NULL, *ckpt = NULL;
  memory_rung(s, &shard, &ckpt);
  static const char *const none[] = {"exchange.codec=none",
                                     "model.grad_dtype=fp32|bf16",
                                     "training.mode=overlap|sync", NULL};
  static const char *const bucket[] = {
      "exchange.codec=powersgd:rank=1|powersgd:rank=4|topk:ratio=0.01|rgc|"
      "3lc|onebit|q8|qsgd",
      "exchange.compression=per-bucket", "exchange.implementation=pytorch",
      NULL};
  static const char *const hop[] = {"exchange.codec=inceptionn|q8|terngrad",
                                    "exchange.compression=per-hop",
                                    "exchange.placement=gpu|cpu", NULL};
  /* Every family's collectives, and what memory needs (sharding and
   * checkpointing only where the model does not fit without them). */
  char *algo = g_strconcat("exchange.algorithm=", algos, NULL);
  char *sh = shard ? g_strconcat("training.sharding=", shard, NULL) : NULL;
  char *ck = ckpt
                 ? g_strconcat("training.activation_checkpointing=", ckpt, NULL)
                 : NULL;
  const char *const *own[] = {none, bucket, hop};
  GPtrArray *fams = g_ptr_array_new_with_free_func(family_free);
  for (size_t i = 0; i < G_N_ELEMENTS(own); i++) {
    const char *spec[12];
    size_t n = 0;
    for (const char *const *k = own[i]; *k; k++)
      spec[n++] = *k;
    spec[n++] = algo;
    if (sh)
      spec[n++] = sh;
    if (ck)
      spec[n++] = ck;
    spec[n] = NULL;
    g_ptr_array_add(fams, family_of(s, spec));
  }
  g_free(algo);
  g_free(sh);
  g_free(ck);
  return fams;
}

/* The --space file PATH as one family; -1 with *ERR. */
static int file_space(struct search *s, const char *path, GPtrArray **out,
                      char **err) {
  char *e;
  GKeyFile *kf = experiment_key_file(path, &e);
  if (!kf) {
    *err = g_strdup_printf("--space %s", e);
    g_free(e);
    return -1;
  }
  struct family *f = g_new0(struct family, 1);
  f->keys = g_ptr_array_new_with_free_func(g_free);
  f->values = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  gchar **groups = g_key_file_get_groups(kf, NULL);
  int rc = 0;
  for (gchar **g = groups; *g && rc == 0; g++) {
    gchar **keys = g_key_file_get_keys(kf, *g, NULL, NULL);
    for (gchar **k = keys; k && *k && rc == 0; k++) {
      char *key = g_strdup_printf("%s.%s", *g, *k);
      char *val = g_key_file_get_value(kf, *g, *k, NULL);
      GPtrArray *v = experiment_split_values(key, val ? val : "");
      for (guint i = 0; i < MAX(v->len, 1) && rc == 0; i++)
        if (!v->len || !*(char *)g_ptr_array_index(v, i)) {
          *err = g_strdup_printf("--space %s: [%s] %s has an empty value "
                                 "(give values separated by commas)",
                                 path, *g, *k);
          rc = -1;
        }
      if (rc == 0 && user_sets(s->o, key)) {
        g_ptr_array_unref(v);
        g_free(key);
      } else if (rc == 0) {
        g_ptr_array_add(f->keys, key);
        g_ptr_array_add(f->values, v);
      } else {
        g_ptr_array_unref(v);
        g_free(key);
      }
      g_free(val);
    }
    g_strfreev(keys);
  }
  g_strfreev(groups);
  g_key_file_free(kf);
  if (rc == 0 && f->keys->len == 0) {
    *err = g_strdup_printf("--space %s: the space is empty (give at least "
                           "one key with its values, e.g. [exchange] codec "
                           "= none, powersgd:rank=4)",
                           path);
    rc = -1;
  }
  if (rc != 0) {
    family_free(f);
    return -1;
  }
  *out = g_ptr_array_new_with_free_func(family_free);
  g_ptr_array_add(*out, f);
  return 0;
}

/* Every value of every family, alone on the base: a key the experiment
 * does not know or a value it cannot read is an error of the space. */
static int check_values(struct search *s, GPtrArray *fams, char **err) {
  const char *where = s->o->space ? s->o->space : "the default space";
  for (guint i = 0; i < fams->len; i++) {
    struct family *f = g_ptr_array_index(fams, i);
    for (guint k = 0; k < f->keys->len; k++) {
      GPtrArray *v = g_ptr_array_index(f->values, k);
      for (guint j = 0; j < v->len; j++) {
        char *kv1 =
            g_strdup_printf("%s=%s", (char *)g_ptr_array_index(f->keys, k),
                            (char *)g_ptr_array_index(v, j));
        GPtrArray *one = g_ptr_array_new();
        g_ptr_array_add(one, kv1);
        char *why = NULL;
        struct experiment *e = load_with(s, one, &why);
        g_ptr_array_free(one, TRUE);
        g_free(kv1);
        if (!e) {
          /* The experiment's message names its place as --set's. */
          why = space_message(why);
          const char *m = why;
          if (g_str_has_prefix(why, "--set") && strstr(why, ": "))
            m = strstr(why, ": ") + 2;
          *err = g_strdup_printf("--space %s: %s", where, m);
          g_free(why);
          return -1;
        }
        experiment_free(e);
      }
    }
  }
  return 0;
}

int space_families(struct search *s, const struct point *base,
                   GPtrArray **families, char **err) {
  if (s->o->space) {
    if (file_space(s, s->o->space, families, err) != 0)
      return -1;
  } else {
    *families = default_space(s, base);
  }
  for (guint i = 0; i < (*families)->len; i++) {
    struct family *f = g_ptr_array_index(*families, i);
    for (guint k = 0; k < f->keys->len; k++) {
      const char *key = g_ptr_array_index(f->keys, k);
      bool known = false;
      for (guint j = 0; j < s->keys->len && !known; j++)
        known = strcmp(g_ptr_array_index(s->keys, j), key) == 0;
      if (!known)
        g_ptr_array_add(s->keys, g_strdup(key));
    }
  }
  double total = 0;
  for (guint i = 0; i < (*families)->len; i++) {
    struct family *f = g_ptr_array_index(*families, i);
    double n = 1;
    for (guint k = 0; k < f->values->len; k++)
      n *= ((GPtrArray *)g_ptr_array_index(f->values, k))->len;
    total += n;
  }
  if (total > ADVISE_MAX_CANDIDATES) {
    *err = g_strdup_printf("--space %s: %.0f combinations, more than "
                           "advise searches (%d; fewer values, or --set "
                           "the keys you know)",
                           s->o->space ? s->o->space : "(default)", total,
                           ADVISE_MAX_CANDIDATES);
    g_ptr_array_unref(*families);
    *families = NULL;
    return -1;
  }
  if (check_values(s, *families, err) != 0) {
    g_ptr_array_unref(*families);
    *families = NULL;
    return -1;
  }
  return 0;
}

/* "key=value ..." of KV, the sections dropped. */
static char *label_of(GPtrArray *kv) {
  GString *l = g_string_new(NULL);
  for (guint i = 0; i < kv->len; i++) {
    const char *item = g_ptr_array_index(kv, i);
    const char *dot = strchr(item, '.');
    g_string_append_printf(l, "%s%s", i ? " " : "", dot ? dot + 1 : item);
  }
  return g_string_free(l, FALSE);
}

struct cand *cand_add(struct search *s, GPtrArray *kv) {
  char *label = label_of(kv);
  if (g_hash_table_contains(s->labels, label)) {
    g_free(label);
    return NULL;
  }
  struct cand *c = g_new0(struct cand, 1);
  c->kv = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < kv->len; i++)
    g_ptr_array_add(c->kv, g_strdup(g_ptr_array_index(kv, i)));
  c->label = label;
  c->bits = c->err = c->cosine = NAN;
  c->iter_s = NAN;
  g_ptr_array_add(s->cands, c);
  g_hash_table_insert(s->labels, c->label, c);
  return c;
}

/* The combinations of family F from key K on, KV holding those before. */
static void expand(struct search *s, const struct family *f, guint k,
                   GPtrArray *kv) {
  if (k == f->keys->len) {
    cand_add(s, kv);
    return;
  }
  GPtrArray *v = g_ptr_array_index(f->values, k);
  for (guint j = 0; j < v->len; j++) {
    g_ptr_array_add(kv, g_strdup_printf("%s=%s",
                                        (char *)g_ptr_array_index(f->keys, k),
                                        (char *)g_ptr_array_index(v, j)));
    expand(s, f, k + 1, kv);
    g_ptr_array_remove_index(kv, kv->len - 1);
  }
}

void space_expand(struct search *s, GPtrArray *families) {
  for (guint i = 0; i < families->len; i++) {
    GPtrArray *kv = g_ptr_array_new_with_free_func(g_free);
    expand(s, g_ptr_array_index(families, i), 0, kv);
    g_ptr_array_unref(kv);
  }
}

/* Whether a candidate of KV moves messages whose size does not depend
 * on the data (no codec, one whose codec table says so, or a linear
 * codec, whose factors' sizes follow the tensors' shapes): its
 * simulation then needs no payload (payload = none is exact). */
static bool sizes_fixed(GPtrArray *kv) {
  for (guint i = 0; i < kv->len; i++) {
    const char *item = g_ptr_array_index(kv, i);
    if (!g_str_has_prefix(item, "exchange.codec="))
      continue;
    codec_t *c;
    if (codec_create(item + strlen("exchange.codec="), &c, NULL, 0) != 0)
      return strcmp(item, "exchange.codec=none") == 0;
    bool fixed = codec_size_is_fixed(c) || codec_is_linear(c);
    codec_free(c);
    return fixed;
  }
  return true;
}

void cand_load(struct search *s, struct cand *c) {
  char *why = NULL;
  /* A payload where the sizes need one (the base's sampled), none where
   * they do not, unless --set or the space chose. */
  GPtrArray *kv = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < c->kv->len; i++)
    g_ptr_array_add(kv, g_strdup(g_ptr_array_index(c->kv, i)));
  bool chosen = user_sets(s->o, "exchange.payload");
  for (guint i = 0; i < kv->len && !chosen; i++)
    chosen = g_str_has_prefix(g_ptr_array_index(kv, i), "exchange.payload=");
  if (!chosen && sizes_fixed(kv))
    g_ptr_array_insert(kv, 0, g_strdup("exchange.payload=none"));
  struct experiment *e = load_with(s, kv, &why);
  g_ptr_array_unref(kv);
  if (!e) {
    c->state = CAND_REFUSED;
    c->why = space_message(why);
    return;
  }
  experiment_seal_inputs(e);
  struct estimate est;
  if (e->points->len != 1) {
    c->state = CAND_REFUSED;
    c->why = g_strdup("its values sweep more than one point");
  } else if (experiment_check(e, &est, &why) != 0) {
    c->state = CAND_REFUSED;
    c->why = space_message(why);
  } else {
    c->p = g_ptr_array_steal_index(e->points, 0);
    c->est_s = est.wall_s;
    c->codec = run_has_codec(c->p);
  }
  experiment_free(e);
}

/* KV with KEY's item set to VALUE (replaced, or added); a new array. */
static GPtrArray *kv_with(GPtrArray *kv, const char *key, const char *value) {
  GPtrArray *n = g_ptr_array_new_with_free_func(g_free);
  size_t kl = strlen(key);
  bool done = false;
  for (guint i = 0; i < kv->len; i++) {
    const char *item = g_ptr_array_index(kv, i);
    if (strncmp(item, key, kl) == 0 && item[kl] == '=') {
      g_ptr_array_add(n, g_strdup_printf("%s=%s", key, value));
      done = true;
    } else {
      g_ptr_array_add(n, g_strdup(item));
    }
  }
  if (!done)
    g_ptr_array_add(n, g_strdup_printf("%s=%s", key, value));
  return n;
}

/* A new candidate of KV, loaded; 1 when it is one, else 0. */
static unsigned try_add(struct search *s, GPtrArray *kv) {
  struct cand *c = cand_add(s, kv);
  g_ptr_array_unref(kv);
  if (!c)
    return 0;
  cand_load(s, c);
  /* Values written differently may make the same point. */
  for (guint i = 0; c->p && i + 1 < s->cands->len; i++) {
    const struct cand *o = g_ptr_array_index(s->cands, i);
    if (o->p && strcmp(o->p->hash, c->p->hash) == 0) {
      g_hash_table_remove(s->labels, c->label);
      g_ptr_array_remove_index(s->cands, s->cands->len - 1);
      return 0;
    }
  }
  return 1;
}

/* NUM (a parameter's text) halved (HALF) or doubled, kept an integer
 * when it was one; NULL when that is no new value. */
static char *scaled(const char *num, bool half) {
  char *end;
  double v = g_ascii_strtod(num, &end);
  if (end == num || *end || !isfinite(v) || v == 0)
    return NULL;
  bool integer = !strpbrk(num, ".eE");
  double w = half ? v / 2 : v * 2;
  if (integer) {
    w = half ? trunc(w) : w;
    if (w == v || w == 0)
      return NULL;
    return g_strdup_printf("%.0f", w);
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.6g", w));
}

unsigned space_neighbours(struct search *s, const struct cand *c) {
  unsigned added = 0;
  /* The bucket size, where it is a size. */
  double fb = c->p->fusion_bytes;
  if (fb > 0 && isfinite(fb) && !run_units(c->p) &&
      !user_sets(s->o, "training.fusion_bytes"))
    for (int h = 0; h < 2; h++) {
      char v[32];
      g_snprintf(v, sizeof v, "%.0fB", h ? fb / 2 : fb * 2);
      added += try_add(s, kv_with(c->kv, "training.fusion_bytes", v));
    }
  /* The codec's first parameter, as the space gives it. */
  for (guint i = 0; i < c->kv->len; i++) {
    const char *item = g_ptr_array_index(c->kv, i);
    if (!g_str_has_prefix(item, "exchange.codec="))
      continue;
    const char *spec = item + strlen("exchange.codec=");
    const char *colon = strchr(spec, ':'),
               *eq = colon ? strchr(colon, '=') : NULL;
    if (!eq)
      break;
    size_t vlen = strcspn(eq + 1, ",");
    char *num = g_strndup(eq + 1, vlen);
    for (int h = 0; h < 2; h++) {
      char *w = scaled(num, h);
      if (!w)
        continue;
      char *nspec = g_strdup_printf("%.*s%s%s", (int)(eq + 1 - spec), spec, w,
                                    eq + 1 + vlen);
      added += try_add(s, kv_with(c->kv, "exchange.codec", nspec));
      g_free(nspec);
      g_free(w);
    }
    g_free(num);
  }
  return added;
}
