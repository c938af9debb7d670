/* codecs/quartic.h: 3LC's quartic and zero-run encodings (seeds/004,
 * Sections 3.2 and 3.3), shared by the 3lc and terngrad codecs.
 *
 * Quartic encoding packs n digits d in {0, 1, 2} (a 3-value q plus one)
 * into L = ceil(n/5) bytes: the digits, padded with zeros to 5L, form five
 * contiguous partitions p0..p4 of L digits, and byte j is
 * 81 p0[j] + 27 p1[j] + 9 p2[j] + 3 p3[j] + p4[j], at most 242. Five zero
 * values (digits 1) give byte 121.
 *
 * Zero-run encoding replaces k consecutive bytes 121, 2 <= k <= 14, by the
 * one byte 243 + (k - 2); longer runs are cut greedily into runs of 14,
 * and a remainder of one stays the byte 121. */
#ifndef GRADSIM_CODECS_QUARTIC_H
#define GRADSIM_CODECS_QUARTIC_H

#include <stdbool.h>
#include <stddef.h>

static inline size_t quartic_len(size_t n) { return n / 5 + (n % 5 != 0); }

/* Zero-run encode the LEN bytes of BUF in place; returns the new length
 * (never more than LEN). */
size_t zre_encode_inplace(unsigned char *buf, size_t len);

/* The same a block at a time, so that an encoder can compact each block of
 * quartic bytes while it is in the cache: zre_begin(), then zre_feed() on
 * consecutive ranges [R0, R1) of BUF (the bytes from R0 on not yet fed,
 * written or not), then zre_end(), which returns the encoded length. The
 * encoded bytes go to the front of BUF, never past the bytes fed: an
 * encoder may write the next block's bytes after R1 between feeds. A run
 * of 121 that reaches the end of a block is carried, so the result is
 * zre_encode_inplace()'s, byte for byte, however the bytes are cut. */
struct zre_stream {
  size_t w;   /* encoded bytes so far */
  size_t run; /* bytes 121 just before the next byte to feed, not encoded */
  bool simd;  /* use the AVX2 kernel (same bytes) */
};
/* SIMD: use the AVX2 kernel, which the caller has checked the processor
 * has (codec_use_avx2). */
void zre_begin(struct zre_stream *z, bool simd);
void zre_feed(unsigned char *buf, size_t r0, size_t r1, struct zre_stream *z);
size_t zre_end(unsigned char *buf, struct zre_stream *z);

/* Decode a quartic payload (zero-run encoded when ZRE) of LEN bytes into N
 * values M * (d - 1), or add them to OUT when ADD (a zero is added as
 * -0.0, which changes nothing). Validates that the stream expands to
 * exactly quartic_len(N) bytes of at most 242 and that every padding digit
 * is zero. SIMD: use the AVX2 kernel (same results). Returns 0 or
 * -EBADMSG. */
int quartic_decode(bool simd, const unsigned char *in, size_t len, bool zre,
                   float m, float *out, size_t n, bool add);

#endif
