/* config/check.c: an experiment's points checked before anything runs
 * (experiment_check() of experiment.h). */
#include "estimate.h"
#include "experiment.h"
#include "units.h"

/* Each point: the engine's checks and the size limits, its estimate
 * into EST[i] (EST may be NULL). Adds the bytes of its rows of
 * iterations.csv to *ROWS_BYTES. */
static int check_each(const struct experiment *e, struct estimate *ests,
                      double *rows_bytes, char **err) {
  for (guint i = 0; i < e->points->len; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    struct estimate own, *est = ests ? &ests[i] : &own;
    char *why = NULL;
    if (run_check(p, &why) != 0 || estimate_check(p, est, &why) != 0) {
      *err = e->points->len > 1
                 ? g_strdup_printf("%s: point %u: %s", e->path, i, why)
                 : g_strdup_printf("%s: %s", e->path, why);
      g_free(why);
      return -1;
    }
    *rows_bytes += est->rows_bytes;
  }
  return 0;
}

/* The platform files: loadable (each once), with hosts enough. */
static int check_files(const struct experiment *e, char **err) {
  GHashTable *xmls = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           NULL);
  int rc = 0;
  for (guint i = 0; i < e->points->len && rc == 0; i++) {
    struct point *p = g_ptr_array_index(e->points, i);
    if (p->topology != TOPO_FILE)
      continue;
    gpointer known;
    size_t hosts;
    char *why = NULL;
    if (g_hash_table_lookup_extended(xmls, p->platform_file, NULL, &known)) {
      hosts = GPOINTER_TO_SIZE(known);
    } else {
      if (platform_file_check(p->platform_file, &hosts, &why) != 0) {
        *err = g_strdup_printf("%s: %s", e->path, why);
        g_free(why);
        rc = -1;
        break;
      }
      g_hash_table_insert(xmls, g_strdup(p->platform_file),
                          GSIZE_TO_POINTER(hosts));
    }
    if (hosts < (size_t)p->nodes + (size_t)p->aggregators) {
      *err = g_strdup_printf("%s: platform %s has %zu hosts; [platform] "
                             "nodes = %d and aggregators = %d need %d",
                             e->path, p->platform_file, hosts, p->nodes,
                             p->aggregators, p->nodes + p->aggregators);
      rc = -1;
    }
  }
  g_hash_table_destroy(xmls);
  return rc;
}

/* Every name of a point's hostfile is a host of its platform. */
static int check_hostfile(const struct experiment *e, const struct point *p,
                          char **err) {
  char **names = NULL, *why = NULL;
  if (platform_host_names(p, &names, &why) != 0) {
    *err = g_strdup_printf("%s: %s", e->path, why);
    g_free(why);
    return -1;
  }
  GHashTable *have = g_hash_table_new(g_str_hash, g_str_equal);
  for (char **n = names; *n; n++)
    g_hash_table_add(have, *n);
  int rc = 0;
  for (char **h = p->hosts; *h && rc == 0; h++)
    if (!g_hash_table_contains(have, *h)) {
      guint n = g_strv_length(names);
      *err = g_strdup_printf("%s: [platform] hosts = %s: no host '%s' on "
                             "the platform (its %u hosts are %s ... %s)",
                             e->path, p->hosts_file, *h, n,
                             n ? names[0] : "", n ? names[n - 1] : "");
      rc = -1;
    }
  g_hash_table_destroy(have);
  g_strfreev(names);
  return rc;
}

static int check_hostfiles(const struct experiment *e, char **err) {
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    if (p->hosts && check_hostfile(e, p, err) != 0)
      return -1;
  }
  return 0;
}

int experiment_check(const struct experiment *e, struct estimate *est,
                     char **err) {
  *err = NULL;
  double rows_bytes = 0;
  if (check_each(e, est, &rows_bytes, err) != 0)
    return -1;
  double limit = ESTIMATE_MEMORY_FRACTION * estimate_physical_memory();
  if (rows_bytes > limit) {
    char *need = units_bytes_text(rows_bytes);
    char *lim = units_bytes_text(limit);
    *err = g_strdup_printf(
        "%s: the sweep's %u points would write about %s of iterations.csv, "
        "which is joined in memory; the limit is %s (%.0f%% of this "
        "machine's memory): split the sweep or reduce [training] "
        "iterations or [platform] nodes",
        e->path, e->points->len, need, lim, 100 * ESTIMATE_MEMORY_FRACTION);
    g_free(need);
    g_free(lim);
    return -1;
  }
  if (check_files(e, err) != 0)
    return -1;
  return check_hostfiles(e, err);
}
