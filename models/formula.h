/* models/formula.h: the analytic timing models of the seed papers and of
 * the collectives gradsim simulates, each a registry entry that evaluates
 * to a total and its terms.
 *
 * Notation (Thakur, Rabenseifner and Gropp 2005, which the seeds cite):
 * p workers, n bytes, alpha the latency of one message, beta the time per
 * byte on a link (1 / bandwidth), gamma the time to sum one byte. lg is
 * log2. A parameter that was not given is NAN; formula_eval() checks that
 * every parameter a formula needs is present and in range. */
#ifndef GRADSIM_MODELS_FORMULA_H
#define GRADSIM_MODELS_FORMULA_H

#include <stdbool.h>
#include <stddef.h>

/* Parameters, all in SI units (seconds, bytes, seconds per byte). */
enum formula_param {
  FP_P,          /* workers */
  FP_N,          /* bytes per worker (the model or message size) */
  FP_ALPHA,      /* s */
  FP_BETA,       /* s per byte */
  FP_GAMMA,      /* s per byte summed */
  FP_AGGR,       /* ps: aggregators A */
  FP_GROUP,      /* hierarchical: workers per node G */
  FP_ALPHA_IN,   /* hierarchical: latency inside a node */
  FP_BETA_IN,    /* hierarchical: s per byte inside a node */
  FP_DENSITY,    /* RedSync: compressed / dense message size D */
  FP_GAMMA1,     /* RedSync: s to decompress one collected message */
  FP_GAMMA2,     /* RedSync: s to reduce a message of n bytes */
  FP_T_SELECT,   /* RedSync: s of communication-set selection */
  FP_ITER,       /* Pipe-SGD: iterations T */
  FP_K,          /* Pipe-SGD: iteration dependency K */
  FP_T_UP,       /* Pipe-SGD: update time */
  FP_T_FOR,      /* forward */
  FP_T_BACK,     /* backward */
  FP_T_B,        /* backward of the first of L segments */
  FP_SEGMENTS,   /* L */
  FP_SYNC,       /* S, global synchronisation */
  FP_T_COMP,     /* forward + backward */
  FP_T_COMM,     /* communication */
  FP_NICS,       /* nccl-*: NICs per node K */
  FP_CHANNELS,   /* nccl-*: channels C (rings, or pairs of trees) */
  FP_CHUNK,      /* nccl-tree: bytes a channel pipelines per step */
  FP_COUNT
};

struct formula_in {
  double v[FP_COUNT]; /* NAN when not given */
};

/* Every parameter NAN. */
void formula_in_init(struct formula_in *in);

/* The command-line name of a parameter ("alpha", "t-select"), its unit
 * ("s", "B", "s/B" or "") and a one-line description. */
const char *formula_param_name(enum formula_param p);
const char *formula_param_unit(enum formula_param p);
const char *formula_param_help(enum formula_param p);

enum { FORMULA_TERMS_MAX = 8 };

struct formula_term {
  const char *name; /* short column name: "latency", "bandwidth", ... */
  const char *expr; /* the term as written: "2(p-1) alpha" */
  double value;
};

struct formula_out {
  double total;
  size_t nterms;
  struct formula_term terms[FORMULA_TERMS_MAX];
};

struct formula {
  const char *name;
  const char *source;      /* paper, equation or section */
  const char *expression;  /* the whole formula, in text */
  const char *description; /* one line */
  const char *unit;        /* "s", or "" for a ratio */
  unsigned long needs;     /* bit (1 << param) per required parameter */
  bool pow2;               /* p must be a power of two */
  void (*eval)(const struct formula_in *in, struct formula_out *out);
};

size_t formula_count(void);
const struct formula *formula_at(size_t i);
/* NULL for an unknown name. */
const struct formula *formula_find(const char *name);

/* Check IN against F (every needed parameter given, p >= 1 and an integer,
 * a power of two where F says so, sizes and times non-negative, bandwidth
 * terms positive) and evaluate. Returns 0 or -EINVAL with a message naming
 * the parameter and what is allowed. */
int formula_eval(const struct formula *f, const struct formula_in *in,
                 struct formula_out *out, char *err, size_t errlen);

#endif
