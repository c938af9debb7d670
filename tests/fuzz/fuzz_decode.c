/* tests/fuzz/fuzz_decode.c: libFuzzer harness for codec_decode() and
 * codec_decode_add() (codecs/codec.h) on arbitrary payloads.
 *
 * Input: byte 0 picks a spec from SPECS (every codec and every parameter
 * that changes the payload format), bytes 1-2 (little-endian) pick n in
 * 1..4096, the rest is the payload. The output is a malloc'ed buffer of
 * exactly n floats, so AddressSanitizer reports any write past it; the
 * payload is the tail of libFuzzer's exact-size copy of the input, so a
 * read past its end is reported too.
 *
 * Properties checked besides memory safety (abort() on violation):
 *   - the result is 0 or -EBADMSG;
 *   - decode and decode_add accept the same payloads;
 *   - on success, decode_add into zeros gives decode's values;
 *   - the portable kernels (a codec created with GRADSIM_CODEC_PORTABLE
 *     set) give the same result and the same bits as the SIMD ones. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "codec.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const SPECS[] = {
    "fp32",
    "fp16",
    "trunc:bits=16",
    "trunc:bits=22",
    "trunc:bits=24",
    "trunc:bits=7",
    "q8",
    "inceptionn:eb=-10",
    "inceptionn:eb=-6",
    "3lc:s=1,zre=1",
    "3lc:s=1,zre=0",
    "terngrad",
    "onebit",
    "topk:ratio=0.05",
    "rgc:asq=0",
    "rgc:asq=1",
    /* Appended, so that the seeds of the specs above keep their byte 0. */
    "bf16",
    "qsgd:levels=1,bucket=512",
    "qsgd:levels=7,bucket=5",
    "qsgd:levels=4,bucket=13",
    "qsgd:levels=127,bucket=64",
    "qsgd:levels=32768,bucket=3",
    "qsgd:levels=1,bucket=1",
    "qsgd:levels=1000,bucket=1048576",
    "powersgd:rank=1",
    "powersgd:rank=4",
};
enum { NSPECS = sizeof SPECS / sizeof SPECS[0], HEAD = 3, NMAX = 4096 };

/* Parsed once; the fuzzer runs in one process. [1]: portable kernels. */
static codec_t *codecs[2][NSPECS];

static codec_t *get_codec(size_t i, int portable) {
  if (!codecs[portable][i]) {
    char err[CODEC_ERR_MAX];
    if (portable && setenv("GRADSIM_CODEC_PORTABLE", "1", 1) != 0)
      abort();
    int rc = codec_create(SPECS[i], &codecs[portable][i], err, sizeof err);
    unsetenv("GRADSIM_CODEC_PORTABLE");
    if (rc != 0) {
      fprintf(stderr, "fuzz_decode: spec %s: %s\n", SPECS[i], err);
      abort();
    }
  }
  return codecs[portable][i];
}

static void check_rc(int rc, const char *what, size_t spec) {
  if (rc != 0 && rc != -EBADMSG) {
    fprintf(stderr, "fuzz_decode: %s(%s) returned %d\n", what, SPECS[spec],
            rc);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < HEAD)
    return 0;
  size_t spec = data[0] % NSPECS;
  size_t n = 1 + (size_t)((data[1] | data[2] << 8) % NMAX);
  const uint8_t *payload = data + HEAD;
  size_t len = size - HEAD;
  const codec_t *c = get_codec(spec, 0);
  const codec_t *cp = get_codec(spec, 1);

  float *out = malloc(n * sizeof *out);
  float *acc = malloc(n * sizeof *acc);
  float *twin = malloc(n * sizeof *twin);
  if (!out || !acc || !twin)
    abort();
  int rc = codec_decode(c, payload, len, out, n);
  check_rc(rc, "codec_decode", spec);

  for (size_t i = 0; i < n; i++)
    acc[i] = 0.0f;
  int rc_add = codec_decode_add(c, payload, len, acc, n);
  check_rc(rc_add, "codec_decode_add", spec);
  if (rc != rc_add) {
    fprintf(stderr, "fuzz_decode: %s: decode says %d, decode_add says %d\n",
            SPECS[spec], rc, rc_add);
    abort();
  }
  if (rc == 0)
    for (size_t i = 0; i < n; i++)
      /* 0 + v == v, except -0 becomes +0 (equal under ==) and NaN. */
      if (!(acc[i] == out[i] || (isnan(acc[i]) && isnan(out[i])))) {
        fprintf(stderr,
                "fuzz_decode: %s: value %zu decodes to %a, adds as %a\n",
                SPECS[spec], i, (double)out[i], (double)acc[i]);
        abort();
      }

  /* The portable twin: same verdict, same bits (decode_add from zeros). */
  for (size_t i = 0; i < n; i++)
    twin[i] = 0.0f;
  int rc_twin = codec_decode_add(cp, payload, len, twin, n);
  if (rc_twin != rc_add) {
    fprintf(stderr, "fuzz_decode: %s: SIMD decode_add says %d, portable %d\n",
            SPECS[spec], rc_add, rc_twin);
    abort();
  }
  if (rc_add == 0 && memcmp(twin, acc, n * sizeof *acc) != 0) {
    fprintf(stderr, "fuzz_decode: %s: SIMD and portable decode_add differ\n",
            SPECS[spec]);
    abort();
  }
  rc_twin = codec_decode(cp, payload, len, twin, n);
  if (rc_twin != rc || (rc == 0 && memcmp(twin, out, n * sizeof *out) != 0)) {
    fprintf(stderr, "fuzz_decode: %s: SIMD and portable decode differ (%d, "
                    "%d)\n",
            SPECS[spec], rc, rc_twin);
    abort();
  }
  free(twin);
  free(acc);
  free(out);
  return 0;
}
