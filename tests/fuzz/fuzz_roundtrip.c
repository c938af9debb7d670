/* tests/fuzz/fuzz_roundtrip.c: libFuzzer harness for codec_encode()
 * followed by codec_decode() (codecs/codec.h).
 *
 * Input: byte 0 picks a spec from SPECS, bytes 1-2 (little-endian) pick a
 * small capacity SMALL = value % codec_bound(n), the rest is the vector:
 * n = (size - 3) / 4 floats (n >= 1; NaN, infinity, subnormals included).
 *
 * Three streams with the same seed encode the vector three times (error
 * feedback makes the later steps differ): stream A into a buffer of
 * exactly codec_bound() bytes, stream B first into one of SMALL bytes,
 * stream P like A but with the portable kernels (GRADSIM_CODEC_PORTABLE).
 * Properties (abort() on violation), from the contract in codec.h:
 *   - with cap = bound, encoding succeeds unless -EDOM, and -EDOM comes
 *     only from codecs that need finite values, and on the first step only
 *     when the input holds NaN or infinity; the size is at most the bound;
 *   - with cap < bound, encoding succeeds if and only if the payload fits,
 *     giving the same bytes; otherwise -ENOSPC leaves the state exactly as
 *     it was, so that B can repeat the step with a larger buffer and stay
 *     identical to A (same payload, same step count, same residual);
 *   - every successful encode decodes (decode and decode_add), and the
 *     payload without its last byte does not;
 *   - every decoded value is within codec_error_bounds() of what the
 *     encode took (the input, plus the residual before, minus the one
 *     after), the oracle's ledger;
 *   - fp32 round trips bit for bit, trunc:bits=N gives the input with its
 *     N low bits cleared; bf16 keeps NaN a NaN and infinity infinite, and
 *     makes infinity of finite values only from the rounding midpoint
 *     (2 - 2^-8) 2^127 up;
 *   - the portable kernels give the same results, payloads, residuals and
 *     decoded bits as the SIMD ones. */
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
    "trunc:bits=1",
    "trunc:bits=31",
    "q8",
    "inceptionn:eb=-10",
    "inceptionn:eb=-6",
    "inceptionn:eb=-1",
    "inceptionn:eb=-126",
    "3lc:s=1,zre=1",
    "3lc:s=1,zre=0",
    "3lc:s=1.99,zre=1",
    "terngrad",
    "onebit",
    "topk:ratio=0.05",
    "topk:ratio=1",
    "rgc:ratio=0.05,select=exact,asq=0",
    "rgc:ratio=0.05,select=trimmed,asq=0",
    "rgc:ratio=0.05,select=binsearch,asq=0",
    "rgc:ratio=0.05,select=sampled,asq=0",
    "rgc:ratio=0.05,select=exact,asq=1",
    "rgc:ratio=0.05,select=trimmed,asq=1",
    "rgc:ratio=0.05,select=binsearch,asq=1",
    "rgc",
    /* Appended, so that the seeds of the specs above keep their byte 0. */
    "bf16",
    "qsgd:levels=1,bucket=512",
    "qsgd:levels=7,bucket=5",
    "qsgd:levels=4,bucket=13",
    "qsgd:levels=127,bucket=64",
    "qsgd:levels=12,bucket=100",
    "qsgd:levels=32768,bucket=3",
    "qsgd:levels=1,bucket=1",
    "qsgd:levels=1000,bucket=1048576",
    "powersgd:rank=1",
    "powersgd:rank=3",
};
enum { NSPECS = sizeof SPECS / sizeof SPECS[0], HEAD = 3, STEPS = 3 };
static const uint64_t SEED = 0x5eed;

/* Parsed once; [1]: portable kernels. */
static codec_t *codecs[2][NSPECS];

static codec_t *get_codec(size_t i, int portable) {
  if (!codecs[portable][i]) {
    char err[CODEC_ERR_MAX];
    if (portable && setenv("GRADSIM_CODEC_PORTABLE", "1", 1) != 0)
      abort();
    int rc = codec_create(SPECS[i], &codecs[portable][i], err, sizeof err);
    unsetenv("GRADSIM_CODEC_PORTABLE");
    if (rc != 0) {
      fprintf(stderr, "fuzz_roundtrip: spec %s: %s\n", SPECS[i], err);
      abort();
    }
  }
  return codecs[portable][i];
}

static const char *cur_spec; /* for messages */
static unsigned cur_step;

static void fail(const char *what, long a, long b) {
  fprintf(stderr, "fuzz_roundtrip: %s, step %u: %s (%ld, %ld)\n", cur_spec,
          cur_step, what, a, b);
  abort();
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p)
    abort();
  return p;
}

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Codecs that encode any float pattern, NaN and infinity included. */
static int takes_any_float(const codec_t *c) {
  const char *name = codec_name(c);
  return strcmp(name, "fp32") == 0 || strcmp(name, "fp16") == 0 ||
         strcmp(name, "bf16") == 0 || strcmp(name, "trunc") == 0 ||
         strcmp(name, "inceptionn") == 0;
}

/* Decode the LEN-byte payload at ENCODED (in a buffer of the bound) from
 * exact-size copies, so that a read past the payload is caught too. */
static void check_decode(const codec_t *c, const codec_t *cp,
                         const unsigned char *encoded, size_t len,
                         const float *x, const float *rb, const float *ra,
                         size_t n) {
  unsigned char *payload = xmalloc(len);
  memcpy(payload, encoded, len);
  float *out = xmalloc(n * sizeof *out);
  float *twin = xmalloc(n * sizeof *twin);
  int rc = codec_decode(c, payload, len, out, n);
  if (rc != 0)
    fail("an encoded payload does not decode", rc, (long)len);
  for (size_t i = 0; i < n; i++)
    out[i] = 0.0f;
  rc = codec_decode_add(c, payload, len, out, n);
  if (rc != 0)
    fail("an encoded payload does not decode_add", rc, (long)len);
  if (len > 0) {
    unsigned char *cut = xmalloc(len - 1);
    memcpy(cut, payload, len - 1);
    if (codec_decode(c, cut, len - 1, out, n) != -EBADMSG ||
        codec_decode(cp, cut, len - 1, out, n) != -EBADMSG)
      fail("the payload without its last byte decodes", (long)len - 1, 0);
    free(cut);
  }

  rc = codec_decode(c, payload, len, out, n);
  if (codec_decode(cp, payload, len, twin, n) != rc ||
      memcmp(out, twin, n * sizeof *out) != 0)
    fail("SIMD and portable decodes differ", rc, 0);
  if (strcmp(codec_name(c), "fp32") == 0 &&
      memcmp(out, x, n * sizeof *x) != 0)
    fail("fp32 does not round trip bit for bit", 0, 0);
  /* The error bounds: RB and RA are the residual before and after the
   * encode (NULL without one). Equal values (infinities, a lossless
   * codec) and NaN for NaN pass; elsewhere an infinite bound says
   * nothing. */
  double *e = xmalloc(n * sizeof *e);
  codec_error_bounds(c, x, rb, ra, n, e);
  for (size_t i = 0; i < n; i++) {
    double want = (double)x[i] + (ra ? (double)rb[i] - (double)ra[i] : 0);
    double got = out[i];
    if (got == want || (isnan(got) && isnan(want)) || isinf(e[i]))
      continue;
    if (!(fabs(got - want) <= e[i]))
      fail("a decoded value beyond its error bound", (long)i,
           (long)bits_of(x[i]));
  }
  free(e);
  if (strcmp(codec_name(c), "bf16") == 0)
    for (size_t i = 0; i < n; i++) {
      uint32_t u = bits_of(out[i]);
      int big = !isnan(x[i]) && fabs((double)x[i]) >= 0x1.ffp127;
      if ((u & 0xffffu) != 0 || !isnan(out[i]) != !isnan(x[i]) ||
          !isinf(out[i]) != !big ||
          (big && !signbit(out[i]) != !signbit(x[i])))
        fail("bf16: not the rounded value", (long)i, (long)u);
    }
  int bits;
  if (sscanf(codec_spec(c), "trunc:bits=%d", &bits) == 1) {
    uint32_t mask = ~((UINT32_C(1) << bits) - 1);
    for (size_t i = 0; i < n; i++)
      if (bits_of(out[i]) != (bits_of(x[i]) & mask))
        fail("trunc does not clear exactly the low bits", (long)i,
             (long)bits_of(out[i]));
  }
  free(twin);
  free(out);
  free(payload);
}

static void same_state(const codec_state_t *a, const codec_state_t *b,
                       size_t n, const char *what) {
  if (codec_state_step(a) != codec_state_step(b))
    fail(what, (long)codec_state_step(a), (long)codec_state_step(b));
  const float *ra = codec_state_residual(a), *rb = codec_state_residual(b);
  if ((ra == NULL) != (rb == NULL) ||
      (ra && memcmp(ra, rb, n * sizeof *ra) != 0))
    fail(what, 0, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < HEAD + 4)
    return 0;
  size_t spec = data[0] % NSPECS;
  unsigned sel = (unsigned)data[1] | (unsigned)data[2] << 8;
  size_t n = (size - HEAD) / 4;
  const codec_t *c = get_codec(spec, 0);
  const codec_t *cp = get_codec(spec, 1);
  cur_spec = SPECS[spec];
  cur_step = 0;

  float *x = xmalloc(n * sizeof *x);
  memcpy(x, data + HEAD, n * sizeof *x);
  int finite = 1;
  for (size_t i = 0; i < n; i++)
    finite &= isfinite(x[i]) != 0;

  size_t bound = codec_bound(c, n);
  if (bound == 0)
    fail("no bound for a small n", (long)n, 0);
  size_t small = sel % bound;

  codec_state_t *sa, *sb, *sp;
  if (codec_state_create(c, n, SEED, &sa) != 0 ||
      codec_state_create(c, n, SEED, &sb) != 0 ||
      codec_state_create(cp, n, SEED, &sp) != 0)
    fail("codec_state_create", (long)n, 0);

  unsigned char *pa = xmalloc(bound), *pb = xmalloc(bound);
  unsigned char *pp = xmalloc(bound);
  unsigned char *tiny = xmalloc(small);
  float *before = xmalloc(n * sizeof *before);
  for (cur_step = 0; cur_step < STEPS; cur_step++) {
    const float *res = codec_state_residual(sa);
    if (res)
      memcpy(before, res, n * sizeof *before);
    ptrdiff_t ra = codec_encode(sa, x, n, pa, bound);
    if (ra < 0) {
      if (ra != -EDOM)
        fail("encode into the bound failed", (long)ra, (long)bound);
      if (takes_any_float(c))
        fail("-EDOM from a codec that takes any float", (long)ra, 0);
      if (cur_step == 0 && finite)
        fail("-EDOM on finite input", (long)ra, 0);
    } else if ((size_t)ra > bound) {
      fail("payload larger than the bound", (long)ra, (long)bound);
    }

    ptrdiff_t rb = codec_encode(sb, x, n, small ? tiny : NULL, small);
    if (ra >= 0 && (size_t)ra <= small) {
      if (rb != ra || memcmp(tiny, pa, (size_t)ra) != 0)
        fail("a payload that fits the small buffer differs", (long)rb,
             (long)ra);
    } else if (ra >= 0) {
      if (rb != -ENOSPC)
        fail("expected -ENOSPC for a payload beyond the buffer", (long)rb,
             (long)ra);
      rb = codec_encode(sb, x, n, pb, bound);
      if (rb != ra || memcmp(pb, pa, (size_t)ra) != 0)
        fail("the retry after -ENOSPC differs", (long)rb, (long)ra);
    } else if (rb != ra) {
      fail("the small-buffer encode fails differently", (long)rb, (long)ra);
    }
    same_state(sa, sb, n, "step or residual differ after a small-buffer "
                          "encode");

    ptrdiff_t rp = codec_encode(sp, x, n, pp, bound);
    if (rp != ra || (ra >= 0 && memcmp(pp, pa, (size_t)ra) != 0))
      fail("SIMD and portable encodes differ", (long)ra, (long)rp);
    same_state(sa, sp, n, "SIMD and portable residuals differ");

    if (ra >= 0)
      check_decode(c, cp, pa, (size_t)ra, x, res ? before : NULL,
                   codec_state_residual(sa), n);
  }
  free(before);
  codec_state_free(sa);
  codec_state_free(sb);
  codec_state_free(sp);
  free(pp);
  free(tiny);
  free(pb);
  free(pa);
  free(x);
  return 0;
}
