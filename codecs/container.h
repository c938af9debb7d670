/* codecs/container.h: a small self-describing file for one encoded
 * vector, so that `gradsim codec decode` needs no spec.
 *
 * Layout, all integers little-endian (S = spec length, P = payload length):
 *   0       4  magic "GSCD"
 *   4       2  version, 1
 *   6       2  S, 1..CODEC_SPEC_MAX-1
 *   8       S  the codec's canonical spec, ASCII, no NUL
 *   8+S     8  n, the number of values
 *   16+S    8  P
 *   24+S    4  CRC-32C of bytes [0, 24+S) and of the payload
 *   28+S    P  the payload
 * The file is exactly 28 + S + P bytes. The checksum makes a flipped bit
 * an error rather than a silently different gradient. */
#ifndef GRADSIM_CODECS_CONTAINER_H
#define GRADSIM_CODECS_CONTAINER_H

#include "codec.h"

#include <stddef.h>
#include <stdint.h>

enum { CONTAINER_VERSION = 1, CONTAINER_FIXED = 28 };

struct container_view {
  char spec[CODEC_SPEC_MAX]; /* NUL-terminated */
  uint64_t n;
  const unsigned char *payload; /* points into the buffer read */
  size_t len;
};

/* Bytes needed for a container of this spec and payload. */
size_t container_size(const char *spec, size_t payload_len);

/* Write a container into BUF (CAP bytes). Returns the bytes written,
 * -ENOSPC or -EINVAL (spec too long or empty). */
ptrdiff_t container_write(void *buf, size_t cap, const char *spec, uint64_t n,
                          const void *payload, size_t payload_len);

/* Parse a container held in BUF (LEN bytes). Returns 0, or -EBADMSG with a
 * one-line reason in ERR. Never reads outside BUF. */
int container_read(const void *buf, size_t len, struct container_view *out,
                   char *err, size_t errlen);

/* CRC-32C (Castagnoli), continued from CRC (start with 0). */
uint32_t container_crc32c(uint32_t crc, const void *data, size_t len);

#endif
