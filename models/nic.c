/* models/nic.c: the NIC compression engine and packet model (nic.h). */
#include "nic.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include <glib.h>

/* Ethernet MAC header the engine sees in front of the IP header. */
enum { MAC_HEADER = 14 };

void nic_engine_default(struct nic_engine *e) {
  /* seeds/000 Section VII: the engines run at the 100 MHz of the VC709
   * NIC reference design with its 256-bit AXI-stream bus. Three stages:
   * Compression Blocks, shifter tree, Alignment Unit (Fig. 9). */
  *e = (struct nic_engine){.clock_hz = 100e6, .burst_bits = 256, .depth = 3};
}

void nic_framing_default(struct nic_framing *f) {
  /* IPv4 + TCP headers without options (20 + 20); Ethernet preamble and
   * start delimiter 8, MAC header 14, FCS 4, inter-frame gap 12.
   * driver_s: a kernel TCP/IP stack without segmentation offload spends of
   * the order of 1 us of CPU per MTU packet and core (about 1 Mpps per
   * core: Rizzo, netmap, USENIX ATC 2012, measured about 950 ns per packet
   * through the socket send path including its system call); a bulk
   * transfer amortises the system call, and transmit and receive each do
   * about half of the remaining work: 0.5 us per packet at each end. */
  *f = (struct nic_framing){.packets = false,
                            .mtu = 1500,
                            .header_bytes = 40,
                            .frame_bytes = 38,
                            .driver_s = 0.5e-6};
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

int nic_check(const struct nic_engine *e, const struct nic_framing *f,
              char *err, size_t errlen) {
  if (!(e->clock_hz > 0) || !isfinite(e->clock_hz))
    return fail(err, errlen,
                "[nic] clock = %g: the engine clock must be a frequency "
                "above 0 (e.g. 100e6 or 100MHz)",
                e->clock_hz);
  if (e->burst_bits == 0 || e->burst_bits % 32 || e->burst_bits > 4096)
    return fail(err, errlen,
                "[nic] burst_bits = %u: the burst width must be a multiple "
                "of 32 bits (whole fp32 values) from 32 to 4096",
                e->burst_bits);
  if (f->header_bytes > 65535 || f->frame_bytes > 65535)
    return fail(err, errlen,
                "[nic] header_bytes and frame_bytes must be at most 65535");
  if (f->mtu > 1u << 20)
    return fail(err, errlen, "[nic] mtu = %u: at most 1048576 bytes", f->mtu);
  if (f->mtu < f->header_bytes + e->burst_bits / 8)
    return fail(err, errlen,
                "[nic] mtu = %u: smaller than its headers (header_bytes = "
                "%u) plus one %u-bit burst of payload; the MTU must be at "
                "least %u bytes",
                f->mtu, f->header_bytes, e->burst_bits,
                f->header_bytes + e->burst_bits / 8);
  if (!(f->driver_s >= 0) || !isfinite(f->driver_s))
    return fail(err, errlen,
                "[nic] driver_s = %g: the per-packet driver time must be "
                "seconds >= 0",
                f->driver_s);
  return 0;
}

static unsigned lanes_of(const struct nic_engine *e) {
  return e->burst_bits / 32;
}

uint64_t nic_packet_values(const struct nic_engine *e,
                           const struct nic_framing *f) {
  (void)e;
  return (f->mtu - f->header_bytes) / 4;
}

unsigned nic_header_bursts(const struct nic_engine *e,
                           const struct nic_framing *f) {
  unsigned bits = (f->header_bytes + MAC_HEADER) * 8;
  return (bits + e->burst_bits - 1) / e->burst_bits;
}

bool nic_tagged(const codec_t *c) {
  size_t k = c ? codec_class_count(c) : 0;
  return k >= 1 && k <= 4;
}

size_t nic_inc_vectors(const struct nic_engine *e, const codec_t *c,
                       const uint8_t *tags, size_t n, uint16_t *vbits) {
  unsigned L = lanes_of(e);
  size_t nv = (n + L - 1) / L;
  unsigned field[4];
  for (size_t k = 0; k < 4; k++)
    field[k] = codec_class_bits(c, k);
  for (size_t i = 0; i < nv; i++) {
    unsigned bits = 2 * L;
    for (size_t j = i * L; j < n && j < (i + 1) * L; j++)
      bits += field[tags[j] & 3u];
    vbits[i] = (uint16_t)bits;
  }
  return nv;
}

void nic_inc_compress(const struct nic_engine *e, const uint16_t *vbits,
                      size_t nv, unsigned header, struct nic_cost *c) {
  const uint64_t B = e->burst_bits;
  uint64_t carry = 0;
  *c = (struct nic_cost){.cycles = header};
  for (size_t i = 0; i < nv; i++) {
    if (carry >= B) {
      /* The Alignment Unit still holds a whole burst: it emits, the
       * input waits. */
      carry -= B;
      c->out_bursts++;
      c->cycles++;
      c->stalls++;
    }
    carry += vbits[i];
    c->bits += vbits[i];
    c->cycles++;
    if (carry >= B) {
      carry -= B;
      c->out_bursts++;
    }
  }
  while (carry >= B) {
    carry -= B;
    c->out_bursts++;
    c->cycles++;
  }
  if (carry) {
    c->flush = true;
    c->cycles++;
  }
}

void nic_inc_decompress(const struct nic_engine *e, const uint16_t *vbits,
                        size_t nv, unsigned header, struct nic_cost *c) {
  const uint64_t B = e->burst_bits, cap = 2 * B + 2 * lanes_of(e);
  uint64_t bits = 0;
  for (size_t i = 0; i < nv; i++)
    bits += vbits[i];
  uint64_t in_left = (bits + B - 1) / B * B, buf = 0;
  *c = (struct nic_cost){.cycles = header, .bits = bits};
  for (size_t i = 0; i < nv;) {
    c->cycles++;
    if (buf >= vbits[i]) {
      buf -= vbits[i++];
      c->out_bursts++;
    } else {
      c->stalls++;
    }
    if (in_left && buf + B <= cap) {
      buf += B;
      in_left -= B;
    }
  }
}

static uint64_t ceil_div(double a, double b) {
  return b > 0 ? (uint64_t)ceil(a / b) : 0;
}

uint64_t nic_stream_cycles(const struct nic_engine *e,
                           const struct nic_stream *s, bool compress,
                           uint64_t n, uint64_t bits, unsigned header) {
  (void)e;
  /* Compression reads 32n bits and writes BITS; decompression the
   * reverse. The slowest of the three limits sets the rate. */
  double raw = 32.0 * (double)n;
  uint64_t c = ceil_div((double)n, s->lanes);
  uint64_t in = ceil_div(compress ? raw : (double)bits, s->bits_in);
  uint64_t out = ceil_div(compress ? (double)bits : raw, s->bits_out);
  c = in > c ? in : c;
  c = out > c ? out : c;
  return c + header;
}

uint64_t nic_stream_pass_cycles(const struct nic_stream *s, uint64_t n) {
  return (uint64_t)ceil(s->passes * (double)ceil_div((double)n, s->lanes));
}

void nic_inc_message(const struct nic_engine *e, const struct nic_framing *f,
                     const codec_t *c, const uint8_t *tags, size_t m,
                     uint64_t n, struct nic_msg *out) {
  *out = (struct nic_msg){0};
  uint64_t per = nic_packet_values(e, f);
  unsigned header = nic_header_bursts(e, f);
  out->packets = (n + per - 1) / per;
  if (m == 0 || n == 0)
    return;
  size_t L = lanes_of(e);
  uint16_t *vb = g_new(uint16_t, (per + L - 1) / L);
  double tx = 0, rx = 0, txs = 0, rxs = 0, bytes = 0;
  uint64_t held_packets = 0;
  struct nic_cost first_tx = {0}, last_rx = {0};
  for (size_t a = 0; a < m; a += per) {
    size_t k = m - a < per ? m - a : per;
    size_t nv = nic_inc_vectors(e, c, tags + a, k, vb);
    struct nic_cost ct, cr;
    nic_inc_compress(e, vb, nv, header, &ct);
    nic_inc_decompress(e, vb, nv, header, &cr);
    if (a == 0)
      first_tx = ct;
    last_rx = cr;
    tx += (double)ct.cycles;
    rx += (double)cr.cycles;
    txs += (double)ct.stalls;
    rxs += (double)cr.stalls;
    bytes += (double)((ct.bits + 7) / 8);
    held_packets++;
  }
  g_free(vb);
  /* A sample stands for the N values in proportion; whole messages scale
   * exactly (N = M). */
  double scale = (double)out->packets / (double)held_packets;
  out->tx_cycles = tx * scale;
  out->rx_cycles = rx * scale;
  out->tx_stalls = txs * scale;
  out->rx_stalls = rxs * scale;
  out->payload_bytes = m == n ? bytes : bytes * (double)n / (double)m;
  out->fill_cycles =
      (double)first_tx.cycles + (double)last_rx.cycles + 2.0 * e->depth;
}

void nic_stream_message(const struct nic_engine *e,
                        const struct nic_framing *f,
                        const struct nic_stream *s, uint64_t n, double bytes,
                        struct nic_msg *out) {
  *out = (struct nic_msg){0};
  uint64_t per = nic_packet_values(e, f);
  unsigned header = nic_header_bursts(e, f);
  out->packets = (n + per - 1) / per;
  out->payload_bytes = bytes;
  if (!n)
    return;
  /* Packets are alike: the full ones, and the last with the rest. */
  uint64_t full = n / per, rest = n % per;
  double bits_per_value = 8.0 * bytes / (double)n;
  uint64_t tf = nic_stream_cycles(e, s, true, per,
                                  (uint64_t)ceil(bits_per_value * per), header);
  uint64_t rf = nic_stream_cycles(e, s, false, per,
                                  (uint64_t)ceil(bits_per_value * per), header);
  uint64_t tr = rest ? nic_stream_cycles(e, s, true, rest,
                                         (uint64_t)ceil(bits_per_value * rest),
                                         header)
                     : 0;
  uint64_t rr = rest ? nic_stream_cycles(e, s, false, rest,
                                         (uint64_t)ceil(bits_per_value * rest),
                                         header)
                     : 0;
  uint64_t pass = nic_stream_pass_cycles(s, n);
  out->tx_cycles = (double)(full * tf + tr + pass);
  out->rx_cycles = (double)(full * rf + rr);
  out->fill_cycles = (double)(full ? tf : tr) + (double)(rest ? rr : rf) +
                     (double)pass + 2.0 * e->depth;
}

/* The vectors of a payload of N values, or NULL (-EBADMSG). */
static uint16_t *vectors_of(const struct nic_engine *e, const codec_t *c,
                            const void *payload, size_t len, size_t n,
                            size_t *nv) {
  uint8_t *tags = g_new(uint8_t, n + 1);
  if (!nic_tagged(c) || codec_classes(c, payload, len, n, tags, NULL) != 0) {
    g_free(tags);
    return NULL;
  }
  uint16_t *vb = g_new(uint16_t, n / lanes_of(e) + 2);
  *nv = nic_inc_vectors(e, c, tags, n, vb);
  g_free(tags);
  return vb;
}

ptrdiff_t nic_inc_compress_packet(const struct nic_engine *e,
                                  const codec_t *c, const float *x, size_t n,
                                  unsigned header, void *out, size_t cap,
                                  struct nic_cost *cost) {
  codec_state_t *st;
  if (codec_state_create(c, n, 0, &st) != 0)
    return -ENOMEM;
  ptrdiff_t len = codec_encode(st, x, n, out, cap);
  codec_state_free(st);
  if (len < 0)
    return len;
  size_t nv;
  uint16_t *vb = vectors_of(e, c, out, (size_t)len, n, &nv);
  if (!vb)
    return -EBADMSG;
  nic_inc_compress(e, vb, nv, header, cost);
  g_free(vb);
  return len;
}

int nic_inc_decompress_packet(const struct nic_engine *e, const codec_t *c,
                              const void *in, size_t len, size_t n,
                              unsigned header, float *out,
                              struct nic_cost *cost) {
  size_t nv;
  uint16_t *vb = vectors_of(e, c, in, len, n, &nv);
  if (!vb)
    return -EBADMSG;
  nic_inc_decompress(e, vb, nv, header, cost);
  g_free(vb);
  return codec_decode(c, in, len, out, n);
}
