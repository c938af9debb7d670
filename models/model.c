/* models/model.c: model files, the device table and compute times
 * (model.h). */
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#ifndef GRADSIM_MODELS_DIR
#define GRADSIM_MODELS_DIR "models"
#endif

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return rc;
}

const char *model_dir(const struct model_opts *opts) {
  if (opts && opts->dir)
    return opts->dir;
  const char *env = g_getenv("GRADSIM_MODELS_DIR");
  return env && *env ? env : GRADSIM_MODELS_DIR;
}

/* ---- the line format -------------------------------------------------- */

/* Split LINE into words; a double-quoted string is one word (without its
 * quotes); '#' outside quotes ends the line. Returns NULL and sets *BAD on
 * an unterminated quote. */
static GPtrArray *split_line(const char *line, bool *bad) {
  GPtrArray *w = g_ptr_array_new_with_free_func(g_free);
  *bad = false;
  const char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r')
      p++;
    if (!*p || *p == '#')
      break;
    if (*p == '"') {
      const char *e = strchr(p + 1, '"');
      if (!e) {
        *bad = true;
        g_ptr_array_free(w, TRUE);
        return NULL;
      }
      g_ptr_array_add(w, g_strndup(p + 1, (gsize)(e - p - 1)));
      p = e + 1;
    } else {
      const char *s = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#')
        p++;
      g_ptr_array_add(w, g_strndup(s, (gsize)(p - s)));
    }
  }
  return w;
}

static bool parse_number(const char *s, double *v) {
  char *end;
  errno = 0;
  double x = g_ascii_strtod(s, &end);
  if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(x) || x < 0)
    return false;
  *v = x;
  return true;
}

static bool parse_count(const char *s, uint64_t *v) {
  char *end;
  errno = 0;
  guint64 x = g_ascii_strtoull(s, &end, 10);
  if (*s < '0' || *s > '9' || *end != '\0' || errno == ERANGE)
    return false;
  *v = x;
  return true;
}

/* What one line of a data file does, given its words W (at least one) and
 * its number LINE: 0, or a negative errno with a message. */
typedef int line_fn(void *ctx, const GPtrArray *w, const char *path,
                    size_t line, char *err, size_t errlen);

/* Split TEXT, the contents of PATH, into lines and each line into words
 * (split_line), and hand every line that has words to LINE_DO, until one
 * fails. */
static int parse_lines(const char *path, const char *text, line_fn *line_do,
                       void *ctx, char *err, size_t errlen) {
  char **lines = g_strsplit(text, "\n", -1);
  int rc = 0;
  for (size_t ln = 0; lines[ln] && !rc; ln++) {
    bool bad;
    GPtrArray *w = split_line(lines[ln], &bad);
    if (bad) {
      rc = fail(err, errlen, -EINVAL, "%s:%zu: unterminated quote", path,
                ln + 1);
      break;
    }
    if (w->len)
      rc = line_do(ctx, w, path, ln + 1, err, errlen);
    g_ptr_array_free(w, TRUE);
  }
  g_strfreev(lines);
  return rc;
}

/* Word I of a line's words W, in the line handlers below. */
#define W(i) ((const char *)g_ptr_array_index(w, (i)))

/* ---- the device table ------------------------------------------------- */

struct measured {
  char *model, *precision, *source;
  double batch, rate;
};

/* The precisions a device may list a peak for: the one table of their
 * names and what each stands for. */
static const struct precision {
  const char *name;
  /* A 16-bit float on the tensor cores (bf16, fp16): the older parts'
   * mixed measurements ran on the same units, so they time it too. */
  bool tensor16;
  /* fp16 with fp32 accumulation, as the older parts' measurements name
   * their tensor-core runs. */
  bool mixed;
  /* Bytes a weight (and its gradient) takes in training at it: 4 in
   * fp32 and tf32 (fp32 storage), 2 in the 16-bit ones and in mixed; fp8
   * training keeps 16-bit weights (Transformer Engine's). */
  double weight_bytes;
} PRECISIONS[] = {
    {"fp32", false, false, 4}, {"tf32", false, false, 4},
    {"bf16", true, false, 2},  {"fp16", true, false, 2},
    {"fp8", false, false, 2},  {"mixed", false, true, 2},
};
enum { NPREC = sizeof PRECISIONS / sizeof PRECISIONS[0] };

static int precision_index(const char *name) {
  for (int i = 0; i < NPREC; i++)
    if (!strcmp(PRECISIONS[i].name, name))
      return i;
  return -1;
}

/* A tensor's dtype in a model file (model.h: the one list of their
 * names). */
static const char *const DTYPE_NAMES[] = {"fp32", "fp16", "bf16", "fp64",
                                          "fp8_e4m3", "fp8_e5m2"};

double model_precision_weight_bytes(const char *name) {
  int k = precision_index(name);
  return k >= 0 ? PRECISIONS[k].weight_bytes : 0;
}

const char *model_dtype_find(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(DTYPE_NAMES); i++)
    if (!strcmp(DTYPE_NAMES[i], name))
      return DTYPE_NAMES[i];
  return NULL;
}

/* The N NAMES, comma-separated, into BUF of LEN bytes, which it returns. */
static const char *join_names(const char *const *names, size_t n, char *buf,
                              size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
                           names[i]);
  return buf;
}

bool model_precision_known(const char *name) {
  return precision_index(name) >= 0;
}

const char *model_precision_names(char *buf, size_t len) {
  const char *names[NPREC];
  for (int i = 0; i < NPREC; i++)
    names[i] = PRECISIONS[i].name;
  return join_names(names, NPREC, buf, len);
}

struct device {
  char *name, *description;
  double peak[NPREC];  /* dense FLOPS per precision, 0: not listed */
  double memory;       /* bytes per second */
  double mfu[NPREC];   /* measured model FLOPs utilization, 0: none */
  double nvlink;       /* NVLink bytes per second per direction, 0: none */
  double capacity;     /* memory bytes, 0: not listed */
  double launch;       /* kernel launch overhead, seconds, 0: not listed */
  int cc;              /* CUDA compute capability x 10, 0: not listed */
  char *mfu_source[NPREC];
  GArray *measured; /* struct measured */
};

static void device_clear(gpointer p) {
  struct device *d = p;
  g_free(d->name);
  g_free(d->description);
  for (int i = 0; i < NPREC; i++)
    g_free(d->mfu_source[i]);
  for (guint i = 0; i < d->measured->len; i++) {
    struct measured *m = &g_array_index(d->measured, struct measured, i);
    g_free(m->model);
    g_free(m->precision);
    g_free(m->source);
  }
  g_array_free(d->measured, TRUE);
}

/* One line of devices.conf into DEVS (a GArray of struct device): a
 * 'device' line starts a device, the others describe the last one. */
static int device_line(void *ctx, const GPtrArray *w, const char *path,
                       size_t line, char *err, size_t errlen) {
  GArray *devs = ctx;
  const char *kw = W(0);
  struct device *d =
      devs->len ? &g_array_index(devs, struct device, devs->len - 1) : NULL;
  if (strcmp(kw, "device") == 0 && w->len == 3) {
    struct device nd = {.name = g_strdup(W(1)),
                        .description = g_strdup(W(2)),
                        .measured = g_array_new(FALSE, TRUE,
                                                sizeof(struct measured))};
    g_array_append_val(devs, nd);
    return 0;
  }
  if (!d)
    return fail(err, errlen, -EINVAL, "%s:%zu: '%s' before any 'device'",
                path, line, kw);
  if (strcmp(kw, "peak") == 0 && w->len == 4) {
    double v;
    int k = precision_index(W(1));
    char names[64];
    if (!parse_number(W(2), &v) || v <= 0 || k < 0)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected 'peak PRECISION FLOPS \"SOURCE\"', "
                  "PRECISION one of %s",
                  path, line, model_precision_names(names, sizeof names));
    d->peak[k] = v;
    return 0;
  }
  if (strcmp(kw, "mfu") == 0 && w->len == 4) {
    double v;
    int k = precision_index(W(1));
    char names[64];
    if (!parse_number(W(2), &v) || !(v > 0 && v <= 1) || k < 0)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected 'mfu PRECISION FRACTION \"SOURCE\"', "
                  "FRACTION in (0, 1], PRECISION one of %s",
                  path, line, model_precision_names(names, sizeof names));
    d->mfu[k] = v;
    g_free(d->mfu_source[k]);
    d->mfu_source[k] = g_strdup(W(3));
    return 0;
  }
  if ((strcmp(kw, "nvlink") == 0 || strcmp(kw, "capacity") == 0) &&
      w->len == 3) {
    double v;
    if (!parse_number(W(1), &v) || v <= 0)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected '%s BYTES%s \"SOURCE\"'", path, line, kw,
                  strcmp(kw, "nvlink") ? "" : "_PER_S");
    d->nvlink = strcmp(kw, "nvlink") ? d->nvlink : v;
    d->capacity = strcmp(kw, "capacity") ? d->capacity : v;
    return 0;
  }
  if (strcmp(kw, "launch") == 0 && w->len == 3) {
    if (!parse_number(W(1), &d->launch) || !(d->launch > 0) ||
        d->launch >= 1)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected 'launch SECONDS \"SOURCE\"', SECONDS "
                  "in (0, 1)",
                  path, line);
    return 0;
  }
  if (strcmp(kw, "cc") == 0 && w->len == 3) {
    uint64_t cc;
    if (!parse_count(W(1), &cc) || cc < 10 || cc > 999)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected 'cc N \"SOURCE\"', N the compute "
                  "capability x 10 + minor (70, 80, 90, 100), 10 to 999",
                  path, line);
    d->cc = (int)cc;
    return 0;
  }
  if (strcmp(kw, "memory") == 0 && w->len == 3) {
    if (!parse_number(W(1), &d->memory) || d->memory <= 0)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected 'memory BYTES_PER_S \"SOURCE\"'", path,
                  line);
    return 0;
  }
  if (strcmp(kw, "measured") == 0 && w->len == 6) {
    struct measured m = {g_strdup(W(1)), g_strdup(W(2)), g_strdup(W(5)), 0,
                         0};
    bool bad = !parse_number(W(3), &m.batch) ||
               !parse_number(W(4), &m.rate) || m.batch <= 0 || m.rate <= 0;
    /* Kept even when bad, so that device_clear() frees its strings. */
    g_array_append_val(d->measured, m);
    if (bad)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: expected 'measured MODEL PRECISION BATCH "
                  "SAMPLES_PER_S \"SOURCE\"'",
                  path, line);
    return 0;
  }
  return fail(err, errlen, -EINVAL,
              "%s:%zu: unknown or malformed line starting '%s' (expected "
              "device, peak, memory, mfu, nvlink, capacity, launch, cc or "
              "measured)",
              path, line, kw);
}

/* DIR/devices.conf into *OUT, a GArray of struct device. */
static int load_devices(const char *dir, GArray **out, char *err,
                        size_t errlen) {
  char *path = g_build_filename(dir, "devices.conf", NULL);
  char *text;
  GError *ge = NULL;
  if (!g_file_get_contents(path, &text, NULL, &ge)) {
    int rc = fail(err, errlen, -ENOENT, "%s", ge->message);
    g_error_free(ge);
    g_free(path);
    return rc;
  }
  GArray *devs = g_array_new(FALSE, TRUE, sizeof(struct device));
  g_array_set_clear_func(devs, device_clear);
  int rc = parse_lines(path, text, device_line, devs, err, errlen);
  g_free(text);
  g_free(path);
  if (rc) {
    g_array_free(devs, TRUE);
    return rc;
  }
  *out = devs;
  return 0;
}

/* ---- model files ------------------------------------------------------ */

static void model_layer_clear(struct model_layer *l) { g_free(l->name); }

void model_free(struct model *m) {
  if (!m)
    return;
  for (size_t i = 0; i < m->nlayers; i++)
    model_layer_clear(&m->layers[i]);
  for (size_t i = 0; i < m->ntensors; i++)
    g_free(m->tensors[i].name);
  g_free(m->layers);
  g_free(m->tensors);
  g_free(m->name);
  g_free(m->path);
  g_free(m->dataset);
  g_free(m->family);
  g_free(m->device);
  g_free(m->precision);
  g_free(m->timing_source);
  g_free(m);
}

static bool is_path(const char *name) {
  return strchr(name, '/') || g_str_has_suffix(name, ".model");
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *model_list(const struct model_opts *opts) {
  GDir *d = g_dir_open(model_dir(opts), 0, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (const char *f; d && (f = g_dir_read_name(d));)
    if (g_str_has_suffix(f, ".model"))
      g_ptr_array_add(names, g_strndup(f, strlen(f) - 6));
  if (d)
    g_dir_close(d);
  g_ptr_array_sort(names, cmp_str);
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "",
                           (const char *)g_ptr_array_index(names, i));
  g_ptr_array_add(names, NULL);
  g_ptr_array_free(names, TRUE);
  return g_string_free(s, FALSE);
}

struct expect {
  bool params_set, tensors_set;
  double params, tol;
  uint64_t tensors;
  size_t params_line, tensors_line;
};

/* A model file being read: what its lines have built so far. */
struct model_parse {
  struct model *m;
  struct expect *ex;
  GArray *layers;        /* struct model_layer, forward order */
  GArray *tensors;       /* struct model_tensor, backward order */
  GHashTable *layer_ix;  /* layer name -> index + 1 (names owned by LAYERS) */
  char *backward_from;   /* the layer named, resolved at the end */
  size_t backward_line;
  uint64_t params;       /* elements of the tensors so far */
};

/* 'layer NAME FLOPS' */
static int layer_line(struct model_parse *st, const GPtrArray *w,
                      const char *path, size_t line, char *err,
                      size_t errlen) {
  int rc = 0;
  struct model_layer l = {.name = g_strdup(W(1))};
  if (!parse_number(W(2), &l.flops) || l.flops > MODEL_MAX_LAYER_FLOPS)
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: layer %s: FLOPs '%s' must be a number in "
              "0..%g",
              path, line, W(1), W(2), MODEL_MAX_LAYER_FLOPS);
  else if (g_hash_table_contains(st->layer_ix, l.name))
    rc = fail(err, errlen, -EINVAL, "%s:%zu: layer %s declared twice", path,
              line, l.name);
  /* Kept even when bad, so that model_free() frees its name. */
  g_array_append_val(st->layers, l);
  g_hash_table_insert(st->layer_ix,
                      g_array_index(st->layers, struct model_layer,
                                    st->layers->len - 1)
                          .name,
                      GSIZE_TO_POINTER(st->layers->len));
  return rc;
}

void model_tensor_matrix(const struct model_tensor *t, uint64_t *rows,
                         uint64_t *cols) {
  if (t->ndims < 2) {
    *rows = t->elements;
    *cols = 1;
    return;
  }
  *rows = t->dims[0];
  *cols = t->elements / t->dims[0];
}

const char *model_format_shape(const uint64_t *dims, size_t n, char *buf,
                               size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t d = 0; d < n && used < len; d++)
    used += (size_t)snprintf(buf + used, len - used, "%s%" PRIu64,
                             d ? "x" : "", dims[d]);
  return buf;
}

size_t model_parse_shape(const char *text, uint64_t dims[MODEL_MAX_DIMS]) {
  size_t k = 0;
  uint64_t prod = 1;
  const char *p = text;
  for (;;) {
    if (k == MODEL_MAX_DIMS || !g_ascii_isdigit(*p))
      return 0;
    char *end;
    errno = 0;
    guint64 d = g_ascii_strtoull(p, &end, 10);
    if (errno || d == 0 || d > MODEL_MAX_PARAMS / prod)
      return 0;
    prod *= d;
    dims[k++] = d;
    if (*end == '\0')
      return k;
    if (*end != 'x')
      return 0;
    p = end + 1;
  }
}

/* 'tensor NAME ELEMENTS LAYER [SHAPE]', the layer declared above. */
static int tensor_line(struct model_parse *st, const GPtrArray *w,
                       const char *path, size_t line, char *err,
                       size_t errlen) {
  int rc = 0;
  struct model_tensor t = {.name = g_strdup(W(1))};
  gpointer ix = g_hash_table_lookup(st->layer_ix, W(3));
  g_array_append_val(st->tensors, t);
  struct model_tensor *tp =
      &g_array_index(st->tensors, struct model_tensor, st->tensors->len - 1);
  if (!parse_count(W(2), &tp->elements) || tp->elements == 0)
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: tensor %s: elements '%s' must be a whole number "
              ">= 1",
              path, line, W(1), W(2));
  else if (tp->elements > MODEL_MAX_PARAMS - st->params)
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: tensor %s: elements '%s' bring the model over "
              "%" G_GUINT64_FORMAT " parameters",
              path, line, W(1), W(2), MODEL_MAX_PARAMS);
  else if (!ix)
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: tensor %s: layer '%s' is not declared above", path,
              line, W(1), W(3));
  else
    tp->layer = GPOINTER_TO_SIZE(ix) - 1;
  if (!rc && w->len == 6) {
    char names[80];
    if (!model_dtype_find(W(5)))
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: tensor %s: dtype '%s' must be one of %s", path, line,
                W(1), W(5),
                join_names(DTYPE_NAMES, G_N_ELEMENTS(DTYPE_NAMES), names,
                           sizeof names));
    else
      g_strlcpy(tp->dtype, W(5), sizeof tp->dtype);
  }
  if (!rc && w->len >= 5) {
    uint64_t prod = 1;
    tp->ndims = model_parse_shape(W(4), tp->dims);
    for (size_t i = 0; i < tp->ndims; i++)
      prod *= tp->dims[i];
    if (!tp->ndims || prod != tp->elements)
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: tensor %s: shape '%s' must be dimensions AxBx... "
                "(1 to %d whole numbers >= 1) whose product is its %s "
                "elements",
                path, line, W(1), W(4), MODEL_MAX_DIMS, W(2));
  }
  if (!rc)
    st->params += tp->elements;
  return rc;
}

/* 'expect params N TOLERANCE "SOURCE"' and 'expect tensors N "SOURCE"',
 * checked once the whole file is read; false when W is neither. */
static bool expect_line(struct expect *ex, const GPtrArray *w,
                        const char *path, size_t line, int *rc, char *err,
                        size_t errlen) {
  if (w->len == 5 && strcmp(W(1), "params") == 0) {
    ex->params_set = true;
    ex->params_line = line;
    if (!parse_number(W(2), &ex->params) || !parse_number(W(3), &ex->tol))
      *rc = fail(err, errlen, -EINVAL,
                 "%s:%zu: expected 'expect params N TOLERANCE \"SOURCE\"'",
                 path, line);
    return true;
  }
  if (w->len == 4 && strcmp(W(1), "tensors") == 0) {
    ex->tensors_set = true;
    ex->tensors_line = line;
    if (!parse_count(W(2), &ex->tensors))
      *rc = fail(err, errlen, -EINVAL,
                 "%s:%zu: expected 'expect tensors N \"SOURCE\"'", path, line);
    return true;
  }
  return false;
}

/* One line of a model file (docs/models.md, "Model files"). */
static int model_line(void *ctx, const GPtrArray *w, const char *path,
                      size_t line, char *err, size_t errlen) {
  struct model_parse *st = ctx;
  struct model *m = st->m;
  const char *kw = W(0);
  int rc = 0;
  if (!m->name && strcmp(kw, "model") != 0) {
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: the first directive must be 'model NAME'", path, line);
  } else if (strcmp(kw, "model") == 0 && w->len == 2 && !m->name) {
    m->name = g_strdup(W(1));
  } else if ((strcmp(kw, "source") == 0 || strcmp(kw, "input") == 0) &&
             w->len == 2) {
  } else if (strcmp(kw, "dataset") == 0 && w->len == 2) {
    g_free(m->dataset);
    m->dataset = g_strdup(W(1));
  } else if (strcmp(kw, "batch") == 0 && w->len == 2) {
    uint64_t b = 0;
    if (!parse_count(W(1), &b) || b < 1 || b > 1000000)
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: batch '%s' must be a whole number in 1..1000000",
                path, line, W(1));
    m->file_batch = (int)b;
  } else if (strcmp(kw, "backward_from") == 0 && w->len == 2) {
    g_free(st->backward_from);
    st->backward_from = g_strdup(W(1));
    st->backward_line = line;
  } else if (strcmp(kw, "layer") == 0 && w->len == 3) {
    rc = layer_line(st, w, path, line, err, errlen);
  } else if (strcmp(kw, "tensor") == 0 && w->len >= 4 && w->len <= 6) {
    rc = tensor_line(st, w, path, line, err, errlen);
  } else if (strcmp(kw, "tokens_per_sample") == 0 && w->len == 2) {
    if (!parse_count(W(1), &m->file_tokens) || m->file_tokens < 1 ||
        m->file_tokens > 100000000)
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: tokens_per_sample '%s' must be a whole number in "
                "1..1e8",
                path, line, W(1));
  } else if (strcmp(kw, "family") == 0 && w->len == 2) {
    g_free(m->family);
    m->family = g_strdup(W(1));
  } else if (strcmp(kw, "attention") == 0 && (w->len == 3 || w->len == 4)) {
    gpointer ix = g_hash_table_lookup(st->layer_ix, W(1));
    double d, win = 0;
    if (!ix)
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: attention: layer '%s' is not declared above", path,
                line, W(1));
    else if (!parse_number(W(2), &d) || d <= 0 || d > 1e9)
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: attention %s: query width '%s' must be a number in "
                "(0, 1e9]",
                path, line, W(1), W(2));
    else if (w->len == 4 && (!parse_number(W(3), &win) || win < 1 ||
                             win > 1e8 || win != floor(win)))
      rc = fail(err, errlen, -EINVAL,
                "%s:%zu: attention %s: sliding window '%s' must be a whole "
                "number of tokens in 1..1e8",
                path, line, W(1), W(3));
    else {
      struct model_layer *l = &g_array_index(st->layers, struct model_layer,
                                             GPOINTER_TO_SIZE(ix) - 1);
      l->attn_d = d;
      l->attn_window = win;
    }
  } else if (!(strcmp(kw, "expect") == 0 &&
               expect_line(st->ex, w, path, line, &rc, err, errlen))) {
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: unknown or malformed line starting '%s' (expected "
              "model, source, dataset, input, batch, tokens_per_sample, "
              "family, backward_from, layer, attention (LAYER D [WINDOW]), "
              "tensor or expect, with their arguments)",
              path, line, kw);
  }
  return rc;
}

/* What a model file needs once all its lines are read; resolves
 * backward_from. */
static int model_parse_check(struct model_parse *st, const char *path,
                             char *err, size_t errlen) {
  struct model *m = st->m;
  if (!m->name)
    return fail(err, errlen, -EINVAL, "%s: no 'model NAME' line", path);
  if (st->layers->len == 0 || st->tensors->len == 0)
    return fail(err, errlen, -EINVAL, "%s: a model needs layers and tensors",
                path);
  if (m->file_batch == 0)
    return fail(err, errlen, -EINVAL, "%s: no 'batch N' line", path);
  bool attn = false;
  for (guint i = 0; i < st->layers->len; i++)
    attn |= g_array_index(st->layers, struct model_layer, i).attn_d > 0;
  if (attn && !m->file_tokens)
    return fail(err, errlen, -EINVAL,
                "%s: 'attention' lines need 'tokens_per_sample N' (the "
                "length their layers' FLOPs are for)",
                path);
  m->backward_from = 0;
  if (st->backward_from) {
    gpointer ix = g_hash_table_lookup(st->layer_ix, st->backward_from);
    if (!ix)
      return fail(err, errlen, -EINVAL,
                  "%s:%zu: backward_from: layer '%s' is not declared", path,
                  st->backward_line, st->backward_from);
    m->backward_from = GPOINTER_TO_SIZE(ix) - 1;
  }
  return 0;
}

/* TEXT, the contents of model file PATH, into M (name, dataset, batch,
 * layers, tensors) and EX; M holds what was read even on error. */
static int parse_model_file(const char *path, const char *text,
                            struct model *m, struct expect *ex, char *err,
                            size_t errlen) {
  struct model_parse st = {
      .m = m,
      .ex = ex,
      .layers = g_array_new(FALSE, TRUE, sizeof(struct model_layer)),
      .tensors = g_array_new(FALSE, TRUE, sizeof(struct model_tensor)),
      .layer_ix = g_hash_table_new(g_str_hash, g_str_equal),
  };
  int rc = parse_lines(path, text, model_line, &st, err, errlen);
  if (!rc)
    rc = model_parse_check(&st, path, err, errlen);
  g_free(st.backward_from);
  g_hash_table_destroy(st.layer_ix);
  m->nlayers = st.layers->len;
  m->layers = (struct model_layer *)(void *)g_array_free(st.layers, FALSE);
  m->ntensors = st.tensors->len;
  m->tensors = (struct model_tensor *)(void *)g_array_free(st.tensors, FALSE);
  return rc;
}
#undef W

/* Forward and backward FLOPs per sample. */
static double model_flops(const struct model *m) {
  double f = 0;
  for (size_t i = 0; i < m->nlayers; i++)
    f += (i >= m->backward_from ? 3 : 1) * m->layers[i].flops;
  return f;
}

static int read_model(const char *path, struct model **out,
                      struct expect *ex, char *err, size_t errlen);

/* The efficiency a measurement implies: the measured model's FLOPs per
 * sample times its throughput, over the device's peak. */
static int measured_efficiency(const char *dir, const struct device *y,
                               const struct measured *x, int prec,
                               double *eff, char *err, size_t errlen) {
  char *file = g_strconcat(x->model, ".model", NULL);
  char *path = g_build_filename(dir, file, NULL);
  g_free(file);
  struct model *mm;
  struct expect ex = {0};
  int rc = read_model(path, &mm, &ex, err, errlen);
  g_free(path);
  if (rc)
    return rc;
  *eff = model_flops(mm) * x->rate / y->peak[prec];
  model_free(mm);
  return 0;
}

/* The device named DEV in DEVS, or an error naming the valid ones. */
static int find_device(const GArray *devs, const char *dev,
                       const struct device **out, char *err, size_t errlen) {
  const struct device *d = NULL;
  GString *names = g_string_new(NULL);
  for (guint i = 0; i < devs->len; i++) {
    const struct device *x = &g_array_index(devs, struct device, i);
    g_string_append_printf(names, "%s%s", i ? ", " : "", x->name);
    if (strcmp(x->name, dev) == 0)
      d = x;
  }
  int rc = 0;
  if (!d)
    rc = fail(err, errlen, -EINVAL, "unknown device '%s' (valid: %s)", dev,
              names->str);
  g_string_free(names, TRUE);
  *out = d;
  return rc;
}

/* What time_model() was asked for, checked. */
struct timing {
  const char *dir;         /* model files of the measured models */
  const GArray *devs;      /* struct device */
  const struct device *d;  /* the device asked for */
  const char *prec;
  int prec_ix;             /* PREC's index in PRECISIONS */
  double peak;             /* D's peak FLOPS at PREC */
  int batch;
  double mfu;              /* [model] mfu, 0: the device's */
};

/* The seconds of forward + backward of M measured on the device at the
 * precision (BATCH samples at the measured rate), or 0 when it was not
 * measured there. */
static double measured_time(struct model *m, const struct timing *tm) {
  for (guint i = 0; i < tm->d->measured->len; i++) {
    const struct measured *x =
        &g_array_index(tm->d->measured, struct measured, i);
    if (strcmp(x->model, m->name) == 0 &&
        strcmp(x->precision, tm->prec) == 0) {
      m->timing_source =
          g_strdup_printf("measured on %s %s: %g samples/s (%s)",
                          tm->d->name, tm->prec, x->rate, x->source);
      return tm->batch / x->rate;
    }
  }
  return 0;
}

/* The mean efficiency of the measurements at the precision on the device
 * (ALL_DEVICES false) or on every device: *COUNT of them, named in WHICH
 * ("alexnet on P100, ..."); *EFF is not set when there are none. */
static int mean_efficiency(const struct timing *tm, bool all_devices,
                           double *eff, int *count, GString *which, char *err,
                           size_t errlen) {
  double sum = 0;
  *count = 0;
  for (guint j = 0; j < tm->devs->len; j++) {
    const struct device *y = &g_array_index(tm->devs, struct device, j);
    if (!all_devices && y != tm->d)
      continue;
    for (guint i = 0; i < y->measured->len; i++) {
      const struct measured *x =
          &g_array_index(y->measured, struct measured, i);
      int xp = precision_index(x->precision);
      bool same = xp == tm->prec_ix ||
                  (xp >= 0 && PRECISIONS[xp].mixed &&
                   PRECISIONS[tm->prec_ix].tensor16);
      if (!same || xp < 0 || !(y->peak[xp] > 0))
        continue;
      double e;
      int rc = measured_efficiency(tm->dir, y, x, xp, &e, err, errlen);
      if (rc)
        return rc;
      sum += e;
      (*count)++;
      g_string_append_printf(which, "%s%s on %s", *count > 1 ? ", " : "",
                             x->model, y->name);
    }
  }
  if (*count)
    *eff = sum / *count;
  return 0;
}

/* The seconds of forward + backward of M, FLOPS per sample, at the batch:
 * measured on the device, else from the mean efficiency of the device's
 * measurements at the precision, else of all devices'. Sets
 * m->timing_source. */
static int compute_time(struct model *m, const struct timing *tm,
                        double flops, double *t, char *err, size_t errlen) {
  *t = measured_time(m, tm);
  if (*t == 0 && m->tokens) {
    /* A transformer: its FLOPs at the device's peak times a model FLOPs
     * utilization: given, measured on that device (devices.conf), or the
     * mean of every device's at the precision. */
    double mfu = tm->mfu > 0 ? tm->mfu : tm->d->mfu[tm->prec_ix];
    char *why = g_strdup(tm->mfu > 0
                             ? "the model FLOPs utilization [model] mfu sets"
                             : tm->d->mfu_source[tm->prec_ix]);
    if (!(mfu > 0)) {
      GString *which = g_string_new(NULL);
      double sum = 0;
      int count = 0;
      for (guint j = 0; j < tm->devs->len; j++) {
        const struct device *y = &g_array_index(tm->devs, struct device, j);
        if (y->mfu[tm->prec_ix] > 0) {
          sum += y->mfu[tm->prec_ix];
          g_string_append_printf(which, "%s%s", count++ ? ", " : "", y->name);
        }
      }
      if (count) {
        mfu = sum / count;
        g_free(why);
        why = g_strdup_printf("none measured on %s: the mean of %s at %s",
                              tm->d->name, which->str, tm->prec);
      }
      g_string_free(which, TRUE);
    }
    if (mfu > 0) {
      *t = flops * tm->batch / (tm->peak * mfu);
      m->timing_source = g_strdup_printf(
          "%.4g GFLOPs per sample of %" G_GUINT64_FORMAT
          " tokens (forward, backward twice) at %.3g of %s's %s peak of "
          "%.4g TFLOPS (model FLOPs utilization: %s)",
          flops / 1e9, m->tokens, mfu, tm->d->name, tm->prec, tm->peak / 1e12,
          why);
      g_free(why);
      return 0;
    }
    g_free(why);
    /* No transformer measured at that precision anywhere: the CNNs'. */
  }
  for (int pass = 0; pass < 2 && *t == 0; pass++) {
    double eff = 0;
    int count;
    GString *which = g_string_new(NULL);
    int rc = mean_efficiency(tm, pass == 1, &eff, &count, which, err, errlen);
    if (rc) {
      g_string_free(which, TRUE);
      return rc;
    }
    if (count) {
      *t = flops * tm->batch / (tm->peak * eff);
      m->timing_source = g_strdup_printf(
          "%.3g GFLOPs per sample at %.3g of %s's %s peak (the mean "
          "efficiency of %s)",
          flops / 1e9, eff, tm->d->name, tm->prec, which->str);
    }
    g_string_free(which, TRUE);
  }
  if (*t == 0)
    return fail(err, errlen, -EINVAL,
                "devices.conf has no measurement at precision %s to "
                "calibrate device %s",
                tm->prec, tm->d->name);
  return 0;
}

/* T seconds of forward + backward, FLOPS per sample, over M's layers in
 * proportion to their FLOPs (backward twice forward), and each layer's
 * backward over its tensors in proportion to their elements. */
static void spread_time(struct model *m, double t, double flops) {
  double scale = t / flops;
  m->forward_s = 0;
  m->backward_s = 0;
  for (size_t i = 0; i < m->nlayers; i++) {
    struct model_layer *l = &m->layers[i];
    l->forward_s = scale * l->flops;
    l->backward_s = i >= m->backward_from ? 2 * scale * l->flops : 0;
    m->forward_s += l->forward_s;
    m->backward_s += l->backward_s;
  }
  uint64_t *layer_elems = g_new0(uint64_t, m->nlayers);
  for (size_t i = 0; i < m->ntensors; i++)
    layer_elems[m->tensors[i].layer] += m->tensors[i].elements;
  for (size_t i = 0; i < m->ntensors; i++) {
    struct model_tensor *tn = &m->tensors[i];
    tn->backward_s = m->layers[tn->layer].backward_s *
                     (double)tn->elements / (double)layer_elems[tn->layer];
  }
  g_free(layer_elems);
}

/* Time M on device DEV at precision PREC and per-worker batch BATCH. */
/* Attention's FLOPs at S tokens: 4 s^2 d, or with a sliding window W
 * (Mistral's) 4 s min(s, W) d: each query sees at most W keys. */
static double attn_flops(const struct model_layer *l, double s) {
  double keys = l->attn_window > 0 ? fmin(s, l->attn_window) : s;
  return 4 * s * keys * l->attn_d;
}

/* A token model at TOKENS per sample (0: the file's): its layers' FLOPs
 * rescaled from the file's length s0, the products linearly, attention's
 * 4 s^2 d quadratically (within its window linearly). */
static void set_tokens(struct model *m, uint64_t tokens) {
  if (!m->file_tokens)
    return;
  m->tokens = tokens ? tokens : m->file_tokens;
  double s0 = (double)m->file_tokens, s = (double)m->tokens;
  for (size_t i = 0; i < m->nlayers; i++) {
    struct model_layer *l = &m->layers[i];
    double attn = attn_flops(l, s0);
    double lin = l->flops > attn ? l->flops - attn : 0;
    l->flops = lin * (s / s0) + attn_flops(l, s);
  }
}

static int time_model(struct model *m, const char *dir, const GArray *devs,
                      const char *dev, const char *prec, int batch,
                      double mfu, char *err, size_t errlen) {
  struct timing tm = {.dir = dir, .devs = devs, .prec = prec, .batch = batch,
                      .mfu = mfu};
  int rc = find_device(devs, dev, &tm.d, err, errlen);
  if (rc)
    return rc;
  tm.prec_ix = precision_index(prec);
  char names[64];
  if (tm.prec_ix < 0)
    return fail(err, errlen, -EINVAL, "unknown precision '%s' (valid: %s)",
                prec, model_precision_names(names, sizeof names));
  tm.peak = tm.d->peak[tm.prec_ix];
  if (!(tm.d->memory > 0))
    return fail(err, errlen, -EINVAL,
                "device %s has no memory bandwidth in devices.conf", dev);
  if (!(tm.peak > 0)) {
    GString *has = g_string_new(NULL);
    for (int i = 0; i < NPREC; i++)
      if (tm.d->peak[i] > 0)
        g_string_append_printf(has, "%s%s", has->len ? ", " : "",
                               PRECISIONS[i].name);
    int rc2 = fail(err, errlen, -EINVAL,
                   "device %s has no %s peak in devices.conf (it lists %s)",
                   dev, prec, has->str);
    g_string_free(has, TRUE);
    return rc2;
  }
  double flops = model_flops(m);
  if (!(flops > 0))
    return fail(err, errlen, -EINVAL, "%s: the model has no FLOPs", m->path);
  double t;
  rc = compute_time(m, &tm, flops, &t, err, errlen);
  if (rc)
    return rc;
  spread_time(m, t, flops);
  m->update_s = MODEL_UPDATE_BYTES * (double)m->params / tm.d->memory;
  m->memory_Bps = tm.d->memory;
  m->capacity = tm.d->capacity;
  m->fp32_flops = tm.d->peak[precision_index("fp32")];
  m->batch = batch;
  m->device = g_strdup(dev);
  m->precision = g_strdup(prec);
  return 0;
}

/* Parse the LEN bytes at DATA, model file PATH. */
static int read_model_data(const char *path, const char *data, size_t len,
                           struct model **out, struct expect *ex, char *err,
                           size_t errlen) {
  *out = NULL;
  /* The parser reads a C string: a NUL byte would end the file early. */
  if (memchr(data, '\0', len))
    return fail(err, errlen, -EINVAL, "%s: holds a NUL byte (not a text file)",
                path);
  char *text = g_strndup(data, len);
  struct model *m = g_new0(struct model, 1);
  m->path = g_strdup(path);
  int rc = parse_model_file(path, text, m, ex, err, errlen);
  g_free(text);
  if (rc) {
    model_free(m);
    return rc;
  }
  for (size_t i = 0; i < m->ntensors; i++)
    m->params += m->tensors[i].elements;
  if (!m->dataset)
    m->dataset = g_strdup("");
  if (!m->family)
    m->family = g_strdup("");
  *out = m;
  return 0;
}

static int read_model(const char *path, struct model **out,
                      struct expect *ex, char *err, size_t errlen) {
  *out = NULL;
  char *text;
  gsize len;
  GError *ge = NULL;
  if (!g_file_get_contents(path, &text, &len, &ge)) {
    int rc = fail(err, errlen, -ENOENT, "%s", ge->message);
    g_error_free(ge);
    return rc;
  }
  int rc = read_model_data(path, text, len, out, ex, err, errlen);
  g_free(text);
  return rc;
}

/* Check model file PATH's expect lines and time it. Frees M on error. */
static int check_and_time(const char *path, struct model *m,
                          const struct expect *ex,
                          const struct model_opts *opts, char *err,
                          size_t errlen) {
  int rc = 0;
  if (ex->params_set &&
      fabs((double)m->params - ex->params) > ex->tol * ex->params)
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: the tensors hold %" G_GUINT64_FORMAT
              " parameters, not %.6g within %.3g%%",
              path, ex->params_line, m->params, ex->params, 100 * ex->tol);
  if (!rc && ex->tensors_set && m->ntensors != ex->tensors)
    rc = fail(err, errlen, -EINVAL,
              "%s:%zu: %zu tensors listed, the file expects %" G_GUINT64_FORMAT,
              path, ex->tensors_line, m->ntensors, ex->tensors);
  const char *dir = model_dir(opts);
  GArray *devs = NULL;
  if (!rc)
    rc = load_devices(dir, &devs, err, errlen);
  if (!rc) {
    int batch = opts && opts->batch > 0 ? opts->batch : m->file_batch;
    const char *dev = opts && opts->device ? opts->device : "P100";
    const char *prec = opts && opts->precision ? opts->precision : "fp32";
    set_tokens(m, opts ? opts->tokens : 0);
    rc = time_model(m, dir, devs, dev, prec, batch, opts ? opts->mfu : 0, err,
                    errlen);
  }
  if (devs)
    g_array_free(devs, TRUE);
  if (rc)
    model_free(m);
  return rc;
}

int model_load_data(const char *path, const char *data, size_t len,
                    const struct model_opts *opts, struct model **out,
                    char *err, size_t errlen) {
  struct model *m;
  struct expect ex = {0};
  int rc = read_model_data(path, data, len, &m, &ex, err, errlen);
  if (!rc)
    rc = check_and_time(path, m, &ex, opts, err, errlen);
  *out = rc ? NULL : m;
  return rc;
}

int model_load(const char *name, const struct model_opts *opts,
               struct model **out, char *err, size_t errlen) {
  *out = NULL;
  const char *dir = model_dir(opts);
  char *path;
  if (is_path(name)) {
    path = g_strdup(name);
  } else {
    for (const char *c = name; *c; c++)
      if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_') {
        char *list = model_list(opts);
        int rc = fail(err, errlen, -EINVAL,
                      "unknown model '%s' (valid: %s, or a path to a .model "
                      "file)",
                      name, list);
        g_free(list);
        return rc;
      }
    char *file = g_strconcat(name, ".model", NULL);
    path = g_build_filename(dir, file, NULL);
    g_free(file);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
      char *list = model_list(opts);
      int rc = fail(err, errlen, -ENOENT,
                    "unknown model '%s' (valid: %s, or a path to a .model "
                    "file; models are read from %s)",
                    name, list, dir);
      g_free(list);
      g_free(path);
      return rc;
    }
  }
  struct model *m = NULL;
  struct expect ex = {0};
  int rc = read_model(path, &m, &ex, err, errlen);
  if (!rc)
    rc = check_and_time(path, m, &ex, opts, err, errlen);
  g_free(path);
  *out = rc ? NULL : m;
  return rc;
}

int model_synthetic_shape(struct model *m, const uint64_t *dims, size_t ndims,
                          char *err, size_t errlen) {
  uint64_t prod = 1;
  for (size_t i = 0; i < ndims; i++)
    prod *= dims[i];
  for (size_t i = 0; i < m->ntensors; i++)
    if (m->tensors[i].elements != prod || ndims == 0 ||
        ndims > MODEL_MAX_DIMS)
      return fail(err, errlen, -EINVAL,
                  "synthetic model: a shape of %" G_GUINT64_FORMAT
                  " values does not fit its tensors of %" G_GUINT64_FORMAT
                  " values each (params = tensors x the shape's product)",
                  prod, m->tensors[i].elements);
  for (size_t i = 0; i < m->ntensors; i++) {
    m->tensors[i].ndims = ndims;
    memcpy(m->tensors[i].dims, dims, ndims * sizeof *dims);
  }
  return 0;
}

int model_synthetic(uint64_t params, size_t tensors, double compute_s,
                    double update_s, struct model **out, char *err,
                    size_t errlen) {
  *out = NULL;
  if (params == 0 || tensors == 0 || tensors > params)
    return fail(err, errlen, -EINVAL,
                "synthetic model: params (%" G_GUINT64_FORMAT
                ") and tensors (%zu) must be >= 1, tensors <= params",
                params, tensors);
  if (!(compute_s >= 0) || !(update_s >= 0) || !isfinite(compute_s) ||
      !isfinite(update_s))
    return fail(err, errlen, -EINVAL,
                "synthetic model: compute and update must be seconds >= 0");
  struct model *m = g_new0(struct model, 1);
  m->name = g_strdup("synthetic");
  m->path = g_strdup("");
  m->dataset = g_strdup("");
  m->nlayers = m->ntensors = tensors;
  m->layers = g_new0(struct model_layer, tensors);
  m->tensors = g_new0(struct model_tensor, tensors);
  uint64_t each = params / tensors;
  for (size_t i = 0; i < tensors; i++) {
    m->layers[i].name = g_strdup_printf("layer%zu", i + 1);
    m->layers[i].forward_s = compute_s / 3 / (double)tensors;
    m->layers[i].backward_s = 2 * compute_s / 3 / (double)tensors;
  }
  for (size_t i = 0; i < tensors; i++) {
    /* Backward order: the last layer's tensor first. */
    struct model_tensor *t = &m->tensors[i];
    t->layer = tensors - 1 - i;
    t->name = g_strdup_printf("tensor%zu", t->layer + 1);
    t->elements = each + (t->layer == tensors - 1 ? params % tensors : 0);
    t->backward_s = m->layers[t->layer].backward_s;
  }
  m->params = params;
  m->forward_s = compute_s / 3;
  m->backward_s = 2 * compute_s / 3;
  m->update_s = update_s;
  m->file_batch = m->batch = 1;
  m->device = g_strdup("synthetic");
  m->precision = g_strdup("fp32");
  m->timing_source = g_strdup("given: compute and update seconds");
  *out = m;
  return 0;
}

int model_device_info(const char *name, const struct model_opts *opts,
                      struct device_info *out, char *err, size_t errlen) {
  GArray *devs;
  int rc = load_devices(model_dir(opts), &devs, err, errlen);
  if (rc)
    return rc;
  const struct device *d;
  rc = find_device(devs, name ? name : "", &d, err, errlen);
  if (!rc)
    *out = (struct device_info){.memory_Bps = d->memory,
                                .fp32_flops = d->peak[precision_index("fp32")],
                                .launch_s = d->launch,
                                .cc = d->cc,
                                .nvlink_Bps = d->nvlink,
                                .capacity = d->capacity};
  g_array_free(devs, TRUE);
  return rc;
}

char *model_unit_key(const char *name, bool per_layer) {
  if (per_layer)
    return g_strdup(name);
  const char *part = name;
  for (;;) {
    const char *dot = strchr(part, '.');
    size_t len = dot ? (size_t)(dot - part) : strlen(part);
    bool digits = len > 0;
    for (size_t i = 0; i < len; i++)
      digits = digits && g_ascii_isdigit(part[i]);
    if (digits)
      return g_strndup(name, (size_t)(part - name) + len);
    if (!dot)
      return g_strdup(name);
    part = dot + 1;
  }
}

struct model_unit *model_units(const struct model *m, bool per_layer,
                               size_t *count) {
  GArray *us = g_array_new(FALSE, FALSE, sizeof(struct model_unit));
  char *prev = NULL;
  for (size_t t = 0; t < m->ntensors; t++) {
    char *k = model_unit_key(m->layers[m->tensors[t].layer].name, per_layer);
    if (!prev || strcmp(k, prev) != 0) {
      struct model_unit u = {t, 0, 0};
      g_array_append_val(us, u);
    }
    struct model_unit *cur = &g_array_index(us, struct model_unit, us->len - 1);
    cur->count++;
    cur->n += m->tensors[t].elements;
    g_free(prev);
    prev = k;
  }
  g_free(prev);
  *count = us->len;
  return (struct model_unit *)(void *)g_array_free(us, FALSE);
}

uint64_t model_largest_unit(const struct model *m, bool per_layer) {
  size_t n;
  struct model_unit *u = model_units(m, per_layer, &n);
  uint64_t best = 0;
  for (size_t i = 0; i < n; i++)
    best = u[i].n > best ? u[i].n : best;
  g_free(u);
  return best;
}
