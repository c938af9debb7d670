/* sim/experiment.h: experiments: GLib key files of sections and keys,
 * where a comma-separated value sweeps that key. An experiment expands
 * into points, each a fully typed configuration of one simulation.
 *
 * Every key, its default and its valid values are in the README
 * ("Experiment files"); unknown sections and keys are errors. */
#ifndef GRADSIM_SIM_EXPERIMENT_H
#define GRADSIM_SIM_EXPERIMENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "gradgen.h"
#include "nic.h"

enum topology { TOPO_STAR, TOPO_FAT_TREE, TOPO_DRAGONFLY, TOPO_GPU, TOPO_FILE };
enum payload { PAYLOAD_FULL, PAYLOAD_SAMPLED, PAYLOAD_NONE };
enum placement { PLACE_CPU, PLACE_GPU, PLACE_NIC };
enum mode { MODE_SYNC, MODE_OVERLAP, MODE_PIPE };

/* One simulation's configuration. Strings are owned by the point. */
struct point {
  /* [platform] */
  enum topology topology;
  char *platform_file; /* topology = file:PATH */
  int nodes;           /* workers */
  int aggregators;
  double bandwidth_Bps; /* bytes per second */
  double latency_s;     /* one-way, worker to worker */
  bool ideal;
  int gpus_per_node, gpus_per_switch; /* gpu-cluster */
  double pcie_Bps, pcie_latency_s;
  int leaf;                 /* fat-tree: hosts per leaf switch */
  double oversubscription;  /* fat-tree: leaf down/up bandwidth ratio */
  int group_size;           /* dragonfly: hosts per router */
  /* [model] */
  char *model;    /* name or path, or "synthetic" */
  uint64_t params; /* synthetic */
  int tensors;
  double compute_s, update_s;
  char *device, *precision;
  int batch; /* 0: the model file's */
  /* [exchange] */
  char *algorithm;
  char *codec; /* a codec spec, or "none" */
  enum placement placement;
  double reduce_Bps; /* bytes summed per second (gamma = 1 / this) */
  enum payload payload;
  int sample;        /* sampled: values encoded per block */
  int compress_min;  /* buckets of fewer values travel uncompressed */
  int group;         /* hierarchical: workers per node (0: topology's) */
  int chunk;         /* csc: values per chunk */
  double csc_ratio;  /* csc: fraction of chunks exchanged */
  bool fast_forward;
  char *costs; /* codec cost table, "" for the shipped one */
  /* [nic] */
  struct nic_engine nic;
  struct nic_framing framing;
  /* [training] */
  enum mode mode;
  int iterations;
  int k;
  double fusion_bytes; /* 0: one bucket per tensor; INFINITY: one in all */
  int local_steps;
  char *stragglers; /* "W:F,..." slowdown factors, "" for none */
  double *slowdown; /* per worker, parsed from stragglers; NULL: none (a
                     * sweep of huge clusters holds no per-worker array) */
  /* [gradients] */
  struct gradgen_params grad;
  /* The point's identity: its effective configuration as key file text,
   * and a short hash of it (the name of its result files). */
  char *config;
  char hash[17];
};

void point_free(struct point *p);

struct experiment {
  char *path;
  GPtrArray *points; /* struct point *, in sweep order */
  GPtrArray *swept;  /* "section.key" of every swept key, in order */
};

/* Read PATH, apply the SETS ("section.key=value", each a possible sweep),
 * expand every comma-separated value into its combinations (the first
 * swept key varies slowest) and validate each point. Returns NULL on
 * error with a one-line message (file, line or key, the value, what is
 * allowed) in *ERR (g_free'd by the caller). */
struct experiment *experiment_load(const char *path, char **sets,
                                   char **err);

/* The sweep of experiment_load() stops here. */
#define EXPERIMENT_MAX_POINTS ((size_t)100000)

/* experiment_load() of the LEN bytes at DATA (no NUL needed at the end;
 * one inside is an error), named PATH in messages and in the result. A
 * sweep of more than MAX_POINTS points is an error (0: the limit of
 * experiment_load(), EXPERIMENT_MAX_POINTS). */
struct experiment *experiment_load_data(const char *path, const char *data,
                                        size_t len, char **sets,
                                        size_t max_points, char **err);

void experiment_free(struct experiment *e);

/* Split a swept value into its items. Codec specs hold commas too: an
 * item of the form key=value (no ':') continues the previous item's
 * parameter list, so "none,rgc:ratio=0.01,asq=1,3lc" is three codecs. */
GPtrArray *experiment_split_values(const char *key, const char *value);

#endif
