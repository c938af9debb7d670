/* codecs/inceptionn.h: the INCEPTIONN payload beyond codec.h, for the
 * tools that read it: Table III class counts and the NIC engine's
 * cycle model (which needs each burst's tag vector).
 *
 * Payload layout (seeds/000, Section V and Fig. 9): values in groups of
 * eight, one 256-bit input burst each. A group is its tag vector, value j's
 * 2-bit tag in bits [2j, 2j+1] of a little-endian 16-bit word, followed by
 * the kept fields of its values in order, each little-endian: 0, 1, 2 or 4
 * bytes for tags 0, 1, 2, 3. A last group of r < 8 values has a tag vector
 * of ceil(2r/8) bytes with its unused bits zero. The total is therefore the
 * sum over values of (2 + 0/8/16/32) bits rounded up to whole bytes. */
#ifndef GRADSIM_CODECS_INCEPTIONN_H
#define GRADSIM_CODECS_INCEPTIONN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Algorithm 2's tags. */
enum inceptionn_tag {
  INCEPTIONN_0BIT = 0,  /* 2'b00: |x| below the error bound, nothing kept */
  INCEPTIONN_8BIT = 1,  /* 2'b01: sign + |x| truncated to 2^-7 */
  INCEPTIONN_16BIT = 2, /* 2'b10: sign + |x| truncated to 2^-15 */
  INCEPTIONN_32BIT = 3, /* 2'b11: |x| >= 1 (and inf, NaN): all 32 bits */
};

/* Field bytes kept for a tag. */
static inline unsigned inceptionn_field_bytes(unsigned tag) {
  return tag == 3 ? 4u : tag;
}

/* The tag Algorithm 2 gives the value with bit pattern BITS under error
 * bound 2^EB (EB in [-126, -1]). */
unsigned inceptionn_classify(uint32_t bits, int eb);

/* Walk a payload of N values: validate it as codec_decode() does, store
 * the tag vector of group g in TAGS[g] (ceil(N/8) entries; may be NULL)
 * and the number of values per tag in COUNTS[0..3] (may be NULL). Returns
 * 0 or -EBADMSG. */
int inceptionn_scan(const void *payload, size_t len, size_t n, uint16_t *tags,
                    uint64_t counts[4]);

#ifdef __cplusplus
}
#endif
#endif
