/* config/presets.h: [platform] preset: named machines and clusters of
 * today, each a set of values for keys the experiment does not give
 * itself (docs/collectives.md, "Presets"). */
#ifndef GRADSIM_CONFIG_PRESETS_H
#define GRADSIM_CONFIG_PRESETS_H

struct preset_value {
  const char *section, *key, *value;
};

struct preset {
  const char *name;
  const char *description; /* one line */
  const char *source;      /* where the figures come from */
  const struct preset_value *values; /* ends with a NULL section */
};

/* NULL for an unknown name. */
const struct preset *preset_find(const char *name);
/* Every preset's name, comma-separated (g_free). */
char *preset_names(void);
/* The presets in order: I in [0, preset_count()). */
unsigned preset_count(void);
const struct preset *preset_at(unsigned i);

#endif
