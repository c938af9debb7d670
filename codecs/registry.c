/* codecs/registry.c: the one list of codecs. Adding a codec: its file and
 * one line here. */
#include "codec_impl.h"

#include <stdio.h>

extern const struct codec_ops codec_fp32_ops;
extern const struct codec_ops codec_fp16_ops;
extern const struct codec_ops codec_bf16_ops;
extern const struct codec_ops codec_trunc_ops;
extern const struct codec_ops codec_q8_ops;
extern const struct codec_ops codec_inceptionn_ops;
extern const struct codec_ops codec_3lc_ops;
extern const struct codec_ops codec_terngrad_ops;
extern const struct codec_ops codec_qsgd_ops;
extern const struct codec_ops codec_onebit_ops;
extern const struct codec_ops codec_topk_ops;
extern const struct codec_ops codec_rgc_ops;
extern const struct codec_ops codec_powersgd_ops;

static const struct codec_ops *const registry[] = {
    &codec_fp32_ops,   &codec_fp16_ops,     &codec_bf16_ops,
    &codec_trunc_ops,  &codec_q8_ops,       &codec_inceptionn_ops,
    &codec_3lc_ops,    &codec_terngrad_ops, &codec_qsgd_ops,
    &codec_onebit_ops, &codec_topk_ops,     &codec_rgc_ops,
    &codec_powersgd_ops,
};
enum { NCODECS = sizeof registry / sizeof registry[0] };

/* Codecs a test program adds (tests/faulty.c: decoders broken on
 * purpose, which the oracle must catch), NULL-terminated: found by name,
 * never listed. A weak reference, so that in gradsim itself, where
 * nothing defines it, the list is absent. (A GCC and clang extension, as
 * the builtins the codecs use.) */
extern const struct codec_ops *const codec_registry_extra[]
    __attribute__((weak));

const struct codec_ops *codec_registry_find(const char *name, size_t len);
void codec_registry_names(char *buf, size_t len);

static bool named(const struct codec_ops *ops, const char *name, size_t len) {
  return strlen(ops->info.name) == len &&
         memcmp(ops->info.name, name, len) == 0;
}

const struct codec_ops *codec_registry_find(const char *name, size_t len) {
  for (size_t i = 0; i < NCODECS; i++)
    if (named(registry[i], name, len))
      return registry[i];
  for (size_t i = 0; codec_registry_extra && codec_registry_extra[i]; i++)
    if (named(codec_registry_extra[i], name, len))
      return codec_registry_extra[i];
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

size_t codec_setting_count(void) {
  size_t k = 0;
  for (size_t i = 0; i < NCODECS; i++) {
    const char *const *s = registry[i]->info.settings;
    size_t m = 0;
    while (s && s[m])
      m++;
    k += m ? m : 1;
  }
  return k;
}

const char *codec_setting(size_t i) {
  for (size_t c = 0; c < NCODECS; c++) {
    const char *const *s = registry[c]->info.settings;
    if (!s || !s[0]) {
      if (i == 0)
        return registry[c]->info.name;
      i--;
      continue;
    }
    for (size_t m = 0; s[m]; m++, i--)
      if (i == 0)
        return s[m];
  }
  return NULL;
}

const struct codec_info *codec_info(size_t i) {
  return i < NCODECS ? &registry[i]->info : NULL;
}
