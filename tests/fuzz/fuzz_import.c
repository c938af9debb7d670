/* tests/fuzz/fuzz_import.c: libFuzzer harness for the importers of
 * `gradsim model import` (models/model_import.h): safetensors headers,
 * Hugging Face configs and parameter lists, and the model file written
 * from what they read.
 *
 * Input: byte 0 picks the route (0: a safetensors file, its 8-byte length
 * and JSON header; 1: a config.json; 2: a list of NAME SHAPE DTYPE
 * lines), the rest is the file.
 *
 * Properties checked besides memory safety and leaks (abort() on
 * violation):
 *   - a failure is -EINVAL with a non-empty one-line message;
 *   - every tensor read has 1..8 dimensions >= 1 and a known dtype;
 *   - a model file the importer writes is one gradsim reads back (timed
 *     on the shipped devices.conf), with the tensors' parameters. */
#include "model_import.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* As fuzz_model.c: g_strsplit() under ASan's strstr wrapper is quadratic. */
const char *__asan_default_options(void) { return "intercept_strstr=0"; }

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_import: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  abort();
}

static void check_error(int rc, const char *err) {
  if (rc != -EINVAL)
    fail("a failure that is not -EINVAL", err);
  if (!err[0] || strchr(err, '\n'))
    fail("the error message is empty or spans several lines", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  int route = data[0] % 3;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  GPtrArray *t = g_ptr_array_new_with_free_func(import_tensor_free);
  struct import_info info = {.name = g_strdup("fuzz")};
  char err[1024] = "";
  size_t skipped = 0;
  int rc = route == 0   ? import_safetensors_data("fuzz.safetensors", body,
                                                  len, t, &skipped, err,
                                                  sizeof err)
           : route == 1 ? import_config_data("config.json", body, len, t,
                                             &info, err, sizeof err)
                        : import_list_data("params.txt", body, len, t, err,
                                           sizeof err);
  if (rc) {
    check_error(rc, err);
    goto done;
  }
  uint64_t params = 0;
  for (guint i = 0; i < t->len; i++) {
    const struct import_tensor *x = t->pdata[i];
    uint64_t e = 1;
    if (x->ndims < 1 || x->ndims > MODEL_MAX_DIMS || !x->dtype[0])
      fail("a tensor without a shape or a dtype", x->name);
    for (size_t d = 0; d < x->ndims; d++) {
      if (x->dims[d] == 0)
        fail("a zero dimension", x->name);
      e *= x->dims[d];
    }
    params += e;
  }
  if (!info.seq_len)
    info.seq_len = 64; /* as --seq-len would give it */
  char *text = import_model_text(t, &info, err, sizeof err);
  if (!text) {
    check_error(-EINVAL, err);
    goto done;
  }
  struct model *m = NULL;
  struct model_opts o = {.device = "H100", .precision = "bf16"};
  err[0] = '\0';
  if (model_load_data("fuzz.model", text, strlen(text), &o, &m, err,
                      sizeof err) != 0)
    fail("an imported model does not read back", err);
  if (m->params != params)
    fail("the model's parameters are not the tensors'", m->name);
  model_free(m);
  g_free(text);
done:
  import_info_clear(&info);
  g_ptr_array_free(t, TRUE);
  return 0;
}
