/* tests/fuzz/fuzz_model.c: libFuzzer harness for model_load_data()
 * (models/model.h): the model-file reader, its expect checks, and the
 * timing of the model read against the shipped device table
 * (models/devices.conf, read from the directory compiled in as
 * GRADSIM_MODELS_DIR).
 *
 * Input: a model file, so the shipped models are seeds as they are. The
 * device, precision and batch come from a fixed table, picked by the
 * input's length: every input is timed one way, and all ways are
 * reached (a measured model, a device's mean efficiency, every device's
 * mean; the file's batch and another).
 *
 * Properties checked besides memory safety and leaks (abort() on
 * violation):
 *   - a failure is a negative errno, no model, and a non-empty one-line
 *     message;
 *   - a model has layers and tensors, each tensor in a layer, 1 ..
 *     MODEL_MAX_PARAMS parameters that are the sum of its tensors', and
 *     finite, non-negative times whose parts add up to the totals. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* g_strsplit() finds each line with strstr(), whose AddressSanitizer
 * wrapper measures the whole rest of the string first: quadratic in the
 * file's length, about 100 times slower on the shipped files. The
 * parsers are not quadratic without the wrapper. */
const char *__asan_default_options(void) { return "intercept_strstr=0"; }

static const struct model_opts OPTS[] = {
    {.device = "P100", .precision = "fp32"},
    {.device = "V100", .precision = "mixed"},
    {.device = "TitanXp", .precision = "fp32", .batch = 32},
    {.device = "GTX980", .precision = "mixed"},
    {.device = "H100", .precision = "bf16"},
};
enum { NOPTS = sizeof OPTS / sizeof OPTS[0] };

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_model: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  abort();
}

static bool is_time(double t) { return isfinite(t) && t >= 0; }

/* A and B equal to rounding (sums of non-negative terms in different
 * orders). */
static bool same_sum(double a, double b) {
  return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300;
}

static void check_model(const struct model *m, const struct model_opts *o) {
  if (!m->name || !m->path || !m->dataset || !m->device || !m->precision ||
      !m->timing_source)
    fail("a string of the model is missing", NULL);
  if (m->nlayers == 0 || m->ntensors == 0)
    fail("a model without layers or tensors", m->name);
  if (m->backward_from >= m->nlayers)
    fail("backward_from outside the layers", m->name);
  if (m->batch != (o->batch > 0 ? o->batch : m->file_batch) ||
      m->file_batch < 1)
    fail("the batch is not the one asked for or the file's", m->name);
  uint64_t params = 0;
  double backward_s = 0;
  for (size_t i = 0; i < m->ntensors; i++) {
    const struct model_tensor *t = &m->tensors[i];
    if (t->layer >= m->nlayers || t->elements == 0 || !t->name)
      fail("a tensor outside the layers, or empty", m->name);
    if (!is_time(t->backward_s))
      fail("a tensor's backward time is not a time", m->name);
    params += t->elements;
  }
  if (params != m->params || params > MODEL_MAX_PARAMS)
    fail("params is not the tensors' sum, or is over the limit", m->name);
  double forward_s = 0, layers_backward_s = 0;
  for (size_t i = 0; i < m->nlayers; i++) {
    const struct model_layer *l = &m->layers[i];
    if (!is_time(l->forward_s) || !is_time(l->backward_s) || !l->name)
      fail("a layer's time is not a time", m->name);
    forward_s += l->forward_s;
    layers_backward_s += l->backward_s;
  }
  /* Each layer's backward time is shared among its tensors. */
  bool *has_tensor = calloc(m->nlayers, sizeof *has_tensor);
  if (!has_tensor)
    abort();
  for (size_t j = 0; j < m->ntensors; j++)
    has_tensor[m->tensors[j].layer] = true;
  for (size_t i = 0; i < m->nlayers; i++)
    if (has_tensor[i])
      backward_s += m->layers[i].backward_s;
  free(has_tensor);
  double tensors_backward_s = 0;
  for (size_t i = 0; i < m->ntensors; i++)
    tensors_backward_s += m->tensors[i].backward_s;
  if (!is_time(m->forward_s) || !is_time(m->backward_s) ||
      !is_time(m->update_s))
    fail("the model's times are not times", m->name);
  if (!same_sum(forward_s, m->forward_s) ||
      !same_sum(layers_backward_s, m->backward_s) ||
      !same_sum(tensors_backward_s, backward_s))
    fail("the parts of the times do not add up", m->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const struct model_opts *o = &OPTS[size % NOPTS];
  struct model *m = (struct model *)1; /* must be reset */
  char err[512];
  err[0] = '\0';
  int rc = model_load_data("fuzz.model", (const char *)data, size, o, &m, err,
                           sizeof err);
  if (rc != 0) {
    if (rc >= 0 || m != NULL)
      fail("a failure that is not a negative errno with no model", err);
    if (!err[0] || strchr(err, '\n'))
      fail("the error message is empty or spans several lines", err);
    return 0;
  }
  check_model(m, o);
  model_free(m);
  return 0;
}
