/* sweep/outputs.c: a set of files written all or nothing (sweep.h). */
#include "sweep.h"

#include <glib/gstdio.h>

struct outputs {
  GPtrArray *paths;
  GPtrArray *data;
  GArray *lens;
};

outputs *outputs_new(void) {
  outputs *o = g_new0(outputs, 1);
  o->paths = g_ptr_array_new_with_free_func(g_free);
  o->data = g_ptr_array_new_with_free_func(g_free);
  o->lens = g_array_new(FALSE, FALSE, sizeof(size_t));
  return o;
}

void outputs_add(outputs *o, const char *path, void *data, size_t len) {
  g_ptr_array_add(o->paths, g_strdup(path));
  g_ptr_array_add(o->data, data);
  g_array_append_val(o->lens, len);
}

void outputs_free(outputs *o) {
  if (!o)
    return;
  g_ptr_array_free(o->paths, TRUE);
  g_ptr_array_free(o->data, TRUE);
  g_array_free(o->lens, TRUE);
  g_free(o);
}

int outputs_commit(outputs *o, char **err) {
  int rc = 0;
  for (guint i = 0; i < o->paths->len && rc == 0; i++) {
    const char *path = g_ptr_array_index(o->paths, i);
    GError *ge = NULL;
    if (!g_file_set_contents(path, g_ptr_array_index(o->data, i),
                             (gssize)g_array_index(o->lens, size_t, i), &ge)) {
      *err = g_strdup_printf("%s (nothing was written)", ge->message);
      g_error_free(ge);
      for (guint j = 0; j < i; j++)
        g_unlink(g_ptr_array_index(o->paths, j));
      rc = -1;
    }
  }
  outputs_free(o);
  return rc;
}
