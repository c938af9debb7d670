/* models/codec_cost.c: the codec cost table (codec_cost.h). */
#include "codec_cost.h"

#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

struct cpu_entry {
  double enc_ns, dec_ns, dec_ns_byte;
};
struct gpu_entry {
  double enc_passes, dec_passes;
};

struct codec_costs {
  GHashTable *cpu, *gpu, *nic; /* key -> entry */
  double gpu_bw, gpu_launch;
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

void codec_costs_free(struct codec_costs *t) {
  if (!t)
    return;
  g_hash_table_destroy(t->cpu);
  g_hash_table_destroy(t->gpu);
  g_hash_table_destroy(t->nic);
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

/* The entry of a 'cpu CODEC ENCODE_NS DECODE_NS DECODE_NS_PER_BYTE'
 * line's words V, or NULL with a message. */
static struct cpu_entry *cpu_entry_of(const char *const *v, const char *file,
                                      size_t line, char *err, size_t errlen) {
  struct cpu_entry *e = g_new(struct cpu_entry, 1);
  if (num(v[2], &e->enc_ns) && num(v[3], &e->dec_ns) &&
      num(v[4], &e->dec_ns_byte))
    return e;
  g_free(e);
  fail(err, errlen,
       "%s:%zu: expected 'cpu CODEC ENCODE_NS DECODE_NS "
       "DECODE_NS_PER_BYTE \"SOURCE\"' with numbers >= 0",
       file, line);
  return NULL;
}

/* The entry of a 'gpu CODEC ENCODE_PASSES DECODE_PASSES' line. */
static struct gpu_entry *gpu_entry_of(const char *const *v, const char *file,
                                      size_t line, char *err, size_t errlen) {
  struct gpu_entry *e = g_new(struct gpu_entry, 1);
  if (num(v[2], &e->enc_passes) && num(v[3], &e->dec_passes))
    return e;
  g_free(e);
  fail(err, errlen,
       "%s:%zu: expected 'gpu CODEC ENCODE_PASSES DECODE_PASSES "
       "\"SOURCE\"'",
       file, line);
  return NULL;
}

/* The engine of a 'nic CODEC LANES BITS_IN BITS_OUT PASSES' line. */
static struct nic_stream *nic_entry_of(const char *const *v, const char *file,
                                       size_t line, char *err,
                                       size_t errlen) {
  struct nic_stream *e = g_new(struct nic_stream, 1);
  if (num(v[2], &e->lanes) && num(v[3], &e->bits_in) &&
      num(v[4], &e->bits_out) && num(v[5], &e->passes) && e->lanes > 0 &&
      e->bits_in > 0 && e->bits_out > 0)
    return e;
  g_free(e);
  fail(err, errlen,
       "%s:%zu: expected 'nic CODEC LANES BITS_IN BITS_OUT "
       "PASSES \"SOURCE\"' with LANES, BITS_IN, BITS_OUT > 0 "
       "and PASSES >= 0",
       file, line);
  return NULL;
}

/* E (NULL: a bad line, already reported) as the entry of CODEC in H; a
 * later line for the same codec replaces an earlier one. */
static int add_entry(GHashTable *h, const char *codec, gpointer e) {
  if (!e)
    return -EINVAL;
  g_hash_table_replace(h, g_strdup(codec), e);
  return 0;
}

/* One line of the table, its N words V, into T. */
static int costs_line(struct codec_costs *t, const char *const *v, guint n,
                      const char *file, size_t line, char *err,
                      size_t errlen) {
  if (!strcmp(v[0], "cpu") && n == 5)
    return add_entry(t->cpu, v[1], cpu_entry_of(v, file, line, err, errlen));
  if (!strcmp(v[0], "gpu") && n == 4)
    return add_entry(t->gpu, v[1], gpu_entry_of(v, file, line, err, errlen));
  if (!strcmp(v[0], "nic") && n == 6)
    return add_entry(t->nic, v[1], nic_entry_of(v, file, line, err, errlen));
  if (!strcmp(v[0], "gpu_bandwidth") && n == 2) {
    if (!num(v[1], &t->gpu_bw) || t->gpu_bw <= 0)
      return fail(err, errlen, "%s:%zu: gpu_bandwidth must be > 0", file,
                  line);
    return 0;
  }
  if (!strcmp(v[0], "gpu_launch") && n == 2) {
    if (!num(v[1], &t->gpu_launch))
      return fail(err, errlen, "%s:%zu: gpu_launch must be seconds >= 0",
                  file, line);
    return 0;
  }
  return fail(err, errlen,
              "%s:%zu: unknown line '%s' (expected cpu, gpu, nic, "
              "gpu_bandwidth or gpu_launch)",
              file, line, v[0]);
}

/* TEXT, the contents of FILE, into a new table *OUT. */
static int parse_costs(const char *file, char *text, struct codec_costs **out,
                       char *err, size_t errlen) {
  struct codec_costs *t = g_new0(struct codec_costs, 1);
  t->cpu = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  t->gpu = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  t->nic = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  char **lines = g_strsplit(text, "\n", -1);
  int rc = 0;
  for (size_t ln = 0; lines[ln] && !rc; ln++) {
    GPtrArray *words = line_words(lines[ln]);
    if (words->len)
      rc = costs_line(t, (const char *const *)words->pdata, words->len,
                      file, ln + 1, err, errlen);
    g_ptr_array_free(words, TRUE);
  }
  g_strfreev(lines);
  if (!rc && !(t->gpu_bw > 0))
    rc = fail(err, errlen, "%s: no gpu_bandwidth line", file);
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

bool codec_costs_has(const struct codec_costs *t, const codec_t *c,
                     enum cost_place where) {
  return lookup(where == COST_GPU ? t->gpu : t->cpu, c) != NULL;
}

bool codec_costs_nic(const struct codec_costs *t, const codec_t *c,
                     struct nic_stream *out) {
  const struct nic_stream *e = t && c ? lookup(t->nic, c) : NULL;
  if (e)
    *out = *e;
  return e != NULL;
}

double codec_cost_seconds(const struct codec_costs *t, const codec_t *c,
                          enum cost_place where, bool encode, uint64_t n,
                          size_t payload) {
  if (!t || !c)
    return 0;
  if (where == COST_GPU) {
    const struct gpu_entry *e = lookup(t->gpu, c);
    if (!e)
      return 0;
    double passes = encode ? e->enc_passes : e->dec_passes;
    return t->gpu_launch + (passes * 4.0 * (double)n + (double)payload) /
                               t->gpu_bw;
  }
  const struct cpu_entry *e = lookup(t->cpu, c);
  if (!e)
    return 0;
  if (encode)
    return 1e-9 * e->enc_ns * (double)n;
  return 1e-9 * (e->dec_ns * (double)n + e->dec_ns_byte * (double)payload);
}

double codec_cost_gpu_launch(const struct codec_costs *t) {
  return t ? t->gpu_launch : 0;
}
