/* config/experiment.c: experiment files, sweeps and validation
 * (experiment.h). */
#include "experiment.h"

#include "codec.h"
#include "estimate.h"
#include "memory.h"
#include "model.h"
#include "presets.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- typed parsers ---------------------------------------------------- */

typedef int (*parse_fn)(struct point *p, const char *v, char *err,
                        size_t errlen);

static int bad(char *err, size_t errlen, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static int bad(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

static int int_in(const char *v, long lo, long hi, int *out, char *err,
                  size_t errlen) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (!*v || *end || errno || x < lo || x > hi)
    return bad(err, errlen, "must be a whole number in %ld..%ld", lo, hi);
  *out = (int)x;
  return 0;
}

static int num_in(const char *v, double lo, double hi, double *out,
                  char *err, size_t errlen) {
  char *end;
  double x = g_ascii_strtod(v, &end);
  if (!*v || *end || !isfinite(x) || x < lo || x > hi)
    return bad(err, errlen, "must be a number in [%g, %g]", lo, hi);
  *out = x;
  return 0;
}

/* A fraction in [0, 1): persist, zeros, server_momentum. */
static int fraction_below_one(const char *v, double *out, char *err,
                              size_t errlen) {
  if (num_in(v, 0, 1, out, err, errlen) != 0 || *out == 1)
    return bad(err, errlen, "must be a number in [0, 1)");
  return 0;
}

/* A number in (0, HI]: one message for whichever side V falls off. */
static int positive_in(const char *v, double hi, double *out, char *err,
                       size_t errlen) {
  if (num_in(v, 0, hi, out, err, errlen) != 0 || !(*out > 0))
    return bad(err, errlen, "must be a number in (0, %g]", hi);
  return 0;
}

static int boolean(const char *v, bool *out, char *err, size_t errlen) {
  if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
    *out = true;
  else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
    *out = false;
  else
    return bad(err, errlen, "must be true or false");
  return 0;
}

static int choice(const char *v, const char *const *names, int n, int *out,
                  char *err, size_t errlen) {
  *out = 0;
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) {
      *out = i;
      return 0;
    }
  GString *s = g_string_new(NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", names[i]);
  bad(err, errlen, "must be one of %s", s->str);
  g_string_free(s, TRUE);
  return -EINVAL;
}

/* A key of two values, OFF or ON, into *FLAG (choice's message). */
static int choice_flag(const char *v, const char *off, const char *on,
                       bool *flag, char *err, size_t errlen) {
  const char *const names[] = {off, on};
  int t;
  int rc = choice(v, names, 2, &t, err, errlen);
  *flag = t == 1;
  return rc;
}

/* Strict inputs (issue 38): a rate names its unit (a bare number would be
 * bytes per second, never what a user meant) and lies between 1 kbps and
 * 100 Tbps (from a slow serial line to beyond any link or memory bus
 * built); a size names its unit unless it is 0; a time is 0 or more, in
 * seconds when it names no unit (SimGrid's default). */
#define RATE_MIN_BPS 125.0   /* 1 kbps */
#define RATE_MAX_BPS 12.5e12 /* 100 Tbps */
#define RATE_WORDS                                                             \
  "a rate with its unit (bps or Bps after k, M, G, T or Ki, Mi, Gi, Ti), "     \
  "1kbps to 100Tbps"
#define RATE_ALLOWED RATE_WORDS " (e.g. 10Gbps, 1.25GBps)"
/* A size's units, as the messages name them (units_size). */
#define SIZE_UNITS "B after k, M, G, T, P or Ki, Mi, Gi, Ti, Pi"

static int rate(const char *v, double *out, char *err, size_t errlen) {
  char msg[256];
  double x;
  if (units_bandwidth(v, &x, msg, sizeof msg) != 0 || !units_named(v) ||
      x < RATE_MIN_BPS || x > RATE_MAX_BPS)
    return bad(err, errlen, "must be " RATE_ALLOWED);
  *out = x;
  return 0;
}

/* V: a rate into *OUT, or WORD, which stands for AS_WORD; anything else
 * "must be WORD or a rate ... (e.g. EXAMPLE)". */
static int rate_or(const char *v, const char *word, double as_word,
                   const char *example, double *out, char *err,
                   size_t errlen) {
  if (!strcmp(v, word)) {
    *out = as_word;
    return 0;
  }
  if (rate(v, out, err, errlen) != 0)
    return bad(err, errlen, "must be %s or " RATE_WORDS " (e.g. %s)", word,
               example);
  return 0;
}

static int seconds(const char *v, double *out, char *err, size_t errlen) {
  char msg[256];
  if (units_time(v, out, msg, sizeof msg) != 0)
    return bad(err, errlen, "must be a time of 0 or more: seconds, or a "
                            "number with a unit s, ms, us, ns (e.g. 5us, "
                            "1.5ms, 0)");
  return 0;
}

/* A size in bytes into *OUT: its unit named unless it is 0, at least LO
 * and at most HI; 0, or -EINVAL (the caller says what is allowed). */
static int size_in(const char *v, double lo, double hi, double *out) {
  char msg[256];
  double b;
  if (units_size(v, &b, msg, sizeof msg) != 0 || (b != 0 && !units_named(v)) ||
      !(b >= lo) || b > hi)
    return -EINVAL;
  *out = b;
  return 0;
}

/* One function per key. */
static int k_topology(struct point *p, const char *v, char *e, size_t l) {
  if (g_str_has_prefix(v, "file:")) {
    if (!v[5])
      return bad(e, l, "file: needs a path to a SimGrid platform XML");
    p->topology = TOPO_FILE;
    g_free(p->platform_file);
    p->platform_file = g_strdup(v + 5);
    return 0;
  }
  if (topology_find(v, &p->topology) != 0) {
    char *names = topology_names();
    bad(e, l, "must be one of %s, or file:PATH", names);
    g_free(names);
    return -EINVAL;
  }
  return 0;
}
static int k_nodes(struct point *p, const char *v, char *e, size_t l) {
  int rc = int_in(v, 1, 1 << 20, &p->nodes, e, l);
  char *end;
  double x = g_ascii_strtod(v, &end);
  if (rc && *v && !*end && x > (1 << 20) && x == floor(x)) {
    char *mem = units_bytes_text(x * ESTIMATE_HOST_BYTES);
    rc = bad(e, l, "must be a whole number in 1..%d: %.0f workers would "
                   "need at least %s of memory (%.0f KB each)",
             1 << 20, x, mem, ESTIMATE_HOST_BYTES / 1e3);
    g_free(mem);
  }
  return rc;
}
static int k_aggregators(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 0, 1 << 16, &p->aggregators, e, l);
}
static int k_bandwidth(struct point *p, const char *v, char *e, size_t l) {
  return rate(v, &p->bandwidth_Bps, e, l);
}
static int k_latency(struct point *p, const char *v, char *e, size_t l) {
  return seconds(v, &p->latency_s, e, l);
}
static int k_ideal(struct point *p, const char *v, char *e, size_t l) {
  return boolean(v, &p->ideal, e, l);
}
/* timing_precision: SimGrid's surf/precision, from 1e-15 s (far
 * below any latency or summation modelled) to a microsecond. */
static int k_timing(struct point *p, const char *v, char *e, size_t l) {
  if (seconds(v, &p->timing_precision_s, e, l) != 0)
    return -EINVAL;
  if (!(p->timing_precision_s >= 1e-15 && p->timing_precision_s <= 1e-6))
    return bad(e, l, "must be from 1e-15 (seconds) to 1us: events closer in "
                     "time than it are taken together");
  return 0;
}
static int k_gpus(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1024, &p->gpus_per_node, e, l);
}
static int k_gpus_switch(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1024, &p->gpus_per_switch, e, l);
}
static int k_pcie_bw(struct point *p, const char *v, char *e, size_t l) {
  return rate(v, &p->pcie_Bps, e, l);
}
static int k_pcie_lat(struct point *p, const char *v, char *e, size_t l) {
  return seconds(v, &p->pcie_latency_s, e, l);
}
static int k_nics(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1024, &p->nics_per_node, e, l);
}
static int k_nvlink_bw(struct point *p, const char *v, char *e, size_t l) {
  return rate(v, &p->nvlink_Bps, e, l);
}
static int k_nvlink_lat(struct point *p, const char *v, char *e, size_t l) {
  return seconds(v, &p->nvlink_latency_s, e, l);
}
static int k_nvls(struct point *p, const char *v, char *e, size_t l) {
  return boolean(v, &p->nvls, e, l);
}
/* In-network reduction (NCCL's CollNet on SHARP switches): the fabric's
 * switches sum (sim/platforms/nvswitch.c places them). */
static int k_sharp(struct point *p, const char *v, char *e, size_t l) {
  return boolean(v, &p->sharp, e, l);
}
static int k_fabric(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, fabric_names, FABRIC_COUNT, &t, e, l);
  p->fabric = (enum fabric)t;
  return rc;
}
/* preset: applied before the point is parsed (expand()); here only its
 * name is checked. */
static int k_preset(struct point *p, const char *v, char *e, size_t l) {
  (void)p;
  if (!strcmp(v, "none") || preset_find(v))
    return 0;
  char *names = preset_names();
  bad(e, l, "must be none or one of %s", names);
  g_free(names);
  return -EINVAL;
}
static int k_leaf(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 4096, &p->leaf, e, l);
}
static int k_oversub(struct point *p, const char *v, char *e, size_t l) {
  return num_in(v, 1, 1024, &p->oversubscription, e, l);
}
/* host_stack: "none", or the rate a host's sends and receives share. */
static int k_host_stack(struct point *p, const char *v, char *e, size_t l) {
  return rate_or(v, "none", 0, "10Gbps", &p->host_stack_Bps, e, l);
}
/* ingress_bandwidth: "same", or the rate a host receives at (its
 * `bandwidth` then shapes its egress only). */
static int k_ingress(struct point *p, const char *v, char *e, size_t l) {
  return rate_or(v, "same", 0, "1Gbps", &p->ingress_Bps, e, l);
}
static int k_dfly_group(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 4096, &p->group_size, e, l);
}
/* torus: "auto", or the hosts along each axis, XxY or XxYxZ. */
static int k_torus(struct point *p, const char *v, char *e, size_t l) {
  memset(p->torus_dims, 0, sizeof p->torus_dims);
  if (!strcmp(v, "auto"))
    return 0;
  char **parts = g_strsplit(v, "x", -1);
  guint n = g_strv_length(parts);
  int rc = n >= 1 && n <= 3 ? 0 : -1;
  for (guint i = 0; i < n && rc == 0; i++) {
    char *end;
    long x = strtol(parts[i], &end, 10);
    if (!*parts[i] || *end || x < 1 || x > 65536)
      rc = -1;
    else
      p->torus_dims[i] = (int)x;
  }
  g_strfreev(parts);
  if (rc)
    return bad(e, l, "must be auto or the hosts along each axis, e.g. 4x4 "
                     "or 8x4x2 (1 to 3 axes of 1..65536)");
  return 0;
}

/* One host name of a hostfile: no blanks, no SMPI "name:slots". */
static bool host_name_ok(const char *name) {
  for (const char *c = name; *c; c++)
    if (g_ascii_isspace(*c) || *c == ':' || *c == '"' || *c == '\'')
      return false;
  return *name != 0;
}

/* [platform] hosts = FILE: an SMPI-style hostfile, one host name a line
 * (blank lines and lines starting with # skipped). Worker i takes the
 * i-th name, aggregators the ones after the workers'. */
static int read_hostfile(struct point *p, const char *path, char *e,
                         size_t l) {
  char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return bad(e, l, "cannot read the hostfile");
  char **lines = g_strsplit(text, "\n", -1);
  g_free(text);
  GPtrArray *names = g_ptr_array_new();
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  int rc = 0;
  for (int i = 0; lines[i] && rc == 0; i++) {
    char *name = g_strstrip(lines[i]);
    if (!*name || *name == '#')
      continue;
    gpointer first;
    if (!host_name_ok(name))
      rc = bad(e, l, "line %d: '%s' is not a host name (one name a line, "
                     "no blanks and no name:slots)",
               i + 1, name);
    else if (g_hash_table_lookup_extended(seen, name, NULL, &first))
      rc = bad(e, l, "line %d: host '%s' is listed twice (first on line "
                     "%d): each host takes one worker or aggregator",
               i + 1, name, GPOINTER_TO_INT(first));
    else {
      g_hash_table_insert(seen, name, GINT_TO_POINTER(i + 1));
      g_ptr_array_add(names, g_strdup(name));
    }
  }
  if (rc == 0 && !names->len)
    rc = bad(e, l, "the hostfile names no host");
  g_ptr_array_add(names, NULL);
  char **v = (char **)g_ptr_array_free(names, FALSE);
  if (rc == 0)
    p->hosts = v;
  else
    g_strfreev(v);
  g_hash_table_destroy(seen);
  g_strfreev(lines);
  return rc;
}

static int k_hosts(struct point *p, const char *v, char *e, size_t l) {
  g_strfreev(p->hosts);
  p->hosts = NULL;
  g_free(p->hosts_file);
  p->hosts_file = g_strdup(v);
  if (!*v)
    return 0;
  if (!g_file_test(v, G_FILE_TEST_IS_REGULAR))
    return bad(e, l, "no such file (a hostfile: one host name a line)");
  return read_hostfile(p, v, e, l);
}

static int k_model(struct point *p, const char *v, char *e, size_t l) {
  if (!*v)
    return bad(e, l, "must name a model (see gradsim model list)");
  g_free(p->model);
  p->model = g_strdup(v);
  p->synthetic = strcmp(v, "synthetic") == 0;
  return 0;
}
static int k_params(struct point *p, const char *v, char *e, size_t l) {
  double x;
  char msg[256];
  if (units_size(v, &x, msg, sizeof msg) != 0 || x < 1 || x != floor(x))
    return bad(e, l, "must be a whole number of parameters in 1..1e13");
  if (x > 1e13) {
    char *mem = units_bytes_text(4 * x);
    int rc = bad(e, l, "must be a whole number of parameters in 1..1e13: "
                       "%g parameters are %s of float32 gradients per "
                       "worker",
                 x, mem);
    g_free(mem);
    return rc;
  }
  p->params = (uint64_t)x;
  return 0;
}
static int k_tensors(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1 << 20, &p->tensors, e, l);
}
static int k_shape(struct point *p, const char *v, char *e, size_t l) {
  if (!strcmp(v, "none")) {
    p->shape_dims = 0;
    return 0;
  }
  p->shape_dims = model_parse_shape(v, p->shape);
  if (!p->shape_dims)
    return bad(e, l,
               "must be none or a tensor shape such as 1024x4096 (1 to %d "
               "whole numbers >= 1 joined by x)",
               MODEL_MAX_DIMS);
  return 0;
}
static int k_compute(struct point *p, const char *v, char *e, size_t l) {
  return seconds(v, &p->compute_s, e, l);
}
static int k_update(struct point *p, const char *v, char *e, size_t l) {
  return seconds(v, &p->update_s, e, l);
}
static int k_compute_scale(struct point *p, const char *v, char *e,
                           size_t l) {
  return positive_in(v, 1000, &p->compute_scale, e, l);
}
static int k_update_rate(struct point *p, const char *v, char *e,
                         size_t l) {
  return rate_or(v, "device", 0, "2GBps", &p->update_Bps, e, l);
}
static int k_step_overhead(struct point *p, const char *v, char *e,
                           size_t l) {
  return seconds(v, &p->step_overhead_s, e, l);
}
static int k_device(struct point *p, const char *v, char *e, size_t l) {
  if (!*v)
    return bad(e, l, "must name a device of models/devices.conf");
  g_free(p->device);
  p->device = g_strdup(v);
  return 0;
}
/* precision: one the device table knows (models/model.c). */
static int k_precision(struct point *p, const char *v, char *e, size_t l) {
  char names[64];
  if (!model_precision_known(v))
    return bad(e, l, "must be one of %s",
               model_precision_names(names, sizeof names));
  g_free(p->precision);
  p->precision = g_strdup(v);
  return 0;
}
static int k_batch(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 0, 1000000, &p->batch, e, l);
}
static int k_micro_batch(struct point *p, const char *v, char *e,
                         size_t l) {
  return int_in(v, 0, 1000000, &p->micro_batch, e, l);
}
static int k_seq_len(struct point *p, const char *v, char *e, size_t l) {
  int x = 0;
  int rc = int_in(v, 0, 100000000, &x, e, l);
  if (!rc)
    p->seq_len = (uint64_t)x;
  return rc;
}
static int k_grad_dtype(struct point *p, const char *v, char *e, size_t l) {
  static const char *const names[] = {"fp32", "bf16", "fp16"};
  int t;
  int rc = choice(v, names, G_N_ELEMENTS(names), &t, e, l);
  if (!rc) {
    p->grad_dtype = names[t];
    p->grad_bytes = t == 0 ? 4 : 2;
  }
  return rc;
}
static int k_mfu(struct point *p, const char *v, char *e, size_t l) {
  if (!strcmp(v, "device")) {
    p->mfu = 0;
    return 0;
  }
  if (num_in(v, 0, 1, &p->mfu, e, l) != 0 || !(p->mfu > 0))
    return bad(e, l, "must be device or a fraction in (0, 1]");
  return 0;
}
static int k_algorithm(struct point *p, const char *v, char *e, size_t l) {
  (void)e;
  (void)l;
  g_free(p->algorithm);
  p->algorithm = g_strdup(v); /* checked against the registry later */
  return 0;
}
static int k_codec(struct point *p, const char *v, char *e, size_t l) {
  if (strcmp(v, "none") != 0) {
    codec_t *c;
    char msg[CODEC_ERR_MAX];
    if (codec_create(v, &c, msg, sizeof msg) != 0)
      return bad(e, l, "%s (or none)", msg);
    codec_free(c);
  }
  g_free(p->codec);
  p->codec = g_strdup(v);
  return 0;
}
static int k_placement(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, placement_names, PLACE_COUNT, &t, e, l);
  p->placement = (enum placement)t;
  return rc;
}
/* reduce_rate: a rate, or "fused": the sum streams with the transfer
 * (NCCL's kernels add what they receive as they copy it), no time of its
 * own. */
static int k_reduce(struct point *p, const char *v, char *e, size_t l) {
  return rate_or(v, "fused", INFINITY, "5GBps", &p->reduce_Bps, e, l);
}
/* staging: "none", or the rate of the copies to host memory and back. */
static int k_staging(struct point *p, const char *v, char *e, size_t l) {
  return rate_or(v, "none", 0, "12GBps", &p->staging_Bps, e, l);
}
static int k_payload(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, payload_names, PAYLOAD_COUNT, &t, e, l);
  p->payload = (enum payload)t;
  return rc;
}
static int k_sample(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 64, 1 << 26, &p->sample, e, l);
}
static int k_compress_min(struct point *p, const char *v, char *e,
                          size_t l) {
  return int_in(v, 0, 1 << 30, &p->compress_min, e, l);
}
static int k_pull(struct point *p, const char *v, char *e, size_t l) {
  return choice_flag(v, "tree", "direct", &p->pull_direct, e, l);
}
static int k_server_momentum(struct point *p, const char *v, char *e,
                             size_t l) {
  return fraction_below_one(v, &p->server_momentum, e, l);
}
static int k_warmup(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 0, 100000, &p->warmup_steps, e, l);
}
static int k_group(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 0, 1 << 16, &p->group, e, l);
}
static int k_chunk(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1 << 26, &p->chunk, e, l);
}
/* channels: "auto" (0) or a count. */
static int k_channels(struct point *p, const char *v, char *e, size_t l) {
  if (!strcmp(v, "auto")) {
    p->channels = 0;
    return 0;
  }
  if (int_in(v, 1, 64, &p->channels, e, l) != 0)
    return bad(e, l, "must be auto (one per NIC) or a whole number in 1..64 "
                     "(NCCL's MAXCHANNELS)");
  return 0;
}
static int k_nccl_algo(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, nccl_algo_names, NCCL_ALGO_COUNT + 1, &t, e, l);
  p->nccl_algo = (enum nccl_algo)t;
  return rc;
}
static int k_nccl_proto(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, nccl_proto_names, NCCL_PROTO_COUNT + 1, &t, e, l);
  p->nccl_proto = (enum nccl_proto)t;
  return rc;
}
static int k_nccl_version(struct point *p, const char *v, char *e,
                          size_t l) {
  for (int i = 0; i < NCCL_VERSION_COUNT; i++)
    if (!strcmp(v, nccl_version_names[i])) {
      p->nccl_version = (enum nccl_version)i;
      return 0;
    }
  return bad(e, l,
             "must be 2.30 (NCCL v2.30.7's tuner, for 2.28.9 and "
             "later), 2.28 (v2.28.7's, for 2.28.3 and 2.28.7), 2.26 "
             "(v2.26.2's, for 2.21 to 2.27), 2.20 (v2.20.3's, for 2.19 "
             "and 2.20) or 2.18 (v2.18.5's)");
}
static int k_nccl_tuner(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, nccl_tuner_names, NCCL_TUNER_COUNT, &t, e, l);
  p->nccl_tuner = (enum nccl_tuner)t;
  return rc;
}
static int k_nccl_launch(struct point *p, const char *v, char *e,
                         size_t l) {
  if (seconds(v, &p->nccl_launch_s, e, l) != 0 || p->nccl_launch_s < 0 ||
      p->nccl_launch_s > 1)
    return bad(e, l, "must be a time from 0 to 1s (e.g. 20us), added to "
                     "NCCL's base latency");
  return 0;
}
static int k_nccl_step(struct point *p, const char *v, char *e, size_t l) {
  if (!strcmp(v, "auto")) {
    p->nccl_step_s = -1;
    return 0;
  }
  if (seconds(v, &p->nccl_step_s, e, l) != 0 || p->nccl_step_s < 0 ||
      p->nccl_step_s > 0.01)
    return bad(e, l, "must be auto (NCCL's Simple step latency less the "
                     "wire's) or a time from 0 to 10ms (e.g. 6us)");
  return 0;
}
static int k_nccl_net_latency(struct point *p, const char *v, char *e,
                              size_t l) {
  if (seconds(v, &p->nccl_net_latency_s, e, l) != 0 ||
      p->nccl_net_latency_s < 0 || p->nccl_net_latency_s > 0.01)
    return bad(e, l,
               "must be a time from 0 to 10ms (e.g. 75us): the "
               "latency the network plugin reports to NCCL's tuner");
  return 0;
}
/* A rate or auto (0): NCCL's model's. */
static int nccl_rate(const char *v, double *out, char *e, size_t l) {
  if (!strcmp(v, "auto")) {
    *out = 0;
    return 0;
  }
  if (rate(v, out, e, l) != 0 || !(*out >= 1e6) || *out > 1e13)
    return bad(e, l, "must be auto (NCCL's model) or a rate from 1MBps to "
                     "10TBps (e.g. 7GBps)");
  return 0;
}
static int k_nccl_ll_bw(struct point *p, const char *v, char *e, size_t l) {
  return nccl_rate(v, &p->nccl_ll_Bps, e, l);
}
static int k_nccl_ll128_bw(struct point *p, const char *v, char *e,
                           size_t l) {
  return nccl_rate(v, &p->nccl_ll128_Bps, e, l);
}
static int k_nvls_eff(struct point *p, const char *v, char *e, size_t l) {
  if (!strcmp(v, "auto")) {
    p->nvls_efficiency = 0;
    return 0;
  }
  if (num_in(v, 0, 1, &p->nvls_efficiency, e, l) != 0 ||
      p->nvls_efficiency == 0)
    return bad(e, l, "must be auto (NCCL's) or a fraction in (0, 1]");
  return 0;
}
static int k_optimizer(struct point *p, const char *v, char *e, size_t l) {
  return choice(v, optimizer_names, OPTIMIZER_COUNT, &p->optimizer, e, l);
}
static int k_sharding(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, sharding_names, SHARD_COUNT, &t, e, l);
  p->sharding = (enum sharding)t;
  return rc;
}
static int k_shard_codec(struct point *p, const char *v, char *e,
                         size_t l) {
  int t;
  int rc = choice(v, shard_codec_names, SHARD_CODEC_COUNT, &t, e, l);
  p->shard_codec = (enum shard_codec)t;
  return rc;
}
static int k_codec_stream(struct point *p, const char *v, char *e,
                          size_t l) {
  return choice_flag(v, "compute", "own", &p->codec_own_stream, e, l);
}
static int k_shard_unit(struct point *p, const char *v, char *e, size_t l) {
  return choice_flag(v, "block", "layer", &p->shard_per_layer, e, l);
}
static int k_hpz(struct point *p, const char *v, char *e, size_t l) {
  return boolean(v, &p->hpz, e, l);
}
static int k_qgz(struct point *p, const char *v, char *e, size_t l) {
  return boolean(v, &p->qgz, e, l);
}
static int k_checkpoint(struct point *p, const char *v, char *e, size_t l) {
  return boolean(v, &p->checkpoint, e, l);
}
static int k_compression(struct point *p, const char *v, char *e,
                         size_t l) {
  int t;
  int rc = choice(v, compression_names, COMPRESS_COUNT, &t, e, l);
  p->compression = (enum compression)t;
  return rc;
}
static int k_implementation(struct point *p, const char *v, char *e,
                            size_t l) {
  int t;
  int rc = choice(v, implementation_names, IMPL_COUNT, &t, e, l);
  p->implementation = (enum implementation)t;
  return rc;
}
static int k_tree_chunk(struct point *p, const char *v, char *e, size_t l) {
  double b;
  if (size_in(v, 4, 1e12, &b) != 0 || b != floor(b))
    return bad(e, l,
               "must be a whole size with its unit (" SIZE_UNITS
               "), 4B to 1TB (e.g. 512KiB)");
  p->tree_chunk = b;
  return 0;
}
static int k_nvlstree_max(struct point *p, const char *v, char *e, size_t l) {
  double b;
  if (!strcmp(v, "auto")) {
    p->nvlstree_max_chunk = 0;
    return 0;
  }
  if (size_in(v, 4096, 4194304, &b) != 0 || fmod(b, 1024) != 0)
    return bad(e, l,
               "must be auto (NCCL's default) or a whole number of KiB "
               "with its unit (" SIZE_UNITS "), 4KiB to 4MiB (e.g. "
               "512KiB, what AWS's network plugin sets)");
  p->nvlstree_max_chunk = b;
  return 0;
}
static int k_csc_ratio(struct point *p, const char *v, char *e, size_t l) {
  return positive_in(v, 1, &p->csc_ratio, e, l);
}
static int k_fast_forward(struct point *p, const char *v, char *e,
                          size_t l) {
  if (!strcmp(v, "auto")) {
    p->fast_forward = true;
    return 0;
  }
  if (!strcmp(v, "off")) {
    p->fast_forward = false;
    return 0;
  }
  return bad(e, l, "must be auto or off");
}
static int k_eager(struct point *p, const char *v, char *e, size_t l) {
  double b;
  if (size_in(v, 0, 1e15, &b) != 0)
    return bad(e, l,
               "must be 0 or a size with its unit (" SIZE_UNITS
               "), up to 1PB (e.g. 64KiB)");
  p->eager_bytes = b;
  return 0;
}
static int k_envelope(struct point *p, const char *v, char *e, size_t l) {
  double b;
  if (size_in(v, 0, 1e9, &b) != 0)
    return bad(e, l,
               "must be 0 or a size with its unit (" SIZE_UNITS
               "), up to 1GB (SMPI's is 16B)");
  p->envelope_bytes = b;
  return 0;
}
static int k_costs(struct point *p, const char *v, char *e, size_t l) {
  if (*v && !g_file_test(v, G_FILE_TEST_IS_REGULAR))
    return bad(e, l, "no such file (write one with gradsim codec calibrate "
                     "--out FILE, or leave empty for the shipped table)");
  g_free(p->costs);
  p->costs = g_strdup(v);
  return 0;
}
/* A frequency: a number of Hz, or with a Hz, kHz, MHz or GHz suffix. */
static int k_clock(struct point *p, const char *v, char *e, size_t l) {
  static const struct {
    const char *suffix;
    double mult;
  } units[] = {{"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}, {"Hz", 1}};
  char *end;
  double x = g_ascii_strtod(v, &end);
  double mult = 1;
  const char *rest = end;
  while (*rest == ' ')
    rest++;
  bool ok = end != v;
  if (ok && *rest) {
    ok = false;
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
      if (!strcmp(rest, units[i].suffix)) {
        mult = units[i].mult;
        ok = true;
      }
  }
  x *= mult;
  if (!ok || !isfinite(x) || !(x > 0) || x > 1e12)
    return bad(e, l,
               "must be a frequency above 0 and at most 1THz, in Hz or "
               "with a Hz, kHz, MHz or GHz suffix (e.g. 100MHz)");
  p->nic.clock_hz = x;
  return 0;
}
static int k_burst(struct point *p, const char *v, char *e, size_t l) {
  int b = 0;
  int rc = int_in(v, 1, 4096, &b, e, l);
  if (!rc && b % 32)
    return bad(e, l,
               "must be a multiple of 32 bits (whole fp32 values), 32 to "
               "4096; INCEPTIONN's AXI-stream bus is 256");
  p->nic.burst_bits = (unsigned)b;
  return rc;
}
static int k_framing(struct point *p, const char *v, char *e, size_t l) {
  return choice_flag(v, "none", "packets", &p->framing.packets, e, l);
}
static int k_mtu(struct point *p, const char *v, char *e, size_t l) {
  int x = 0;
  int rc = int_in(v, 1, 1 << 20, &x, e, l);
  p->framing.mtu = (unsigned)x;
  return rc;
}
static int k_header(struct point *p, const char *v, char *e, size_t l) {
  int x = 0;
  int rc = int_in(v, 0, 65535, &x, e, l);
  p->framing.header_bytes = (unsigned)x;
  return rc;
}
static int k_frame(struct point *p, const char *v, char *e, size_t l) {
  int x = 0;
  int rc = int_in(v, 0, 65535, &x, e, l);
  p->framing.frame_bytes = (unsigned)x;
  return rc;
}
static int k_driver(struct point *p, const char *v, char *e, size_t l) {
  return seconds(v, &p->framing.driver_s, e, l);
}
static int k_mode(struct point *p, const char *v, char *e, size_t l) {
  int t;
  int rc = choice(v, mode_names, MODE_COUNT, &t, e, l);
  p->mode = (enum mode)t;
  return rc;
}
static int k_iterations(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1000000, &p->iterations, e, l);
}
static int k_k(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 64, &p->k, e, l);
}
static int k_fusion(struct point *p, const char *v, char *e, size_t l) {
  if (!strcmp(v, "all")) {
    p->fusion_bytes = INFINITY;
    return 0;
  }
  if (size_in(v, 0, 1e15, &p->fusion_bytes) != 0)
    return bad(e, l,
               "must be all, 0 or a size with its unit (" SIZE_UNITS
               "), up to 1PB (e.g. 25MB)");
  return 0;
}
static int k_fusion_cycle(struct point *p, const char *v, char *e,
                          size_t l) {
  return seconds(v, &p->fusion_cycle_s, e, l);
}
static int k_local(struct point *p, const char *v, char *e, size_t l) {
  return int_in(v, 1, 1000, &p->local_steps, e, l);
}
static int k_stragglers(struct point *p, const char *v, char *e, size_t l) {
  (void)e;
  (void)l;
  g_free(p->stragglers);
  p->stragglers = g_strdup(v); /* parsed once nodes is known */
  return 0;
}
static int k_dist(struct point *p, const char *v, char *e, size_t l) {
  if (gradgen_dist_parse(v, &p->grad.dist) != 0)
    return bad(e, l, "must be normal, laplace, student or spike");
  return 0;
}
static int k_scale(struct point *p, const char *v, char *e, size_t l) {
  return positive_in(v, 1e30, &p->grad.scale, e, l);
}
static int k_nu(struct point *p, const char *v, char *e, size_t l) {
  return positive_in(v, 1e9, &p->grad.nu, e, l);
}
static int k_zeros(struct point *p, const char *v, char *e, size_t l) {
  return fraction_below_one(v, &p->grad.zeros, e, l);
}
static int k_corr(struct point *p, const char *v, char *e, size_t l) {
  return num_in(v, 0, 1, &p->grad.corr, e, l);
}

static int k_persist(struct point *p, const char *v, char *e, size_t l) {
  return fraction_below_one(v, &p->grad.persist, e, l);
}

static int k_decay(struct point *p, const char *v, char *e, size_t l) {
  return positive_in(v, 1, &p->grad.decay, e, l);
}
static int k_seed(struct point *p, const char *v, char *e, size_t l) {
  char *end;
  errno = 0;
  unsigned long long x = g_ascii_strtoull(v, &end, 10);
  if (!*v || *end || errno || *v == '-')
    return bad(e, l, "must be a whole number >= 0");
  p->grad.seed = x;
  return 0;
}

struct key {
  const char *section, *name, *def;
  parse_fn parse;
};

/* Every key, its default (NULL: required), in the order of the
 * effective configuration. */
static const struct key keys[] = {
    {"platform", "topology", "star", k_topology},
    {"platform", "nodes", NULL, k_nodes},
    {"platform", "aggregators", "0", k_aggregators},
    {"platform", "bandwidth", "10Gbps", k_bandwidth},
    {"platform", "latency", "5us", k_latency},
    {"platform", "ideal", "false", k_ideal},
    {"platform", "timing_precision", "1ns", k_timing},
    {"platform", "leaf", "16", k_leaf},
    {"platform", "oversubscription", "1", k_oversub},
    {"platform", "host_stack", "none", k_host_stack},
    {"platform", "ingress_bandwidth", "same", k_ingress},
    {"platform", "hosts_per_router", "4", k_dfly_group},
    {"platform", "torus_dims", "auto", k_torus},
    {"platform", "hosts", "", k_hosts},
    {"platform", "gpus_per_node", "8", k_gpus},
    {"platform", "gpus_per_switch", "4", k_gpus_switch},
    {"platform", "pcie_bandwidth", "12GBps", k_pcie_bw},
    {"platform", "pcie_latency", "1us", k_pcie_lat},
    {"platform", "nics_per_node", "1", k_nics},
    {"platform", "nvlink_bandwidth", "370.8GBps", k_nvlink_bw},
    {"platform", "nvlink_latency", "1us", k_nvlink_lat},
    {"platform", "fabric", "rail", k_fabric},
    {"platform", "nvls", "false", k_nvls},
    {"platform", "sharp", "false", k_sharp},
    {"platform", "preset", "none", k_preset},
    {"model", "name", NULL, k_model},
    {"model", "params", "25000000", k_params},
    {"model", "tensors", "1", k_tensors},
    {"model", "shape", "none", k_shape},
    {"model", "compute", "0", k_compute},
    {"model", "update", "0", k_update},
    {"model", "compute_scale", "1", k_compute_scale},
    {"model", "update_rate", "device", k_update_rate},
    {"model", "device", "P100", k_device},
    {"model", "precision", "fp32", k_precision},
    {"model", "batch", "0", k_batch},
    {"model", "micro_batch", "0", k_micro_batch},
    {"model", "seq_len", "0", k_seq_len},
    {"model", "mfu", "device", k_mfu},
    {"model", "grad_dtype", "fp32", k_grad_dtype},
    {"exchange", "algorithm", "ring", k_algorithm},
    {"exchange", "codec", "none", k_codec},
    {"exchange", "placement", "cpu", k_placement},
    {"exchange", "reduce_rate", "5GBps", k_reduce},
    {"exchange", "staging", "none", k_staging},
    {"exchange", "payload", "full", k_payload},
    {"exchange", "sample", "65536", k_sample},
    {"exchange", "compress_min", "0", k_compress_min},
    {"exchange", "pull", "tree", k_pull},
    {"exchange", "warmup_steps", "0", k_warmup},
    {"exchange", "server_momentum", "0", k_server_momentum},
    {"exchange", "group", "0", k_group},
    {"exchange", "chunk", "32000", k_chunk},
    {"exchange", "csc_ratio", "0.1", k_csc_ratio},
    {"exchange", "channels", "auto", k_channels},
    {"exchange", "tree_chunk", "512KiB", k_tree_chunk},
    {"exchange", "nccl_algo", "auto", k_nccl_algo},
    {"exchange", "nccl_proto", "auto", k_nccl_proto},
    {"exchange", "nccl_version", "2.30", k_nccl_version},
    {"exchange", "nccl_tuner", "nccl", k_nccl_tuner},
    {"exchange", "nccl_net_latency", "0", k_nccl_net_latency},
    {"exchange", "nccl_nvlstree_max_chunk", "auto", k_nvlstree_max},
    {"exchange", "nccl_launch", "0", k_nccl_launch},
    {"exchange", "nccl_step", "auto", k_nccl_step},
    {"exchange", "nccl_ll_bw", "auto", k_nccl_ll_bw},
    {"exchange", "nccl_ll128_bw", "auto", k_nccl_ll128_bw},
    {"exchange", "nvls_efficiency", "auto", k_nvls_eff},
    {"exchange", "compression", "per-hop", k_compression},
    {"exchange", "shard_codec", "all", k_shard_codec},
    {"exchange", "codec_stream", "compute", k_codec_stream},
    {"exchange", "implementation", "gradsim", k_implementation},
    {"exchange", "fast_forward", "auto", k_fast_forward},
    {"exchange", "eager_bytes", "0", k_eager},
    {"exchange", "envelope_bytes", "0", k_envelope},
    {"exchange", "costs", "", k_costs},
    {"nic", "clock", "100MHz", k_clock},
    {"nic", "burst_bits", "256", k_burst},
    {"nic", "framing", "none", k_framing},
    {"nic", "mtu", "1500", k_mtu},
    {"nic", "header_bytes", "40", k_header},
    {"nic", "frame_bytes", "38", k_frame},
    {"nic", "driver_s", "0.5us", k_driver},
    {"training", "mode", "sync", k_mode},
    {"training", "iterations", "10", k_iterations},
    {"training", "k", "2", k_k},
    {"training", "fusion_bytes", "0", k_fusion},
    {"training", "fusion_cycle", "0", k_fusion_cycle},
    {"training", "local_steps", "1", k_local},
    {"training", "stragglers", "", k_stragglers},
    {"training", "step_overhead", "0", k_step_overhead},
    {"training", "optimizer", "momentum", k_optimizer},
    {"training", "sharding", "none", k_sharding},
    {"training", "shard_unit", "block", k_shard_unit},
    {"training", "activation_checkpointing", "false", k_checkpoint},
    {"training", "hpz", "false", k_hpz},
    {"training", "qgz", "false", k_qgz},
    {"gradients", "dist", "laplace", k_dist},
    {"gradients", "scale", "5e-4", k_scale},
    {"gradients", "nu", "3", k_nu},
    {"gradients", "zeros", "0.5", k_zeros},
    {"gradients", "corr", "0", k_corr},
    {"gradients", "persist", "0", k_persist},
    {"gradients", "decay", "1", k_decay},
    {"gradients", "seed", "1", k_seed},
};
enum { NKEYS = sizeof keys / sizeof keys[0] };

static const char *const sections[] = {"platform", "model", "exchange",
                                       "nic", "training", "gradients"};

static const struct key *find_key(const char *section, const char *name) {
  for (size_t i = 0; i < NKEYS; i++)
    if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, name))
      return &keys[i];
  return NULL;
}

static char *keys_of(const char *section) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < NKEYS; i++)
    if (!strcmp(keys[i].section, section))
      g_string_append_printf(s, "%s%s", s->len ? ", " : "", keys[i].name);
  return g_string_free(s, FALSE);
}

/* ---- sweeps ----------------------------------------------------------- */

GPtrArray *experiment_split_values(const char *key, const char *value) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  bool codec = g_str_has_suffix(key, "codec");
  char **parts = g_strsplit(value, ",", -1);
  for (char **p = parts; *p; p++) {
    char *item = g_strstrip(g_strdup(*p));
    if (codec && out->len && strchr(item, '=') && !strchr(item, ':')) {
      char *prev = g_ptr_array_index(out, out->len - 1);
      if (strcmp(prev, "none") != 0) {
        out->pdata[out->len - 1] = g_strconcat(prev, ",", item, NULL);
        g_free(prev);
        g_free(item);
        continue;
      }
    }
    g_ptr_array_add(out, item);
  }
  g_strfreev(parts);
  return out;
}

/* Each "KEY = value" line of the key file TEXT, in order, to FN with its
 * line (from 1) and the section it is in (blank and # lines skipped);
 * FN returns false to stop. */
typedef bool (*key_line_fn)(int line, const char *section, const char *key,
                            void *ctx);
static void key_lines(const char *text, key_line_fn fn, void *ctx) {
  char **lines = g_strsplit(text, "\n", -1);
  char *section = g_strdup("");
  bool go = true;
  for (int i = 0; lines[i] && go; i++) {
    char *l = g_strstrip(lines[i]);
    if (!*l || *l == '#')
      continue;
    if (*l == '[') {
      char *end = strchr(l, ']');
      g_free(section);
      section = g_strndup(l + 1, end ? (gsize)(end - l - 1) : strlen(l + 1));
      continue;
    }
    char *eq = strchr(l, '=');
    if (!eq)
      continue; /* GKeyFile has refused such a line already */
    char *key = g_strstrip(g_strndup(l, (gsize)(eq - l)));
    go = fn(i + 1, section, key, ctx);
    g_free(key);
  }
  g_free(section);
  g_strfreev(lines);
}

struct line_of {
  const char *section, *name;
  int found;
};

static bool line_of_key(int line, const char *section, const char *key,
                        void *ctx) {
  struct line_of *x = ctx;
  if (!strcmp(section, x->section) && !strcmp(key, x->name))
    x->found = line;
  return true;
}

/* The line of "NAME =" in SECTION of TEXT, for messages (0: unknown):
 * the last one, as GKeyFile keeps the last of repeated keys (also across
 * repeated sections). */
static int line_of(const char *text, const char *section, const char *name) {
  struct line_of x = {section, name, 0};
  if (text)
    key_lines(text, line_of_key, &x);
  return x.found;
}

void point_free(struct point *p) {
  if (!p)
    return;
  g_free(p->platform_file);
  g_free(p->hosts_file);
  g_strfreev(p->hosts);
  g_free(p->model);
  g_free(p->device);
  g_free(p->precision);
  g_free(p->algorithm);
  g_free(p->codec);
  g_free(p->stragglers);
  g_free(p->slowdown);
  g_free(p->costs);
  g_free(p->config);
  g_free(p);
}

void point_free_cb(gpointer p) { point_free(p); }

void experiment_free(struct experiment *e) {
  if (!e)
    return;
  g_free(e->path);
  g_free(e->question);
  if (e->points)
    g_ptr_array_free(e->points, TRUE);
  if (e->swept)
    g_ptr_array_free(e->swept, TRUE);
  g_free(e);
}

void experiment_free_cb(gpointer e) { experiment_free(e); }

/* One stragglers item, " W:F ": worker W in 0..NODES-1 runs F >= 1 times
 * slower. (Not sscanf("%d"): out of range, it is undefined.) */
static bool straggler(const char *item, int nodes, int *w, double *f) {
  char *end;
  while (g_ascii_isspace(*item))
    item++;
  if (!g_ascii_isdigit(*item))
    return false;
  errno = 0;
  long x = strtol(item, &end, 10);
  if (errno || x >= nodes || *end != ':')
    return false;
  const char *v = end + 1;
  while (g_ascii_isspace(*v))
    v++;
  double y = g_ascii_strtod(v, &end);
  if (end == v || !isfinite(y) || !(y >= 1))
    return false;
  while (g_ascii_isspace(*end))
    end++;
  if (*end)
    return false;
  *w = (int)x;
  *f = y;
  return true;
}

/* Checks that need several keys. */
static int validate_point(struct point *p, char *e, size_t l) {
  bool synthetic = p->synthetic;
  if (synthetic && (uint64_t)p->tensors > p->params)
    return bad(e, l,
               "[model] tensors = %d exceeds params = %" G_GUINT64_FORMAT,
               p->tensors, p->params);
  if (p->shape_dims && !synthetic)
    return bad(e, l,
               "[model] shape applies to the synthetic model only (a model "
               "file gives each tensor's shape)");
  if (p->shape_dims) {
    uint64_t prod = 1;
    for (size_t i = 0; i < p->shape_dims; i++)
      prod *= p->shape[i];
    if (prod > p->params / (uint64_t)p->tensors ||
        prod * (uint64_t)p->tensors != p->params)
      return bad(e, l,
                 "[model] shape of %" G_GUINT64_FORMAT
                 " values needs params = tensors x that = %g, not %" G_GUINT64_FORMAT,
                 prod, (double)prod * p->tensors, p->params);
  }
  if (topology_check(p, e, l) != 0)
    return -EINVAL;
  if (p->hosts && g_strv_length(p->hosts) < (guint)(p->nodes + p->aggregators))
    return bad(e, l,
               "[platform] hosts = %s names %u hosts; nodes = %d and "
               "aggregators = %d need %d",
               p->hosts_file, g_strv_length(p->hosts), p->nodes,
               p->aggregators, p->nodes + p->aggregators);
  if (p->warmup_steps > 0 && p->grad.decay != 1)
    return bad(e, l,
               "[exchange] warmup_steps = %d needs [gradients] decay = 1 "
               "(the warm-up's steps precede iteration 0, where a decayed "
               "scale has no value), not %g",
               p->warmup_steps, p->grad.decay);
  if (nic_check(&p->nic, &p->framing, e, l) != 0)
    return -EINVAL;
  if (p->k > 1 && p->mode != MODE_PIPE && p->k != 2)
    return bad(e, l, "[training] k applies to mode = pipe only");
  /* Stragglers: "W:F,W:F", W a worker, F >= 1 (a slowdown). */
  if (p->stragglers && *p->stragglers) {
    p->slowdown = g_new(double, p->nodes);
    for (int i = 0; i < p->nodes; i++)
      p->slowdown[i] = 1.0;
    char **items = g_strsplit(p->stragglers, ";", -1);
    for (char **it = items; *it; it++) {
      int w;
      double f;
      if (!straggler(*it, p->nodes, &w, &f)) {
        int rc = bad(e, l,
                     "[training] stragglers item '%s' must be W:F with W a "
                     "worker in 0..%d and F >= 1 (items separated by ';')",
                     *it, p->nodes - 1);
        g_strfreev(items);
        return rc;
      }
      p->slowdown[w] = f;
    }
    g_strfreev(items);
  }
  return 0;
}

/* Parse the values of one point (VALS[i] for keys[i]). */
static struct point *make_point(const char **vals, const char *path,
                                const char *text, const bool *is_set, char *e,
                                size_t l) {
  struct point *p = g_new0(struct point, 1);
  gradgen_defaults(&p->grad);
  nic_engine_default(&p->nic);
  nic_framing_default(&p->framing);
  p->k = 2;
  GString *cfg = g_string_new(NULL);
  const char *section = "";
  for (size_t i = 0; i < NKEYS; i++) {
    char msg[512];
    if (keys[i].parse(p, vals[i], msg, sizeof msg) != 0) {
      int line = is_set[i] ? 0 : line_of(text, keys[i].section, keys[i].name);
      if (line)
        bad(e, l, "%s:%d: [%s] %s = %s: %s", path, line, keys[i].section,
            keys[i].name, vals[i], msg);
      else
        bad(e, l, "%s: [%s] %s = %s: %s", is_set[i] ? "--set" : path,
            keys[i].section, keys[i].name, vals[i], msg);
      point_free(p);
      g_string_free(cfg, TRUE);
      return NULL;
    }
    if (strcmp(section, keys[i].section) != 0) {
      section = keys[i].section;
      g_string_append_printf(cfg, "%s[%s]\n", cfg->len ? "\n" : "", section);
    }
    g_string_append_printf(cfg, "%s = %s\n", keys[i].name, vals[i]);
  }
  char msg[512];
  if (validate_point(p, msg, sizeof msg) != 0) {
    bad(e, l, "%s: %s", path, msg);
    point_free(p);
    g_string_free(cfg, TRUE);
    return NULL;
  }
  p->config = g_string_free(cfg, FALSE);
  char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, p->config, -1);
  memcpy(p->hash, sum, 16);
  p->hash[16] = '\0';
  g_free(sum);
  return p;
}

struct experiment *experiment_load(const char *path, char **sets,
                                   char **err) {
  char *text = NULL;
  gsize len = 0;
  GError *ge = NULL;
  if (!g_file_get_contents(path, &text, &len, &ge)) {
    *err = g_strdup_printf("%s: %s", path, ge->message);
    g_error_free(ge);
    return NULL;
  }
  struct experiment *ex =
      experiment_load_data(path, text, len, sets, 0, err);
  g_free(text);
  return ex;
}

/* The values of the keys of a loaded experiment: defaults, then the
 * file's, then --set's (IS_SET: the value came from --set, so messages
 * name it rather than a line of the file; GIVEN: by the file or --set,
 * so that a preset leaves it alone). */
struct values {
  char *v[NKEYS];
  bool is_set[NKEYS];
  bool given[NKEYS];
};

static bool known_section(const char *name) {
  for (size_t s = 0; s < G_N_ELEMENTS(sections); s++)
    if (!strcmp(name, sections[s]))
      return true;
  return false;
}

/* The keys of section GROUP of KF into VALS; every key must be known.
 * NULL, or a message. */
static char *read_section(GKeyFile *kf, const char *group, const char *path,
                          const char *text, struct values *vals) {
  char *err = NULL;
  char **ks = g_key_file_get_keys(kf, group, NULL, NULL);
  for (char **k = ks; *k && !err; k++) {
    const struct key *key = find_key(group, *k);
    if (!key) {
      char *valid = keys_of(group);
      int line = line_of(text, group, *k);
      err = g_strdup_printf("%s:%d: [%s] unknown key '%s' (valid: %s)", path,
                            line, group, *k, valid);
      g_free(valid);
      break;
    }
    size_t idx = (size_t)(key - keys);
    g_free(vals->v[idx]);
    vals->v[idx] = g_key_file_get_value(kf, group, *k, NULL);
    g_strstrip(vals->v[idx]);
    vals->given[idx] = true;
  }
  g_strfreev(ks);
  return err;
}

/* Every section of the file TEXT (already parsed into KF) into VALS.
 * [reproduce] and [reproduce.*] are what `gradsim reproduce` compares
 * with a paper (repro/repro.h); a plain run ignores them. */
static char *read_file(GKeyFile *kf, const char *path, const char *text,
                       struct values *vals) {
  char *err = NULL;
  gsize ngroups;
  char **groups = g_key_file_get_groups(kf, &ngroups);
  for (gsize gi = 0; gi < ngroups && !err; gi++) {
    if (!strcmp(groups[gi], "reproduce") ||
        g_str_has_prefix(groups[gi], "reproduce."))
      continue;
    if (!known_section(groups[gi]))
      err = g_strdup_printf("%s: unknown section [%s] (valid: platform, "
                            "model, exchange, nic, training, gradients)",
                            path, groups[gi]);
    else
      err = read_section(kf, groups[gi], path, text, vals);
  }
  g_strfreev(groups);
  return err;
}

/* One --set section.key=value into VALS; NULL, or a message. */
static char *apply_set(const char *set, struct values *vals) {
  const char *dot = strchr(set, '.'), *eq = strchr(set, '=');
  if (!dot || !eq || dot > eq || dot == set || eq == dot + 1)
    return g_strdup_printf("--set %s: expected section.key=value (e.g. "
                           "--set platform.nodes=8)",
                           set);
  char *err = NULL;
  char *section = g_strndup(set, (gsize)(dot - set));
  char *name = g_strndup(dot + 1, (gsize)(eq - dot - 1));
  const struct key *key = find_key(section, name);
  if (!key) {
    bool known = known_section(section);
    char *valid = known ? keys_of(section) : NULL;
    err = known ? g_strdup_printf("--set %s: unknown key '%s' in [%s] "
                                  "(valid: %s)",
                                  set, name, section, valid)
                : g_strdup_printf("--set %s: unknown section '%s' (valid: "
                                  "platform, model, exchange, training, "
                                  "gradients)",
                                  set, section);
    g_free(valid);
  } else {
    size_t idx = (size_t)(key - keys);
    g_free(vals->v[idx]);
    vals->v[idx] = g_strstrip(g_strdup(eq + 1));
    vals->is_set[idx] = true;
    vals->given[idx] = true;
  }
  g_free(section);
  g_free(name);
  return err;
}

/* The values of the preset PV[IPRESET] names (if any) for every key it
 * has that the experiment does not give itself (GIVEN). An unknown name
 * is left to make_point(), which says so. */
static void apply_preset(const char **pv, const bool *given,
                         size_t ipreset) {
  const struct preset *ps = preset_find(pv[ipreset]);
  for (const struct preset_value *pr = ps ? ps->values : NULL;
       pr && pr->section; pr++) {
    const struct key *k = find_key(pr->section, pr->key);
    g_assert(k); /* the preset table names known keys (tested) */
    size_t i = (size_t)(k - keys);
    if (!given[i])
      pv[i] = pr->value;
  }
}

/* Every combination of VALS' swept values into EX's points, the first
 * swept key varying slowest (an odometer); NULL, or a message. */
static char *expand(struct experiment *ex, const struct values *vals,
                    const char *text, size_t max_points) {
  const char *path = ex->path;
  char *err = NULL;
  GPtrArray *items[NKEYS] = {NULL};
  uint64_t total = 1;
  for (size_t i = 0; i < NKEYS && !err; i++) {
    items[i] = experiment_split_values(keys[i].name, vals->v[i]);
    if (items[i]->len == 0)
      g_ptr_array_add(items[i], g_strdup(""));
    if (items[i]->len > 1)
      g_ptr_array_add(ex->swept, g_strdup_printf("%s.%s", keys[i].section,
                                                 keys[i].name));
    /* Each factor is at most the value's length: no overflow before the
     * first product over the limit. */
    total *= items[i]->len;
    if (total > max_points)
      err = g_strdup_printf("%s: the sweep has over %zu points; split it "
                            "into several experiments",
                            path, max_points);
  }
  size_t idx[NKEYS] = {0};
  size_t ipreset = (size_t)(find_key("platform", "preset") - keys);
  for (uint64_t n = 0; n < total && !err; n++) {
    const char *pv[NKEYS];
    char e[1024];
    for (size_t i = 0; i < NKEYS; i++)
      pv[i] = g_ptr_array_index(items[i], idx[i]);
    apply_preset(pv, vals->given, ipreset);
    struct point *p = make_point(pv, path, text, vals->is_set, e, sizeof e);
    if (!p) {
      err = g_strdup(e);
      break;
    }
    g_ptr_array_add(ex->points, p);
    for (size_t i = NKEYS; i-- > 0;) {
      if (++idx[i] < items[i]->len)
        break;
      idx[i] = 0;
    }
  }
  for (size_t i = 0; i < NKEYS; i++)
    if (items[i])
      g_ptr_array_free(items[i], TRUE);
  return err;
}

struct duplicate {
  const char *path;
  GHashTable *seen; /* "section\nkey" -> its first line */
  char *err;
};

static bool duplicate_of(int line, const char *section, const char *key,
                         void *ctx) {
  struct duplicate *d = ctx;
  char *id = g_strdup_printf("%s\n%s", section, key);
  int first = GPOINTER_TO_INT(g_hash_table_lookup(d->seen, id));
  if (first)
    d->err = g_strdup_printf("%s:%d: [%s] %s is given twice (first on line "
                             "%d); give it once (a sweep is one line: %s = "
                             "a, b)",
                             d->path, line, section, key, first, key);
  g_hash_table_insert(d->seen, id, GINT_TO_POINTER(line));
  return !first;
}

/* The first key TEXT gives twice in one section (a section may be
 * written in several pieces; GKeyFile would keep the last value
 * silently): "PATH:LINE: [S] KEY is given twice (first on line N)", or
 * NULL. A sweep is one line: key = a, b. */
static char *duplicate_key(const char *path, const char *text) {
  struct duplicate d = {path, g_hash_table_new_full(g_str_hash, g_str_equal,
                                                    g_free, NULL),
                        NULL};
  key_lines(text, duplicate_of, &d);
  g_hash_table_destroy(d.seen);
  return d.err;
}

GKeyFile *experiment_key_file(const char *path, char **err) {
  char *text = NULL;
  gsize len = 0;
  GError *ge = NULL;
  GKeyFile *kf = g_key_file_new();
  *err = NULL;
  if (!g_file_get_contents(path, &text, &len, &ge) ||
      !g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &ge)) {
    *err = g_strdup_printf("%s: %s", path, ge->message);
    g_error_free(ge);
  } else {
    *err = duplicate_key(path, text);
  }
  g_free(text);
  if (*err) {
    g_key_file_free(kf);
    return NULL;
  }
  return kf;
}

/* The values of the file TEXT and SETS, every required key given;
 * NULL, or a message. */
static char *gather(const char *path, const char *text, size_t len,
                    char **sets, struct values *vals) {
  GKeyFile *kf = g_key_file_new();
  GError *ge = NULL;
  char *err = NULL;
  if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &ge)) {
    err = g_strdup_printf("%s: %s", path, ge->message);
    g_error_free(ge);
  } else {
    err = duplicate_key(path, text);
    if (!err)
      err = read_file(kf, path, text, vals);
  }
  g_key_file_free(kf);
  for (char **s = sets; s && *s && !err; s++)
    err = apply_set(*s, vals);
  for (size_t i = 0; i < NKEYS && !err; i++)
    if (!vals->v[i])
      err = g_strdup_printf("%s: [%s] %s is required", path, keys[i].section,
                            keys[i].name);
  return err;
}

struct experiment *experiment_load_data(const char *path, const char *data,
                                        size_t len, char **sets,
                                        size_t max_points, char **err) {
  *err = NULL;
  if (max_points == 0)
    max_points = EXPERIMENT_MAX_POINTS;
  /* GKeyFile and line_of() read a C string: a NUL byte would silently
   * end the file early. */
  if (memchr(data, '\0', len)) {
    *err = g_strdup_printf("%s: holds a NUL byte (not a text file)", path);
    return NULL;
  }
  char *text = g_strndup(data, len);
  struct values vals;
  memset(&vals, 0, sizeof vals);
  for (size_t i = 0; i < NKEYS; i++)
    vals.v[i] = keys[i].def ? g_strdup(keys[i].def) : NULL;
  *err = gather(path, text, len, sets, &vals);
  struct experiment *ex = NULL;
  if (!*err) {
    ex = g_new0(struct experiment, 1);
    ex->path = g_strdup(path);
    ex->question = experiment_question(text);
    ex->points = g_ptr_array_new_with_free_func(point_free_cb);
    ex->swept = g_ptr_array_new_with_free_func(g_free);
    *err = expand(ex, &vals, text, max_points);
  }
  for (size_t i = 0; i < NKEYS; i++)
    g_free(vals.v[i]);
  g_free(text);
  if (*err) {
    experiment_free(ex);
    return NULL;
  }
  return ex;
}

/* Where the sentence starting at S ends (one past its last character). */
static const char *sentence_end(const char *s) {
  int depth = 0;
  for (const char *c = s; *c; c++) {
    bool end = false;
    if (*c == '(' || *c == '[')
      depth++;
    else if ((*c == ')' || *c == ']') && depth > 0)
      depth--;
    else if (depth == 0 && (*c == '?' || *c == '!'))
      end = true;
    else if (depth == 0 && *c == '.')
      end = !c[1] || (c[1] == ' ' && (g_ascii_isupper(c[2]) || c[2] == '"'));
    if (end) {
      c++;
      while (*c == '"' || *c == '\'')
        c++;
      return c;
    }
  }
  return s + strlen(s);
}

char *experiment_question(const char *text) {
  GString *q = g_string_new(NULL);
  const char *c = text;
  while (*c == '\n' || *c == '\r')
    c++;
  while (*c == '#') {
    size_t len = strcspn(c, "\n");
    char *line = g_strstrip(g_strndup(c + 1, len - 1));
    bool blank = !*line;
    if (!blank)
      g_string_append_printf(q, "%s%s", q->len ? " " : "", line);
    g_free(line);
    if (blank && q->len)
      break;
    c += len;
    if (*c)
      c++;
  }
  /* One space between words, whatever the file's layout. */
  char **words = g_strsplit_set(q->str, " \t\r", -1);
  g_string_truncate(q, 0);
  for (char **w = words; *w; w++)
    if (**w)
      g_string_append_printf(q, "%s%s", q->len ? " " : "", *w);
  g_strfreev(words);
  if (!q->len) {
    g_string_free(q, TRUE);
    return NULL;
  }
  g_string_truncate(q, (gsize)(sentence_end(q->str) - q->str));
  return g_string_free(q, FALSE);
}

char *point_config_value(const struct point *p, const char *key) {
  GKeyFile *kf = g_key_file_new();
  char *v = NULL;
  if (g_key_file_load_from_data(kf, p->config, (gsize)-1, G_KEY_FILE_NONE,
                                NULL)) {
    char *sec = g_strdup(key), *dot = strchr(sec, '.');
    if (dot) {
      *dot = '\0';
      v = g_key_file_get_value(kf, sec, dot + 1, NULL);
    }
    g_free(sec);
  }
  g_key_file_free(kf);
  return v ? v : g_strdup("");
}
