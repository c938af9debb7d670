/* models/nic.h: the NIC-embedded compression engine (placement = nic) and
 * the packets a message travels in.
 *
 * INCEPTIONN's engine (seeds/000, Section VI-A, Figs. 8-10) sits between
 * the NIC's packet DMA and its Ethernet MAC and streams 256-bit AXI bursts
 * (eight fp32 values) at the engine clock (100 MHz on the VC709). gradsim
 * models it cycle by cycle from the tags of the actual payload:
 *
 *   Compression (Fig. 9). Each cycle one input burst enters the eight
 *   Compression Blocks, whose fields (0/8/16/32 bits) and 2-bit tags form
 *   one vector of 2L + fields bits (16..272 for L = 8 lanes). The
 *   Alignment Unit appends the vector to the bits it carries and emits one
 *   burst_bits output burst in the same cycle when it holds a whole burst.
 *   When the carry left after emitting is itself a whole burst (a run of
 *   vectors longer than a burst, e.g. 272-bit ones, gains 16 bits a
 *   cycle), the Alignment Unit is full: the next cycle only emits and the
 *   input stalls. At the end of a packet the partial carry leaves as one
 *   last (padded) burst.
 *
 *   Decompression (Fig. 10). The Burst Buffer holds up to two input bursts
 *   plus the 16-bit tag the Tag Decoder has read (our reading: 512 bits
 *   are not enough to hold a 272-bit vector behind a carry of 257..271
 *   bits, which would deadlock; the tag register holds the overhang). Each
 *   cycle, when the buffer holds the next vector whole, the eight
 *   Decompression Blocks emit one output burst of floats and the buffer
 *   shifts the vector out; then it reads the next input burst if one
 *   fits. A cycle without a whole vector is a stall.
 *
 *   Headers pass the engine uncompressed, one cycle per burst (the ToS
 *   match happens on the first, Section VI-A); each engine adds a fixed
 *   pipeline latency (depth cycles).
 *
 * Other codecs run on a generic streaming engine (struct nic_stream): it
 * takes LANES values a cycle, reads and writes at most BITS_IN / BITS_OUT
 * bits a cycle, and makes PASSES passes over the whole message before the
 * first packet can stream (the global maximum of q8, 3lc, terngrad; the
 * selection of topk and rgc). Its parameters are in codec_costs.conf.
 *
 * Packets (struct nic_framing): with framing, a message is cut into
 * packets of at most mtu - header_bytes payload bytes; every packet also
 * carries header_bytes (IP + TCP, inside the MTU) and frame_bytes
 * (Ethernet preamble, MAC header, FCS and inter-frame gap) on the wire and
 * costs the host driver_s at each end. On the NIC, compression shrinks
 * each packet's payload but keeps the number of packets, their headers and
 * the driver's work: the reason INCEPTIONN's 5.5-11.6x compression ratio
 * cuts communication time by only about 54% (Section VIII-C). A packet
 * carries (mtu - header_bytes) / 4 values (365 at MTU 1500), whatever the
 * codec: the host stack cuts the message before the NIC compresses it;
 * the last burst of a packet may be partial.
 *
 * Pure functions of their inputs; no SimGrid. */
#ifndef GRADSIM_MODELS_NIC_H
#define GRADSIM_MODELS_NIC_H

#include "codec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nic_engine {
  double clock_hz;     /* engine clock (default 100e6, the VC709's) */
  unsigned burst_bits; /* AXI-stream width, a multiple of 32 (256) */
  unsigned depth;      /* pipeline latency of each engine, cycles (3) */
};

struct nic_framing {
  bool packets;          /* cut messages into packets (else one stream) */
  unsigned mtu;          /* bytes of an IP packet (1500; jumbo 9000) */
  unsigned header_bytes; /* IP + TCP headers inside the MTU (40) */
  unsigned frame_bytes;  /* Ethernet framing outside the MTU (38) */
  double driver_s;       /* host driver time per packet at each end */
};

void nic_engine_default(struct nic_engine *e);
void nic_framing_default(struct nic_framing *f);

/* 0, or -EINVAL with a message naming the bad parameter and what is
 * allowed: zero or negative clock, burst width not a multiple of 32 bits
 * (or above 4096), an MTU without room for one burst after its headers. */
int nic_check(const struct nic_engine *e, const struct nic_framing *f,
              char *err, size_t errlen);

/* Values per gradient packet: the payload room in whole fp32 values. */
uint64_t nic_packet_values(const struct nic_engine *e,
                           const struct nic_framing *f);
/* Header bursts of a packet (headers plus the Ethernet MAC header the
 * engine sees: header_bytes + 14, in bursts, rounded up). */
unsigned nic_header_bursts(const struct nic_engine *e,
                           const struct nic_framing *f);

/* Cycle counts of one engine on one packet. */
struct nic_cost {
  uint64_t cycles;     /* from the first burst in to the last out, without
                        * the pipeline latency (depth), which a stream of
                        * packets pays once */
  uint64_t stalls;     /* cycles the input waited (compression) or the
                        * output waited for bits (decompression) */
  uint64_t out_bursts; /* whole bursts written (compression: payload only;
                        * decompression: bursts of floats) */
  bool flush;          /* compression: a partial burst left at the end */
  uint64_t bits;       /* compressed payload bits (the vectors' sum) */
};

/* The engine streams a codec whose values fall in classes of fixed field
 * widths (codec_class_count() in 1..4: INCEPTIONN's, whose 2-bit tags
 * name them); nic_tagged() says whether C is such a codec.
 *
 * Vector sizes: VBITS[i] = 2L + kept field bits of burst i of the N
 * values whose classes (codec_classes) are TAGS[j] (one byte per value);
 * a last partial burst is padded with zeros (class 0, whose field is
 * empty). Returns the number of bursts, ceil(N / L). */
bool nic_tagged(const codec_t *c);
size_t nic_inc_vectors(const struct nic_engine *e, const codec_t *c,
                       const uint8_t *tags, size_t n, uint16_t *vbits);

/* Compression and decompression of one packet of NV vectors (bits from
 * nic_inc_vectors) behind HEADER bursts. */
void nic_inc_compress(const struct nic_engine *e, const uint16_t *vbits,
                      size_t nv, unsigned header, struct nic_cost *c);
void nic_inc_decompress(const struct nic_engine *e, const uint16_t *vbits,
                        size_t nv, unsigned header, struct nic_cost *c);

/* One packet of N values through the engines, with data. Compress: encode
 * X with the tagged codec C into OUT (CAP >= codec_bound(C, N)) and
 * cost the compression from the payload's tags; returns the payload
 * length, or a negative errno (a value that is not finite, CAP short).
 * Decompress: validate the payload, cost the decompression and decode it
 * into OUT; returns 0 or a negative errno. */
ptrdiff_t nic_inc_compress_packet(const struct nic_engine *e,
                                  const codec_t *c, const float *x, size_t n,
                                  unsigned header, void *out, size_t cap,
                                  struct nic_cost *cost);
int nic_inc_decompress_packet(const struct nic_engine *e, const codec_t *c,
                              const void *in, size_t len, size_t n,
                              unsigned header, float *out,
                              struct nic_cost *cost);

/* A codec on the generic streaming engine (codec_costs.conf "nic" lines). */
struct nic_stream {
  double lanes;    /* values per cycle */
  double bits_in;  /* bits read per cycle */
  double bits_out; /* bits written per cycle */
  double passes;   /* passes over the whole message before streaming */
};

/* Cycles of the generic engine on a packet of N values whose compressed
 * payload is BITS bits, behind HEADER bursts (compress or decompress).
 * The whole-message passes are not included: nic_stream_pass_cycles. */
uint64_t nic_stream_cycles(const struct nic_engine *e,
                           const struct nic_stream *s, bool compress,
                           uint64_t n, uint64_t bits, unsigned header);
uint64_t nic_stream_pass_cycles(const struct nic_stream *s, uint64_t n);

/* A message on the NIC: its packets and the engines' work, summed. */
struct nic_msg {
  uint64_t packets;
  double payload_bytes;     /* compressed payload, all packets */
  double tx_cycles, rx_cycles;   /* compression, decompression */
  double tx_stalls, rx_stalls;
  double fill_cycles; /* one packet through both engines + their depth +
                       * the whole-message passes: what pipelining cannot
                       * hide */
};

/* A message of the tagged codec C of N values, of which the M held ones
 * have the classes TAGS (M = N, or a sample standing for N: counts are
 * scaled by N / M). */
void nic_inc_message(const struct nic_engine *e, const struct nic_framing *f,
                     const codec_t *c, const uint8_t *tags, size_t m,
                     uint64_t n, struct nic_msg *out);
/* A message of N values whose compressed payload is BYTES on the generic
 * engine S. */
void nic_stream_message(const struct nic_engine *e,
                        const struct nic_framing *f,
                        const struct nic_stream *s, uint64_t n, double bytes,
                        struct nic_msg *out);

#endif
