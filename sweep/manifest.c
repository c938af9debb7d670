/* sweep/manifest.c: the sweep manifest, DIR/points/ID.sweep, which names
 * the sweep a directory's points belong to, so that sweep_merge() can
 * join directories written on several machines:
 *
 *   gradsim-sweep 1
 *   id ID                     the first 16 hex digits of the SHA-256 of
 *                             the configuration text below
 *   experiment PATH           as given to gradsim run (C-escaped)
 *   question TEXT             the question of its leading comment, if any
 *                             (C-escaped; experiment_question())
 *   points N
 *   swept KEY KEY ...         the swept keys, in sweep order
 *   # point 0 (HASH)          then config.txt, verbatim
 *   ...                                                                  */
#include "sweep_impl.h"

#include <stdio.h>
#include <string.h>

GString *manifest_config_text(const struct experiment *e) {
  GString *cfg = g_string_new(NULL);
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    g_string_append_printf(cfg, "# point %u (%s)\n%s\n", i, p->hash,
                           p->config);
  }
  return cfg;
}

static char *sweep_id(const char *config) {
  char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, config, -1);
  sum[16] = '\0';
  return sum;
}

static char *manifest_path(const char *dir, const char *id) {
  char *name = g_strconcat(id, ".sweep", NULL);
  char *path = g_build_filename(dir, "points", name, NULL);
  g_free(name);
  return path;
}

int manifest_write(const char *out, const struct experiment *e, char **err) {
  GString *cfg = manifest_config_text(e);
  char *id = sweep_id(cfg->str);
  char *path = g_strescape(e->path, NULL);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "gradsim-sweep 1\nid %s\nexperiment %s\n", id,
                         path);
  if (e->question) {
    char *q = g_strescape(e->question, NULL);
    g_string_append_printf(s, "question %s\n", q);
    g_free(q);
  }
  g_string_append_printf(s, "points %u\nswept", e->points->len);
  for (guint k = 0; k < e->swept->len; k++)
    g_string_append_printf(s, " %s", (char *)g_ptr_array_index(e->swept, k));
  g_string_append_printf(s, "\n%s", cfg->str);
  char *file = manifest_path(out, id);
  GError *ge = NULL;
  int rc = 0;
  if (!g_file_set_contents(file, s->str, (gssize)s->len, &ge)) {
    *err = g_strdup(ge->message);
    g_error_free(ge);
    rc = SWEEP_ENV_FAILURE;
  }
  g_free(file);
  g_string_free(s, TRUE);
  g_free(path);
  g_free(id);
  g_string_free(cfg, TRUE);
  return rc;
}

/* The head of a manifest: its id, experiment, point count and swept keys
 * into E, up to the first point's block (*BODY). */
static void parse_head(const char *text, struct experiment *e, char **id,
                       guint *n, const char **body, char **err) {
  const char *c = text;
  bool have_n = false;
  for (int line = 0; *c && !*body && !*err; line++) {
    const char *eol = strchr(c, '\n');
    if (!eol)
      break;
    char *l = g_strndup(c, (gsize)(eol - c));
    if (line == 0 && strcmp(l, "gradsim-sweep 1") != 0) {
      *err = g_strdup("is not a gradsim sweep manifest (version 1)");
    } else if (g_str_has_prefix(l, "id ")) {
      *id = g_strdup(l + 3);
    } else if (g_str_has_prefix(l, "experiment ")) {
      e->path = g_strcompress(l + 11);
    } else if (g_str_has_prefix(l, "question ")) {
      g_free(e->question);
      e->question = g_strcompress(l + 9);
    } else if (g_str_has_prefix(l, "points ")) {
      *n = (guint)g_ascii_strtoull(l + 7, NULL, 10);
      have_n = true;
    } else if (g_str_has_prefix(l, "swept")) {
      char **keys = g_strsplit(l + 5, " ", -1);
      for (char **k = keys; *k; k++)
        if (**k)
          g_ptr_array_add(e->swept, g_strdup(*k));
      g_strfreev(keys);
      *body = eol + 1;
    }
    g_free(l);
    c = eol + 1;
  }
  if (!*err && (!*body || !*id || !e->path || !have_n || *n == 0))
    *err = g_strdup("is truncated (no id, experiment, points or swept line)");
}

/* The body: N blocks "# point I (HASH)\n" CONFIG "\n", each point's
 * configuration checked against its hash. */
static void parse_points(const char *body, guint n, struct experiment *e,
                         char **err) {
  for (guint i = 0; !*err && i < n; i++) {
    char head[64];
    int len = snprintf(head, sizeof head, "# point %u (", i);
    const char *h = body + len, *cfg = h + 18;
    if (strncmp(body, head, (size_t)len) != 0 || strlen(h) < 18 ||
        strncmp(h + 16, ")\n", 2) != 0) {
      *err = g_strdup_printf("is malformed at point %u", i);
      break;
    }
    /* The configuration ends with a newline, the block with another. */
    const char *next = strstr(cfg, "\n\n# point ");
    const char *end = next ? next + 1 : cfg + strlen(cfg) - (*cfg != 0);
    struct point *p = g_new0(struct point, 1);
    memcpy(p->hash, h, 16);
    p->hash[16] = '\0';
    p->config = g_strndup(cfg, (gsize)(end - cfg));
    g_ptr_array_add(e->points, p);
    char *sum =
        g_compute_checksum_for_string(G_CHECKSUM_SHA256, p->config, -1);
    if (strncmp(sum, p->hash, 16) != 0)
      *err = g_strdup_printf("does not match itself: point %u's "
                             "configuration is not its hash %s",
                             i, p->hash);
    g_free(sum);
    /* An empty last configuration ends at the text's end: stay there. */
    body = *end ? end + 1 : end;
  }
}

struct experiment *manifest_load(const char *file, char **id, char **err) {
  char *text = NULL;
  *err = NULL;
  *id = NULL;
  if (!g_file_get_contents(file, &text, NULL, NULL)) {
    *err = g_strdup("cannot be read");
    return NULL;
  }
  struct experiment *e = g_new0(struct experiment, 1);
  e->points = g_ptr_array_new_with_free_func(point_free_cb);
  e->swept = g_ptr_array_new_with_free_func(g_free);
  const char *body = NULL;
  guint n = 0;
  parse_head(text, e, id, &n, &body, err);
  if (!*err)
    parse_points(body, n, e, err);
  if (!*err) {
    GString *cfg = manifest_config_text(e);
    char *sum = sweep_id(cfg->str);
    if (strcmp(sum, *id) != 0 || strcmp(cfg->str, strstr(text, "# point 0 (")))
      *err = g_strdup_printf("does not match its id %s", *id);
    g_free(sum);
    g_string_free(cfg, TRUE);
  }
  g_free(text);
  if (*err) {
    experiment_free(e);
    g_free(*id);
    *id = NULL;
    return NULL;
  }
  return e;
}
