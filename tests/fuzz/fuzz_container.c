/* tests/fuzz/fuzz_container.c: libFuzzer harness for container_read()
 * (codecs/container.h), and for the decoder behind it: on a container that
 * reads, the stored spec goes to codec_create() and, when it parses and
 * n <= 2^16, the payload to codec_decode() into exactly n floats.
 *
 * Properties checked besides memory safety (abort() on violation):
 *   - failures are -EBADMSG with a non-empty one-line message;
 *   - a container that reads has a printable spec of 1..255 characters and
 *     a payload inside the input that runs to its end;
 *   - the format is canonical: writing the parsed fields again gives the
 *     input byte for byte;
 *   - codec_decode returns 0 or -EBADMSG. */
#include "codec.h"
#include "container.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { DECODE_MAX = 1 << 16 };

static void fail(const char *what) {
  fprintf(stderr, "fuzz_container: %s\n", what);
  abort();
}

static void check_view(const uint8_t *data, size_t size,
                       const struct container_view *v) {
  const char *nul = memchr(v->spec, '\0', sizeof v->spec);
  size_t s = nul ? (size_t)(nul - v->spec) : sizeof v->spec;
  if (s == 0 || s >= sizeof v->spec)
    fail("spec length outside 1..255");
  for (size_t i = 0; i < s; i++)
    if (v->spec[i] < 0x20 || v->spec[i] > 0x7e)
      fail("non-printable spec accepted");
  if (v->payload != data + CONTAINER_FIXED + s ||
      v->len != size - CONTAINER_FIXED - s)
    fail("payload does not span the rest of the input");
  if (container_size(v->spec, v->len) != size)
    fail("container_size disagrees with the container read");

  unsigned char *again = malloc(size);
  if (!again)
    abort();
  ptrdiff_t w = container_write(again, size, v->spec, v->n, v->payload,
                                v->len);
  if (w != (ptrdiff_t)size || memcmp(again, data, size) != 0)
    fail("writing the parsed container does not give the input back");
  free(again);
}

static void try_decode(const struct container_view *v) {
  codec_t *c;
  if (codec_create(v->spec, &c, NULL, 0) != 0)
    return;
  if (v->n <= DECODE_MAX) {
    size_t n = (size_t)v->n;
    float *out = malloc(n ? n * sizeof *out : 1);
    if (!out)
      abort();
    int rc = codec_decode(c, v->payload, v->len, out, n);
    /* n = 0 may be -EOVERFLOW for codecs whose bound of 0 is 0 bytes. */
    if (rc != 0 && rc != -EBADMSG && !(n == 0 && rc == -EOVERFLOW)) {
      fprintf(stderr, "fuzz_container: codec_decode(%s, n=%zu) = %d\n",
              v->spec, n, rc);
      abort();
    }
    free(out);
  }
  codec_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct container_view v;
  char err[CODEC_ERR_MAX];
  err[0] = '\0';
  int rc = container_read(data, size, &v, err, sizeof err);
  if (rc != 0) {
    if (rc != -EBADMSG)
      fail("container_read failed with something other than -EBADMSG");
    if (err[0] == '\0' || strchr(err, '\n'))
      fail("no one-line error message");
    return 0;
  }
  check_view(data, size, &v);
  try_decode(&v);
  return 0;
}
