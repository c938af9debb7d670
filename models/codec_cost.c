/* models/codec_cost.c: the codec cost table (codec_cost.h). */
#include "codec_cost.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

struct cpu_entry {
  double enc_ns, dec_ns, dec_ns_byte;
};

/* A `gpu IMPL CODEC` row: what one encode and one decode launch and move. */
struct gpu_row {
  double enc_kernels, enc_bytes, enc_payload_bytes;
  double dec_kernels, dec_bytes, dec_payload_bytes;
  double select; /* radix selections (gpu_radix_select) per encode */
};

/* torch.topk's radix selection over N values: launches, passes over the
 * values (bytes per value each) and compute per value and pass. */
struct radix_select {
  double kernels, passes, bytes, flops;
};

enum orth_of { ORTH_NONE, ORTH_P, ORTH_Q };

/* One round of a linear codec (`gpu_lowrank IMPL ROUND`). */
struct lowrank_row {
  bool set;
  double kernels, bytes;         /* per bucket; per value of the bucket */
  double mat_kernels, mat_bytes; /* per compressed matrix; per its value */
  double raw_kernels, raw_bytes; /* per uncompressed tensor; per value */
  double products;               /* matrix products per compressed matrix */
  double orth;                   /* enum orth_of */
  double batched; /* 1: the round's matrices share its launches */
};

/* Orthogonalization of an m x r factor (`gpu_orth IMPL`): Gram-Schmidt's
 * launches, or from rank qr_from_rank on a QR of qr_kernels launches. */
struct orth_row {
  bool set;
  double fixed, per_col, per_col_but_last, per_pair;
  double qr_from_rank, qr_kernels;
};

struct impl {
  char *name;
  GHashTable *rows; /* codec key -> struct gpu_row */
  struct lowrank_row lowrank[3];
  struct orth_row orth;
};

struct codec_costs {
  GHashTable *cpu, *nic; /* key -> entry */
  GPtrArray *impls;      /* struct impl, in the table's order */
  double mem_eff, flops_eff;
  struct radix_select radix;
  /* codec_costs_bind() */
  const struct impl *impl;
  struct device_info dev;
  bool bound;
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

static void impl_free(gpointer p) {
  struct impl *m = p;
  g_free(m->name);
  g_hash_table_destroy(m->rows);
  g_free(m);
}

void codec_costs_free(struct codec_costs *t) {
  if (!t)
    return;
  g_hash_table_destroy(t->cpu);
  g_hash_table_destroy(t->nic);
  g_ptr_array_free(t->impls, TRUE);
  g_free(t);
}

static bool num(const char *s, double *v) {
  char *end;
  double x = g_ascii_strtod(s, &end);
  if (!*s || *end || !isfinite(x) || x < 0)
    return false;
  *v = x;
  return true;
}

/* The words of line L of the table, before any '#' comment and before
 * the quoted source (the source text is for people). Modifies L. */
static GPtrArray *line_words(char *l) {
  char *hash = strchr(l, '#');
  char *quote = strchr(l, '"');
  if (hash && (!quote || hash < quote))
    *hash = '\0';
  if (quote)
    *quote = '\0';
  char **w = g_strsplit_set(g_strstrip(l), " \t", -1);
  GPtrArray *words = g_ptr_array_new_with_free_func(g_free);
  for (char **x = w; *x; x++)
    if (**x)
      g_ptr_array_add(words, g_strdup(*x));
  g_strfreev(w);
  return words;
}

/* Where a line is, for messages. */
struct at {
  const char *file;
  size_t line;
  char *err;
  size_t errlen;
};

/* The entry of a 'cpu CODEC ENCODE_NS DECODE_NS DECODE_NS_PER_BYTE'
 * line's words V, or NULL with a message. */
static struct cpu_entry *cpu_entry_of(const char *const *v,
                                      const struct at *a) {
  struct cpu_entry *e = g_new(struct cpu_entry, 1);
  if (num(v[2], &e->enc_ns) && num(v[3], &e->dec_ns) &&
      num(v[4], &e->dec_ns_byte))
    return e;
  g_free(e);
  fail(a->err, a->errlen,
       "%s:%zu: expected 'cpu CODEC ENCODE_NS DECODE_NS "
       "DECODE_NS_PER_BYTE \"SOURCE\"' with numbers >= 0",
       a->file, a->line);
  return NULL;
}

/* The engine of a 'nic CODEC LANES BITS_IN BITS_OUT PASSES' line. */
static struct nic_stream *nic_entry_of(const char *const *v,
                                       const struct at *a) {
  struct nic_stream *e = g_new(struct nic_stream, 1);
  if (num(v[2], &e->lanes) && num(v[3], &e->bits_in) &&
      num(v[4], &e->bits_out) && num(v[5], &e->passes) && e->lanes > 0 &&
      e->bits_in > 0 && e->bits_out > 0)
    return e;
  g_free(e);
  fail(a->err, a->errlen,
       "%s:%zu: expected 'nic CODEC LANES BITS_IN BITS_OUT "
       "PASSES \"SOURCE\"' with LANES, BITS_IN, BITS_OUT > 0 "
       "and PASSES >= 0",
       a->file, a->line);
  return NULL;
}

/* ---- KEY=VALUE words -------------------------------------------------- */

/* A key of a GPU line: its name and the double it sets in the line's
 * struct. */
struct key {
  const char *name;
  size_t off;
};

/* Words V[FROM, N) as KEY=VALUE pairs of KEYS (NKEYS of them) into the
 * struct at BASE; VALUE a number >= 0, or for the key "orth" p, q or
 * none. LINE_FORM names the line in messages. */
static int parse_keys(const char *const *v, guint from, guint n,
                      const struct key *keys, size_t nkeys, void *base,
                      const char *line_form, const struct at *a) {
  for (guint i = from; i < n; i++) {
    const char *eq = strchr(v[i], '=');
    size_t len = eq ? (size_t)(eq - v[i]) : 0;
    const struct key *k = NULL;
    for (size_t j = 0; eq && j < nkeys; j++)
      if (strlen(keys[j].name) == len && !strncmp(keys[j].name, v[i], len))
        k = &keys[j];
    if (!k) {
      GString *names = g_string_new(NULL);
      for (size_t j = 0; j < nkeys; j++)
        g_string_append_printf(names, "%s%s", j ? ", " : "", keys[j].name);
      fail(a->err, a->errlen,
           "%s:%zu: '%s' is not KEY=VALUE with a key of '%s' (%s)", a->file,
           a->line, v[i], line_form, names->str);
      g_string_free(names, TRUE);
      return -EINVAL;
    }
    double *dst = (double *)(void *)((char *)base + k->off);
    const char *val = eq + 1;
    if (!strcmp(k->name, "orth")) {
      if (!strcmp(val, "p") || !strcmp(val, "q") || !strcmp(val, "none")) {
        *dst = !strcmp(val, "p") ? ORTH_P : !strcmp(val, "q") ? ORTH_Q
                                                              : ORTH_NONE;
        continue;
      }
      return fail(a->err, a->errlen,
                  "%s:%zu: orth=%s: expected p, q or none", a->file, a->line,
                  val);
    }
    if (!num(val, dst))
      return fail(a->err, a->errlen, "%s:%zu: %s=%s: expected a number >= 0",
                  a->file, a->line, k->name, val);
  }
  return 0;
}

#define KEY(type, field) {#field, offsetof(struct type, field)}

static const struct key ROW_KEYS[] = {
    KEY(gpu_row, enc_kernels),       KEY(gpu_row, enc_bytes),
    KEY(gpu_row, enc_payload_bytes), KEY(gpu_row, dec_kernels),
    KEY(gpu_row, dec_bytes),         KEY(gpu_row, dec_payload_bytes),
    KEY(gpu_row, select)};
static const struct key RADIX_KEYS[] = {
    KEY(radix_select, kernels), KEY(radix_select, passes),
    KEY(radix_select, bytes), KEY(radix_select, flops)};
static const struct key LOWRANK_KEYS[] = {
    KEY(lowrank_row, kernels),     KEY(lowrank_row, bytes),
    KEY(lowrank_row, mat_kernels), KEY(lowrank_row, mat_bytes),
    KEY(lowrank_row, raw_kernels), KEY(lowrank_row, raw_bytes),
    KEY(lowrank_row, products),    KEY(lowrank_row, orth),
    KEY(lowrank_row, batched)};
static const struct key ORTH_KEYS[] = {
    KEY(orth_row, fixed),        KEY(orth_row, per_col),
    KEY(orth_row, per_col_but_last), KEY(orth_row, per_pair),
    KEY(orth_row, qr_from_rank), KEY(orth_row, qr_kernels)};

/* The implementation named NAME in T, created when new. */
static struct impl *impl_of(struct codec_costs *t, const char *name) {
  for (guint i = 0; i < t->impls->len; i++) {
    struct impl *m = g_ptr_array_index(t->impls, i);
    if (!strcmp(m->name, name))
      return m;
  }
  struct impl *m = g_new0(struct impl, 1);
  m->name = g_strdup(name);
  m->rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_ptr_array_add(t->impls, m);
  return m;
}

/* `gpu IMPL CODEC KEY=VALUE ...` */
static int gpu_line(struct codec_costs *t, const char *const *v, guint n,
                    const struct at *a) {
  double x;
  if (n < 3 || strchr(v[1], '=') ||
      (n == 4 && num(v[2], &x) && num(v[3], &x)))
    return fail(a->err, a->errlen,
                "%s:%zu: expected 'gpu IMPLEMENTATION CODEC KEY=VALUE ... "
                "\"SOURCE\"' (the form 'gpu CODEC ENCODE_PASSES "
                "DECODE_PASSES' is gone: see models/codec_costs.conf)",
                a->file, a->line);
  struct gpu_row *r = g_new0(struct gpu_row, 1);
  int rc = parse_keys(v, 3, n, ROW_KEYS, G_N_ELEMENTS(ROW_KEYS), r,
                      "gpu IMPLEMENTATION CODEC", a);
  if (rc) {
    g_free(r);
    return rc;
  }
  g_hash_table_replace(impl_of(t, v[1])->rows, g_strdup(v[2]), r);
  return 0;
}

/* `gpu_lowrank IMPL ROUND KEY=VALUE ...`, ROUND 0, 1 or finish. */
static int lowrank_line(struct codec_costs *t, const char *const *v, guint n,
                        const struct at *a) {
  int round = n < 3                     ? -1
              : !strcmp(v[2], "0")      ? 0
              : !strcmp(v[2], "1")      ? 1
              : !strcmp(v[2], "finish") ? CODEC_COST_FINISH
                                        : -1;
  if (round < 0)
    return fail(a->err, a->errlen,
                "%s:%zu: expected 'gpu_lowrank IMPLEMENTATION ROUND "
                "KEY=VALUE ... \"SOURCE\"', ROUND 0, 1 or finish",
                a->file, a->line);
  struct lowrank_row r = {.set = true};
  int rc = parse_keys(v, 3, n, LOWRANK_KEYS, G_N_ELEMENTS(LOWRANK_KEYS), &r,
                      "gpu_lowrank IMPLEMENTATION ROUND", a);
  if (!rc)
    impl_of(t, v[1])->lowrank[round] = r;
  return rc;
}

/* `gpu_orth IMPL KEY=VALUE ...` */
static int orth_line(struct codec_costs *t, const char *const *v, guint n,
                     const struct at *a) {
  if (n < 2 || strchr(v[1], '='))
    return fail(a->err, a->errlen,
                "%s:%zu: expected 'gpu_orth IMPLEMENTATION KEY=VALUE ... "
                "\"SOURCE\"'",
                a->file, a->line);
  struct orth_row r = {.set = true};
  int rc = parse_keys(v, 2, n, ORTH_KEYS, G_N_ELEMENTS(ORTH_KEYS), &r,
                      "gpu_orth IMPLEMENTATION", a);
  if (!rc)
    impl_of(t, v[1])->orth = r;
  return rc;
}

/* E (NULL: a bad line, already reported) as the entry of CODEC in H; a
 * later line for the same codec replaces an earlier one. */
static int add_entry(GHashTable *h, const char *codec, gpointer e) {
  if (!e)
    return -EINVAL;
  g_hash_table_replace(h, g_strdup(codec), e);
  return 0;
}

/* `gpu_memory_efficiency F` or `gpu_flops_efficiency F`, F in (0, 1]. */
static int efficiency_line(double *dst, const char *const *v, guint n,
                           const struct at *a) {
  if (n != 2 || !num(v[1], dst) || !(*dst > 0 && *dst <= 1))
    return fail(a->err, a->errlen, "%s:%zu: expected '%s FRACTION \"SOURCE\"'"
                " with FRACTION in (0, 1]",
                a->file, a->line, v[0]);
  return 0;
}

/* One line of the table, its N words V, into T. */
static int costs_line(struct codec_costs *t, const char *const *v, guint n,
                      const struct at *a) {
  if (!strcmp(v[0], "cpu") && n == 5)
    return add_entry(t->cpu, v[1], cpu_entry_of(v, a));
  if (!strcmp(v[0], "nic") && n == 6)
    return add_entry(t->nic, v[1], nic_entry_of(v, a));
  if (!strcmp(v[0], "gpu"))
    return gpu_line(t, v, n, a);
  if (!strcmp(v[0], "gpu_lowrank"))
    return lowrank_line(t, v, n, a);
  if (!strcmp(v[0], "gpu_orth"))
    return orth_line(t, v, n, a);
  if (!strcmp(v[0], "gpu_radix_select"))
    return parse_keys(v, 1, n, RADIX_KEYS, G_N_ELEMENTS(RADIX_KEYS),
                      &t->radix, "gpu_radix_select", a);
  if (!strcmp(v[0], "gpu_memory_efficiency"))
    return efficiency_line(&t->mem_eff, v, n, a);
  if (!strcmp(v[0], "gpu_flops_efficiency"))
    return efficiency_line(&t->flops_eff, v, n, a);
  if (!strcmp(v[0], "gpu_bandwidth") || !strcmp(v[0], "gpu_launch"))
    return fail(a->err, a->errlen,
                "%s:%zu: '%s' is gone: the device's memory bandwidth and "
                "launch overhead are in devices.conf, the fraction of the "
                "bandwidth kernels reach is gpu_memory_efficiency",
                a->file, a->line, v[0]);
  return fail(a->err, a->errlen,
              "%s:%zu: unknown line '%s' (expected cpu, nic, gpu, "
              "gpu_lowrank, gpu_orth, gpu_radix_select, "
              "gpu_memory_efficiency or gpu_flops_efficiency)",
              a->file, a->line, v[0]);
}

/* TEXT, the contents of FILE, into a new table *OUT. */
static int parse_costs(const char *file, char *text, struct codec_costs **out,
                       char *err, size_t errlen) {
  struct codec_costs *t = g_new0(struct codec_costs, 1);
  t->cpu = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  t->nic = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  t->impls = g_ptr_array_new_with_free_func(impl_free);
  char **lines = g_strsplit(text, "\n", -1);
  int rc = 0;
  for (size_t ln = 0; lines[ln] && !rc; ln++) {
    GPtrArray *words = line_words(lines[ln]);
    struct at a = {file, ln + 1, err, errlen};
    if (words->len)
      rc = costs_line(t, (const char *const *)words->pdata, words->len, &a);
    g_ptr_array_free(words, TRUE);
  }
  g_strfreev(lines);
  if (!rc && !(t->mem_eff > 0))
    rc = fail(err, errlen, "%s: no gpu_memory_efficiency line", file);
  if (!rc && !(t->flops_eff > 0))
    rc = fail(err, errlen, "%s: no gpu_flops_efficiency line", file);
  if (rc) {
    codec_costs_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

int codec_costs_load(const char *path, struct codec_costs **out, char *err,
                     size_t errlen) {
  *out = NULL;
  char *own = path ? NULL
                   : g_build_filename(model_dir(NULL), "codec_costs.conf",
                                      NULL);
  const char *file = path ? path : own;
  char *text;
  GError *ge = NULL;
  int rc;
  if (!g_file_get_contents(file, &text, NULL, &ge)) {
    rc = fail(err, errlen, "%s", ge->message);
    g_error_free(ge);
  } else {
    rc = parse_costs(file, text, out, err, errlen);
    g_free(text);
  }
  g_free(own);
  return rc;
}

/* The canonical spec, then the codec's cost family ("rgc/trimmed"), then
 * its name; then, for a setting the table does not list (powersgd:rank=8,
 * trunc:bits=7), the first listed setting of the same codec in the order
 * of the specs' text, so that an unlisted setting costs what its nearest
 * relative does rather than nothing. */
static gpointer lookup(GHashTable *h, const codec_t *c) {
  gpointer e = g_hash_table_lookup(h, codec_spec(c));
  char family[CODEC_SPEC_MAX];
  if (!e && codec_cost_family(c, family, sizeof family))
    e = g_hash_table_lookup(h, family);
  if (!e)
    e = g_hash_table_lookup(h, codec_name(c));
  if (e)
    return e;
  char *prefix = g_strdup_printf("%s:", codec_name(c));
  const char *best = NULL;
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, h);
  while (g_hash_table_iter_next(&it, &key, &val))
    if (g_str_has_prefix(key, prefix) && (!best || strcmp(key, best) < 0)) {
      best = key;
      e = val;
    }
  g_free(prefix);
  return e;
}

/* The implementation whose rows cost GPU work: the bound one, else
 * gradsim's (NULL: the table has none). */
static const struct impl *gpu_impl(const struct codec_costs *t) {
  if (t->bound)
    return t->impl;
  for (guint i = 0; i < t->impls->len; i++) {
    const struct impl *m = g_ptr_array_index(t->impls, i);
    if (!strcmp(m->name, "gradsim"))
      return m;
  }
  return NULL;
}

static bool has_lowrank(const struct impl *m) {
  return m && (m->lowrank[0].set || m->lowrank[1].set ||
               m->lowrank[CODEC_COST_FINISH].set);
}

/* Whether M prices C: a row of its own, or its rounds for a linear
 * codec. */
static bool impl_prices(const struct impl *m, const codec_t *c) {
  if (!m)
    return false;
  return codec_is_linear(c) ? has_lowrank(m) : lookup(m->rows, c) != NULL;
}

bool codec_costs_has(const struct codec_costs *t, const codec_t *c,
                     enum cost_place where) {
  if (!t || !c)
    return false;
  if (where == COST_CPU)
    return lookup(t->cpu, c) != NULL;
  return impl_prices(gpu_impl(t), c);
}

bool codec_costs_nic(const struct codec_costs *t, const codec_t *c,
                     struct nic_stream *out) {
  const struct nic_stream *e = t && c ? lookup(t->nic, c) : NULL;
  if (e)
    *out = *e;
  return e != NULL;
}

/* ---- binding ---------------------------------------------------------- */

/* Whether C's GPU cost on M needs the fp32 peak: products, or a
 * selection's compute. */
static bool needs_flops(const struct codec_costs *t, const struct impl *m,
                        const codec_t *c) {
  if (codec_is_linear(c))
    return true;
  const struct gpu_row *r = lookup(m->rows, c);
  return r && r->select > 0 && t->radix.flops > 0;
}

int codec_costs_bind(struct codec_costs *t, const char *dev_name,
                     const struct device_info *dev, const char *impl,
                     const codec_t *c, char *err, size_t errlen) {
  const struct impl *m = NULL;
  GString *names = g_string_new(NULL);
  for (guint i = 0; i < t->impls->len; i++) {
    const struct impl *x = g_ptr_array_index(t->impls, i);
    g_string_append_printf(names, "%s%s", i ? ", " : "", x->name);
    if (!strcmp(x->name, impl))
      m = x;
  }
  int rc = 0;
  if (!m && t->impls->len)
    rc = fail(err, errlen,
              "the cost table has no gpu rows for implementation '%s' (it "
              "has %s)",
              impl, names->str);
  g_string_free(names, TRUE);
  if (rc)
    return rc;
  bool priced = c && impl_prices(m, c);
  if (priced && !(dev->memory_Bps > 0))
    return fail(err, errlen,
                "device %s has no memory bandwidth in devices.conf, which "
                "the GPU cost of codec %s needs",
                dev_name, codec_spec(c));
  if (priced && !(dev->launch_s > 0))
    return fail(err, errlen,
                "device %s has no 'launch' line in devices.conf (its kernel "
                "launch overhead), which the GPU cost of codec %s needs",
                dev_name, codec_spec(c));
  if (priced && needs_flops(t, m, c) && !(dev->fp32_flops > 0))
    return fail(err, errlen,
                "device %s has no fp32 peak in devices.conf, which the GPU "
                "cost of codec %s needs (%s)",
                dev_name, codec_spec(c),
                codec_is_linear(c) ? "its matrix products"
                                   : "its selection's compute");
  t->impl = m;
  t->dev = *dev;
  t->bound = true;
  return 0;
}

/* ---- the GPU model ---------------------------------------------------- */

/* What GPU work adds up to, before it is turned into seconds. */
struct work {
  double kernels, bytes, flops;
};

static double work_seconds(const struct codec_costs *t,
                           const struct work *w) {
  const struct device_info *d = &t->dev;
  double s = w->kernels * d->launch_s;
  if (w->bytes > 0)
    s += w->bytes / (t->mem_eff * d->memory_Bps);
  if (w->flops > 0 && d->fp32_flops > 0)
    s += w->flops / (t->flops_eff * d->fp32_flops);
  return s;
}

/* An encode (ENCODE) or decode of row R over N values and PAYLOAD bytes. */
static struct work row_work(const struct codec_costs *t,
                            const struct gpu_row *r, bool encode, double n,
                            double payload) {
  struct work w;
  if (encode) {
    w = (struct work){r->enc_kernels,
                      r->enc_bytes * n + r->enc_payload_bytes * payload, 0};
    /* torch.topk's radix selection: passes over the values, each reading
     * them (bytes) and ranking them (flops). */
    w.kernels += r->select * t->radix.kernels;
    w.bytes += r->select * t->radix.passes * t->radix.bytes * n;
    w.flops += r->select * t->radix.passes * t->radix.flops * n;
  } else {
    w = (struct work){r->dec_kernels,
                      r->dec_bytes * n + r->dec_payload_bytes * payload, 0};
  }
  return w;
}

/* The launches, bytes and flops of orthogonalizing an M x R factor. */
static struct work orth_work(const struct orth_row *o, double m, double r) {
  if (!o->set || r < 1)
    return (struct work){0, 0, 0};
  /* A QR (torch.linalg.qr: geqrf and orgqr) reads and writes the factor a
   * few times; Householder QR is about 2 m r^2 flops, and so is
   * Gram-Schmidt (a dot and an axpy per pair of columns). */
  double flops = 2 * m * r * r + 3 * m * r;
  if (o->qr_from_rank > 0 && r >= o->qr_from_rank)
    return (struct work){o->qr_kernels, 4 * 4 * m * r, flops};
  double kernels = o->per_col * r + o->per_col_but_last * (r - 1) +
                   o->per_pair * r * (r - 1) / 2;
  /* Each of Gram-Schmidt's kernels reads a column or two and writes one. */
  return (struct work){o->fixed + kernels, 12 * m * kernels, flops};
}

/* Round ROUND of M over the K tensors SHAPES. */
static struct work lowrank_work(const struct impl *m, const codec_t *c,
                                int round, const struct codec_shape *shapes,
                                size_t k) {
  const struct lowrank_row *r = &m->lowrank[round];
  struct work w = {0, 0, 0};
  if (!r->set)
    return w;
  double n = 0, raw = 0, mat = 0, nraw = 0, nmat = 0;
  struct work orth = {0, 0, 0};
  double orth_kernels = 0;
  for (size_t i = 0; i < k; i++) {
    double rows = (double)shapes[i].rows, cols = (double)shapes[i].cols;
    double vals = rows * cols;
    n += vals;
    /* Compressed at rank rk when round 1 carries its Q (cols x rk). */
    uint64_t q = codec_lin_len(c, &shapes[i], 1, 1);
    if (!q) {
      raw += vals;
      nraw++;
      continue;
    }
    double rk = (double)q / cols;
    nmat++;
    mat += vals;
    /* A product reads (or writes) the matrix and its two factors: P = M Q,
     * Q = M^T P, M = P Q^T, 2 rows cols rk flops each. */
    w.bytes += r->products * 4 * (vals + rk * (rows + cols));
    w.flops += r->products * 2 * vals * rk;
    if (r->orth != ORTH_NONE) {
      struct work o = orth_work(&m->orth, r->orth == ORTH_P ? rows : cols, rk);
      orth.bytes += o.bytes;
      orth.flops += o.flops;
      orth_kernels = r->batched > 0 ? fmax(orth_kernels, o.kernels)
                                    : orth_kernels + o.kernels;
    }
  }
  bool batched = r->batched > 0;
  double per_mat = r->mat_kernels + r->products;
  w.kernels = r->kernels +
              (batched ? (nmat > 0 ? per_mat : 0) : nmat * per_mat) +
              (batched ? (nraw > 0 ? r->raw_kernels : 0)
                       : nraw * r->raw_kernels) +
              orth_kernels;
  w.bytes += r->bytes * n + r->mat_bytes * mat + r->raw_bytes * raw +
             orth.bytes;
  w.flops += orth.flops;
  return w;
}

/* One stream of N values of a linear codec: one matrix, the most square
 * one N factors into (codec.h: R the largest divisor of N not above its
 * square root). */
static struct codec_shape one_matrix(uint64_t n) {
  uint64_t r = 1;
  for (uint64_t d = 1; d * d <= n; d++)
    if (n % d == 0)
      r = d;
  return (struct codec_shape){r, n ? n / r : 0};
}

/* GPU work of one call: SECONDS, or (LAUNCH) only its launches. */
static double gpu_call(const struct codec_costs *t, const codec_t *c,
                       bool encode, uint64_t n, size_t payload, bool launch) {
  const struct impl *m = t->bound ? t->impl : NULL;
  if (!m)
    return 0;
  struct work w = {0, 0, 0};
  if (codec_is_linear(c)) {
    struct codec_shape one = one_matrix(n);
    for (int round = encode ? 0 : CODEC_COST_FINISH;
         round <= (encode ? 1 : CODEC_COST_FINISH); round++) {
      struct work x = lowrank_work(m, c, round, &one, 1);
      w.kernels += x.kernels;
      w.bytes += x.bytes;
      w.flops += x.flops;
    }
  } else {
    const struct gpu_row *r = lookup(m->rows, c);
    if (!r)
      return 0;
    w = row_work(t, r, encode, (double)n, (double)payload);
  }
  return launch ? w.kernels * t->dev.launch_s : work_seconds(t, &w);
}

/* ---- the calls -------------------------------------------------------- */

static double cpu_seconds(const struct codec_costs *t, const codec_t *c,
                          bool encode, uint64_t n, size_t payload) {
  const struct cpu_entry *e = lookup(t->cpu, c);
  if (!e)
    return 0;
  if (encode)
    return 1e-9 * e->enc_ns * (double)n;
  return 1e-9 * (e->dec_ns * (double)n + e->dec_ns_byte * (double)payload);
}

double codec_cost_seconds(const struct codec_costs *t, const codec_t *c,
                          enum cost_place where, bool encode, uint64_t n,
                          size_t payload) {
  if (!t || !c)
    return 0;
  if (where == COST_GPU)
    return gpu_call(t, c, encode, n, payload, false);
  return cpu_seconds(t, c, encode, n, payload);
}

double codec_cost_gpu_launch(const struct codec_costs *t, const codec_t *c,
                             bool encode, uint64_t n, size_t payload) {
  return t && c ? gpu_call(t, c, encode, n, payload, true) : 0;
}

double codec_cost_linear_seconds(const struct codec_costs *t,
                                 const codec_t *c, enum cost_place where,
                                 int round, const struct codec_shape *shapes,
                                 size_t k) {
  if (!t || !c || round < 0 || round > CODEC_COST_FINISH)
    return 0;
  if (where == COST_GPU) {
    if (!t->bound || !t->impl)
      return 0;
    struct work w = lowrank_work(t->impl, c, round, shapes, k);
    return work_seconds(t, &w);
  }
  uint64_t n = 0;
  for (size_t i = 0; i < k; i++)
    n += shapes[i].rows * shapes[i].cols;
  /* The cpu line times a whole encode (both rounds) and a decode, as
   * `gradsim codec calibrate` measures them on one stream. */
  if (round == CODEC_COST_FINISH)
    return cpu_seconds(t, c, false, n, 0);
  return cpu_seconds(t, c, true, n, 0) * (round == 0 ? 1.0 / 3 : 2.0 / 3);
}
