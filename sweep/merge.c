/* sweep/merge.c: the points of one sweep, spread over several result
 * directories (one per machine), joined into one (sweep_merge() of
 * sweep.h). */
#include "sweep_impl.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

/* The manifests of the directories: per directory, its sweeps by id; and
 * in how many directories each id appears. */
struct found {
  int ndirs;
  const char *const *dirs;
  GHashTable **sweeps; /* per directory: id -> struct experiment * */
  GHashTable *count;   /* id -> directories holding it */
};

static void found_free(struct found *f) {
  for (int d = 0; d < f->ndirs; d++)
    if (f->sweeps[d])
      g_hash_table_destroy(f->sweeps[d]);
  g_free(f->sweeps);
  g_hash_table_destroy(f->count);
}

/* The names of the manifests (NAME.sweep) in PDIR. */
static GPtrArray *manifest_names(const char *pdir) {
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GDir *dir = g_dir_open(pdir, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir)))
    if (g_str_has_suffix(name, ".sweep"))
      g_ptr_array_add(names, g_strdup(name));
  if (dir)
    g_dir_close(dir);
  return names;
}

/* Directory D's manifests into F; -1 with *ERR. */
static int load_dir(struct found *f, int d, char **err) {
  const char *dir = f->dirs[d];
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    *err = g_strdup_printf("%s is not a directory", dir);
    return -1;
  }
  f->sweeps[d] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       experiment_free_cb);
  char *pdir = g_build_filename(dir, "points", NULL);
  GPtrArray *names = manifest_names(pdir);
  int rc = 0;
  for (guint i = 0; i < names->len && rc == 0; i++) {
    char *file = g_build_filename(pdir, g_ptr_array_index(names, i), NULL);
    char *id, *why;
    struct experiment *e = manifest_load(file, &id, &why);
    if (!e) {
      *err = g_strdup_printf("%s %s", file, why);
      g_free(why);
      rc = -1;
    } else {
      guint seen = GPOINTER_TO_UINT(g_hash_table_lookup(f->count, id));
      g_hash_table_replace(f->count, g_strdup(id), GUINT_TO_POINTER(seen + 1));
      g_hash_table_insert(f->sweeps[d], id, e);
    }
    g_free(file);
  }
  if (rc == 0 && !names->len) {
    *err = g_strdup_printf("%s holds no sweep (no %s/*.sweep): not a result "
                           "directory of gradsim run",
                           dir, pdir);
    rc = -1;
  }
  g_ptr_array_free(names, TRUE);
  g_free(pdir);
  return rc;
}

static gint by_name(gconstpointer a, gconstpointer b) {
  return strcmp(a, b);
}

/* "a holds sweep X (path, N points), ...; b holds ..." */
static char *holdings(const struct found *f) {
  GString *s = g_string_new(NULL);
  for (int d = 0; d < f->ndirs; d++) {
    g_string_append_printf(s, "%s%s holds", d ? "; " : "", f->dirs[d]);
    GList *ids = g_list_sort(g_hash_table_get_keys(f->sweeps[d]), by_name);
    for (GList *l = ids; l; l = l->next) {
      const struct experiment *e = g_hash_table_lookup(f->sweeps[d], l->data);
      g_string_append_printf(s, "%s sweep %s (%s, %u points)",
                             l != ids ? "," : "", (char *)l->data, e->path,
                             e->points->len);
    }
    g_list_free(ids);
  }
  return g_string_free(s, FALSE);
}

/* The sweep every directory holds, or WANT; NULL with *ERR. */
static const char *choose(const struct found *f, const char *want,
                          char **err) {
  GPtrArray *common = g_ptr_array_new();
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init(&it, f->count);
  while (g_hash_table_iter_next(&it, &key, &val))
    if (GPOINTER_TO_UINT(val) == (guint)f->ndirs &&
        (!want || !strcmp(want, key)))
      g_ptr_array_add(common, key);
  const char *id = common->len == 1 ? g_ptr_array_index(common, 0) : NULL;
  if (!id) {
    char *s = holdings(f);
    if (want)
      *err = g_strdup_printf("sweep %s is not in every directory: %s", want,
                             s);
    else if (!common->len)
      *err = g_strdup_printf("the directories hold no common sweep (points "
                             "of different experiments or --set): %s",
                             s);
    else
      *err = g_strdup_printf("every directory holds several sweeps: %s; "
                             "choose one with --sweep ID",
                             s);
    g_free(s);
  }
  g_ptr_array_free(common, TRUE);
  return id;
}

/* The indices of MISSING (ascending) as "3, 5-7, 9". */
static char *ranges_text(GArray *missing) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < missing->len;) {
    guint a = g_array_index(missing, guint, i), b = a;
    while (++i < missing->len && g_array_index(missing, guint, i) == b + 1)
      b++;
    g_string_append_printf(s, "%s%u", s->len ? ", " : "", a);
    if (b > a)
      g_string_append_printf(s, "-%u", b);
  }
  return g_string_free(s, FALSE);
}

/* Point I of E from the first directory that has its row, in *SRC (-1:
 * none); -1 with *ERR when its row differs between directories or has
 * another version's columns. */
static int locate(const struct found *f, const struct experiment *e, guint i,
                  int *src, char **err) {
  const struct point *p = g_ptr_array_index(e->points, i);
  char *row = NULL;
  int rc = 0;
  *src = -1;
  for (int d = 0; d < f->ndirs && rc == 0; d++) {
    char *path = point_file(f->dirs[d], p, ".row"), *text = NULL;
    if (g_file_get_contents(path, &text, NULL, NULL)) {
      if (*src < 0) {
        *src = d;
        row = text;
        text = NULL;
      } else if (strcmp(row, text) != 0) {
        *err = g_strdup_printf("point %u (%s) differs between %s and %s "
                               "(simulated by different versions of "
                               "gradsim?)",
                               i, p->hash, f->dirs[*src], f->dirs[d]);
        rc = -1;
      }
    }
    g_free(text);
    g_free(path);
  }
  if (rc == 0 && row) {
    GPtrArray *fields = csv_split(row);
    if (fields->len + 1 != NCOLS) {
      *err = g_strdup_printf("point %u (%s) in %s has %u result fields, this "
                             "gradsim writes %d (simulated by another "
                             "version?)",
                             i, p->hash, f->dirs[*src], fields->len,
                             NCOLS - 1);
      rc = -1;
    }
    g_ptr_array_unref(fields);
  }
  g_free(row);
  return rc;
}

/* Every point's source directory into SRC; -1 with *ERR naming the
 * missing ones. */
static int locate_all(const struct found *f, const struct experiment *e,
                      const char *id, int *src, char **err) {
  GArray *missing = g_array_new(FALSE, FALSE, sizeof(guint));
  int rc = 0;
  for (guint i = 0; i < e->points->len && rc == 0; i++) {
    rc = locate(f, e, i, &src[i], err);
    if (rc == 0 && src[i] < 0)
      g_array_append_val(missing, i);
  }
  if (rc == 0 && missing->len) {
    char *list = ranges_text(missing);
    GString *d = g_string_new(NULL);
    for (int k = 0; k < f->ndirs; k++)
      g_string_append_printf(d, "%s%s", k ? ", " : "", f->dirs[k]);
    *err = g_strdup_printf("%u of %u points of sweep %s (%s) are in none "
                           "of %s: %s (run them with gradsim run %s --point "
                           "I)",
                           missing->len, e->points->len, id, e->path, d->str,
                           list, e->path);
    g_string_free(d, TRUE);
    g_free(list);
    rc = -1;
  }
  g_array_free(missing, TRUE);
  return rc;
}

static bool same_dir(const char *a, const char *b) {
  GStatBuf sa, sb;
  return g_stat(a, &sa) == 0 && g_stat(b, &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Copy every point's files from its source directory into OUT/points
 * (nothing when it is the same directory). */
static int copy_points(const struct found *f, const struct experiment *e,
                       const int *src, const char *out, char **err) {
  char *pdir = g_build_filename(out, "points", NULL);
  int rc = 0;
  if (g_mkdir_with_parents(pdir, 0755) != 0) {
    *err = g_strdup_printf("cannot create %s: %s", pdir, g_strerror(errno));
    rc = SWEEP_ENV_FAILURE;
  }
  for (guint i = 0; i < e->points->len && rc == 0; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    char *from_dir = g_build_filename(f->dirs[src[i]], "points", NULL);
    bool same = same_dir(from_dir, pdir);
    g_free(from_dir);
    for (size_t k = 0; k < G_N_ELEMENTS(POINT_EXTS) && !same && rc == 0;
         k++) {
      char *from = point_file(f->dirs[src[i]], p, POINT_EXTS[k]);
      char *to = point_file(out, p, POINT_EXTS[k]);
      char *text = NULL;
      gsize len = 0;
      GError *ge = NULL;
      if (g_file_get_contents(from, &text, &len, NULL) &&
          !g_file_set_contents(to, text, (gssize)len, &ge)) {
        *err = g_strdup(ge->message);
        g_error_free(ge);
        rc = SWEEP_ENV_FAILURE;
      }
      g_free(text);
      g_free(from);
      g_free(to);
    }
  }
  g_free(pdir);
  return rc;
}

int sweep_merge(const char *const *dirs, int ndirs, const char *sweep_id,
                const struct sweep_opts *o, struct sweep_report *report,
                char **err) {
  memset(report, 0, sizeof *report);
  *err = NULL;
  struct found f = {ndirs, dirs, g_new0(GHashTable *, ndirs),
                    g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                          NULL)};
  int rc = 0;
  for (int d = 0; d < ndirs && rc == 0; d++)
    rc = load_dir(&f, d, err) ? SWEEP_BAD_INPUT : 0;
  const char *id = rc ? NULL : choose(&f, sweep_id, err);
  const struct experiment *e = id ? g_hash_table_lookup(f.sweeps[0], id) : NULL;
  int *src = e ? g_new(int, e->points->len) : NULL;
  if (rc == 0 && !e)
    rc = SWEEP_BAD_INPUT;
  if (rc == 0 && locate_all(&f, e, id, src, err) != 0)
    rc = SWEEP_BAD_INPUT;
  if (rc == 0)
    rc = copy_points(&f, e, src, o->out, err);
  if (rc == 0)
    rc = manifest_write(o->out, e, err);
  if (rc == 0)
    rc = results_join(o->out, e, o->plot, report, err);
  g_free(src);
  found_free(&f);
  return rc;
}
