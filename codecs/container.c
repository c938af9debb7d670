/* codecs/container.c: the codec container (container.h). */
#include "container.h"

#include "codec_impl.h"

#include <stdio.h>

static const unsigned char MAGIC[4] = {'G', 'S', 'C', 'D'};

uint32_t container_crc32c(uint32_t crc, const void *data, size_t len) {
  /* Table-driven, reflected polynomial 0x82f63b78; the table is built on
   * the stack (256 entries), which costs less than a page of payload. */
  uint32_t table[256];
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    table[i] = c;
  }
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < len; i++)
    crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

static void store64(unsigned char *p, uint64_t v) {
  kern_store32(p, (uint32_t)v);
  kern_store32(p + 4, (uint32_t)(v >> 32));
}
static uint64_t load64(const unsigned char *p) {
  return (uint64_t)kern_load32(p) | (uint64_t)kern_load32(p + 4) << 32;
}

size_t container_size(const char *spec, size_t payload_len) {
  return CONTAINER_FIXED + strlen(spec) + payload_len;
}

ptrdiff_t container_write(void *buf, size_t cap, const char *spec, uint64_t n,
                          const void *payload, size_t payload_len) {
  size_t s = strlen(spec);
  if (s == 0 || s >= CODEC_SPEC_MAX)
    return -EINVAL;
  size_t total = CONTAINER_FIXED + s + payload_len;
  if (total > cap)
    return -ENOSPC;
  unsigned char *p = buf;
  memcpy(p, MAGIC, 4);
  p[4] = CONTAINER_VERSION;
  p[5] = 0;
  p[6] = (unsigned char)s;
  p[7] = (unsigned char)(s >> 8);
  memcpy(p + 8, spec, s);
  store64(p + 8 + s, n);
  store64(p + 16 + s, payload_len);
  uint32_t crc = container_crc32c(0, p, 24 + s);
  crc = container_crc32c(crc, payload, payload_len);
  kern_store32(p + 24 + s, crc);
  if (payload_len)
    memcpy(p + 28 + s, payload, payload_len);
  return (ptrdiff_t)total;
}

/* The fixed header of the LEN bytes at P: magic, version and a printable
 * spec of *SPECLEN bytes that the buffer holds with the rest of the
 * header. Returns 0 or -EBADMSG with a message. */
static int header_read(const unsigned char *p, size_t len, size_t *speclen,
                       char *err, size_t errlen) {
  if (len < 8) {
    codec_errf(err, errlen,
               "file too short to be a codec container (%zu bytes)", len);
    return -EBADMSG;
  }
  if (memcmp(p, MAGIC, 4) != 0) {
    codec_errf(err, errlen,
               "not a codec container: bad magic (expected "
               "\"GSCD\")");
    return -EBADMSG;
  }
  unsigned version = (unsigned)p[4] | (unsigned)p[5] << 8;
  if (version != CONTAINER_VERSION) {
    codec_errf(err, errlen,
               "codec container version %u is not supported (expected %d)",
               version, CONTAINER_VERSION);
    return -EBADMSG;
  }
  size_t s = (size_t)p[6] | (size_t)p[7] << 8;
  if (s == 0 || s >= CODEC_SPEC_MAX) {
    codec_errf(err, errlen, "codec container: spec length %zu is outside 1..%d",
               s, CODEC_SPEC_MAX - 1);
    return -EBADMSG;
  }
  if (len < CONTAINER_FIXED + s) {
    codec_errf(err, errlen,
               "codec container truncated: %zu bytes, the header alone needs "
               "%zu",
               len, CONTAINER_FIXED + s);
    return -EBADMSG;
  }
  for (size_t i = 0; i < s; i++)
    if (p[8 + i] < 0x20 || p[8 + i] > 0x7e) {
      codec_errf(err, errlen,
                 "codec container: spec holds a non-printable "
                 "byte");
      return -EBADMSG;
    }
  *speclen = s;
  return 0;
}

int container_read(const void *buf, size_t len, struct container_view *out,
                   char *err, size_t errlen) {
  const unsigned char *p = buf;
  size_t s;
  int rc = header_read(p, len, &s, err, errlen);
  if (rc != 0)
    return rc;
  uint64_t n = load64(p + 8 + s);
  uint64_t plen = load64(p + 16 + s);
  if (plen != len - CONTAINER_FIXED - s) {
    codec_errf(err, errlen,
               "codec container truncated or padded: header announces a "
               "%llu-byte payload, the file holds %zu",
               (unsigned long long)plen, len - CONTAINER_FIXED - s);
    return -EBADMSG;
  }
  uint32_t crc = container_crc32c(0, p, 24 + s);
  crc = container_crc32c(crc, p + 28 + s, (size_t)plen);
  if (crc != kern_load32(p + 24 + s)) {
    codec_errf(err, errlen,
               "codec container checksum mismatch: the file is "
               "corrupted");
    return -EBADMSG;
  }
  memcpy(out->spec, p + 8, s);
  out->spec[s] = '\0';
  out->n = n;
  out->payload = p + 28 + s;
  out->len = (size_t)plen;
  return 0;
}
