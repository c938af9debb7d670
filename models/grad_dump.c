/* models/grad_dump.c: a synthetic gradient written to a file
 * (grad_dump.h). */
#include "grad_dump.h"

#include "array_io.h"

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int grad_dump_range(const struct model *m, const char *tensor,
                    struct grad_dump_range *out) {
  size_t first = 0, last = m->ntensors;
  if (tensor) {
    while (first < m->ntensors && strcmp(m->tensors[first].name, tensor) != 0)
      first++;
    if (first == m->ntensors)
      return -ENOENT;
    last = first + 1;
  }
  out->first = first;
  out->last = last;
  out->values = 0;
  for (size_t i = first; i < last; i++)
    out->values += m->tensors[i].elements;
  return 0;
}

/* A new temporary file in DIR, its name into *TMPL (g_free'd by the
 * caller), with the mode any new file gets, opened for writing as *F
 * (NULL when fdopen fails). -1 with errno set when DIR refuses it. */
static int open_temp(const char *dir, char **tmpl, FILE **f) {
  *tmpl = g_build_filename(dir, ".gradsim-XXXXXX", NULL);
  int fd = g_mkstemp(*tmpl);
  if (fd < 0)
    return -1;
  /* mkstemp makes the file private; give it the mode any new file gets. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  *f = fdopen(fd, "wb");
  if (!*f)
    close(fd);
  return 0;
}

/* The header (NPY) and the values of tensors R into F; false on a failed
 * write or generator. */
static bool write_values(FILE *f, bool npy, const struct model *m,
                         const struct grad_dump_range *r,
                         const struct gradgen_params *gp, uint32_t worker,
                         uint64_t iteration) {
  bool ok = true;
  if (npy) {
    unsigned char hdr[NPY_HEADER_MAX];
    size_t hl = npy_header(r->values, hdr);
    ok = fwrite(hdr, 1, hl, f) == hl;
  }
  enum { CHUNK = 1 << 20 };
  float *buf = g_new(float, CHUNK);
  for (size_t i = r->first; i < r->last && ok; i++)
    for (uint64_t off = 0; off < m->tensors[i].elements && ok; off += CHUNK) {
      size_t c = (size_t)MIN((uint64_t)CHUNK, m->tensors[i].elements - off);
      ok = gradgen_fill(gp, worker, (uint32_t)i, iteration, 1.0, off, buf, c) ==
               0 &&
           fwrite(buf, sizeof(float), c, f) == c;
    }
  g_free(buf);
  return ok;
}

int grad_dump_write(const char *path, bool npy, const struct model *m,
                    const struct grad_dump_range *r,
                    const struct gradgen_params *gp, uint32_t worker,
                    uint64_t iteration, char *err, size_t errlen) {
  char *dir = g_path_get_dirname(path), *tmpl;
  FILE *f;
  if (open_temp(dir, &tmpl, &f) != 0) {
    int e = errno;
    snprintf(err, errlen, "cannot create a file in %s: %s", dir, g_strerror(e));
    g_free(tmpl);
    g_free(dir);
    return e ? -e : -EIO;
  }
  g_free(dir);
  bool ok = f && write_values(f, npy, m, r, gp, worker, iteration);
  if (f && fclose(f) != 0)
    ok = false;
  int rc = 0;
  if (!ok || g_rename(tmpl, path) != 0) {
    g_unlink(tmpl);
    int e = errno;
    snprintf(err, errlen, "writing %s failed: %s", path, g_strerror(e));
    rc = e ? -e : -EIO;
  }
  g_free(tmpl);
  return rc;
}
