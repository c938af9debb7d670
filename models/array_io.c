/* models/array_io.c: .npy and .f32 vectors (array_io.h). Plain C and
 * stdio, so the parser can be fuzzed on its own. */
#include "array_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static const char NPY_MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The header is a Python dict literal; find 'key': and return the text
 * after the colon (leading spaces skipped), or NULL. */
static const char *dict_value(const char *h, size_t hl, const char *key) {
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl + 2 < hl; i++) {
    if ((h[i] == '\'' || h[i] == '"') && memcmp(h + i + 1, key, kl) == 0 &&
        h[i + 1 + kl] == h[i]) {
      size_t j = i + kl + 2;
      while (j < hl && h[j] == ' ')
        j++;
      if (j < hl && h[j] == ':') {
        j++;
        while (j < hl && h[j] == ' ')
          j++;
        return j < hl ? h + j : NULL;
      }
    }
  }
  return NULL;
}

/* The fixed part of a .npy file: the magic, the format version and the
 * header's length. On success the header's HL bytes start at *OFF, and
 * they lie inside the LEN bytes at P. */
static int npy_preamble(const unsigned char *p, size_t len, size_t *hl,
                        size_t *off, char *err, size_t errlen) {
  if (len < 10 || memcmp(p, NPY_MAGIC, 6) != 0) {
    errf(err, errlen, "not a NumPy .npy file (no \\x93NUMPY magic)");
    return -EBADMSG;
  }
  unsigned major = p[6];
  if (major == 1) {
    *hl = (size_t)p[8] | (size_t)p[9] << 8;
    *off = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      errf(err, errlen, "truncated .npy header");
      return -EBADMSG;
    }
    *hl = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 |
          (size_t)p[11] << 24;
    *off = 12;
  } else {
    errf(err, errlen, ".npy format version %u.%u is not supported (1, 2 or 3)",
         major, p[7]);
    return -EBADMSG;
  }
  if (*hl > len - *off) {
    errf(err, errlen,
         "truncated .npy header: it announces %zu bytes, %zu "
         "remain",
         *hl, len - *off);
    return -EBADMSG;
  }
  return 0;
}

/* The header's 'descr' must be float32 in this host's byte order. H is
 * NUL-terminated at HL. */
static int npy_check_descr(const char *h, size_t hl, char *err,
                           size_t errlen) {
  const char *descr = dict_value(h, hl, "descr");
  if (!descr || (*descr != '\'' && *descr != '"')) {
    errf(err, errlen, ".npy header has no 'descr'");
    return -EBADMSG;
  }
  char q = *descr++;
  const char *dend = strchr(descr, q);
  if (!dend) {
    errf(err, errlen, ".npy header: unterminated 'descr'");
    return -EBADMSG;
  }
  size_t dl = (size_t)(dend - descr);
  if (dl == 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=') &&
      descr[1] == 'f' && descr[2] == '4')
    return 0;
  /* The dtype comes from the file: print it with its non-printable bytes
   * escaped, so the message stays one line and harmless. */
  char shown[16 * 4 + 4];
  size_t w = 0;
  for (size_t i = 0; i < dl && i < 16; i++) {
    unsigned char ch = (unsigned char)descr[i];
    if (ch >= 0x20 && ch < 0x7f && ch != '\\')
      shown[w++] = (char)ch;
    else
      w += (size_t)snprintf(shown + w, sizeof shown - w, "\\x%02x", ch);
  }
  if (dl > 16)
    w += (size_t)snprintf(shown + w, sizeof shown - w, "...");
  shown[w] = '\0';
  errf(err, errlen,
       ".npy dtype '%s' is not supported: expected float32 ('<f4')", shown);
  return -EBADMSG;
}

/* The header's 'shape' tuple: *COUNT the product of its dimensions (at
 * most SIZE_MAX / 4, so that 4 * COUNT bytes do not wrap), *BIG how many
 * of them exceed 1. */
static int npy_parse_shape(const char *h, size_t hl, size_t *count,
                           size_t *big, char *err, size_t errlen) {
  const char *sh = dict_value(h, hl, "shape");
  if (!sh || *sh != '(') {
    errf(err, errlen, ".npy header has no valid 'shape'");
    return -EBADMSG;
  }
  sh++;
  *count = 1;
  *big = 0;
  for (;;) {
    while (*sh == ' ')
      sh++;
    if (*sh == ')')
      return 0;
    if (*sh < '0' || *sh > '9') {
      errf(err, errlen, ".npy header: malformed 'shape'");
      return -EBADMSG;
    }
    size_t d = 0;
    while (*sh >= '0' && *sh <= '9') {
      if (d > (SIZE_MAX - 9) / 10) {
        errf(err, errlen, ".npy header: shape dimension too large");
        return -EBADMSG;
      }
      d = d * 10 + (size_t)(*sh++ - '0');
    }
    if (d != 0 && *count > SIZE_MAX / 4 / d) {
      errf(err, errlen, ".npy header: shape too large");
      return -EBADMSG;
    }
    *count *= d;
    *big += d > 1;
    while (*sh == ' ')
      sh++;
    if (*sh == ',')
      sh++;
    else if (*sh != ')') {
      errf(err, errlen, ".npy header: malformed 'shape'");
      return -EBADMSG;
    }
  }
}

/* The header dict H (NUL-terminated at HL): a float32 array in C order
 * of *COUNT values. */
static int npy_parse_dict(const char *h, size_t hl, size_t *count, char *err,
                          size_t errlen) {
  int rc = npy_check_descr(h, hl, err, errlen);
  if (rc)
    return rc;
  const char *fo = dict_value(h, hl, "fortran_order");
  if (!fo || (strncmp(fo, "False", 5) != 0 && strncmp(fo, "True", 4) != 0)) {
    errf(err, errlen, ".npy header has no valid 'fortran_order'");
    return -EBADMSG;
  }
  bool fortran = fo[0] == 'T';
  size_t big;
  rc = npy_parse_shape(h, hl, count, &big, err, errlen);
  if (rc)
    return rc;
  /* With at most one dimension above 1, both orders are the same bytes. */
  if (fortran && big > 1) {
    errf(err, errlen,
         ".npy array is in Fortran order: expected C order "
         "(save with np.ascontiguousarray)");
    return -EBADMSG;
  }
  return 0;
}

int npy_parse(const void *buf, size_t len, size_t *data_off, size_t *n,
              char *err, size_t errlen) {
  const unsigned char *p = buf;
  size_t hl, off;
  int rc = npy_preamble(p, len, &hl, &off, err, errlen);
  if (rc)
    return rc;
  /* A copy with a terminating NUL keeps every scan of the dict inside
   * it. */
  char *h = malloc(hl + 1);
  if (!h) {
    errf(err, errlen, "out of memory reading a .npy header");
    return -ENOMEM;
  }
  memcpy(h, p + off, hl);
  h[hl] = '\0';
  size_t count;
  rc = npy_parse_dict(h, hl, &count, err, errlen);
  free(h);
  if (rc)
    return rc;
  size_t data = len - off - hl;
  if (data != 4 * count) {
    errf(err, errlen,
         ".npy data is %zu bytes, the shape needs %zu (%zu "
         "float32 values)",
         data, 4 * count, count);
    return -EBADMSG;
  }
  *data_off = off + hl;
  *n = count;
  return 0;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The whole of PATH into *BUF (malloc'ed, at least 64 KiB even for an
 * empty file; *LEN bytes used). */
static int read_file(const char *path, unsigned char **buf, size_t *len,
                     char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -ENOENT;
  }
  unsigned char *b = NULL;
  size_t used = 0, cap = 0;
  for (;;) {
    if (used == cap) {
      cap = cap ? cap * 2 : 1 << 16;
      unsigned char *nb = realloc(b, cap);
      if (!nb) {
        free(b);
        fclose(f);
        errf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
      }
      b = nb;
    }
    size_t got = fread(b + used, 1, cap - used, f);
    used += got;
    if (got == 0)
      break;
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    free(b);
    errf(err, errlen, "%s: read error", path);
    return -EIO;
  }
  *buf = b;
  *len = used;
  return 0;
}

/* Where the float32 values of the file PATH, read into the LEN bytes at
 * BUF, start (*OFF) and how many there are (*COUNT, maybe 0): .npy by its
 * magic, else raw .f32 by its name. */
static int locate_values(const char *path, const unsigned char *buf,
                         size_t len, size_t *off, size_t *count, char *err,
                         size_t errlen) {
  *off = 0;
  *count = 0;
  if (len >= 6 && memcmp(buf, NPY_MAGIC, 6) == 0) {
    char msg[256];
    int rc = npy_parse(buf, len, off, count, msg, sizeof msg);
    if (rc)
      errf(err, errlen, "%s: %s", path, msg);
    return rc;
  }
  if (ends_with(path, ".f32")) {
    if (len % 4) {
      errf(err, errlen,
           "%s: raw .f32 file of %zu bytes is not a whole "
           "number of float32 values",
           path, len);
      return -EBADMSG;
    }
    *count = len / 4;
    return 0;
  }
  errf(err, errlen,
       "%s: unknown format: expected a NumPy .npy file "
       "(float32) or raw little-endian float32 named *.f32",
       path);
  return -EBADMSG;
}

int array_read(const char *path, float **out, size_t *n, char *err,
               size_t errlen) {
  *out = NULL;
  *n = 0;
  unsigned char *buf;
  size_t len, off, count;
  int rc = read_file(path, &buf, &len, err, errlen);
  if (rc)
    return rc;
  rc = locate_values(path, buf, len, &off, &count, err, errlen);
  if (!rc && count == 0) {
    errf(err, errlen, "%s: holds no values (expected at least one float32)",
         path);
    rc = -EBADMSG;
  }
  if (rc) {
    free(buf);
    return rc;
  }
  /* Move the floats to the front so BUF itself is the result. */
  memmove(buf, buf + off, 4 * count);
  *out = (float *)(void *)buf;
  *n = count;
  return 0;
}

size_t npy_header(uint64_t n, unsigned char *buf) {
  char dict[96];
  int dl = snprintf(dict, sizeof dict,
                    "{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(%llu,), }",
                    (unsigned long long)n);
  /* Magic, version, length, dict, spaces, '\n': a multiple of 64. */
  size_t total = ((size_t)10 + (size_t)dl + 1 + 63) / 64 * 64;
  size_t hl = total - 10;
  memcpy(buf, NPY_MAGIC, 6);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (unsigned char)hl;
  buf[9] = (unsigned char)(hl >> 8);
  memset(buf + 10, ' ', hl);
  memcpy(buf + 10, dict, (size_t)dl);
  buf[total - 1] = '\n';
  return total;
}

int npy_encode(const float *x, size_t n, unsigned char **out, size_t *len) {
  unsigned char hdr[NPY_HEADER_MAX];
  size_t hl = npy_header(n, hdr);
  size_t total = hl + 4 * n;
  unsigned char *b = malloc(total);
  if (!b)
    return -ENOMEM;
  memcpy(b, hdr, hl);
  if (n)
    memcpy(b + hl, x, 4 * n);
  *out = b;
  *len = total;
  return 0;
}
