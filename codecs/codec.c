/* codecs/codec.c: spec parsing, stream state and the encode/decode entry
 * points shared by every codec. */
#include "codec_impl.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
/* Payloads are little-endian and the hot loops copy host floats into them
 * directly; a big-endian port needs byte swaps in those loops. */
#error "gradsim codecs assume a little-endian host"
#endif

/* Provided by registry.c. */
const struct codec_ops *codec_registry_find(const char *name, size_t len);
void codec_registry_names(char *buf, size_t len);

void codec_errf(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int codec_unknown_key(const char *codec, const char *key, const char *valid,
                      char *err, size_t errlen) {
  if (*valid)
    codec_errf(err, errlen, "codec %s: unknown parameter '%s' (valid: %s)",
               codec, key, valid);
  else
    codec_errf(err, errlen, "codec %s: unknown parameter '%s' (%s takes none)",
               codec, key, codec);
  return -EINVAL;
}

void codec_fmt_double(char *buf, size_t len, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      return;
  }
}

int codec_parse_int(const char *codec, const char *key, const char *value,
                    long lo, long hi, long *out, char *err, size_t errlen) {
  char *end;
  errno = 0;
  long v = strtol(value, &end, 10);
  if (*value == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    codec_errf(err, errlen,
               "codec %s: %s=%s is not valid, expected an integer in "
               "[%ld, %ld]",
               codec, key, value, lo, hi);
    return -EINVAL;
  }
  *out = v;
  return 0;
}

int codec_parse_double(const char *codec, const char *key, const char *value,
                       double lo, double hi, bool hi_open, double *out,
                       char *err, size_t errlen) {
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  bool ok = *value != '\0' && *end == '\0' && errno != ERANGE && isfinite(v) &&
            v >= lo && (hi_open ? v < hi : v <= hi);
  if (!ok) {
    codec_errf(err, errlen,
               "codec %s: %s=%s is not valid, expected a number "
               "in [%g, %g%c",
               codec, key, value, lo, hi, hi_open ? ')' : ']');
    return -EINVAL;
  }
  *out = v;
  return 0;
}

/* Apply the parameter list LIST ("key=value,...", after the colon of
 * SPEC) to C through its configure(): empty fields and repeated keys are
 * typos and rejected. Returns 0 or -EINVAL with a message. */
static int configure_params(codec_t *c, const char *spec, const char *list,
                            char *err, size_t errlen) {
  const struct codec_ops *ops = c->ops;
  size_t listlen = strlen(list);
  char buf[CODEC_SPEC_MAX];
  memcpy(buf, list, listlen + 1);
  /* Empty fields ("a=1,,b=2", a trailing comma) are typos: reject them. */
  if (listlen == 0 || list[0] == ',' || list[listlen - 1] == ',' ||
      strstr(list, ",,")) {
    codec_errf(err, errlen, "codec %s: empty parameter in '%s'", ops->info.name,
               spec);
    return -EINVAL;
  }
  /* Keys may not repeat: "eb=-10,eb=-6" is a typo, not an override. */
  char seen[8][32];
  size_t nseen = 0;
  /* Split on ',' by hand: strtok_r is POSIX, not C11. */
  for (char *next = buf; next;) {
    char *kv = next;
    char *comma = strchr(kv, ',');
    if (comma)
      *comma = '\0';
    next = comma ? comma + 1 : NULL;
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv || eq[1] == '\0') {
      codec_errf(err, errlen,
                 "codec %s: parameter '%s' is not of the form key=value",
                 ops->info.name, kv);
      return -EINVAL;
    }
    *eq = '\0';
    for (size_t i = 0; i < nseen; i++)
      if (strcmp(seen[i], kv) == 0) {
        codec_errf(err, errlen, "codec %s: parameter '%s' given twice",
                   ops->info.name, kv);
        return -EINVAL;
      }
    if (nseen < 8 && strlen(kv) < sizeof seen[0])
      strcpy(seen[nseen++], kv);
    int rc = ops->configure(c, kv, eq + 1, err, errlen);
    if (rc)
      return rc;
  }
  return 0;
}

int codec_create(const char *spec, codec_t **out, char *err, size_t errlen) {
  if (!spec || !out) {
    codec_errf(err, errlen, "codec: no spec given");
    return -EINVAL;
  }
  *out = NULL;
  size_t speclen = strlen(spec);
  if (speclen == 0 || speclen >= CODEC_SPEC_MAX) {
    codec_errf(err, errlen, "codec spec '%.40s%s' must be 1 to %d characters",
               spec, speclen > 40 ? "..." : "", CODEC_SPEC_MAX - 1);
    return -EINVAL;
  }
  const char *colon = strchr(spec, ':');
  size_t namelen = colon ? (size_t)(colon - spec) : speclen;
  const struct codec_ops *ops = codec_registry_find(spec, namelen);
  if (!ops) {
    char names[512];
    codec_registry_names(names, sizeof names);
    codec_errf(err, errlen, "unknown codec '%.*s' (valid: %s)", (int)namelen,
               spec, names);
    return -EINVAL;
  }
  codec_t *c = calloc(1, sizeof *c);
  if (!c) {
    codec_errf(err, errlen, "codec %s: out of memory", ops->info.name);
    return -ENOMEM;
  }
  c->ops = ops;
  const char *portable = getenv("GRADSIM_CODEC_PORTABLE");
  c->portable = portable && *portable;
  ops->init(c);
  int rc = colon ? configure_params(c, spec, colon + 1, err, errlen) : 0;
  if (!rc && ops->finish)
    rc = ops->finish(c, err, errlen);
  if (rc) {
    free(c);
    return rc;
  }
  char params[CODEC_SPEC_MAX - 32];
  params[0] = '\0';
  ops->describe(c, params, sizeof params);
  snprintf(c->spec, sizeof c->spec, "%s%s%s", ops->info.name,
           params[0] ? ":" : "", params);
  *out = c;
  return 0;
}

void codec_free(codec_t *c) { free(c); }

bool codec_use_avx2(const codec_t *c) {
#if CODEC_X86
  /* The kernels also use F16C; every x86 processor with AVX2 has it (both
   * belong to the x86-64-v3 level), and clang 14 cannot ask for it with
   * this builtin. */
  return !c->portable && __builtin_cpu_supports("avx2");
#else
  (void)c;
  return false;
#endif
}

const char *codec_name(const codec_t *c) { return c->ops->info.name; }
const char *codec_spec(const codec_t *c) { return c->spec; }
bool codec_is_lossless(const codec_t *c) { return c->ops->lossless; }
bool codec_is_stateful(const codec_t *c) { return c->ops->has_residual; }

bool codec_size_is_fixed(const codec_t *c) {
  return c->ops->size_fixed ? c->ops->size_fixed(c) : !c->ops->size_varies;
}

bool codec_is_sparse(const codec_t *c) { return c->ops->sparse; }

bool codec_sums(const codec_t *c) { return c->ops->sum_bytes > 0; }

unsigned codec_value_bytes(const codec_t *c) { return c->ops->sum_bytes; }

unsigned codec_encode_passes(const codec_t *c) {
  return c->ops->encode_passes_of ? c->ops->encode_passes_of(c)
                                  : c->ops->encode_passes;
}

bool codec_cost_family(const codec_t *c, char *buf, size_t len) {
  if (len)
    buf[0] = '\0';
  if (c->ops->cost_family && len)
    c->ops->cost_family(c, buf, len);
  return len && buf[0];
}

void codec_error_bounds(const codec_t *c, const float *in, const float *rb,
                        const float *ra, size_t n, double *out) {
  if (c->ops->error_bounds) {
    c->ops->error_bounds(c, in, c->ops->has_residual ? rb : NULL,
                         c->ops->has_residual ? ra : NULL, n, out);
    return;
  }
  /* Only lossless codecs may leave it out (the registry test checks). */
  for (size_t i = 0; i < n; i++)
    out[i] = c->ops->lossless ? 0.0 : INFINITY;
}

size_t codec_class_count(const codec_t *c) { return c->ops->nclasses; }

unsigned codec_class_bits(const codec_t *c, size_t k) {
  return k < c->ops->nclasses ? c->ops->class_bits[k] : 0;
}

int codec_classes(const codec_t *c, const void *payload, size_t len,
                  size_t n, uint8_t *cls, uint64_t *counts) {
  if (!c || !c->ops->classes || (!payload && len))
    return -EINVAL;
  if (!codec_accepts(c, n))
    return -EOVERFLOW;
  return c->ops->classes(c, payload, len, n, cls, counts);
}

ptrdiff_t codec_payload_values(const codec_t *c, const void *payload,
                               size_t len, size_t n) {
  if (!c || (!payload && len))
    return -EINVAL;
  if (!c->ops->payload_values)
    return (ptrdiff_t)n;
  return c->ops->payload_values(c, payload, len, n);
}

const char *codec_kernels(const codec_t *c) {
  return codec_use_avx2(c) ? "avx2" : "portable";
}

bool codec_accepts(const codec_t *c, size_t n) {
  /* Every payload fits in 8 bytes per value plus a few words of header;
   * beyond that the size_t arithmetic inside bound() could wrap. */
  return (!c->ops->max_n || n <= c->ops->max_n) && n <= (SIZE_MAX - 64) / 8;
}

size_t codec_bound(const codec_t *c, size_t n) {
  return codec_accepts(c, n) ? c->ops->bound(c, n) : 0;
}

static void *aligned_alloc64(size_t bytes) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, rounded ? rounded : 64);
}

int codec_state_create(const codec_t *c, size_t n, uint64_t seed,
                       codec_state_t **out) {
  if (!c || !out)
    return -EINVAL;
  *out = NULL;
  if (!codec_accepts(c, n))
    return -EOVERFLOW;
  codec_state_t *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->codec = c;
  s->n = n;
  s->seed = seed;
  if (c->ops->has_residual) {
    s->residual = aligned_alloc64(n * sizeof(float));
    if (!s->residual) {
      free(s);
      return -ENOMEM;
    }
  }
  codec_state_reset(s);
  *out = s;
  return 0;
}

void codec_state_reset(codec_state_t *s) {
  s->step = 0;
  if (s->residual)
    memset(s->residual, 0, s->n * sizeof(float));
  memset(s->priv, 0, sizeof s->priv);
  if (s->codec->ops->state_init)
    s->codec->ops->state_init(s);
}

void codec_state_free(codec_state_t *s) {
  if (!s)
    return;
  if (s->codec->ops->state_free)
    s->codec->ops->state_free(s);
  free(s->shapes);
  free(s->residual);
  free(s->scratch);
  free(s->spare_out);
  free(s->spare_residual);
  free(s);
}

const codec_t *codec_state_codec(const codec_state_t *s) { return s->codec; }
uint64_t codec_state_step(const codec_state_t *s) { return s->step; }
const float *codec_state_residual(const codec_state_t *s) {
  return s->residual;
}

void *codec_scratch(codec_state_t *s, size_t bytes) {
  if (bytes <= s->scratch_cap)
    return s->scratch;
  /* Grow by half again at least: sizes that creep up from step to step
   * (candidate lists) would otherwise fault in fresh pages every time. */
  size_t want = s->scratch_cap + s->scratch_cap / 2;
  want = bytes > want ? bytes : want;
  free(s->scratch);
  s->scratch = aligned_alloc64(want);
  s->scratch_cap = s->scratch ? want : 0;
  return s->scratch;
}

int codec_state_set_shapes(codec_state_t *s, const struct codec_shape *shapes,
                           size_t k) {
  if (!s || (!shapes && k) || k > CODEC_SHAPES_MAX)
    return -EINVAL;
  uint64_t total = 0;
  for (size_t i = 0; i < k; i++) {
    uint64_t r = shapes[i].rows, c = shapes[i].cols;
    if (r == 0 || c == 0 || r > UINT64_MAX / c || r * c > s->n - total)
      return -EINVAL;
    total += r * c;
  }
  if (total != s->n)
    return -EINVAL;
  struct codec_shape *copy = NULL;
  if (k && !(copy = malloc(k * sizeof *copy)))
    return -ENOMEM;
  if (k)
    memcpy(copy, shapes, k * sizeof *copy);
  /* The codec's own buffers depend on the shapes: drop them, and let
   * state_init set them up again. */
  if (s->codec->ops->state_free)
    s->codec->ops->state_free(s);
  free(s->shapes);
  s->shapes = copy;
  s->nshapes = k;
  codec_state_reset(s);
  return 0;
}

bool codec_is_linear(const codec_t *c) { return c->ops->lin != NULL; }

uint64_t codec_lin_len(const codec_t *c, const struct codec_shape *shapes,
                       size_t k, int round) {
  return c->ops->lin ? c->ops->lin->len(c, shapes, k, round) : 0;
}

int codec_lin_round(codec_state_t *s, int round, const float *in,
                    float *out) {
  if (!s || !s->codec->ops->lin || (round != 0 && round != 1) ||
      (!in && s->n))
    return -EINVAL;
  return s->codec->ops->lin->round(s, round, in, out);
}

int codec_lin_finish(codec_state_t *s, const float *sum, float *out) {
  if (!s || !s->codec->ops->lin || (!out && s->n))
    return -EINVAL;
  return s->codec->ops->lin->finish(s, sum, out);
}

size_t codec_lin_acc_len(const codec_state_t *s) {
  return s->codec->ops->lin ? s->codec->ops->lin->acc_len(s) : 0;
}

void codec_lin_acc_init(const codec_state_t *s, double *acc) {
  if (s->codec->ops->lin)
    s->codec->ops->lin->acc_init(s, acc);
}

void codec_lin_acc_add(const codec_state_t *s, double *acc) {
  if (s->codec->ops->lin)
    s->codec->ops->lin->acc_add(s, acc);
}

void codec_lin_bounds(const codec_state_t *s, const double *acc, size_t p,
                      double *out) {
  if (s->codec->ops->lin)
    s->codec->ops->lin->bounds(s, acc, p, out);
}

ptrdiff_t codec_encode(codec_state_t *s, const float *in, size_t n, void *out,
                       size_t cap) {
  if (!s || (!in && n) || (!out && cap) || n != s->n)
    return -EINVAL;
  /* An empty vector may come as null pointers (IN with N = 0, OUT with
   * CAP = 0). The codecs compute addresses from them (in + done), which C
   * leaves undefined on a null pointer even for an offset of 0 (clang's
   * UBSan reports it): they get a local's address instead, which nothing
   * reads or writes. */
  const float no_in = 0;
  unsigned char no_out = 0;
  if (!in)
    in = &no_in;
  if (!out)
    out = &no_out;
  const struct codec_ops *ops = s->codec->ops;
  size_t bound = ops->bound(s->codec, n);
  /* A payload whose size the stream knows before encoding (PowerSGD's,
   * from its shapes): below it nothing fits and the state (its factors
   * too, which the spare path below would not restore) is not touched,
   * the input's own error first; at or above it the codec writes exactly
   * that much. */
  ptrdiff_t known = ops->payload_size ? ops->payload_size(s) : -1;
  if (known >= 0 && cap < (size_t)known)
    return ops->finite_only && kern_absmax_bits(in, n) >= 0x7f800000u
               ? -EDOM
               : -ENOSPC;
  if (known >= 0 && cap < bound) {
    ptrdiff_t r = ops->encode(s, in, out);
    if (r >= 0)
      s->step++;
    return r;
  }
  if (cap >= bound) {
    ptrdiff_t r = ops->encode(s, in, out);
    if (r >= 0)
      s->step++;
    return r;
  }
  /* Below the bound the payload may or may not fit: encode into a spare
   * buffer with the state saved, and keep the result only if it fits. */
  if (!s->spare_out && !(s->spare_out = aligned_alloc64(bound)))
    return -ENOMEM;
  if (s->residual && !s->spare_residual &&
      !(s->spare_residual = aligned_alloc64(n * sizeof(float))))
    return -ENOMEM;
  unsigned char priv[CODEC_PRIV_MAX];
  memcpy(priv, s->priv, sizeof priv);
  if (s->residual)
    memcpy(s->spare_residual, s->residual, n * sizeof(float));
  ptrdiff_t r = ops->encode(s, in, s->spare_out);
  if (r >= 0 && (size_t)r > cap) {
    memcpy(s->priv, priv, sizeof priv);
    if (s->residual)
      memcpy(s->residual, s->spare_residual, n * sizeof(float));
    return -ENOSPC;
  }
  if (r >= 0) {
    memcpy(out, s->spare_out, (size_t)r);
    s->step++;
  }
  return r;
}

int codec_decode(const codec_t *c, const void *in, size_t len, float *out,
                 size_t n) {
  if (!c || (!in && len) || (!out && n))
    return -EINVAL;
  if (!codec_accepts(c, n))
    return -EOVERFLOW;
  /* Null pointers for empty buffers: as in codec_encode(). */
  const unsigned char no_in = 0;
  float no_out = 0;
  return c->ops->decode(c, in ? in : &no_in, len, out ? out : &no_out, n,
                        false);
}

int codec_decode_add(const codec_t *c, const void *in, size_t len, float *acc,
                     size_t n) {
  if (!c || (!in && len) || (!acc && n))
    return -EINVAL;
  if (!codec_accepts(c, n))
    return -EOVERFLOW;
  /* Null pointers for empty buffers: as in codec_encode(). */
  const unsigned char no_in = 0;
  float no_acc = 0;
  return c->ops->decode(c, in ? in : &no_in, len, acc ? acc : &no_acc, n,
                        true);
}

const char *codec_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
  case -EINVAL:
    return "invalid argument";
  case -ENOSPC:
    return "output buffer smaller than the payload";
  case -EDOM:
    return "input holds NaN or infinity, which this codec cannot encode";
  case -EBADMSG:
    return "malformed, truncated or oversized payload";
  case -ENOMEM:
    return "out of memory";
  case -EOVERFLOW:
    return "too many values for this codec";
  default:
    return "unknown codec error";
  }
}
