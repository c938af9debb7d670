/* tests/test_container.c: the codec container (codecs/container.h):
 * layout, round trip, sizes, and rejection of truncated, corrupted,
 * padded and malformed files. */
#include "codec.h"
#include "container.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------- */

static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* Recompute the checksum of a container whose header or payload was
 * edited (spec length S, payload length P), so that the edit is the only
 * thing wrong with it. */
static void reseal(unsigned char *buf, size_t s, size_t p) {
  uint32_t crc = container_crc32c(0, buf, 24 + s);
  crc = container_crc32c(crc, buf + 28 + s, p);
  put32(buf + 24 + s, crc);
}

/* A container with spec SPEC, N values and the payload bytes 0, 1, 2, ...
 * (PLEN of them), in a malloc'ed buffer of exactly its size. */
static unsigned char *make(const char *spec, uint64_t n, size_t plen,
                           size_t *len) {
  unsigned char *payload = malloc(plen ? plen : 1);
  cr_assert_not_null(payload);
  for (size_t i = 0; i < plen; i++)
    payload[i] = (unsigned char)(i * 7 + 1);
  size_t total = container_size(spec, plen);
  unsigned char *buf = malloc(total);
  cr_assert_not_null(buf);
  ptrdiff_t w = container_write(buf, total, spec, n, payload, plen);
  cr_assert_eq(w, (ptrdiff_t)total, "container_write returned %td, expected %zu",
               w, total);
  free(payload);
  *len = total;
  return buf;
}

/* container_read must fail with -EBADMSG and a non-empty one-line reason;
 * returns the reason for further checks. */
static const char *expect_bad(const unsigned char *buf, size_t len,
                              char *err, size_t errlen) {
  struct container_view v;
  memset(err, 0, errlen);
  int rc = container_read(buf, len, &v, err, errlen);
  cr_assert_eq(rc, -EBADMSG, "expected -EBADMSG for %zu bytes, got %d", len,
               rc);
  cr_assert_gt(strlen(err), 0, "no error message for %zu bytes", len);
  cr_assert_null(strchr(err, '\n'), "the message is not one line: %s", err);
  return err;
}

/* ---- layout and round trip ---------------------------------------- */

Test(container, layout_matches_header) {
  const unsigned char payload[5] = {0xde, 0xad, 0xbe, 0xef, 0x00};
  const char *spec = "3lc:s=1,zre=1";
  size_t s = strlen(spec);
  unsigned char buf[64];
  memset(buf, 0xaa, sizeof buf);
  uint64_t n = UINT64_C(0x0102030405060708);
  ptrdiff_t w = container_write(buf, sizeof buf, spec, n, payload, 5);
  cr_assert_eq(w, (ptrdiff_t)(28 + s + 5));
  cr_assert(memcmp(buf, "GSCD", 4) == 0, "magic");
  cr_assert_eq(buf[4] | buf[5] << 8, CONTAINER_VERSION, "version");
  cr_assert_eq((size_t)(buf[6] | buf[7] << 8), s, "spec length");
  cr_assert(memcmp(buf + 8, spec, s) == 0, "spec bytes");
  cr_assert_eq(get64(buf + 8 + s), n, "n, little-endian");
  cr_assert_eq(get64(buf + 16 + s), 5, "payload length");
  uint32_t crc = container_crc32c(0, buf, 24 + s);
  crc = container_crc32c(crc, payload, sizeof payload);
  cr_assert_eq(get32(buf + 24 + s), crc, "CRC-32C of header and payload");
  cr_assert(memcmp(buf + 28 + s, payload, 5) == 0, "payload bytes");
  cr_assert_eq(buf[28 + s + 5], 0xaa, "nothing written past the container");
}

Test(container, round_trip) {
  const char *spec = "inceptionn:eb=-10";
  unsigned char payload[300];
  for (size_t i = 0; i < sizeof payload; i++)
    payload[i] = (unsigned char)(i ^ 0x5a);
  size_t total = container_size(spec, sizeof payload);
  unsigned char *buf = malloc(total);
  cr_assert_not_null(buf);
  uint64_t n = UINT64_C(1) << 40;
  cr_assert_eq(container_write(buf, total, spec, n, payload, sizeof payload),
               (ptrdiff_t)total);
  struct container_view v;
  char err[CODEC_ERR_MAX] = "";
  int rc = container_read(buf, total, &v, err, sizeof err);
  cr_assert_eq(rc, 0, "container_read: %d (%s)", rc, err);
  cr_assert_str_eq(v.spec, spec);
  cr_assert_eq(v.n, n);
  cr_assert_eq(v.len, sizeof payload);
  cr_assert_eq(v.payload, buf + 28 + strlen(spec),
               "the payload points into the buffer read");
  cr_assert(memcmp(v.payload, payload, sizeof payload) == 0);
  free(buf);
}

Test(container, round_trip_empty_payload) {
  size_t len;
  unsigned char *buf = make("fp32", 0, 0, &len);
  cr_assert_eq(len, 32);
  struct container_view v;
  cr_assert_eq(container_read(buf, len, &v, NULL, 0), 0);
  cr_assert_str_eq(v.spec, "fp32");
  cr_assert_eq(v.n, 0);
  cr_assert_eq(v.len, 0);
  free(buf);
}

Test(container, round_trip_longest_spec) {
  char spec[CODEC_SPEC_MAX];
  memset(spec, 'x', CODEC_SPEC_MAX - 1);
  spec[CODEC_SPEC_MAX - 1] = '\0';
  size_t len;
  unsigned char *buf = make(spec, 3, 12, &len);
  cr_assert_eq(len, (size_t)(28 + CODEC_SPEC_MAX - 1 + 12));
  struct container_view v;
  char err[CODEC_ERR_MAX] = "";
  cr_assert_eq(container_read(buf, len, &v, err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(v.spec, spec);
  cr_assert_eq(v.len, 12);
  free(buf);
}

/* A real codec payload survives the container and decodes to the same
 * values through the spec stored in it. */
Test(container, carries_a_codec_payload) {
  char err[CODEC_ERR_MAX] = "";
  codec_t *c;
  cr_assert_eq(codec_create("q8", &c, err, sizeof err), 0, "%s", err);
  enum { N = 37 };
  float x[N], y[N], z[N];
  for (int i = 0; i < N; i++)
    x[i] = (float)(i - 18) * 0.25f;
  codec_state_t *s;
  cr_assert_eq(codec_state_create(c, N, 1, &s), 0);
  unsigned char payload[N + 4];
  ptrdiff_t plen = codec_encode(s, x, N, payload, sizeof payload);
  cr_assert_eq(plen, N + 4);
  cr_assert_eq(codec_decode(c, payload, (size_t)plen, y, N), 0);

  size_t total = container_size(codec_spec(c), (size_t)plen);
  unsigned char *buf = malloc(total);
  cr_assert_not_null(buf);
  cr_assert_eq(container_write(buf, total, codec_spec(c), N, payload,
                               (size_t)plen),
               (ptrdiff_t)total);
  struct container_view v;
  cr_assert_eq(container_read(buf, total, &v, err, sizeof err), 0, "%s", err);
  codec_t *c2;
  cr_assert_eq(codec_create(v.spec, &c2, err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(codec_spec(c2), codec_spec(c));
  cr_assert_eq(v.n, N);
  cr_assert_eq(codec_decode(c2, v.payload, v.len, z, (size_t)v.n), 0);
  cr_assert(memcmp(y, z, sizeof y) == 0);
  codec_free(c2);
  codec_state_free(s);
  codec_free(c);
  free(buf);
}

/* ---- sizes --------------------------------------------------------- */

Test(container, size_is_fixed_plus_spec_plus_payload) {
  cr_assert_eq(container_size("fp32", 0), 32);
  cr_assert_eq(container_size("fp32", 400), 432);
  cr_assert_eq(container_size("3lc:s=1,zre=1", 17), 28 + 13 + 17);
  unsigned char buf[128];
  const unsigned char payload[40] = {0};
  for (size_t p = 0; p <= sizeof payload; p += 8)
    cr_assert_eq(container_write(buf, sizeof buf, "q8", 1, payload, p),
                 (ptrdiff_t)container_size("q8", p),
                 "write and size disagree for a %zu-byte payload", p);
}

Test(container, enospc_one_byte_short) {
  const char *spec = "topk:ratio=0.05";
  unsigned char payload[50];
  memset(payload, 0x11, sizeof payload);
  size_t total = container_size(spec, sizeof payload);
  unsigned char *buf = malloc(total);
  cr_assert_not_null(buf);
  memset(buf, 0xcc, total);
  ptrdiff_t w = container_write(buf, total - 1, spec, 100, payload,
                                sizeof payload);
  cr_assert_eq(w, -ENOSPC, "one byte short: %td, expected -ENOSPC", w);
  cr_assert_eq(buf[total - 1], 0xcc, "nothing written at or beyond cap");
  cr_assert_eq(container_write(buf, 0, spec, 100, payload, sizeof payload),
               -ENOSPC);
  cr_assert_eq(container_write(buf, total, spec, 100, payload, sizeof payload),
               (ptrdiff_t)total, "the exact size fits");
  free(buf);
}

Test(container, write_rejects_bad_spec) {
  unsigned char buf[600];
  const unsigned char payload[4] = {1, 2, 3, 4};
  cr_assert_eq(container_write(buf, sizeof buf, "", 1, payload, 4), -EINVAL,
               "empty spec");
  char spec[CODEC_SPEC_MAX + 1];
  memset(spec, 'a', CODEC_SPEC_MAX);
  spec[CODEC_SPEC_MAX] = '\0';
  cr_assert_eq(container_write(buf, sizeof buf, spec, 1, payload, 4), -EINVAL,
               "spec of %d characters", CODEC_SPEC_MAX);
}

/* ---- truncation, corruption, padding -------------------------------- */

Test(container, every_truncation_fails) {
  size_t len;
  unsigned char *full = make("trunc:bits=16", 9, 18, &len);
  char err[CODEC_ERR_MAX];
  for (size_t cut = 0; cut < len; cut++) {
    /* An exact-size copy, so that a read past the end is a real one. */
    unsigned char *p = malloc(cut ? cut : 1);
    cr_assert_not_null(p);
    memcpy(p, full, cut);
    expect_bad(p, cut, err, sizeof err);
    free(p);
  }
  /* The reasons say what is wrong. */
  cr_assert_not_null(strstr(expect_bad(full, 5, err, sizeof err), "too short"),
                     "%s", err);
  cr_assert_not_null(strstr(expect_bad(full, 20, err, sizeof err), "truncated"),
                     "%s", err);
  cr_assert_not_null(
      strstr(expect_bad(full, len - 1, err, sizeof err), "truncated"), "%s",
      err);
  free(full);
}

Test(container, every_bit_flip_fails) {
  size_t len;
  unsigned char *buf = make("q8", 6, 10, &len);
  cr_assert_eq(len, 40);
  char err[CODEC_ERR_MAX];
  size_t by_checksum = 0;
  for (size_t byte = 0; byte < len; byte++)
    for (unsigned bit = 0; bit < 8; bit++) {
      buf[byte] ^= (unsigned char)(1u << bit);
      expect_bad(buf, len, err, sizeof err);
      by_checksum += strstr(err, "checksum") != NULL;
      buf[byte] ^= (unsigned char)(1u << bit);
    }
  /* Flips in n, the CRC and the payload are caught by the checksum
   * alone: 8 + 4 + 10 bytes, 8 bits each. */
  cr_assert_geq(by_checksum, (8 + 4 + 10) * 8, "%zu flips reported as checksum "
                                               "errors",
                by_checksum);
  struct container_view v;
  cr_assert_eq(container_read(buf, len, &v, err, sizeof err), 0,
               "the unflipped container still reads: %s", err);
  free(buf);
}

Test(container, trailing_bytes_rejected) {
  size_t len;
  unsigned char *buf = make("fp16", 4, 8, &len);
  unsigned char *big = malloc(len + 16);
  cr_assert_not_null(big);
  memcpy(big, buf, len);
  memset(big + len, 0, 16);
  char err[CODEC_ERR_MAX];
  for (size_t extra = 1; extra <= 16; extra++) {
    expect_bad(big, len + extra, err, sizeof err);
    cr_assert_not_null(strstr(err, "padded"), "%s", err);
  }
  /* A trailing byte announced in the header but not in the checksum. */
  big[16 + 4] = 9; /* P = 9 instead of 8 */
  expect_bad(big, len + 1, err, sizeof err);
  cr_assert_not_null(strstr(err, "checksum"), "%s", err);
  free(big);
  free(buf);
}

/* ---- malformed headers, each with a valid checksum ------------------ */

Test(container, bad_magic) {
  size_t len;
  unsigned char *buf = make("fp32", 1, 4, &len);
  char err[CODEC_ERR_MAX];
  const char *bad[] = {"GSCd", "gscd", "GSCX", "\0SCD", "DCSG"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memcpy(buf, bad[i], 4);
    reseal(buf, 4, 4);
    expect_bad(buf, len, err, sizeof err);
    cr_assert_not_null(strstr(err, "magic"), "%s", err);
    cr_assert_not_null(strstr(err, "GSCD"), "names the expected magic: %s",
                       err);
  }
  free(buf);
}

Test(container, bad_version) {
  size_t len;
  unsigned char *buf = make("fp32", 1, 4, &len);
  char err[CODEC_ERR_MAX];
  const unsigned versions[] = {0, 2, 255, 0x0101, 0xffff};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
    buf[4] = (unsigned char)versions[i];
    buf[5] = (unsigned char)(versions[i] >> 8);
    reseal(buf, 4, 4);
    expect_bad(buf, len, err, sizeof err);
    cr_assert_not_null(strstr(err, "version"), "%s", err);
  }
  free(buf);
}

/* A hand-built container with spec length field SLEN and SPEC_BYTES bytes
 * of spec ('a'), a 4-byte payload and a valid checksum over what is there;
 * the buffer is as long as the header claims, so that only the length
 * itself is wrong. */
static unsigned char *handmade(unsigned slen, size_t spec_bytes, size_t *len) {
  size_t total = 28 + spec_bytes + 4;
  unsigned char *b = calloc(1, total);
  cr_assert_not_null(b);
  memcpy(b, "GSCD", 4);
  b[4] = 1;
  b[6] = (unsigned char)slen;
  b[7] = (unsigned char)(slen >> 8);
  memset(b + 8, 'a', spec_bytes);
  b[8 + spec_bytes] = 1;        /* n = 1 */
  b[16 + spec_bytes] = 4;       /* P = 4 */
  reseal(b, spec_bytes, 4);
  *len = total;
  return b;
}

Test(container, bad_spec_length) {
  char err[CODEC_ERR_MAX];
  size_t len;
  struct container_view v;
  /* The hand-built container is valid with a consistent length. */
  unsigned char *ok = handmade(10, 10, &len);
  cr_assert_eq(container_read(ok, len, &v, err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(v.spec, "aaaaaaaaaa");
  free(ok);

  unsigned char *zero = handmade(0, 0, &len);
  expect_bad(zero, len, err, sizeof err);
  cr_assert_not_null(strstr(err, "spec length"), "%s", err);
  free(zero);

  unsigned char *big = handmade(CODEC_SPEC_MAX, CODEC_SPEC_MAX, &len);
  expect_bad(big, len, err, sizeof err);
  cr_assert_not_null(strstr(err, "spec length"), "%s", err);
  free(big);

  unsigned char *huge = handmade(0xffff, 0xffff, &len);
  expect_bad(huge, len, err, sizeof err);
  cr_assert_not_null(strstr(err, "spec length"), "%s", err);
  free(huge);

  /* A length pointing past the end of a short file. */
  unsigned char *past = handmade(200, 10, &len);
  expect_bad(past, len, err, sizeof err);
  free(past);
}

Test(container, non_printable_spec) {
  char err[CODEC_ERR_MAX];
  const char *specs[] = {"fp\x01", "q8\x7f", "a\tb", "\x1f", "fp32\x80",
                         "\xff\xfe"};
  const unsigned char payload[4] = {0};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    unsigned char buf[64];
    ptrdiff_t w = container_write(buf, sizeof buf, specs[i], 1, payload, 4);
    cr_assert_gt(w, 0);
    expect_bad(buf, (size_t)w, err, sizeof err);
    cr_assert_not_null(strstr(err, "non-printable"), "spec %zu: %s", i, err);
  }
  /* Every printable byte is accepted, space and '~' included. */
  char all[96];
  for (int c = 0x20; c <= 0x7e; c++)
    all[c - 0x20] = (char)c;
  all[0x7f - 0x20] = '\0';
  unsigned char buf[200];
  ptrdiff_t w = container_write(buf, sizeof buf, all, 1, payload, 4);
  cr_assert_gt(w, 0);
  struct container_view v;
  cr_assert_eq(container_read(buf, (size_t)w, &v, err, sizeof err), 0, "%s",
               err);
  cr_assert_str_eq(v.spec, all);
}

Test(container, error_buffer_optional_and_bounded) {
  size_t len;
  unsigned char *buf = make("fp32", 1, 4, &len);
  struct container_view v;
  buf[0] = 'X';
  cr_assert_eq(container_read(buf, len, &v, NULL, 0), -EBADMSG);
  char small[8];
  memset(small, '#', sizeof small);
  cr_assert_eq(container_read(buf, len, &v, small, 4), -EBADMSG);
  cr_assert_eq(small[3], '\0', "the message is cut and terminated");
  cr_assert_eq(small[4], '#', "nothing written beyond ERRLEN");
  free(buf);
}

/* ---- CRC-32C --------------------------------------------------------- */

Test(container, crc32c_check_value) {
  cr_assert_eq(container_crc32c(0, "123456789", 9), 0xE3069283u,
               "CRC-32C check value: got 0x%08X",
               (unsigned)container_crc32c(0, "123456789", 9));
  cr_assert_eq(container_crc32c(0, "", 0), 0);
  /* Continued in pieces, it gives the same value. */
  uint32_t crc = container_crc32c(0, "1234", 4);
  crc = container_crc32c(crc, "", 0);
  crc = container_crc32c(crc, "56789", 5);
  cr_assert_eq(crc, 0xE3069283u);
  /* RFC 3720 B.4: 32 bytes of zeros, and of 0xff. */
  unsigned char z[32];
  memset(z, 0, sizeof z);
  cr_assert_eq(container_crc32c(0, z, sizeof z), 0x8A9136AAu);
  memset(z, 0xff, sizeof z);
  cr_assert_eq(container_crc32c(0, z, sizeof z), 0x62A8AB43u);
}
