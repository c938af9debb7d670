/* models/model_import.c: model files from safetensors headers, Hugging
 * Face configs and parameter lists (model_import.h). JSON is read with
 * json-glib; nothing here parses JSON by hand. */
#include "model_import.h"

#include <json-glib/json-glib.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    g_vsnprintf(err, (gulong)errlen, fmt, ap);
    va_end(ap);
    /* Names and values from the files are quoted in messages: keep the
     * message one printable line whatever they hold. */
    for (char *c = err; *c; c++)
      if ((unsigned char)*c < 0x20 || *c == 0x7f)
        *c = '?';
  }
  return rc;
}

void import_tensor_free(gpointer p) {
  struct import_tensor *t = p;
  if (!t)
    return;
  g_free(t->name);
  g_free(t);
}

void import_info_clear(struct import_info *info) {
  g_free(info->name);
  g_free(info->family);
  g_free(info->source);
  memset(info, 0, sizeof *info);
}

/* ---- dtypes and shapes --------------------------------------------------- */

/* The other names of dtypes, by route (safetensors, torch_dtype), and
 * gradsim's name for each (its own names, model_dtype_find(), are taken
 * as they are). */
static const struct {
  const char *in, *out;
} DTYPES[] = {
    {"F32", "fp32"},          {"F16", "fp16"},         {"BF16", "bf16"},
    {"F64", "fp64"},          {"F8_E4M3", "fp8_e4m3"}, {"F8_E5M2", "fp8_e5m2"},
    {"float32", "fp32"},      {"float16", "fp16"},     {"bfloat16", "bf16"},
    {"float64", "fp64"},      {"float", "fp32"},       {"half", "fp16"},
    {"float8_e4m3fn", "fp8_e4m3"}, {"float8_e5m2", "fp8_e5m2"},
};
/* Tensors of these are buffers (masks, indices), not parameters. */
static const char *const NONFLOAT[] = {"I64", "I32", "I16", "I8", "U8",
                                       "U16", "U32", "U64", "BOOL"};

static const char *dtype_of(const char *name) {
  const char *own = model_dtype_find(name);
  if (own)
    return own;
  for (size_t i = 0; i < G_N_ELEMENTS(DTYPES); i++)
    if (!strcmp(DTYPES[i].in, name))
      return DTYPES[i].out;
  return NULL;
}

static bool nonfloat(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(NONFLOAT); i++)
    if (!strcmp(NONFLOAT[i], name))
      return true;
  return false;
}

static uint64_t elements_of(const struct import_tensor *t) {
  uint64_t n = 1;
  for (size_t i = 0; i < t->ndims; i++)
    n *= t->dims[i];
  return n;
}

/* Set T's shape from DIMS (K of them; 0: a scalar, one element); -1 when
 * a dimension is 0 or the product passes MODEL_MAX_PARAMS. */
static int set_shape(struct import_tensor *t, const uint64_t *dims, size_t k) {
  uint64_t n = 1;
  if (k > MODEL_MAX_DIMS)
    return -1;
  for (size_t i = 0; i < k; i++) {
    if (dims[i] == 0 || dims[i] > MODEL_MAX_PARAMS / n)
      return -1;
    n *= dims[i];
    t->dims[i] = dims[i];
  }
  t->ndims = k;
  if (k == 0) {
    t->ndims = 1;
    t->dims[0] = 1;
  }
  return 0;
}

static struct import_tensor *tensor_new(const char *name, const char *dtype) {
  struct import_tensor *t = g_new0(struct import_tensor, 1);
  t->name = g_strdup(name);
  g_strlcpy(t->dtype, dtype, sizeof t->dtype);
  return t;
}

/* A name already in OUT (a duplicate across lines or shards). */
static bool has_name(GHashTable *seen, const char *name) {
  if (g_hash_table_contains(seen, name))
    return true;
  g_hash_table_add(seen, g_strdup(name));
  return false;
}

/* ---- JSON ------------------------------------------------------------------ */

/* json-glib keeps the last of repeated members: count them as they are
 * parsed, per object, to refuse a repeated tensor name or field. */
struct dup_watch {
  GHashTable *seen; /* "object pointer/name" */
  char *dup;        /* the first repeated name */
};

static void on_member(JsonParser *p, JsonObject *o, gchar *name,
                      gpointer data) {
  (void)p;
  struct dup_watch *w = data;
  char *key = g_strdup_printf("%p/%s", (void *)o, name);
  if (g_hash_table_contains(w->seen, key)) {
    if (!w->dup)
      w->dup = g_strdup(name);
    g_free(key);
  } else {
    g_hash_table_add(w->seen, key);
  }
}

/* JSON nests at most this deep here (json-glib's parser recurses). */
enum { JSON_DEPTH_MAX = 64 };

/* The deepest nesting of TEXT (LEN bytes), outside strings. */
static int json_depth(const char *text, size_t len) {
  int depth = 0, most = 0;
  bool str = false;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        str = false;
    } else if (c == '"') {
      str = true;
    } else if (c == '{' || c == '[') {
      most = ++depth > most ? depth : most;
    } else if (c == '}' || c == ']') {
      depth--;
    }
  }
  return most;
}

/* Parse TEXT (LEN bytes) of FILE into a new parser whose root is an
 * object; -EINVAL with a message otherwise. */
static int parse_json(const char *file, const char *text, size_t len,
                      JsonParser **out, char *err, size_t errlen) {
  *out = NULL;
  if (memchr(text, '\0', len))
    return fail(err, errlen, -EINVAL,
                "%s: the JSON holds a NUL byte: not a JSON text", file);
  if (json_depth(text, len) > JSON_DEPTH_MAX)
    return fail(err, errlen, -EINVAL,
                "%s: the JSON nests deeper than %d levels", file,
                JSON_DEPTH_MAX);
  JsonParser *p = json_parser_new();
  struct dup_watch w = {g_hash_table_new_full(g_str_hash, g_str_equal,
                                              g_free, NULL),
                        NULL};
  g_signal_connect(p, "object-member", G_CALLBACK(on_member), &w);
  GError *ge = NULL;
  int rc = 0;
  if (!json_parser_load_from_data(p, text, (gssize)len, &ge)) {
    /* json-glib quotes the input: keep the message on one printable line. */
    for (char *c = ge->message; *c; c++)
      if (!g_ascii_isprint(*c))
        *c = '?';
    rc = fail(err, errlen, -EINVAL, "%s: malformed JSON: %.200s", file,
              ge->message);
    g_error_free(ge);
  } else if (w.dup) {
    rc = fail(err, errlen, -EINVAL,
              "%s: '%s' appears twice in one JSON object (each name once)",
              file, w.dup);
  } else if (!json_parser_get_root(p) ||
             !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
    rc = fail(err, errlen, -EINVAL, "%s: the JSON is not an object", file);
  }
  g_hash_table_destroy(w.seen);
  g_free(w.dup);
  if (rc)
    g_object_unref(p);
  else
    *out = p;
  return rc;
}

/* An integer member >= LO of O, or DEF when absent (REQUIRED: an error);
 * -EINVAL with a message naming FILE and KEY. */
static int json_count(const char *file, JsonObject *o, const char *key,
                      bool required, int64_t def, int64_t lo, int64_t *out,
                      char *err, size_t errlen) {
  JsonNode *n = json_object_get_member(o, key);
  if (!n || JSON_NODE_HOLDS_NULL(n)) {
    if (required)
      return fail(err, errlen, -EINVAL,
                  "%s: the config has no '%s' (a whole number >= %" PRId64
                  " is required)",
                  file, key, lo);
    *out = def;
    return 0;
  }
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64 ||
      json_node_get_int(n) < lo || json_node_get_int(n) > (int64_t)1 << 40)
    return fail(err, errlen, -EINVAL,
                "%s: '%s' must be a whole number in %" PRId64 "..2^40", file,
                key, lo);
  *out = json_node_get_int(n);
  return 0;
}

/* A layer count: json_count, at most IMPORT_MAX_LAYERS (every layer is a
 * dozen tensors in memory, so 2^40 of them would exhaust it). */
static int json_layers(const char *file, JsonObject *o, const char *key,
                       int64_t *out, char *err, size_t errlen) {
  int rc = json_count(file, o, key, true, 0, 1, out, err, errlen);
  if (!rc && *out > IMPORT_MAX_LAYERS)
    rc = fail(err, errlen, -EINVAL,
              "%s: '%s' is %" PRId64 "; gradsim imports at most %d layers",
              file, key, *out, IMPORT_MAX_LAYERS);
  return rc;
}

static int json_flag(const char *file, JsonObject *o, const char *key,
                     bool def, bool *out, char *err, size_t errlen) {
  JsonNode *n = json_object_get_member(o, key);
  if (!n || JSON_NODE_HOLDS_NULL(n)) {
    *out = def;
    return 0;
  }
  if (!JSON_NODE_HOLDS_VALUE(n) ||
      json_node_get_value_type(n) != G_TYPE_BOOLEAN)
    return fail(err, errlen, -EINVAL, "%s: '%s' must be true or false", file,
                key);
  *out = json_node_get_boolean(n);
  return 0;
}

/* A string member of O, or NULL. */
static const char *json_string(JsonObject *o, const char *key) {
  JsonNode *n = json_object_get_member(o, key);
  return n && JSON_NODE_HOLDS_VALUE(n) &&
                 json_node_get_value_type(n) == G_TYPE_STRING
             ? json_node_get_string(n)
             : NULL;
}

/* ---- safetensors ------------------------------------------------------------ */

/* The header length *N of safetensors file NAME, SIZE bytes long, whose
 * first 8 bytes are B (NULL when it has fewer): its little-endian first
 * word, at most IMPORT_HEADER_MAX and within the file. */
static int st_length(const char *name, const unsigned char *b, uint64_t size,
                     uint64_t *n, char *err, size_t errlen) {
  if (!b || size < 8)
    return fail(err, errlen, -EINVAL,
                "%s: truncated safetensors file: fewer than the 8 bytes of "
                "its header length",
                name);
  *n = 0;
  for (int i = 7; i >= 0; i--)
    *n = *n << 8 | b[i];
  if (*n > IMPORT_HEADER_MAX)
    return fail(err, errlen, -EINVAL,
                "%s: safetensors header of %" PRIu64
                " bytes: at most 100 MB is read",
                name, *n);
  if (*n == 0 || *n > size - 8)
    return fail(err, errlen, -EINVAL,
                "%s: safetensors header length %" PRIu64
                " is past the end of the file (%" PRIu64 " bytes) or zero",
                name, *n, size);
  return 0;
}

static int read_prefix(const char *path, uint64_t *hlen, char **header,
                       char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, errlen, -EIO, "%s: cannot open: %s", path,
                g_strerror(errno));
  int rc = 0;
  unsigned char b[8];
  *header = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
      fseek(f, 0, SEEK_SET) != 0)
    rc = fail(err, errlen, -EIO, "%s: cannot seek", path);
  if (!rc)
    rc = st_length(path, fread(b, 1, 8, f) == 8 ? b : NULL, (uint64_t)size,
                   hlen, err, errlen);
  if (!rc) {
    *header = g_malloc(*hlen + 1);
    if (fread(*header, 1, *hlen, f) != *hlen)
      rc = fail(err, errlen, -EIO, "%s: cannot read the header", path);
    (*header)[*hlen] = '\0';
  }
  fclose(f);
  if (rc) {
    g_free(*header);
    *header = NULL;
  }
  return rc;
}

/* One member NAME = {dtype, shape, data_offsets} of FILE's header. */
static int st_tensor(const char *file, const char *name, JsonNode *node,
                     GPtrArray *out, GHashTable *seen, size_t *skipped,
                     char *err, size_t errlen) {
  if (!JSON_NODE_HOLDS_OBJECT(node))
    return fail(err, errlen, -EINVAL,
                "%s: tensor '%s' must be an object of dtype, shape and "
                "data_offsets",
                file, name);
  JsonObject *o = json_node_get_object(node);
  const char *dt = json_string(o, "dtype");
  JsonNode *sh = json_object_get_member(o, "shape");
  if (!dt || !sh || !JSON_NODE_HOLDS_ARRAY(sh))
    return fail(err, errlen, -EINVAL,
                "%s: tensor '%s' needs a string 'dtype' and an array "
                "'shape'",
                file, name);
  const char *ours = dtype_of(dt);
  if (!ours && !nonfloat(dt))
    return fail(err, errlen, -EINVAL,
                "%s: tensor '%s': unknown dtype '%s' (valid: F64, F32, F16, "
                "BF16, F8_E4M3, F8_E5M2, and the integer and BOOL buffers, "
                "which are skipped)",
                file, name, dt);
  JsonArray *a = json_node_get_array(sh);
  size_t k = json_array_get_length(a);
  uint64_t dims[MODEL_MAX_DIMS];
  bool ok = k <= MODEL_MAX_DIMS;
  for (size_t i = 0; ok && i < k; i++) {
    JsonNode *d = json_array_get_element(a, (guint)i);
    ok = JSON_NODE_HOLDS_VALUE(d) &&
         json_node_get_value_type(d) == G_TYPE_INT64 &&
         json_node_get_int(d) >= 0;
    dims[i] = ok ? (uint64_t)json_node_get_int(d) : 0;
  }
  if (!ok)
    return fail(err, errlen, -EINVAL,
                "%s: tensor '%s': shape must be at most %d whole numbers >= 0",
                file, name, MODEL_MAX_DIMS);
  if (has_name(seen, name))
    return fail(err, errlen, -EINVAL,
                "%s: tensor '%s' is named twice (in this header or an "
                "earlier shard)",
                file, name);
  if (!ours) {
    (*skipped)++;
    return 0;
  }
  bool empty = false;
  for (size_t i = 0; i < k; i++)
    empty |= dims[i] == 0;
  if (empty) {
    (*skipped)++; /* an empty tensor holds no parameter */
    return 0;
  }
  struct import_tensor *t = tensor_new(name, ours);
  if (set_shape(t, dims, k) != 0) {
    import_tensor_free(t);
    return fail(err, errlen, -EINVAL,
                "%s: tensor '%s': its shape's product passes %" PRIu64
                " parameters",
                file, name, MODEL_MAX_PARAMS);
  }
  g_ptr_array_add(out, t);
  return 0;
}

/* The tensors of one header's N JSON bytes, HDR, of FILE. */
static int st_header(const char *file, const char *hdr, size_t n,
                     GPtrArray *out, GHashTable *seen, size_t *skipped,
                     char *err, size_t errlen) {
  JsonParser *p;
  int rc = parse_json(file, hdr, n, &p, err, errlen);
  if (rc)
    return rc;
  JsonObject *root = json_node_get_object(json_parser_get_root(p));
  GList *names = json_object_get_members(root);
  for (GList *l = names; l && !rc; l = l->next)
    if (strcmp(l->data, "__metadata__") != 0)
      rc = st_tensor(file, l->data, json_object_get_member(root, l->data),
                     out, seen, skipped, err, errlen);
  g_list_free(names);
  g_object_unref(p);
  return rc;
}

static GHashTable *name_set(void) {
  return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

int import_safetensors(const char *const *paths, size_t k, GPtrArray *out,
                       size_t *skipped, char *err, size_t errlen) {
  GHashTable *seen = name_set();
  int rc = 0;
  guint before = out->len;
  *skipped = 0;
  for (size_t f = 0; f < k && !rc; f++) {
    uint64_t n = 0;
    char *header = NULL;
    rc = read_prefix(paths[f], &n, &header, err, errlen);
    if (!rc)
      rc = st_header(paths[f], header, (size_t)n, out, seen, skipped, err,
                     errlen);
    g_free(header);
  }
  g_hash_table_destroy(seen);
  if (!rc && out->len == before)
    rc = fail(err, errlen, -EINVAL, "%s: no parameter tensors in %s",
              k ? paths[0] : "safetensors", k > 1 ? "the shards" : "it");
  return rc;
}

int import_safetensors_data(const char *name, const void *data, size_t len,
                            GPtrArray *out, size_t *skipped, char *err,
                            size_t errlen) {
  const unsigned char *b = data;
  *skipped = 0;
  uint64_t n = 0;
  int rc = st_length(name, len >= 8 ? b : NULL, len, &n, err, errlen);
  if (rc)
    return rc;
  GHashTable *seen = name_set();
  guint before = out->len;
  rc = st_header(name, (const char *)b + 8, (size_t)n, out, seen, skipped, err,
                 errlen);
  g_hash_table_destroy(seen);
  if (!rc && out->len == before)
    rc = fail(err, errlen, -EINVAL, "%s: no parameter tensors in it", name);
  return rc;
}

/* ---- plain lists -------------------------------------------------------------- */

/* PATH's contents into *TEXT (g_free) and *LEN; -EIO with GLib's message
 * (which names the file). */
static int read_text(const char *path, char **text, gsize *len, char *err,
                     size_t errlen) {
  GError *ge = NULL;
  if (g_file_get_contents(path, text, len, &ge))
    return 0;
  int rc = fail(err, errlen, -EIO, "%s", ge->message);
  g_error_free(ge);
  return rc;
}

int import_list(const char *path, GPtrArray *out, char *err, size_t errlen) {
  char *text;
  gsize len;
  int rc = read_text(path, &text, &len, err, errlen);
  if (rc)
    return rc;
  rc = import_list_data(path, text, len, out, err, errlen);
  g_free(text);
  return rc;
}

int import_list_data(const char *path, const char *data, size_t len,
                     GPtrArray *out, char *err, size_t errlen) {
  int rc = 0;
  char *text = g_strndup(data, len);
  guint before = out->len;
  if (memchr(data, 0, len))
    rc = fail(err, errlen, -EINVAL, "%s: a NUL byte: not a text file", path);
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           NULL);
  char **lines = g_strsplit(rc ? "" : text, "\n", -1);
  for (size_t i = 0; lines[i] && !rc; i++) {
    char *hash = strchr(lines[i], '#');
    if (hash)
      *hash = '\0';
    char **w = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
    GPtrArray *words = g_ptr_array_new();
    for (char **x = w; *x; x++)
      if (**x)
        g_ptr_array_add(words, *x);
    if (words->len == 0) {
      g_ptr_array_free(words, TRUE);
      g_strfreev(w);
      continue;
    }
    const char *name = words->pdata[0];
    const char *shape = words->len > 1 ? words->pdata[1] : "";
    const char *dt = words->len > 2 ? dtype_of(words->pdata[2]) : NULL;
    uint64_t dims[MODEL_MAX_DIMS];
    size_t nd = words->len == 3 ? model_parse_shape(shape, dims) : 0;
    if (words->len != 3 || !nd || !dt)
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: expected 'NAME SHAPE DTYPE', SHAPE like 768x2304 "
                "(1 to %d whole numbers >= 1; 1 for a scalar) and DTYPE one "
                "of float32, bfloat16, float16, float64 (or fp32, bf16, "
                "fp16, fp64)",
                path, i + 1, MODEL_MAX_DIMS);
    else if (has_name(seen, name))
      rc = fail(err, errlen, -EINVAL, "%s:%zu: tensor '%s' is listed twice",
                path, i + 1, name);
    else {
      struct import_tensor *t = tensor_new(name, dt);
      set_shape(t, dims, nd);
      g_ptr_array_add(out, t);
    }
    g_ptr_array_free(words, TRUE);
    g_strfreev(w);
  }
  g_strfreev(lines);
  g_hash_table_destroy(seen);
  g_free(text);
  if (!rc && out->len == before)
    rc = fail(err, errlen, -EINVAL, "%s: no 'NAME SHAPE DTYPE' lines", path);
  return rc;
}

/* ---- Hugging Face configs --------------------------------------------------- */

static void add(GPtrArray *out, const char *dtype, const char *fmt,
                uint64_t d0, uint64_t d1, ...) G_GNUC_PRINTF(3, 0);

/* A tensor named by FMT and the arguments after D0 and D1 (a block
 * index, at most), of shape D0 x D1 (D1 = 0: a vector of D0). */
static void add(GPtrArray *out, const char *dtype, const char *fmt,
                uint64_t d0, uint64_t d1, ...) {
  va_list ap;
  va_start(ap, d1);
  char *name = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  struct import_tensor *t = tensor_new(name, dtype);
  g_free(name);
  uint64_t dims[2] = {d0, d1};
  set_shape(t, dims, d1 ? 2 : 1);
  g_ptr_array_add(out, t);
}

/* GPT-2 (transformers' GPT2Model, as the 'gpt2' checkpoints name their
 * tensors; Conv1D weights are in x out). */
static int config_gpt2(const char *file, JsonObject *o, const char *dt,
                       GPtrArray *out, struct import_info *info, char *err,
                       size_t errlen) {
  int64_t d = 0, L = 0, V = 0, P = 0, inner = 0;
  int rc = json_count(file, o, "n_embd", true, 0, 1, &d, err, errlen);
  if (!rc)
    rc = json_layers(file, o, "n_layer", &L, err, errlen);
  if (!rc)
    rc = json_count(file, o, "vocab_size", true, 0, 1, &V, err, errlen);
  if (!rc)
    rc = json_count(file, o, "n_positions", true, 0, 1, &P, err, errlen);
  if (!rc)
    rc = json_count(file, o, "n_inner", false, 4 * d, 1, &inner, err, errlen);
  if (rc)
    return rc;
  uint64_t D = (uint64_t)d, I = (uint64_t)inner;
  add(out, dt, "wte.weight", (uint64_t)V, D);
  add(out, dt, "wpe.weight", (uint64_t)P, D);
  for (int64_t i = 0; i < L; i++) {
    add(out, dt, "h.%" PRId64 ".ln_1.weight", D, 0, i);
    add(out, dt, "h.%" PRId64 ".ln_1.bias", D, 0, i);
    add(out, dt, "h.%" PRId64 ".attn.c_attn.weight", D, 3 * D, i);
    add(out, dt, "h.%" PRId64 ".attn.c_attn.bias", 3 * D, 0, i);
    add(out, dt, "h.%" PRId64 ".attn.c_proj.weight", D, D, i);
    add(out, dt, "h.%" PRId64 ".attn.c_proj.bias", D, 0, i);
    add(out, dt, "h.%" PRId64 ".ln_2.weight", D, 0, i);
    add(out, dt, "h.%" PRId64 ".ln_2.bias", D, 0, i);
    add(out, dt, "h.%" PRId64 ".mlp.c_fc.weight", D, I, i);
    add(out, dt, "h.%" PRId64 ".mlp.c_fc.bias", I, 0, i);
    add(out, dt, "h.%" PRId64 ".mlp.c_proj.weight", I, D, i);
    add(out, dt, "h.%" PRId64 ".mlp.c_proj.bias", D, 0, i);
  }
  add(out, dt, "ln_f.weight", D, 0);
  add(out, dt, "ln_f.bias", D, 0);
  info->seq_len = info->seq_len ? info->seq_len : (uint64_t)P;
  return 0;
}

/* BERT (BertForPreTraining, BertForMaskedLM or BertModel by the config's
 * first architecture; the MLM decoder shares the word embeddings). */
static int config_bert(const char *file, JsonObject *o, const char *dt,
                       GPtrArray *out, struct import_info *info, char *err,
                       size_t errlen) {
  int64_t d = 0, L = 0, V = 0, P = 0, T = 0, I = 0;
  int rc = json_count(file, o, "hidden_size", true, 0, 1, &d, err, errlen);
  if (!rc)
    rc = json_layers(file, o, "num_hidden_layers", &L, err, errlen);
  if (!rc)
    rc = json_count(file, o, "vocab_size", true, 0, 1, &V, err, errlen);
  if (!rc)
    rc = json_count(file, o, "max_position_embeddings", true, 0, 1, &P, err,
                    errlen);
  if (!rc)
    rc = json_count(file, o, "type_vocab_size", false, 2, 1, &T, err, errlen);
  if (!rc)
    rc = json_count(file, o, "intermediate_size", true, 0, 1, &I, err,
                    errlen);
  if (rc)
    return rc;
  const char *arch = "BertModel";
  JsonNode *a = json_object_get_member(o, "architectures");
  if (a && JSON_NODE_HOLDS_ARRAY(a) &&
      json_array_get_length(json_node_get_array(a)) > 0) {
    JsonNode *first = json_array_get_element(json_node_get_array(a), 0);
    if (JSON_NODE_HOLDS_VALUE(first) &&
        json_node_get_value_type(first) == G_TYPE_STRING)
      arch = json_node_get_string(first);
  }
  bool pretrain = !strcmp(arch, "BertForPreTraining"),
       mlm = pretrain || !strcmp(arch, "BertForMaskedLM");
  if (!mlm && strcmp(arch, "BertModel") != 0)
    return fail(err, errlen, -EINVAL,
                "%s: architectures[0] = '%s': gradsim generates BertModel, "
                "BertForMaskedLM and BertForPreTraining",
                file, arch);
  uint64_t D = (uint64_t)d;
  const char *p = mlm ? "bert." : "";
  add(out, dt, "%sembeddings.word_embeddings.weight", (uint64_t)V, D, p);
  add(out, dt, "%sembeddings.position_embeddings.weight", (uint64_t)P, D, p);
  add(out, dt, "%sembeddings.token_type_embeddings.weight", (uint64_t)T, D, p);
  add(out, dt, "%sembeddings.LayerNorm.weight", D, 0, p);
  add(out, dt, "%sembeddings.LayerNorm.bias", D, 0, p);
  static const char *const lin[] = {"attention.self.query",
                                    "attention.self.key",
                                    "attention.self.value",
                                    "attention.output.dense"};
  for (int64_t i = 0; i < L; i++) {
    for (size_t k = 0; k < 4; k++) {
      add(out, dt, "%sencoder.layer.%" PRId64 ".%s.weight", D, D, p, i,
          lin[k]);
      add(out, dt, "%sencoder.layer.%" PRId64 ".%s.bias", D, 0, p, i, lin[k]);
    }
    add(out, dt, "%sencoder.layer.%" PRId64 ".attention.output.LayerNorm.weight",
        D, 0, p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".attention.output.LayerNorm.bias",
        D, 0, p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".intermediate.dense.weight",
        (uint64_t)I, D, p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".intermediate.dense.bias",
        (uint64_t)I, 0, p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".output.dense.weight", D,
        (uint64_t)I, p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".output.dense.bias", D, 0, p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".output.LayerNorm.weight", D, 0,
        p, i);
    add(out, dt, "%sencoder.layer.%" PRId64 ".output.LayerNorm.bias", D, 0, p,
        i);
  }
  if (!mlm || pretrain) {
    add(out, dt, "%spooler.dense.weight", D, D, p);
    add(out, dt, "%spooler.dense.bias", D, 0, p);
  }
  if (mlm) {
    add(out, dt, "cls.predictions.bias", (uint64_t)V, 0);
    add(out, dt, "cls.predictions.transform.dense.weight", D, D);
    add(out, dt, "cls.predictions.transform.dense.bias", D, 0);
    add(out, dt, "cls.predictions.transform.LayerNorm.weight", D, 0);
    add(out, dt, "cls.predictions.transform.LayerNorm.bias", D, 0);
  }
  if (pretrain) {
    add(out, dt, "cls.seq_relationship.weight", 2, D);
    add(out, dt, "cls.seq_relationship.bias", 2, 0);
  }
  info->seq_len = info->seq_len ? info->seq_len : (uint64_t)P;
  return 0;
}

/* Llama and Mistral (LlamaForCausalLM, MistralForCausalLM): grouped-query
 * attention (num_key_value_heads), SwiGLU MLP, RMSNorm, an untied head
 * unless tie_word_embeddings. */
/* The model types that share Llama's modules (transformers'
 * LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
 * GemmaForCausalLM, Gemma2ForCausalLM, Phi3ForCausalLM,
 * MixtralForCausalLM), and how each differs. A sliding window
 * (sliding_window) bounds attention where a config gives one. */
static const struct llama_kind {
  const char *type;   /* model_type */
  const char *family; /* the model file's family (its execution order) */
  bool qkv_bias;      /* biases on the query, key and value (Qwen2) */
  bool tied;          /* the head tied to the embedding by default (Gemma) */
  bool mlp_norms;     /* a norm before and after the MLP (Gemma 2) */
  bool fused;         /* qkv_proj and gate_up_proj fused (Phi-3) */
  bool experts;       /* num_local_experts experts (w1, w3, w2) behind a
                       * router (Mixtral) */
  bool window_flag;   /* the window only with use_sliding_window (Qwen2) */
  bool window_even;   /* the window on the even layers only (Gemma 2) */
} LLAMA_KINDS[] = {
    {"llama", "llama", false, false, false, false, false, false, false},
    {"mistral", "llama", false, false, false, false, false, false, false},
    {"qwen2", "llama", true, false, false, false, false, true, false},
    {"gemma", "llama", false, true, false, false, false, false, false},
    {"gemma2", "llama", false, true, true, false, false, false, true},
    {"phi3", "phi3", false, false, false, true, false, false, false},
    {"mixtral", "mixtral", false, false, false, false, true, false, false},
};

static int config_llama(const char *file, JsonObject *o,
                        const struct llama_kind *kind, const char *dt,
                        GPtrArray *out, struct import_info *info, char *err,
                        size_t errlen) {
  int64_t d = 0, L = 0, V = 0, H = 0, KV = 0, I = 0, hd = 0, P = 0, E = 0,
          K = 0, W = 0;
  bool moe = kind->experts;
  bool tie = false, abias = false, mbias = false, slide = !kind->window_flag;
  int rc = json_count(file, o, "hidden_size", true, 0, 1, &d, err, errlen);
  if (!rc)
    rc = json_layers(file, o, "num_hidden_layers", &L, err, errlen);
  if (!rc)
    rc = json_count(file, o, "vocab_size", true, 0, 1, &V, err, errlen);
  if (!rc)
    rc = json_count(file, o, "num_attention_heads", true, 0, 1, &H, err,
                    errlen);
  if (!rc)
    rc = json_count(file, o, "num_key_value_heads", false, H, 1, &KV, err,
                    errlen);
  if (!rc)
    rc = json_count(file, o, "intermediate_size", true, 0, 1, &I, err,
                    errlen);
  /* Without head_dim the heads split hidden_size; with it they need not
   * (q_proj is num_attention_heads x head_dim rows either way). */
  if (!rc && d % H && !json_object_has_member(o, "head_dim"))
    rc = fail(err, errlen, -EINVAL,
              "%s: hidden_size %" PRId64 " is not a multiple of "
              "num_attention_heads %" PRId64 " (give head_dim)",
              file, d, H);
  if (!rc)
    rc = json_count(file, o, "head_dim", false, H ? d / H : 1, 1, &hd, err,
                    errlen);
  if (!rc)
    rc = json_count(file, o, "max_position_embeddings", false, 2048, 1, &P,
                    err, errlen);
  if (!rc)
    rc = json_flag(file, o, "tie_word_embeddings", kind->tied, &tie, err,
                   errlen);
  if (!rc && moe)
    rc = json_count(file, o, "num_local_experts", true, 0, 1, &E, err,
                    errlen);
  if (!rc && moe)
    rc = json_count(file, o, "num_experts_per_tok", true, 0, 1, &K, err,
                    errlen);
  if (!rc && moe && K > E)
    rc = fail(err, errlen, -EINVAL,
              "%s: num_experts_per_tok %" PRId64 " is more than "
              "num_local_experts %" PRId64,
              file, K, E);
  if (!rc && E > 1024)
    rc = fail(err, errlen, -EINVAL,
              "%s: num_local_experts %" PRId64 ": gradsim imports at most "
              "1024",
              file, E);
  if (!rc && kind->window_flag)
    rc = json_flag(file, o, "use_sliding_window", false, &slide, err,
                   errlen);
  if (!rc && slide)
    rc = json_count(file, o, "sliding_window", false, 0, 1, &W, err, errlen);
  if (!rc)
    rc = json_flag(file, o, "attention_bias", false, &abias, err, errlen);
  if (!rc)
    rc = json_flag(file, o, "mlp_bias", false, &mbias, err, errlen);
  if (!rc && (H % KV))
    rc = fail(err, errlen, -EINVAL,
              "%s: num_attention_heads %" PRId64 " is not a multiple of "
              "num_key_value_heads %" PRId64,
              file, H, KV);
  if (rc)
    return rc;
  uint64_t D = (uint64_t)d, Q = (uint64_t)(H * hd), Kw = (uint64_t)(KV * hd),
           F = (uint64_t)I;
  add(out, dt, "model.embed_tokens.weight", (uint64_t)V, D);
  for (int64_t i = 0; i < L; i++) {
    add(out, dt, "model.layers.%" PRId64 ".input_layernorm.weight", D, 0, i);
    if (kind->fused) {
      add(out, dt, "model.layers.%" PRId64 ".self_attn.qkv_proj.weight",
          Q + 2 * Kw, D, i);
    } else {
      static const char *const qkv[] = {"q_proj", "k_proj", "v_proj"};
      for (size_t k = 0; k < 3; k++) {
        uint64_t rows = k ? Kw : Q;
        add(out, dt, "model.layers.%" PRId64 ".self_attn.%s.weight", rows, D,
            i, qkv[k]);
        if (abias || kind->qkv_bias)
          add(out, dt, "model.layers.%" PRId64 ".self_attn.%s.bias", rows, 0,
              i, qkv[k]);
      }
    }
    add(out, dt, "model.layers.%" PRId64 ".self_attn.o_proj.weight", D, Q, i);
    if (abias)
      add(out, dt, "model.layers.%" PRId64 ".self_attn.o_proj.bias", D, 0, i);
    add(out, dt, "model.layers.%" PRId64 ".post_attention_layernorm.weight",
        D, 0, i);
    if (kind->mlp_norms)
      add(out, dt, "model.layers.%" PRId64 ".pre_feedforward_layernorm.weight",
          D, 0, i);
    if (kind->fused) {
      add(out, dt, "model.layers.%" PRId64 ".mlp.gate_up_proj.weight", 2 * F,
          D, i);
      add(out, dt, "model.layers.%" PRId64 ".mlp.down_proj.weight", D, F, i);
    } else if (moe) {
      add(out, dt, "model.layers.%" PRId64 ".block_sparse_moe.gate.weight",
          (uint64_t)E, D, i);
      static const char *const w[] = {"w1", "w3", "w2"};
      for (int64_t e = 0; e < E; e++)
        for (size_t k = 0; k < 3; k++)
          add(out, dt,
              "model.layers.%" PRId64 ".block_sparse_moe.experts.%" PRId64
              ".%s.weight",
              k == 2 ? D : F, k == 2 ? F : D, i, e, w[k]);
    } else {
      static const char *const mlp[] = {"gate_proj", "up_proj", "down_proj"};
      for (size_t k = 0; k < 3; k++) {
        bool down = k == 2;
        add(out, dt, "model.layers.%" PRId64 ".mlp.%s.weight", down ? D : F,
            down ? F : D, i, mlp[k]);
        if (mbias)
          add(out, dt, "model.layers.%" PRId64 ".mlp.%s.bias", down ? D : F,
              0, i, mlp[k]);
      }
    }
    if (kind->mlp_norms)
      add(out, dt,
          "model.layers.%" PRId64 ".post_feedforward_layernorm.weight", D, 0,
          i);
  }
  add(out, dt, "model.norm.weight", D, 0);
  if (!tie)
    add(out, dt, "lm_head.weight", (uint64_t)V, D);
  info->seq_len = info->seq_len ? info->seq_len : (uint64_t)P;
  info->query_width = Q;
  info->experts = (int)E;
  info->experts_active = (int)K;
  info->window = (uint64_t)W;
  info->window_even = kind->window_even;
  g_free(info->family);
  info->family = g_strdup(kind->family);
  return 0;
}

static const struct llama_kind *llama_kind_of(const char *type) {
  for (size_t i = 0; i < G_N_ELEMENTS(LLAMA_KINDS); i++)
    if (!strcmp(LLAMA_KINDS[i].type, type))
      return &LLAMA_KINDS[i];
  return NULL;
}

int import_config(const char *path, GPtrArray *out, struct import_info *info,
                  char *err, size_t errlen) {
  char *text;
  gsize len;
  int rc = read_text(path, &text, &len, err, errlen);
  if (rc)
    return rc;
  rc = import_config_data(path, text, len, out, info, err, errlen);
  g_free(text);
  return rc;
}

int import_config_data(const char *path, const char *text, size_t len,
                       GPtrArray *out, struct import_info *info, char *err,
                       size_t errlen) {
  JsonParser *p;
  int rc = parse_json(path, text, len, &p, err, errlen);
  if (rc)
    return rc;
  JsonObject *o = json_node_get_object(json_parser_get_root(p));
  guint before = out->len;
  const char *type = json_string(o, "model_type");
  const char *tdt = json_string(o, "torch_dtype");
  const char *dt = tdt ? dtype_of(tdt) : "fp32";
  if (!type)
    rc = fail(err, errlen, -EINVAL,
              "%s: the config has no string 'model_type' (gpt2, bert, llama, "
              "mistral, qwen2, gemma, gemma2, phi3 or mixtral)",
              path);
  else if (!dt)
    rc = fail(err, errlen, -EINVAL,
              "%s: torch_dtype '%s' is not a float dtype (float32, "
              "bfloat16, float16, float64)",
              path, tdt);
  else if (!strcmp(type, "gpt2"))
    rc = config_gpt2(path, o, dt, out, info, err, errlen);
  else if (!strcmp(type, "bert"))
    rc = config_bert(path, o, dt, out, info, err, errlen);
  else if (llama_kind_of(type))
    rc = config_llama(path, o, llama_kind_of(type), dt, out, info, err,
                      errlen);
  else
    rc = fail(err, errlen, -EINVAL,
              "%s: model_type '%s' is not a family gradsim generates (gpt2, "
              "bert, llama, mistral, qwen2, gemma, gemma2, phi3, mixtral); "
              "import its safetensors header or a parameter list instead",
              path, type);
  /* A tensor whose sizes multiply past the limit got no shape. */
  for (guint i = before; !rc && i < out->len; i++)
    if (((struct import_tensor *)out->pdata[i])->ndims == 0)
      rc = fail(err, errlen, -EINVAL,
                "%s: the config's sizes make tensor '%s' larger than %" PRIu64
                " parameters",
                path, ((struct import_tensor *)out->pdata[i])->name,
                MODEL_MAX_PARAMS);
  g_object_unref(p);
  return rc;
}

/* ---- the model file ------------------------------------------------------------ */

/* A family's execution order inside a block (the module after the block
 * index), with where the attention core runs; and around the blocks. */
struct family {
  const char *name;
  const char *detect; /* a module suffix only this family has */
  const char *const *block;  /* module suffixes, execution order */
  size_t core_rank;          /* the core runs before block[core_rank] */
  const char *core;          /* the core's module, after the block index */
  const char *query;         /* the module of the query projection */
  int query_div;             /* query width: its weight's dims[QDIM] / DIV */
  int query_dim;
  const char *const *before; /* modules before the blocks, in order */
  const char *const *after;  /* after them */
  const char *embed;         /* the embedding a tied head shares */
  const char *head;          /* the head's module */
  const char *head_if;       /* a tied head exists when this module does
                              * (NULL: always, for a causal LM) */
};

static const char *const GPT2_BLOCK[] = {"ln_1",   "attn.c_attn", "attn.c_proj",
                                         "ln_2",   "mlp.c_fc",    "mlp.c_proj",
                                         NULL};
static const char *const GPT2_BEFORE[] = {"wte", "wpe", NULL};
static const char *const GPT2_AFTER[] = {"ln_f", "lm_head", NULL};
static const char *const BERT_BLOCK[] = {
    "attention.self.query",       "attention.self.key",
    "attention.self.value",       "attention.output.dense",
    "attention.output.LayerNorm", "intermediate.dense",
    "output.dense",               "output.LayerNorm",
    NULL};
static const char *const BERT_BEFORE[] = {
    "embeddings.word_embeddings", "embeddings.position_embeddings",
    "embeddings.token_type_embeddings", "embeddings.LayerNorm", NULL};
static const char *const BERT_AFTER[] = {"pooler.dense",
                                         "cls.predictions.transform.dense",
                                         "cls.predictions.transform.LayerNorm",
                                         "cls.predictions",
                                         "cls.predictions.decoder",
                                         "cls.seq_relationship",
                                         NULL};
/* (Gemma 2's norms before and after the MLP are in no other family.) */
static const char *const LLAMA_BLOCK[] = {
    "input_layernorm",           "self_attn.q_proj",
    "self_attn.k_proj",          "self_attn.v_proj",
    "self_attn.o_proj",          "post_attention_layernorm",
    "pre_feedforward_layernorm", "mlp.gate_proj",
    "mlp.up_proj",               "mlp.down_proj",
    "post_feedforward_layernorm", NULL};
static const char *const PHI3_BLOCK[] = {
    "input_layernorm",          "self_attn.qkv_proj", "self_attn.o_proj",
    "post_attention_layernorm", "mlp.gate_up_proj",   "mlp.down_proj",
    NULL};
/* Mixtral's experts, each w1, w3, w2, follow the router in the input's
 * order (unknown to the table: ranked after it). */
static const char *const MIXTRAL_BLOCK[] = {
    "input_layernorm",          "self_attn.q_proj",     "self_attn.k_proj",
    "self_attn.v_proj",         "self_attn.o_proj",     "post_attention_layernorm",
    "block_sparse_moe.gate",    NULL};
static const char *const LLAMA_BEFORE[] = {"embed_tokens", NULL};
static const char *const LLAMA_AFTER[] = {"norm", "lm_head", NULL};

static const struct family FAMILIES[] = {
    {"gpt2", "attn.c_attn", GPT2_BLOCK, 2, "attn.core", "attn.c_attn", 3, 1,
     GPT2_BEFORE, GPT2_AFTER, "wte", "lm_head", NULL},
    {"bert", "attention.self.query", BERT_BLOCK, 3, "attention.self.core",
     "attention.self.query", 1, 0, BERT_BEFORE, BERT_AFTER,
     "embeddings.word_embeddings", "cls.predictions.decoder",
     "cls.predictions"},
    {"phi3", "self_attn.qkv_proj", PHI3_BLOCK, 2, "self_attn.core",
     "self_attn.qkv_proj", 3, 0, LLAMA_BEFORE, LLAMA_AFTER, "embed_tokens",
     "lm_head", NULL},
    {"mixtral", "block_sparse_moe.gate", MIXTRAL_BLOCK, 4, "self_attn.core",
     "self_attn.q_proj", 1, 0, LLAMA_BEFORE, LLAMA_AFTER, "embed_tokens",
     "lm_head", NULL},
    {"llama", "self_attn.q_proj", LLAMA_BLOCK, 4, "self_attn.core",
     "self_attn.q_proj", 1, 0, LLAMA_BEFORE, LLAMA_AFTER, "embed_tokens",
     "lm_head", NULL},
};

/* NAME's module (the name less its last component) and the last; a name
 * without a dot (a parameter of the root module) is its own module. */
static char *module_of(const char *name, const char **leaf) {
  const char *dot = strrchr(name, '.');
  *leaf = dot ? dot + 1 : name;
  return dot && dot > name ? g_strndup(name, (gsize)(dot - name))
                           : g_strdup(name);
}

/* A module's block: the first all-digit component, its index, the prefix
 * before it and the rest after it (borrowed into MOD). */
static bool block_of(const char *mod, uint64_t *block, size_t *prefix_len,
                     const char **rest) {
  const char *p = mod;
  while (*p) {
    const char *end = strchr(p, '.');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    bool digits = n > 0;
    for (size_t i = 0; i < n; i++)
      digits &= g_ascii_isdigit(p[i]) != 0;
    if (digits && n < 10) {
      *block = g_ascii_strtoull(p, NULL, 10);
      *prefix_len = p > mod ? (size_t)(p - mod) - 1 : 0;
      *rest = end ? end + 1 : "";
      return true;
    }
    p = end ? end + 1 : p + n;
  }
  return false;
}

/* Does MOD end with the module suffix SUF (whole components)? */
static bool ends_with_module(const char *mod, const char *suf) {
  size_t m = strlen(mod), s = strlen(suf);
  return m >= s && !strcmp(mod + m - s, suf) && (m == s || mod[m - s - 1] == '.');
}

static int rank_in(const char *const *list, const char *mod, bool whole) {
  for (int i = 0; list && list[i]; i++)
    if (whole ? !strcmp(mod, list[i]) : ends_with_module(mod, list[i]))
      return i;
  return -1;
}

/* One item of the forward order: a tensor, or a layer without one (an
 * attention core, a tied head). */
struct item {
  int stage;       /* 0 before the blocks, 1 in them, 2 after */
  uint64_t block;
  int rank;        /* in the family's order; unknown: a large number */
  int leaf;        /* weight 0, bias 1, others 2 */
  size_t index;    /* in the input, for unknown families */
  char *layer;     /* its layer (module) */
  const struct import_tensor *t; /* NULL for a tensorless layer */
  double flops;    /* forward FLOPs per sample it adds to its layer */
  double attn_d;   /* an attention core: its query width */
  double attn_window; /* and its sliding window (0: none) */
};

static int item_cmp(const void *pa, const void *pb, gpointer data) {
  const struct item *a = pa, *b = pb;
  const struct family *fam = *(const struct family **)data;
  if (a->stage != b->stage)
    return a->stage < b->stage ? -1 : 1;
  if (a->block != b->block)
    return a->block < b->block ? -1 : 1;
  if (!fam) /* unknown family: the input's order inside a stage */
    return (a->index > b->index) - (a->index < b->index);
  if (a->rank != b->rank)
    return a->rank < b->rank ? -1 : 1;
  int c = strcmp(a->layer, b->layer);
  if (c)
    return c;
  if (a->leaf != b->leaf)
    return a->leaf < b->leaf ? -1 : 1;
  const char *na = a->t ? a->t->name : "", *nb = b->t ? b->t->name : "";
  return strcmp(na, nb);
}

static bool is_norm(const char *mod) {
  return strstr(mod, "norm") || strstr(mod, "Norm") || strstr(mod, "ln_") ||
         g_str_has_suffix(mod, "ln_f");
}

static bool is_embedding(const char *mod, const struct family *f) {
  if (strstr(mod, "embed") || strstr(mod, "embeddings"))
    return !is_norm(mod);
  return f && f == &FAMILIES[0] &&
         (ends_with_module(mod, "wte") || ends_with_module(mod, "wpe"));
}

static const struct family *detect(const GPtrArray *in,
                                   const struct import_info *info) {
  for (size_t k = 0; k < G_N_ELEMENTS(FAMILIES); k++) {
    if (info->family && *info->family)
      if (!strcmp(info->family, FAMILIES[k].name))
        return &FAMILIES[k];
    for (guint i = 0; i < in->len; i++) {
      const struct import_tensor *t = in->pdata[i];
      const char *leaf;
      char *mod = module_of(t->name, &leaf);
      bool hit = ends_with_module(mod, FAMILIES[k].detect);
      g_free(mod);
      if (hit)
        return &FAMILIES[k];
    }
  }
  return NULL;
}

/* The first tensor whose module ends with SUF and whose leaf is 'weight'
 * (a tied embedding or a query projection), or NULL. */
static const struct import_tensor *weight_of(const GPtrArray *in,
                                             const char *suf,
                                             const char *block_mod) {
  for (guint i = 0; i < in->len; i++) {
    const struct import_tensor *t = in->pdata[i];
    const char *leaf;
    char *mod = module_of(t->name, &leaf);
    bool hit = !strcmp(leaf, "weight") && ends_with_module(mod, suf) &&
               (!block_mod || g_str_has_prefix(mod, block_mod));
    g_free(mod);
    if (hit)
      return t;
  }
  return NULL;
}

/* Forward FLOPs per sample of tensor T in module MOD at S tokens: a matrix
 * product's 2 m n per token (m n its elements, however many dimensions),
 * a norm's 4 per element (the convention of the CNN files), a bias's 1,
 * an embedding's lookup nothing. A norm's weight and bias count once. */
static double tensor_flops(const struct import_tensor *t, const char *mod,
                           const char *leaf, const struct family *f,
                           double s) {
  double n = (double)elements_of(t);
  if (is_embedding(mod, f))
    return 0;
  if (is_norm(mod))
    return strcmp(leaf, "weight") == 0 || strcmp(leaf, "gamma") == 0
               ? 4 * n * s
               : 0;
  if (t->ndims >= 2)
    return 2 * n * s;
  return n * s;
}

static void text_header(GString *o, const struct import_info *info,
                        uint64_t params, size_t ntensors, size_t nlayers,
                        double flops, uint64_t s) {
  g_string_append_printf(
      o,
      "# %s.model: written by 'gradsim model import'.\n#\n"
      "# %" PRIu64 " parameters (%.2f MB in fp32), %zu gradient tensors, "
      "%zu layers, %.4g\n# GFLOPs forward per sample of %" PRIu64
      " tokens: matrix products 2 m n per token,\n# attention 4 s^2 d per "
      "sample (Narayanan et al., SC 2021, Sec. 5.1), norms 4\n# per "
      "element, embeddings nothing; backward is twice forward.\n\n",
      info->name, params, 4e-6 * (double)params, ntensors, nlayers,
      flops / 1e9, s);
}

/* A name a model file can hold: printable, without spaces, '#' or
 * quotes (its lines are space-separated words). */
static bool plain_name(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++)
    if (!g_ascii_isgraph(*s) || *s == '#' || *s == '"')
      return false;
  return true;
}

char *import_model_text(const GPtrArray *in, struct import_info *info,
                        char *err, size_t errlen) {
  uint64_t sum = 0;
  for (guint i = 0; i < in->len; i++) {
    const struct import_tensor *t = in->pdata[i];
    if (!plain_name(t->name)) {
      fail(err, errlen, -EINVAL,
           "tensor name '%.60s' holds a space, '#', a quote or an unprintable "
           "byte: model files take names without them",
           t->name);
      return NULL;
    }
    if (elements_of(t) > MODEL_MAX_PARAMS - sum) {
      fail(err, errlen, -EINVAL,
           "the tensors hold more than %" PRIu64 " parameters",
           MODEL_MAX_PARAMS);
      return NULL;
    }
    sum += elements_of(t);
  }
  if (in->len == 0) {
    fail(err, errlen, -EINVAL, "no tensors to import");
    return NULL;
  }
  const struct family *f = detect(in, info);
  g_free(info->family);
  info->family = g_strdup(f ? f->name : "");
  /* The sequence length: given, or a position table's rows. */
  uint64_t s = info->seq_len;
  if (!s && f) {
    const struct import_tensor *pos =
        weight_of(in, f == &FAMILIES[0] ? "wpe" : "position_embeddings",
                  NULL);
    s = pos ? pos->dims[0] : 0;
  }
  if (!s) {
    fail(err, errlen, -EINVAL,
         "cannot tell the sequence length from the tensors (no position "
         "table): give it (--seq-len)");
    return NULL;
  }
  info->seq_len = s;
  GArray *items = g_array_new(FALSE, TRUE, sizeof(struct item));
  GHashTable *cores = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            NULL);
  bool has_head = false, has_head_if = f && !f->head_if;
  /* A query projection whose width is not whole (GPT-2's c_attn holds
   * query, key and value: three equal parts): the first, refused. */
  char *badq = NULL;
  for (guint i = 0; i < in->len; i++) {
    const struct import_tensor *t = in->pdata[i];
    const char *leaf;
    char *mod = module_of(t->name, &leaf);
    struct item it = {.index = i, .t = t, .layer = mod, .rank = 1 << 20};
    it.leaf = !strcmp(leaf, "weight") ? 0 : !strcmp(leaf, "bias") ? 1 : 2;
    uint64_t block;
    size_t plen;
    const char *rest;
    if (block_of(mod, &block, &plen, &rest)) {
      it.stage = 1;
      it.block = block;
      int r = f ? rank_in(f->block, rest, true) : -1;
      it.rank = r >= 0 ? r + (r >= (int)f->core_rank) : 1 << 20;
      /* Each block's attention core, once, after its query projection. */
      if (f && !strcmp(rest, f->query) && !strcmp(leaf, "weight")) {
        char *core = g_strdup_printf("%.*s.%" PRIu64 ".%s", (int)plen, mod,
                                     block, f->core);
        if (!g_hash_table_contains(cores, core)) {
          /* The query's width: the config's where it knows it (a fused
           * projection's parts may differ: Phi-3 with fewer key and value
           * heads), else the projection's part. */
          uint64_t w = t->dims[f->query_dim];
          if (!info->query_width && w % (uint64_t)f->query_div && !badq)
            badq = g_strdup_printf(
                "%s: its %" PRIu64 " columns are not %d equal parts "
                "(query, key and value)",
                t->name, w, f->query_div);
          double d = info->query_width ? (double)info->query_width
                                       : (double)w / f->query_div;
          /* A sliding window bounds the keys each query sees. */
          double win = info->window && (!info->window_even || block % 2 == 0)
                           ? (double)info->window
                           : 0;
          double keys = win > 0 ? fmin((double)s, win) : (double)s;
          struct item c = {.stage = 1, .block = block,
                           .rank = (int)f->core_rank, .leaf = 2,
                           .index = i, .layer = g_strdup(core),
                           .flops = 4 * (double)s * keys * d,
                           .attn_d = d, .attn_window = win};
          g_array_append_val(items, c);
          g_hash_table_add(cores, core);
        } else {
          g_free(core);
        }
      }
    } else {
      int r = f ? rank_in(f->before, mod, false) : -1;
      it.stage = r >= 0 || is_embedding(mod, f) ? 0 : 2;
      if (it.stage == 2 && f)
        r = rank_in(f->after, mod, false);
      it.rank = r >= 0 ? r : 1 << 20;
      if (f && ends_with_module(mod, f->head))
        has_head = true;
      if (f && f->head_if && ends_with_module(mod, f->head_if))
        has_head_if = true;
    }
    it.flops = tensor_flops(t, mod, leaf, f, (double)s);
    /* A mixture of experts: each token runs ACTIVE of the EXPERTS, so an
     * expert's products count that share of its tokens. */
    if (info->experts > 0 && strstr(mod, ".experts."))
      it.flops *= (double)info->experts_active / info->experts;
    g_array_append_val(items, it);
  }
  /* A tied head: a layer without a tensor of its own, the product with
   * the embedding's transpose (2 V d per token). */
  const struct import_tensor *emb = f ? weight_of(in, f->embed, NULL) : NULL;
  info->tied_head = f && !has_head && has_head_if && emb && emb->ndims == 2;
  if (info->tied_head) {
    info->vocab = emb->dims[0];
    info->d_model = emb->dims[1];
    int r = rank_in(f->after, f->head, true);
    struct item h = {.stage = 2, .rank = r, .leaf = 2, .index = in->len,
                     .layer = g_strdup(f->head),
                     .flops = 2 * (double)s * (double)emb->dims[0] *
                              (double)emb->dims[1]};
    g_array_append_val(items, h);
  }
  g_array_sort_with_data(items, item_cmp, &f);
  /* Layers in forward order of first appearance, FLOPs summed. */
  GPtrArray *layers = g_ptr_array_new();
  GHashTable *lix = g_hash_table_new(g_str_hash, g_str_equal);
  GArray *lflops = g_array_new(FALSE, TRUE, sizeof(double));
  GArray *lattn = g_array_new(FALSE, TRUE, sizeof(double));
  GArray *lwin = g_array_new(FALSE, TRUE, sizeof(double));
  double total = 0;
  for (guint i = 0; i < items->len; i++) {
    struct item *it = &g_array_index(items, struct item, i);
    gpointer ix = g_hash_table_lookup(lix, it->layer);
    if (!ix) {
      g_ptr_array_add(layers, it->layer);
      double z = 0;
      g_array_append_val(lflops, z);
      g_array_append_val(lattn, z);
      g_array_append_val(lwin, z);
      ix = GUINT_TO_POINTER(layers->len);
      g_hash_table_insert(lix, it->layer, ix);
    }
    guint l = GPOINTER_TO_UINT(ix) - 1;
    g_array_index(lflops, double, l) += it->flops;
    g_array_index(lattn, double, l) += it->attn_d;
    if (it->attn_window > 0)
      g_array_index(lwin, double, l) = it->attn_window;
    total += it->flops;
  }
  /* What the model reader will refuse: a layer over its FLOPs limit, a
   * layer named twice (a module that is also a core or head name). */
  const char *bad = NULL;
  double most = 0;
  for (guint l = 0; l < layers->len; l++)
    most = fmax(most, g_array_index(lflops, double, l));
  if (most > MODEL_MAX_LAYER_FLOPS)
    bad = "a layer's forward FLOPs per sample pass 1e18: shorten --seq-len";
  if (s > 100000000)
    bad = "the sequence length passes 1e8 tokens";
  if (!(total > 0))
    bad = "the tensors do no arithmetic (embeddings only): no compute to "
          "time";
  GString *o = NULL;
  if (badq || bad) {
    fail(err, errlen, -EINVAL, "%s", badq ? badq : bad);
    goto done;
  }
  o = g_string_new(NULL);
  text_header(o, info, sum, in->len, layers->len, total, s);
  g_string_append_printf(o, "model %s\n", info->name);
  if (info->source && *info->source)
    g_string_append_printf(o, "source \"%s\"\n", info->source);
  g_string_append(o, "dataset tokens\n");
  g_string_append_printf(o, "input \"%" PRIu64 " tokens\"\n", s);
  g_string_append_printf(o, "batch %d\n", info->batch ? info->batch : 8);
  g_string_append_printf(o, "tokens_per_sample %" PRIu64 "\n", s);
  if (*info->family)
    g_string_append_printf(o, "family %s\n", info->family);
  g_string_append(o, "\n# layers in forward order: name, forward FLOPs per "
                     "sample\n");
  for (guint l = 0; l < layers->len; l++) {
    g_string_append_printf(o, "layer %s %.0f\n", (char *)layers->pdata[l],
                           g_array_index(lflops, double, l));
    if (g_array_index(lattn, double, l) > 0 &&
        g_array_index(lwin, double, l) > 0)
      g_string_append_printf(o, "attention %s %.0f %.0f\n",
                             (char *)layers->pdata[l],
                             g_array_index(lattn, double, l),
                             g_array_index(lwin, double, l));
    else if (g_array_index(lattn, double, l) > 0)
      g_string_append_printf(o, "attention %s %.0f\n",
                             (char *)layers->pdata[l],
                             g_array_index(lattn, double, l));
  }
  g_string_append(o, "\n# gradient tensors in backward order: name, elements, "
                     "layer, shape, dtype\n");
  for (guint i = items->len; i-- > 0;) {
    const struct item *it = &g_array_index(items, struct item, i);
    if (!it->t)
      continue;
    char sh[MODEL_SHAPE_TEXT_MAX];
    g_string_append_printf(
        o, "tensor %s %" PRIu64 " %s %s %s\n", it->t->name, elements_of(it->t),
        it->layer, model_format_shape(it->t->dims, it->t->ndims, sh, sizeof sh),
        it->t->dtype);
  }
  g_string_append_printf(o, "\nexpect params %" PRIu64 " 0 \"the sum of the "
                            "imported tensors\"\n",
                         sum);
done:
  g_free(badq);
  for (guint i = 0; i < items->len; i++)
    g_free(g_array_index(items, struct item, i).layer);
  g_array_free(items, TRUE);
  g_hash_table_destroy(cores);
  g_hash_table_destroy(lix);
  g_ptr_array_free(layers, TRUE);
  g_array_free(lflops, TRUE);
  g_array_free(lattn, TRUE);
  g_array_free(lwin, TRUE);
  return o ? g_string_free(o, FALSE) : NULL;
}
