/* tests/test_array_io.c: gradient vectors on disk (models/array_io.h):
 * .npy headers of every version, shapes, dtypes, truncation, and raw
 * .f32 files. Files live in a fresh mkdtemp directory per test. */
#define _POSIX_C_SOURCE 200809L
#include "array_io.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the temporary directory -------------------------------------- */

/* Paths are short: a temporary directory and a file name. */
enum { PATH_LEN = 1024 };
static char tmpdir[PATH_LEN / 2];

static void make_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  int w = snprintf(tmpdir, sizeof tmpdir, "%s/gradsim-array-io-XXXXXX",
                   base && *base ? base : "/tmp");
  cr_assert(w > 0 && (size_t)w < sizeof tmpdir, "TMPDIR too long");
  cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp(%s): %s", tmpdir,
                     strerror(errno));
}

static void remove_tmpdir(void) {
  DIR *d = opendir(tmpdir);
  if (!d)
    return;
  struct dirent *e;
  char path[PATH_LEN];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(tmpdir);
}

TestSuite(array_io, .init = make_tmpdir, .fini = remove_tmpdir);

/* Write LEN bytes into NAME inside the temporary directory; the full path
 * goes to PATH (PATH_LEN bytes). */
static void write_file(const char *name, const void *data, size_t len,
                       char *path) {
  int w = snprintf(path, PATH_LEN, "%s/%s", tmpdir, name);
  cr_assert(w > 0 && w < PATH_LEN, "path too long");
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "fopen(%s): %s", path, strerror(errno));
  if (len)
    cr_assert_eq(fwrite(data, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
}

/* ---- building .npy files by hand ----------------------------------- */

/* A .npy file of format version MAJOR.0 whose header is the dict DICT
 * (padded with spaces and a newline so that the data starts at a multiple
 * of 64, as NumPy writes it), followed by DLEN bytes of DATA. Malloc'ed,
 * exactly *LEN bytes. */
static unsigned char *build_npy(unsigned major, const char *dict,
                                const void *data, size_t dlen, size_t *len,
                                size_t *data_off) {
  size_t pre = major == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t hl = (pre + dl + 1 + 63) / 64 * 64 - pre;
  size_t total = pre + hl + dlen;
  unsigned char *b = malloc(total);
  cr_assert_not_null(b);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (unsigned char)major;
  b[7] = 0;
  for (size_t i = 0; i < pre - 8; i++)
    b[8 + i] = (unsigned char)(hl >> (8 * i));
  memset(b + pre, ' ', hl);
  memcpy(b + pre, dict, dl);
  b[pre + hl - 1] = '\n';
  if (dlen)
    memcpy(b + pre + hl, data, dlen);
  *len = total;
  if (data_off)
    *data_off = pre + hl;
  return b;
}

/* The dict of a float32 array of the given shape text ("(3,)"). */
static void f4_dict(char *buf, size_t len, const char *descr, bool fortran,
                    const char *shape) {
  snprintf(buf, len, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
           descr, fortran ? "True" : "False", shape);
}

/* npy_parse of a hand-built v1.0 file with COUNT float32 values of data;
 * returns its result, and *N the count it found. */
static int parse_shape(const char *descr, bool fortran, const char *shape,
                       size_t count, size_t *n, char *err, size_t errlen) {
  char dict[256];
  f4_dict(dict, sizeof dict, descr, fortran, shape);
  float *data = calloc(count ? count : 1, sizeof *data);
  cr_assert_not_null(data);
  size_t len, want_off;
  unsigned char *b = build_npy(1, dict, data, 4 * count, &len, &want_off);
  size_t off = 0;
  *n = SIZE_MAX;
  err[0] = '\0';
  int rc = npy_parse(b, len, &off, n, err, errlen);
  if (rc == 0)
    cr_assert_eq(off, want_off, "data offset %zu, expected %zu", off,
                 want_off);
  free(b);
  free(data);
  return rc;
}

static const float SAMPLE[7] = {1.5f, -0.0f, 3.0e-41f /* subnormal */,
                                -2.25e30f, 0.1f, 65504.0f, -1.0f};

/* ---- npy_encode and npy_parse -------------------------------------- */

Test(array_io, npy_encode_parses_back) {
  unsigned char *b;
  size_t len;
  cr_assert_eq(npy_encode(SAMPLE, 7, &b, &len), 0);
  cr_assert(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0, "magic and version 1.0");
  size_t off, n;
  char err[256] = "";
  int rc = npy_parse(b, len, &off, &n, err, sizeof err);
  cr_assert_eq(rc, 0, "npy_parse: %s", err);
  cr_assert_eq(n, 7);
  cr_assert_eq(off % 64, 0, "NumPy aligns the data to 64 bytes: %zu", off);
  cr_assert_eq(b[off - 1], '\n', "the header ends in a newline");
  cr_assert_eq(len, off + 4 * 7);
  cr_assert(memcmp(b + off, SAMPLE, sizeof SAMPLE) == 0, "values bit for bit");
  free(b);
}

Test(array_io, npy_encode_sizes) {
  const size_t sizes[] = {1, 9, 1000, 123457};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t count = sizes[k];
    float *x = malloc(count * sizeof *x);
    cr_assert_not_null(x);
    for (size_t i = 0; i < count; i++)
      x[i] = (float)i * 0.5f - 3.0f;
    unsigned char *b;
    size_t len, off, n;
    cr_assert_eq(npy_encode(x, count, &b, &len), 0);
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, count);
    cr_assert(memcmp(b + off, x, 4 * count) == 0);
    free(b);
    free(x);
  }
}

Test(array_io, npy_encode_then_array_read) {
  unsigned char *b;
  size_t len;
  cr_assert_eq(npy_encode(SAMPLE, 7, &b, &len), 0);
  char path[PATH_LEN];
  write_file("g.npy", b, len, path);
  free(b);
  float *x;
  size_t n;
  char err[512] = "";
  int rc = array_read(path, &x, &n, err, sizeof err);
  cr_assert_eq(rc, 0, "array_read: %s", err);
  cr_assert_eq(n, 7);
  cr_assert(memcmp(x, SAMPLE, sizeof SAMPLE) == 0);
  free(x);
}

Test(array_io, versions_2_and_3) {
  for (unsigned major = 2; major <= 3; major++) {
    size_t len, want_off, off, n;
    unsigned char *b =
        build_npy(major, "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (7,), }",
                  SAMPLE, sizeof SAMPLE, &len, &want_off);
    char err[256] = "";
    int rc = npy_parse(b, len, &off, &n, err, sizeof err);
    cr_assert_eq(rc, 0, "version %u.0: %s", major, err);
    cr_assert_eq(n, 7);
    cr_assert_eq(off, want_off, "v%u: a 4-byte header length: offset %zu",
                 major, off);
    cr_assert(memcmp(b + off, SAMPLE, sizeof SAMPLE) == 0);
    /* A v2 header longer than 65535 bytes, which v1 cannot express. */
    char *dict = malloc(70000);
    cr_assert_not_null(dict);
    int w = snprintf(dict, 70000,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), ");
    memset(dict + w, ' ', 69000 - (size_t)w);
    memcpy(dict + 69000, "}", 2);
    unsigned char *big = build_npy(major, dict, SAMPLE, sizeof SAMPLE, &len,
                                   &want_off);
    cr_assert_gt(want_off, 65536);
    rc = npy_parse(big, len, &off, &n, err, sizeof err);
    cr_assert_eq(rc, 0, "version %u.0, long header: %s", major, err);
    cr_assert_eq(off, want_off);
    cr_assert_eq(n, 7);
    free(big);
    free(dict);
    free(b);
  }
}

Test(array_io, unsupported_versions) {
  const unsigned majors[] = {0, 4, 255};
  for (size_t i = 0; i < sizeof majors / sizeof majors[0]; i++) {
    size_t len, off, n;
    unsigned char *b = build_npy(1, "{'descr': '<f4', 'fortran_order': False, "
                                    "'shape': (7,), }",
                                 SAMPLE, sizeof SAMPLE, &len, NULL);
    b[6] = (unsigned char)majors[i];
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG);
    cr_assert_not_null(strstr(err, "version"), "%s", err);
    free(b);
  }
}

Test(array_io, shapes) {
  char err[256];
  size_t n;
  cr_assert_eq(parse_shape("<f4", false, "(5,)", 5, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 5);
  cr_assert_eq(parse_shape("<f4", false, "(3, 4)", 12, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 12);
  cr_assert_eq(parse_shape("<f4", false, "(2, 3, 4)", 24, &n, err, sizeof err),
               0, "%s", err);
  cr_assert_eq(n, 24);
  cr_assert_eq(parse_shape("<f4", false, "(1, 6)", 6, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 6);
  /* A scalar: the empty product. */
  cr_assert_eq(parse_shape("<f4", false, "()", 1, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 1);
  /* An empty array parses (array_read refuses it). */
  cr_assert_eq(parse_shape("<f4", false, "(0,)", 0, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 0);
  cr_assert_eq(parse_shape("<f4", false, "(4, 0)", 0, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 0);
}

Test(array_io, other_float32_descrs) {
  char err[256];
  size_t n;
  cr_assert_eq(parse_shape("|f4", false, "(3,)", 3, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 3);
  cr_assert_eq(parse_shape("=f4", false, "(3,)", 3, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 3);
}

Test(array_io, fortran_order) {
  char err[256];
  size_t n;
  /* At most one dimension above 1: the same bytes in either order. */
  cr_assert_eq(parse_shape("<f4", true, "(1, 8)", 8, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 8);
  cr_assert_eq(parse_shape("<f4", true, "(8, 1)", 8, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 8);
  cr_assert_eq(parse_shape("<f4", true, "(8,)", 8, &n, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(n, 8);
  cr_assert_eq(parse_shape("<f4", true, "(1, 1, 5, 1)", 5, &n, err,
                           sizeof err),
               0, "%s", err);
  cr_assert_eq(n, 5);
  /* Two dimensions above 1: refused, saying C order is expected. */
  cr_assert_eq(parse_shape("<f4", true, "(2, 3)", 6, &n, err, sizeof err),
               -EBADMSG);
  cr_assert_not_null(strstr(err, "Fortran"), "%s", err);
  cr_assert_not_null(strstr(err, "C order"), "%s", err);
  cr_assert_eq(parse_shape("<f4", true, "(3, 1, 2)", 6, &n, err, sizeof err),
               -EBADMSG, "%s", err);
  /* The same shape in C order is fine. */
  cr_assert_eq(parse_shape("<f4", false, "(2, 3)", 6, &n, err, sizeof err), 0,
               "%s", err);
}

Test(array_io, wrong_dtypes_named) {
  const struct {
    const char *descr;
    size_t size;
  } bad[] = {{"<f8", 8}, {">f4", 4}, {"<i4", 4}, {"<f2", 2}, {"|u1", 1},
             {"<c8", 8}, {"f4", 4},  {"<f4 ", 4}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char dict[256];
    f4_dict(dict, sizeof dict, bad[i].descr, false, "(3,)");
    unsigned char data[24] = {0};
    size_t len, off, n;
    unsigned char *b = build_npy(1, dict, data, 3 * bad[i].size, &len, NULL);
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG,
                 "descr '%s' accepted", bad[i].descr);
    char quoted[16];
    snprintf(quoted, sizeof quoted, "'%s'", bad[i].descr);
    cr_assert_not_null(strstr(err, quoted), "the message names %s: %s", quoted,
                       err);
    cr_assert_not_null(strstr(err, "float32"), "says float32 is expected: %s",
                       err);
    free(b);
  }
}

/* The message is one line of text even when the file's dtype holds a
 * newline or binary bytes (found by tests/fuzz/fuzz_npy; the reproducer is
 * tests/fuzz/regress/fuzz_npy/dtype-message-newline). */
Test(array_io, dtype_message_is_one_line) {
  const char *descrs[] = {"<f4\n", "\n", "<f\r4", "\x1b[2J", "\xb6\xa1"};
  for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++) {
    char dict[256];
    f4_dict(dict, sizeof dict, descrs[i], false, "(1,)");
    const float one = 1.0f;
    size_t len, off, n;
    unsigned char *b = build_npy(1, dict, &one, sizeof one, &len, NULL);
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG);
    const char *p = err;
    while (*p && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f)
      p++;
    cr_expect_eq(*p, '\0', "descr %zu: byte 0x%02x at %td of the message",
                 i, (unsigned char)*p, p - err);
    free(b);
  }
}

Test(array_io, malformed_dicts) {
  const char *dicts[] = {
      "{'fortran_order': False, 'shape': (3,), }",                /* descr */
      "{'descr': <f4, 'fortran_order': False, 'shape': (3,), }",  /* quote */
      "{'descr': '<f4, 'fortran_order': False, 'shape': (3,) }",  /* quote */
      "{'descr': '<f4', 'shape': (3,), }",                        /* order */
      "{'descr': '<f4', 'fortran_order': maybe, 'shape': (3,), }",
      "{'descr': '<f4', 'fortran_order': False, }",               /* shape */
      "{'descr': '<f4', 'fortran_order': False, 'shape': [3], }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3a,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }",
      "",
  };
  const float data[3] = {1, 2, 3};
  for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
    size_t len, off, n;
    unsigned char *b = build_npy(1, dicts[i], data, sizeof data, &len, NULL);
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG,
                 "dict %zu accepted: %s", i, dicts[i]);
    cr_assert_gt(strlen(err), 0, "dict %zu: no message", i);
    free(b);
  }
}

/* Each part of the header dict is checked on its own: the message says
 * which key is at fault, and the first fault in file order wins (descr,
 * then fortran_order, then shape, then the order against the shape). */
Test(array_io, malformed_dict_names_the_key) {
  static const struct {
    const char *dict, *want;
  } cases[] = {
      {"{'fortran_order': False, 'shape': (3,), }", "has no 'descr'"},
      {"{'descr': <f4, 'fortran_order': False, 'shape': (3,), }",
       "has no 'descr'"},
      {"{'descr': '<f4", "unterminated 'descr'"},
      {"{'descr': '<f8', 'fortran_order': maybe, 'shape': (3a,), }",
       "dtype '<f8'"},
      {"{'descr': '<f4', 'shape': (3,), }", "no valid 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (3a,), }",
       "no valid 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, }", "no valid 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [3], }",
       "no valid 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3a,), }",
       "malformed 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }",
       "malformed 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (,), }",
       "malformed 'shape'"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 3a), }",
       "malformed 'shape'"},
  };
  const float data[3] = {1, 2, 3};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len, off = 77, n = 77;
    unsigned char *b =
        build_npy(1, cases[i].dict, data, sizeof data, &len, NULL);
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG,
                 "case %zu accepted: %s", i, cases[i].dict);
    cr_assert_not_null(strstr(err, cases[i].want), "case %zu: %s", i, err);
    cr_assert_eq(off, 77, "case %zu: outputs untouched on error", i);
    cr_assert_eq(n, 77, "case %zu: outputs untouched on error", i);
    free(b);
  }
}

/* The dict is the header's HL bytes only: a shape whose closing
 * parenthesis lies past them is malformed, even when the data that
 * follows holds one and would make the sizes agree (a header written
 * without NumPy's padding, so nothing else stops the scan). */
Test(array_io, shape_stops_at_header_end) {
  const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3";
  const char data[12] = ",)          ";
  size_t hl = sizeof dict - 1, len = 10 + hl + sizeof data;
  unsigned char *b = malloc(len);
  cr_assert_not_null(b);
  memcpy(b, "\x93NUMPY\x01\x00", 8);
  b[8] = (unsigned char)hl;
  b[9] = (unsigned char)(hl >> 8);
  memcpy(b + 10, dict, hl);
  memcpy(b + 10 + hl, data, sizeof data);
  size_t off, n;
  char err[256] = "";
  cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG,
               "the shape was read from the data");
  cr_assert_not_null(strstr(err, "malformed 'shape'"), "%s", err);
  /* With the parenthesis inside the header, the shape is whole and the
   * 10 bytes left are too few for it. */
  b[8] = (unsigned char)(hl + 2);
  cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG);
  cr_assert_not_null(strstr(err, "data is 10 bytes, the shape needs 12"),
                     "%s", err);
  free(b);
}

Test(array_io, huge_shapes_rejected) {
  char err[256];
  size_t n;
  /* A dimension beyond size_t, and a product beyond the address space. */
  cr_assert_eq(parse_shape("<f4", false, "(99999999999999999999999999,)", 0,
                           &n, err, sizeof err),
               -EBADMSG);
  cr_assert_not_null(strstr(err, "too large"), "%s", err);
  cr_assert_eq(parse_shape("<f4", false, "(4294967296, 4294967296)", 0, &n,
                           err, sizeof err),
               -EBADMSG);
  cr_assert_not_null(strstr(err, "too large"), "%s", err);
  /* 2^62 values would need 2^64 bytes: 4 n must not wrap around to 0. */
  cr_assert_eq(parse_shape("<f4", false, "(4611686018427387904,)", 0, &n, err,
                           sizeof err),
               -EBADMSG);
}

/* ---- truncation and lengths ---------------------------------------- */

Test(array_io, truncated_header) {
  unsigned char *b;
  size_t len;
  cr_assert_eq(npy_encode(SAMPLE, 7, &b, &len), 0);
  size_t data_off = len - sizeof SAMPLE;
  char err[256];
  for (size_t cut = 0; cut < len; cut++) {
    unsigned char *p = malloc(cut ? cut : 1);
    cr_assert_not_null(p);
    memcpy(p, b, cut);
    size_t off, n;
    err[0] = '\0';
    cr_assert_eq(npy_parse(p, cut, &off, &n, err, sizeof err), -EBADMSG,
                 "a %zu-byte prefix of %zu parsed", cut, len);
    cr_assert_gt(strlen(err), 0, "prefix %zu: no message", cut);
    if (cut < 10)
      cr_assert_not_null(strstr(err, "magic"), "prefix %zu: %s", cut, err);
    else if (cut < data_off)
      cr_assert_not_null(strstr(err, "truncated"), "prefix %zu: %s", cut, err);
    else
      cr_assert_not_null(strstr(err, "bytes"), "prefix %zu: %s", cut, err);
    free(p);
  }
  free(b);
}

Test(array_io, truncated_v2_prefix) {
  size_t len, off, n;
  unsigned char *b = build_npy(2, "{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (1,), }",
                               SAMPLE, 4, &len, NULL);
  char err[256] = "";
  /* 11 bytes: the magic, the version, and 3 of the 4 length bytes. */
  cr_assert_eq(npy_parse(b, 11, &off, &n, err, sizeof err), -EBADMSG);
  cr_assert_not_null(strstr(err, "truncated"), "%s", err);
  free(b);
}

Test(array_io, header_length_beyond_file) {
  char err[256];
  size_t off, n;
  unsigned char *b;
  size_t len;
  cr_assert_eq(npy_encode(SAMPLE, 7, &b, &len), 0);
  /* v1: the longest length field. */
  b[8] = 0xff;
  b[9] = 0xff;
  err[0] = '\0';
  cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG);
  cr_assert_not_null(strstr(err, "65535"), "says what was announced: %s", err);
  free(b);

  /* v2 and v3: a 4 GiB length must not wrap around. */
  for (unsigned major = 2; major <= 3; major++) {
    b = build_npy(major, "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (7,), }",
                  SAMPLE, sizeof SAMPLE, &len, NULL);
    const uint32_t bad[] = {0xffffffffu, 0xfffffff4u, (uint32_t)len - 11};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      for (int k = 0; k < 4; k++)
        b[8 + k] = (unsigned char)(bad[i] >> (8 * k));
      err[0] = '\0';
      cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG,
                   "v%u, header length %u", major, (unsigned)bad[i]);
      cr_assert_not_null(strstr(err, "truncated"), "%s", err);
    }
    free(b);
  }
}

Test(array_io, data_size_mismatch) {
  char dict[256];
  f4_dict(dict, sizeof dict, "<f4", false, "(3,)");
  const float data[4] = {1, 2, 3, 4};
  const size_t dlens[] = {0, 4, 8, 11, 13, 16};
  for (size_t i = 0; i < sizeof dlens / sizeof dlens[0]; i++) {
    size_t len, off, n;
    unsigned char *b = build_npy(1, dict, data, dlens[i], &len, NULL);
    char err[256] = "";
    cr_assert_eq(npy_parse(b, len, &off, &n, err, sizeof err), -EBADMSG,
                 "%zu data bytes for shape (3,)", dlens[i]);
    cr_assert_not_null(strstr(err, "needs 12"), "says 12 bytes are needed: %s",
                       err);
    free(b);
  }
}

Test(array_io, empty_buffer) {
  size_t off = 99, n = 99;
  char err[256] = "";
  unsigned char one = 0x93;
  cr_assert_eq(npy_parse(&one, 0, &off, &n, err, sizeof err), -EBADMSG);
  cr_assert_not_null(strstr(err, "NUMPY"), "names the expected magic: %s",
                     err);
  cr_assert_eq(npy_parse(&one, 1, &off, &n, NULL, 0), -EBADMSG,
               "a NULL error buffer is fine");
}

/* ---- array_read ----------------------------------------------------- */

Test(array_io, empty_files) {
  char path[PATH_LEN], err[512];
  float *x = (float *)(uintptr_t)1;
  size_t n = 99;

  write_file("empty.npy", "", 0, path);
  err[0] = '\0';
  cr_assert_lt(array_read(path, &x, &n, err, sizeof err), 0);
  cr_assert_null(x);
  cr_assert_eq(n, 0);
  cr_assert_not_null(strstr(err, path), "names the file: %s", err);
  cr_assert_not_null(strstr(err, "expected"), "%s", err);

  write_file("empty.f32", "", 0, path);
  err[0] = '\0';
  cr_assert_eq(array_read(path, &x, &n, err, sizeof err), -EBADMSG);
  cr_assert_null(x);
  cr_assert_not_null(strstr(err, path), "names the file: %s", err);
  cr_assert_not_null(strstr(err, "at least one"), "%s", err);

  /* A valid .npy of zero values is refused too. */
  unsigned char *b;
  size_t len;
  cr_assert_eq(npy_encode(SAMPLE, 0, &b, &len), 0);
  write_file("zero.npy", b, len, path);
  free(b);
  err[0] = '\0';
  cr_assert_eq(array_read(path, &x, &n, err, sizeof err), -EBADMSG);
  cr_assert_null(x);
  cr_assert_not_null(strstr(err, "at least one"), "%s", err);
}

Test(array_io, raw_f32) {
  char path[PATH_LEN], err[512] = "";
  write_file("g.f32", SAMPLE, sizeof SAMPLE, path);
  float *x;
  size_t n;
  int rc = array_read(path, &x, &n, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert_eq(n, 7);
  cr_assert(memcmp(x, SAMPLE, sizeof SAMPLE) == 0, "values bit for bit");
  free(x);

  /* Larger than the reader's first 64 KiB buffer. */
  enum { BIG = 50000 };
  float *big = malloc(BIG * sizeof *big);
  cr_assert_not_null(big);
  for (size_t i = 0; i < BIG; i++)
    big[i] = (float)i - 17.5f;
  write_file("big.f32", big, BIG * sizeof *big, path);
  rc = array_read(path, &x, &n, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert_eq(n, BIG);
  cr_assert(memcmp(x, big, BIG * sizeof *big) == 0);
  free(x);
  free(big);
}

Test(array_io, ragged_f32) {
  char path[PATH_LEN], err[512];
  for (size_t len = 1; len <= 11; len++) {
    if (len % 4 == 0)
      continue;
    write_file("ragged.f32", SAMPLE, len, path);
    float *x = NULL;
    size_t n;
    err[0] = '\0';
    cr_assert_eq(array_read(path, &x, &n, err, sizeof err), -EBADMSG,
                 "%zu bytes accepted", len);
    cr_assert_null(x);
    cr_assert_not_null(strstr(err, path), "names the file: %s", err);
    cr_assert_not_null(strstr(err, "float32"), "says what was expected: %s",
                       err);
  }
}

Test(array_io, unknown_extension) {
  char path[PATH_LEN], err[512] = "";
  const char *names[] = {"g.bin", "g.f32.txt", "g.F32", "f32", "g.npy"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    write_file(names[i], SAMPLE, sizeof SAMPLE, path);
    float *x = NULL;
    size_t n;
    cr_assert_eq(array_read(path, &x, &n, err, sizeof err), -EBADMSG,
                 "%s accepted", names[i]);
    cr_assert_null(x);
    cr_assert_not_null(strstr(err, path), "names the file: %s", err);
    cr_assert_not_null(strstr(err, ".npy"), "names what is expected: %s", err);
    cr_assert_not_null(strstr(err, ".f32"), "names what is expected: %s", err);
  }
}

Test(array_io, npy_magic_wins_over_name) {
  unsigned char *b;
  size_t len;
  cr_assert_eq(npy_encode(SAMPLE, 7, &b, &len), 0);
  char path[PATH_LEN], err[512] = "";
  /* Any name, even .f32: the content decides. */
  const char *names[] = {"vector.bin", "vector.f32", "noext"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    write_file(names[i], b, len, path);
    float *x;
    size_t n;
    int rc = array_read(path, &x, &n, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", names[i], err);
    cr_assert_eq(n, 7, "%s read as raw float32", names[i]);
    cr_assert(memcmp(x, SAMPLE, sizeof SAMPLE) == 0);
    free(x);
  }
  free(b);
}

Test(array_io, bad_npy_file_message_names_file) {
  char dict[256];
  f4_dict(dict, sizeof dict, "<f8", false, "(2,)");
  const double data[2] = {1, 2};
  size_t len;
  unsigned char *b = build_npy(1, dict, data, sizeof data, &len, NULL);
  char path[PATH_LEN], err[512] = "";
  write_file("double.npy", b, len, path);
  free(b);
  float *x = NULL;
  size_t n;
  cr_assert_eq(array_read(path, &x, &n, err, sizeof err), -EBADMSG);
  cr_assert_null(x);
  cr_assert_not_null(strstr(err, path), "names the file: %s", err);
  cr_assert_not_null(strstr(err, "'<f8'"), "names the dtype: %s", err);
  cr_assert_not_null(strstr(err, "float32"), "%s", err);
}

Test(array_io, nonexistent_path) {
  char path[PATH_LEN], err[512] = "";
  int w = snprintf(path, sizeof path, "%s/no/such/file.npy", tmpdir);
  cr_assert(w > 0 && (size_t)w < sizeof path);
  float *x = (float *)(uintptr_t)1;
  size_t n = 5;
  int rc = array_read(path, &x, &n, err, sizeof err);
  cr_assert_eq(rc, -ENOENT, "got %d", rc);
  cr_assert_null(x);
  cr_assert_eq(n, 0);
  cr_assert_not_null(strstr(err, path), "names the file: %s", err);
  cr_assert_not_null(strstr(err, strerror(ENOENT)), "says why: %s", err);
}

Test(array_io, directory_is_not_a_vector) {
  char err[512] = "";
  float *x = NULL;
  size_t n;
  cr_assert_lt(array_read(tmpdir, &x, &n, err, sizeof err), 0);
  cr_assert_null(x);
  cr_assert_not_null(strstr(err, tmpdir), "names the path: %s", err);
}

/* A path that opens but cannot be read is a read error, not a format
 * error, and nothing is returned. */
Test(array_io, unreadable_path_is_a_read_error) {
  char err[512] = "";
  float *x = (float *)(uintptr_t)1;
  size_t n = 5;
  int rc = array_read(tmpdir, &x, &n, err, sizeof err);
  cr_assert_eq(rc, -EIO, "got %d: %s", rc, err);
  cr_assert_null(x);
  cr_assert_eq(n, 0);
  cr_assert_not_null(strstr(err, "read error"), "%s", err);
}
