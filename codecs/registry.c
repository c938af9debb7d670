/* codecs/registry.c: the one list of codecs. Adding a codec: its file and
 * one line here. */
#include "codec_impl.h"

#include <stdio.h>

extern const struct codec_ops codec_fp32_ops;
extern const struct codec_ops codec_fp16_ops;
extern const struct codec_ops codec_trunc_ops;
extern const struct codec_ops codec_q8_ops;
extern const struct codec_ops codec_inceptionn_ops;
extern const struct codec_ops codec_3lc_ops;
extern const struct codec_ops codec_terngrad_ops;
extern const struct codec_ops codec_onebit_ops;
extern const struct codec_ops codec_topk_ops;
extern const struct codec_ops codec_rgc_ops;

static const struct codec_ops *const registry[] = {
    &codec_fp32_ops,     &codec_fp16_ops,       &codec_trunc_ops,
    &codec_q8_ops,       &codec_inceptionn_ops, &codec_3lc_ops,
    &codec_terngrad_ops, &codec_onebit_ops,     &codec_topk_ops,
    &codec_rgc_ops,
};
enum { NCODECS = sizeof registry / sizeof registry[0] };

const struct codec_ops *codec_registry_find(const char *name, size_t len);
void codec_registry_names(char *buf, size_t len);

const struct codec_ops *codec_registry_find(const char *name, size_t len) {
  for (size_t i = 0; i < NCODECS; i++)
    if (strlen(registry[i]->info.name) == len &&
        memcmp(registry[i]->info.name, name, len) == 0)
      return registry[i];
  return NULL;
}

void codec_registry_names(char *buf, size_t len) {
  size_t used = 0;
  if (len)
    buf[0] = '\0';
  for (size_t i = 0; i < NCODECS && used < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                     registry[i]->info.name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

size_t codec_count(void) { return NCODECS; }

const struct codec_info *codec_info(size_t i) {
  return i < NCODECS ? &registry[i]->info : NULL;
}
