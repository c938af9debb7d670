/* tests/fuzz/fuzz_npy.c: libFuzzer harness for npy_parse()
 * (models/array_io.h) on arbitrary bytes.
 *
 * Properties checked besides memory safety (abort() on violation):
 *   - failures are -EBADMSG with a non-empty one-line message free of
 *     control characters (regress/fuzz_npy/ holds the input that once
 *     broke this);
 *   - on success the data starts inside the input and fills it exactly:
 *     size == data_off + 4 n;
 *   - the values survive npy_encode() and a second npy_parse() bit for
 *     bit (for n <= 2^16). */
#include "array_io.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { REENCODE_MAX = 1 << 16 };

static void fail(const char *what) {
  fprintf(stderr, "fuzz_npy: %s\n", what);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t off = 0, n = 0;
  char err[256];
  err[0] = '\0';
  int rc = npy_parse(data, size, &off, &n, err, sizeof err);
  if (rc != 0) {
    if (rc != -EBADMSG)
      fail("npy_parse failed with something other than -EBADMSG");
    if (err[0] == '\0')
      fail("no error message");
    for (const char *c = err; *c; c++)
      if ((unsigned char)*c < 0x20 || *c == 0x7f)
        fail("the error message holds a control character");
    return 0;
  }
  if (off > size || n > (size - off) / 4 || off + 4 * n != size)
    fail("data offset and count do not fill the input");
  if (n > REENCODE_MAX)
    return 0;

  float *x = malloc(n ? 4 * n : 1);
  if (!x)
    abort();
  memcpy(x, data + off, 4 * n);
  unsigned char *b;
  size_t len, off2, n2;
  if (npy_encode(x, n, &b, &len) != 0)
    fail("npy_encode failed");
  if (npy_parse(b, len, &off2, &n2, err, sizeof err) != 0)
    fail("npy_parse rejects what npy_encode wrote");
  if (n2 != n || memcmp(b + off2, x, 4 * n) != 0)
    fail("values changed through npy_encode");
  free(b);
  free(x);
  return 0;
}
