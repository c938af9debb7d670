/* models/model_catalog.h: every model file of the models directory,
 * loaded and timed at once (`gradsim model list`).
 *
 * The caller owns the struct; model_catalog_load() fills it and
 * model_catalog_fini() frees what it holds. */
#ifndef GRADSIM_MODELS_MODEL_CATALOG_H
#define GRADSIM_MODELS_MODEL_CATALOG_H

#include "model.h"

#include <stddef.h>

struct model_catalog {
  size_t n;
  struct model **models; /* n models, sorted by name as model_list() */
};

/* model_load() of every name model_list(OPTS) gives, with OPTS. Returns 0,
 * or the first failing model_load()'s -errno and message (a bad device or
 * precision fails on the first model), with OUT left empty. */
int model_catalog_load(const struct model_opts *opts,
                       struct model_catalog *out, char *err, size_t errlen);

/* Free the models of C and empty it; an empty catalog is fine. */
void model_catalog_fini(struct model_catalog *c);

#endif
