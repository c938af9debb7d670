/* config/inputs.c: the [inputs] section of a point's configuration (see
 * inputs.h). */
#include "inputs.h"

#include "model.h"
#include "version.h"

#include <string.h>

#include <glib.h>

const char *gradsim_build(void) { return GRADSIM_BUILD; }

/* The first 16 hex digits of the SHA-256 of PATH's bytes, or "unreadable". */
static char *file_digest(const char *path) {
  char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(path, &text, &len, NULL))
    return g_strdup("unreadable");
  char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256,
                                          (const guchar *)text, len);
  g_free(text);
  sum[16] = '\0';
  return sum;
}

static gint cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One digest of every regular file of DIR (names and contents, in name
 * order): the model files, devices.conf (which also holds the reference
 * measurements other models are timed from) and the cost tables. */
static char *dir_digest(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d)
    return g_strdup("unreadable");
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  for (const char *n; (n = g_dir_read_name(d));)
    if (g_str_has_suffix(n, ".model") || g_str_has_suffix(n, ".conf"))
      g_ptr_array_add(names, g_strdup(n));
  g_dir_close(d);
  g_ptr_array_sort(names, cmp_str);
  GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
  for (guint i = 0; i < names->len; i++) {
    const char *n = g_ptr_array_index(names, i);
    char *path = g_build_filename(dir, n, NULL);
    char *dig = file_digest(path);
    g_checksum_update(ck, (const guchar *)n, (gssize)strlen(n) + 1);
    g_checksum_update(ck, (const guchar *)dig, (gssize)strlen(dig) + 1);
    g_free(dig);
    g_free(path);
  }
  char *sum = g_strndup(g_checksum_get_string(ck), 16);
  g_checksum_free(ck);
  g_ptr_array_free(names, TRUE);
  return sum;
}

/* FILE's digest, read once per experiment (points share their files). */
static const char *cached(GHashTable *seen, const char *path) {
  char *d = g_hash_table_lookup(seen, path);
  if (!d) {
    d = file_digest(path);
    g_hash_table_insert(seen, g_strdup(path), d);
  }
  return d;
}

void experiment_seal_inputs(struct experiment *e) {
  char *models = dir_digest(model_dir(NULL));
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           g_free);
  for (guint i = 0; i < e->points->len; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    GString *s = g_string_new(p->config);
    g_string_append_printf(s, "\n[inputs]\ngradsim = %s\nmodels = %s\n",
                           GRADSIM_BUILD, models);
    /* A model given by path (a name is a file of the models directory). */
    if (strchr(p->model, '/') || g_str_has_suffix(p->model, ".model"))
      g_string_append_printf(s, "model_file = %s\n", cached(seen, p->model));
    if (p->costs && *p->costs)
      g_string_append_printf(s, "costs_file = %s\n", cached(seen, p->costs));
    if (p->topology == TOPO_FILE)
      g_string_append_printf(s, "platform_file = %s\n",
                             cached(seen, p->platform_file));
    if (p->hosts_file && *p->hosts_file)
      g_string_append_printf(s, "hosts_file = %s\n",
                             cached(seen, p->hosts_file));
    g_free(p->config);
    p->config = g_string_free(s, FALSE);
    char *sum =
        g_compute_checksum_for_string(G_CHECKSUM_SHA256, p->config, -1);
    memcpy(p->hash, sum, 16);
    p->hash[16] = '\0';
    g_free(sum);
  }
  g_hash_table_destroy(seen);
  g_free(models);
}
