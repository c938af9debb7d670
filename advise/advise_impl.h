/* advise/advise_impl.h: what the files of advise/ share: candidates, the
 * space, the search's state. Not for users of the layer (advise.h). */
#ifndef GRADSIM_ADVISE_ADVISE_IMPL_H
#define GRADSIM_ADVISE_ADVISE_IMPL_H

#include "advise.h"
#include "engine.h"

#include <glib.h>

/* What became of a candidate. */
enum cand_state {
  CAND_PENDING, /* not simulated yet */
  CAND_SIMULATED,
  CAND_PRUNED,      /* its lower bound could not beat the best */
  CAND_OVER_BUDGET, /* its estimate did not fit the budget left */
  CAND_EXCLUDED,    /* its codec errs more than --max-error */
  CAND_NO_FIT,      /* predicted not to fit the GPU's memory */
  CAND_REFUSED,     /* the engine refuses the combination */
  CAND_STATE_COUNT
};
extern const char *const cand_state_names[CAND_STATE_COUNT];

struct cand {
  GPtrArray *kv;   /* "section.key=value" of the space (owned) */
  char *label;     /* "key=value key=value" (sections dropped) */
  struct point *p; /* its point, sealed; NULL when refused at load */
  char *why;       /* CAND_REFUSED: the engine's reason */
  enum cand_state state;
  bool codec;         /* it runs a codec ([exchange] codec not none) */
  bool lossy;         /* its values change on the wire (a lossy codec or
                       * 16-bit gradients) */
  double bits;        /* payload bits per value of its codec (NAN: none) */
  double err, cosine; /* relative error and cosine of the summed update */
  struct run_prediction pred;
  double est_s;   /* estimated wall seconds of its simulation */
  unsigned round; /* the search round that simulated it (1-based) */
  /* Simulated (runs.csv's columns): */
  double iter_s, exposed_comm_s, exposed_codec_s, memory_bytes;
  char fits[4];
};

/* T, an iteration time of C, per sample its cluster trains (its workers
 * times their batch): what the search minimizes, the inverse of the
 * throughput, so that a space that varies the workers or the batch
 * compares like with like (for a fixed cluster, the iteration's order). */
static inline double cand_per_sample(const struct cand *c, double t) {
  return t / (c->p->nodes * (double)c->pred.batch);
}

/* A family of the space: every combination of its keys' values. */
struct family {
  GPtrArray *keys;   /* "section.key" */
  GPtrArray *values; /* per key, a GPtrArray of its values */
};

struct search {
  const struct advise_opts *o;
  GString *base;      /* the experiment text every candidate starts from */
  GPtrArray *keys;    /* every key of the space, "section.key", in order */
  GPtrArray *cands;   /* struct cand * */
  GHashTable *labels; /* label -> struct cand * */
  GHashTable *errors; /* codec spec and [gradients] -> struct codec_error */
  double budget_left;
  double rho; /* least simulated / predicted ratio (1 before any) */
  unsigned rounds;
};

/* space.c */
/* The base text of O: platform, model and the defaults advise runs with
 * (training.mode = overlap, 5 iterations, sampled payloads); -1 with *ERR
 * on a bad --platform. */
int space_base(const struct advise_opts *o, GString *base, char **err);
/* The families of the space: O's --space file, or the default one for
 * the base point BASE; keys that O's --set gives are dropped. -1 with
 * *ERR on a bad file, an unknown key, a bad value or an empty space. */
int space_families(struct search *s, const struct point *base,
                   GPtrArray **families, char **err);
void family_free(gpointer f);
/* Every combination of every family, as candidates (not loaded). */
void space_expand(struct search *s, GPtrArray *families);
/* A candidate of KV (copied) unless its label is known: NULL then. */
struct cand *cand_add(struct search *s, GPtrArray *kv);
/* Load C's point from the base and its values: refused when the engine
 * says so. */
void cand_load(struct search *s, struct cand *c);
/* The neighbours of C (bucket size and codec parameter, halved and
 * doubled) not yet candidates, added to S and loaded; how many. */
unsigned space_neighbours(struct search *s, const struct cand *c);
void cand_free(gpointer c);
/* WHY (taken) without the place experiment.h's messages begin with when
 * they come from the generated experiment ("advise:3: "): its section
 * and key name the input (g_free). */
char *space_message(char *why);

/* search.c */
/* C's codec error and payload bits, measured once per codec (*ERR on a
 * codec that cannot be measured). */
int search_measure(struct search *s, struct cand *c, char **err);

/* C's lower bound on its iteration time (advise.h, ADVISE_MARGIN). */
double search_lower_bound(const struct search *s, const struct cand *c);

/* report.c */
int report_write(struct search *s, struct advise_report *r, char **err);

#endif
