/* sim/sim.c: the primitives collectives are built from (sim.h). */
#include "sim.h"

#include "codec_cost.h"
#include "comm_rate.h"
#include "nic.h"
#include "platform.h"

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The engine's log category, every file's parent (here, in the lowest
 * file that logs, so that nothing below it names a file above). */
XBT_LOG_NEW_CATEGORY(gradsim, "gradsim");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(gs_sim, gradsim, "simulation primitives");

struct run_progress *sim_progress;

double sim_now(void) { return simgrid_get_clock(); }

/* ---- facts of a point the whole engine asks -------------------------- */

struct model_opts point_model_opts(const struct point *p) {
  return (struct model_opts){.device = p->device,
                             .precision = p->precision,
                             .batch = p->batch,
                             .tokens = p->seq_len,
                             .mfu = p->mfu};
}

int run_shards(const struct point *p) {
  if (p->sharding == SHARD_NONE)
    return 1;
  int g = topology_node_size(p);
  return p->sharding == SHARD_HSDP && g > 0 ? g : p->nodes;
}

bool run_units(const struct point *p) {
  return p->sharding == SHARD_ZERO3 || p->sharding == SHARD_HSDP;
}

bool run_has_codec(const struct point *p) {
  return strcmp(p->codec, "none") != 0;
}

/* ---- the bytes of each pair of ranks (account.c reads them) ----------- */

static void add_bytes(GHashTable *t, gpointer key, double bytes) {
  double *b = g_hash_table_lookup(t, key);
  if (!b) {
    b = g_new0(double, 1);
    g_hash_table_insert(t, key, b);
  }
  *b += bytes;
}

/* Routes are asked of SimGrid once a pair, at the end (account.c,
 * link_rows): a route costs more than the message's own bookkeeping. */
void sim_link_bytes(struct sim *s, struct worker *w, int src, int dst,
                    double bytes) {
  sim_pair_bytes(s, w, sim_pair_key(src, dst), bytes);
}

void sim_pair_bytes(struct sim *s, struct worker *w, gpointer key,
                    double bytes) {
  add_bytes(s->pair_bytes, key, bytes);
  /* Recurrence's records of the bucket's routes (recur.c). */
  if (w && w->recur_routes) {
    struct recur_route rt = {key, bytes};
    g_array_append_val(w->recur_routes, rt);
  }
  for (int lv = 0; w && lv < FF_LEVELS; lv++)
    if (w->ff_recording[lv])
      add_bytes(w->ff_routes[lv], key, bytes);
}

struct codec_shape *linear_shapes(const struct sim *s, size_t b, size_t *k) {
  const struct bucket *bk = &s->buckets[b];
  struct codec_shape *sh = g_new(struct codec_shape, bk->count ? bk->count : 1);
  for (size_t i = 0; i < bk->count; i++)
    model_tensor_matrix(&s->model->tensors[bk->first + i], &sh[i].rows,
                        &sh[i].cols);
  *k = bk->count;
  return sh;
}

void msg_free(struct msg *m) {
  if (!m)
    return;
  if (--m->refs > 0)
    return;
  for (size_t i = 0; i < m->nparts; i++)
    msg_free(m->parts[i]);
  g_free(m->parts);
  g_free(m->data);
  g_free(m->exact);
  g_free(m->offset);
  g_free(m->bound);
  g_free(m->hop_want);
  g_free(m->hop_bound);
  g_free(m);
}

/* The clean function of a detached send that was never received. */
static void msg_clean(void *m) { msg_free(m); }

struct msg *msg_ref(struct msg *m) {
  m->refs++;
  return m;
}

void msg_bundle_add(struct msg *b, struct msg *part) {
  b->parts = g_renew(struct msg *, b->parts, b->nparts + 1);
  b->parts[b->nparts++] = msg_ref(part);
  b->bytes += part->bytes;
  /* On the NIC every part is a stream of packets of its own. */
  b->nic_packets += part->nic_packets;
  b->tx_s += part->tx_s;
  b->rx_s += part->rx_s;
  b->tx_stalls += part->tx_stalls;
  b->rx_stalls += part->rx_stalls;
  b->fill_s = fmax(b->fill_s, part->fill_s);
}

struct msg *msg_share(struct msg *m) {
  struct msg *b = g_new0(struct msg, 1);
  b->refs = 1;
  msg_bundle_add(b, m->nparts == 1 ? m->parts[0] : m);
  return b;
}

gpointer sim_pair_key(int src, int dst) {
  return GSIZE_TO_POINTER(((gsize)(guint32)src << 32) | (guint32)dst);
}

guint sim_pair_hash(gconstpointer key) {
  /* The finaliser of MurmurHash3 (fmix64): every bit of src and dst
   * reaches the 32 bits GLib keeps. */
  guint64 x = GPOINTER_TO_SIZE(key);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (guint)x;
}

sg_mailbox_t sim_mailbox(struct sim *s, int src, int dst) {
  gpointer key = sim_pair_key(src, dst);
  sg_mailbox_t mb = g_hash_table_lookup(s->mb, key);
  if (!mb) {
    char name[48];
    snprintf(name, sizeof name, "%d>%d", src, dst);
    mb = sg_mailbox_by_name(name);
    g_hash_table_insert(s->mb, key, mb);
  }
  return mb;
}

double sim_formula_time(const struct sim *s, const struct collective *c,
                        const struct formula *f, double bytes) {
  struct formula_in in;
  formula_in_init(&in);
  in.v[FP_P] = s->nworkers;
  in.v[FP_N] = bytes;
  in.v[FP_ALPHA] = s->p->latency_s;
  in.v[FP_BETA] = 1.0 / s->p->bandwidth_Bps;
  in.v[FP_GAMMA] = s->gamma;
  if (c->formula_params)
    c->formula_params(s, &in);
  struct formula_out o;
  char err[256];
  return formula_eval(f, &in, &o, err, sizeof err) == 0 ? o.total : NAN;
}

bool sim_uncompressed(const struct sim *s, size_t b) {
  return s->codec && s->buckets[b].n < (uint64_t)s->p->compress_min;
}

bool sim_plain(const struct coll_call *c) { return !c->sim->codec || c->raw; }

int sim_value_bytes(const struct coll_call *c) {
  return c->value_bytes > 0 ? c->value_bytes : c->sim->p->grad_bytes;
}

void sim_span(struct worker *w, double t0, double t1, enum state st) {
  if (!w || t1 <= t0)
    return;
  if (w->direct || t0 >= w->sum_from) {
    w->acc[st] += t1 - t0;
  } else {
    struct span sp = {t0, t1, 0, 1, st};
    g_array_append_val(w->spans, sp);
  }
  sim_trace(w->sim, w->rank, 1, t0, t1, (int)st);
}

void sim_cpu(struct worker *w, double seconds, enum state st) {
  if (!(seconds > 0))
    return;
  double t0 = sim_now();
  sg_actor_execute(seconds * PLATFORM_SPEED * (w ? w->slowdown : 1.0));
  sim_span(w, t0, sim_now(), st);
}

bool sim_gpu_shared(const struct sim *s) {
  return s->codec && s->p->placement == PLACE_GPU &&
         !s->p->codec_own_stream;
}

double sim_gpu(struct worker *w, double seconds) {
  if (!(seconds > 0))
    return 0;
  /* Unshared, nothing waits for it: the lock's two switches into
   * SimGrid's kernel are skipped. */
  if (!sim_gpu_shared(w->sim)) {
    sg_actor_sleep_for(seconds * w->slowdown);
    return 0;
  }
  double t0 = sim_now();
  sg_mutex_lock(w->gpu);
  double waited = sim_now() - t0;
  sg_actor_sleep_for(seconds * w->slowdown);
  sg_mutex_unlock(w->gpu);
  return waited;
}

void sim_reduce(struct worker *w, struct sim *s, uint64_t values) {
  double t = (double)s->p->grad_bytes * (double)values * s->gamma;
  if (!w && t > 0)
    s->aggr_reduce_s += t;
  sim_cpu(w, t, ST_REDUCE);
}

void sim_stage(struct worker *w, struct sim *s, uint64_t values) {
  if (!(s->p->staging_Bps > 0) || !values)
    return;
  double t0 = sim_now();
  sg_actor_sleep_for((double)s->p->grad_bytes * (double)values /
                     s->p->staging_Bps);
  sim_span(w, t0, sim_now(), ST_COMM);
}

/* The rank of the calling side: workers 0..P-1, aggregators P.. */
static int rank_of(const struct coll_call *c) { return c->rank; }

/* The engines' next free times, per rank (sim.h). */
static double *engine_free(struct sim *s, bool tx) {
  if (!s->tx_free) {
    size_t n = (size_t)(s->nworkers + s->naggr);
    s->tx_free = g_new0(double, n);
    s->rx_free = g_new0(double, n);
  }
  return tx ? s->tx_free : s->rx_free;
}

/* The packets M travels in: those of the uncompressed message when the
 * NIC compressed it (it keeps their number), else as many as its bytes
 * fill. */
static uint64_t packets_of(const struct sim *s, const struct msg *m) {
  if (m->nic_packets)
    return m->nic_packets;
  uint64_t mss = s->p->framing.mtu - s->p->framing.header_bytes;
  return m->bytes ? (m->bytes + mss - 1) / mss : 1;
}

/* C's message of WIRE bytes to DST counted: in its worker's wire bytes
 * (the aggregators' where it has none), on its route, in the progress
 * line; the size SimGrid moves for it (a message of no bytes, a credit's
 * flag, moves one: the route counts none, as wire_bytes). */
static long sent_wire(struct coll_call *c, int dst, double wire) {
  struct sim *s = c->sim;
  if (c->w)
    c->w->wire_bytes += wire;
  else
    s->aggr_wire_bytes += wire;
  sim_link_bytes(s, c->w, rank_of(c), dst, wire);
  if (sim_progress) {
    sim_progress->messages += 1;
    sim_progress->sim_s = sim_now();
  }
  return wire >= 1 ? (long)wire : 1;
}

sg_comm_t sim_send(struct coll_call *c, int dst, struct msg *m) {
  struct sim *s = c->sim;
  const struct nic_framing *f = &s->p->framing;
  m->src = rank_of(c);
  m->posted = sim_now();
  /* The envelope (MPI's tag, source and communicator: SMPI sends 16
   * bytes) travels with every message. */
  double wire = (double)m->bytes + s->p->envelope_bytes, rate = 0;
  m->sent_packets = 0;
  if (f->packets || m->tx_s > 0 || m->rx_s > 0) {
    /* The stages of the packet pipeline: the host driver at each end,
     * the NIC engines, the wire. SimGrid times the wire; the slowest
     * other stage bounds the transfer's rate (models/nic.h). */
    uint64_t pk = packets_of(s, m);
    double driver = 0;
    if (f->packets) {
      double hdr = (double)pk * (f->header_bytes + f->frame_bytes);
      wire += hdr;
      driver = (double)pk * f->driver_s;
      m->sent_packets = pk;
      s->net.packets += (double)pk;
      s->net.header_bytes += hdr;
    }
    if (m->tx_s > 0) {
      /* The sender's one compression engine takes its messages in turn:
       * one posted while another streams finishes after it. */
      double *free_at = engine_free(s, true);
      free_at[m->src] = fmax(free_at[m->src], m->posted) + m->tx_s;
      m->tx_done = free_at[m->src];
    }
    double slow = fmax(fmax(m->tx_s, m->rx_s), driver);
    if (slow > 0)
      rate = wire / slow;
    if (c->w) {
      s->net.driver_s += driver;
      s->net.nic_s += m->tx_s;
      s->net.nic_stalls += m->tx_stalls;
    }
  }
  long size = sent_wire(c, dst, wire);
  /* Eager protocol (MPICH's, SMPI's send-is-detached-thresh): a message
   * below eager_bytes is detached; its sender goes on at once. */
  bool eager = (double)m->bytes < s->p->eager_bytes;
  if (rate > 0 || eager)
    return sim_put_async_rate(sim_mailbox(s, m->src, dst), m, size, rate,
                              eager ? msg_clean : NULL);
  return sg_mailbox_put_async(sim_mailbox(s, m->src, dst), m, size);
}

/* After M, whose transfer began at START, arrived at the caller (now):
 * the receiving end's part of the pipeline that overlapping cannot hide
 * (the last packet through the receiving driver and engine, the first
 * through the sender's); the time the sender's engine and the caller's
 * one decompression engine, taking their messages in turn, still need;
 * and the receiving NIC's accounting. Returns the wait. */
static double arrived(struct coll_call *c, const struct msg *m,
                      double start) {
  struct sim *s = c->sim;
  const struct nic_framing *f = &s->p->framing;
  double now = sim_now(), done = fmax(now, m->tx_done);
  if (m->rx_s > 0) {
    double *free_at = engine_free(s, false);
    free_at[c->rank] = fmax(free_at[c->rank], start) + m->rx_s;
    done = fmax(done, free_at[c->rank]);
  }
  double fill = (done - now) + m->fill_s +
                (m->sent_packets ? 2 * f->driver_s : 0);
  if (c->w) {
    s->net.driver_s += (double)m->sent_packets * f->driver_s;
    s->net.nic_s += m->rx_s;
    s->net.nic_stalls += m->rx_stalls;
  }
  return fill;
}

/* A message of the caller's completed now (recur.c: sealed buckets). */
static void saw_message(struct coll_call *c) {
  if (c->w)
    c->w->msg_last = sim_now();
}

static void fill_wait(struct coll_call *c, double fill) {
  if (!(fill > 0))
    return;
  double t0 = sim_now();
  sg_actor_sleep_for(fill);
  sim_span(c->w, t0, sim_now(), ST_COMM);
}

void sim_wait_send(struct coll_call *c, sg_comm_t comm) {
  if (!comm)
    return; /* sent eagerly: nothing to wait for */
  double t0 = sim_now();
  sg_comm_wait(comm);
  saw_message(c);
  sim_span(c->w, t0, sim_now(), ST_COMM);
}

/* M's transfer began at START (the later of the sender's post and the
 * receiver's request): the exchange of its sender, when a worker, began
 * no later than that. A message posted before its receiver is ready has
 * not left yet, so that exchange_s counts no wait for slower peers. */
static void mark_start(struct coll_call *c, const struct msg *m,
                       double start) {
  if (m->src < 0 || m->src >= c->sim->nworkers)
    return;
  struct worker *w = &c->sim->workers[m->src];
  if (w->first_send < 0 || start < w->first_send)
    w->first_send = start;
}

struct msg *sim_recv(struct coll_call *c, int src) {
  double t0 = sim_now();
  struct msg *m = sg_mailbox_get(sim_mailbox(c->sim, src, rank_of(c)));
  saw_message(c);
  double t1 = sim_now();
  /* Until the sender posted the message its side was not ready: idle;
   * after, the transfer: comm. */
  double split = m->posted > t0 ? (m->posted < t1 ? m->posted : t1) : t0;
  mark_start(c, m, split);
  sim_span(c->w, t0, split, ST_IDLE);
  sim_span(c->w, split, t1, ST_COMM);
  fill_wait(c, arrived(c, m, split));
  return m;
}

void sim_recv_post(struct coll_call *c, const int *srcs, int n,
                   struct msg **out, sg_comm_t *gets) {
  for (int i = 0; i < n; i++)
    gets[i] = sg_mailbox_get_async(sim_mailbox(c->sim, srcs[i], c->rank),
                                   (void **)&out[i]);
}

void sim_recv_all(struct coll_call *c, const int *srcs, int n,
                  struct msg **out) {
  sg_comm_t *gets = g_new(sg_comm_t, n);
  sim_recv_post(c, srcs, n, out, gets);
  sim_recv_wait(c, gets, n, out);
  g_free(gets);
}

void sim_recv_wait(struct coll_call *c, sg_comm_t *gets, int n,
                   struct msg **out) {
  double t0 = sim_now();
  sg_comm_wait_all(gets, (size_t)n);
  saw_message(c);
  double t1 = sim_now(), first = t1;
  for (int i = 0; i < n; i++) {
    first = out[i]->posted < first ? out[i]->posted : first;
    mark_start(c, out[i], out[i]->posted > t0 ? out[i]->posted : t0);
  }
  double split = first > t0 ? first : t0;
  sim_span(c->w, t0, split, ST_IDLE);
  sim_span(c->w, split, t1, ST_COMM);
  double fill = 0;
  for (int i = 0; i < n; i++)
    fill = fmax(fill, arrived(c, out[i],
                              out[i]->posted > t0 ? out[i]->posted : t0));
  fill_wait(c, fill);
}

/* Channel CHAN's mailbox from SRC to DST. */
static sg_mailbox_t channel_mailbox(struct sim *s, int src, int dst,
                                    int chan) {
  if (!s->mb_chan)
    s->mb_chan = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                       NULL);
  gint64 key = ((gint64)chan << 50) | ((gint64)src << 25) | (gint64)dst;
  sg_mailbox_t mb = g_hash_table_lookup(s->mb_chan, &key);
  if (!mb) {
    char name[64];
    snprintf(name, sizeof name, "%d>%d#%d", src, dst, chan);
    mb = sg_mailbox_by_name(name);
    gint64 *k = g_new(gint64, 1);
    *k = key;
    g_hash_table_insert(s->mb_chan, k, mb);
  }
  return mb;
}

/* A kept send: its handle, whether its message was taken, and the
 * actor's sends it belongs to. */
struct sent {
  sg_comm_t comm;
  struct msg *m; /* until taken */
  bool taken;
  struct sends *of;
};

/* An actor's kept sends, oldest first, and how many were taken. */
struct sends {
  GQueue q;
  long taken;
};

static void sends_free(void *p) {
  struct sends *ss = p;
  /* What is left was never released: the run ended first. */
  g_queue_clear_full(&ss->q, g_free);
  g_free(ss);
}

struct sends *sim_keep_sends(struct sim *s) {
  if (!s->kept)
    s->kept = g_hash_table_new_full(NULL, NULL, NULL, sends_free);
  sg_actor_t self = sg_actor_self();
  struct sends *ss = g_hash_table_lookup(s->kept, self);
  if (!ss) {
    ss = g_new0(struct sends, 1);
    g_queue_init(&ss->q);
    g_hash_table_insert(s->kept, self, ss);
  }
  return ss;
}

void sim_release_sends(struct sends *ss) {
  GList *l = ss->q.head;
  while (ss->taken > 0 && l) {
    GList *next = l->next;
    struct sent *x = l->data;
    if (x->taken) {
      sg_comm_wait(x->comm);
      g_queue_delete_link(&ss->q, l);
      g_free(x);
      ss->taken--;
    }
    l = next;
  }
}

void sim_drain_sends(struct sim *s) {
  struct sends *ss =
      s->kept ? g_hash_table_lookup(s->kept, sg_actor_self()) : NULL;
  if (!ss)
    return;
  struct sent *x;
  while ((x = g_queue_pop_head(&ss->q))) {
    sg_comm_wait(x->comm);
    /* Delivered, though perhaps not yet taken: then its receiver, which
     * holds the message, has nothing to mark. */
    if (x->taken)
      ss->taken--;
    else
      x->m->sent = NULL;
    g_free(x);
  }
}

void sim_took(struct msg *m) {
  if (m->sent) {
    m->sent->taken = true;
    m->sent->of->taken++;
    m->sent = NULL;
  }
}

void sim_send_channel(struct coll_call *c, int dst, int chan, struct msg *m,
                      double rate_Bps) {
  struct sim *s = c->sim;
  m->src = rank_of(c);
  m->posted = sim_now();
  long size = sent_wire(c, dst, (double)m->bytes + s->p->envelope_bytes);
  sg_mailbox_t mb = channel_mailbox(s, m->src, dst, chan);
  if (!c->sends) {
    sim_put_async_rate(mb, m, size, rate_Bps, msg_clean);
    return;
  }
  /* Marked before the put, which yields to the receiver. */
  xbt_assert(!m->sent, "a message sent again before it was taken");
  struct sent *x = g_new(struct sent, 1);
  *x = (struct sent){.m = m, .of = c->sends};
  m->sent = x;
  g_queue_push_tail(&c->sends->q, x);
  x->comm = sim_put_async_rate(mb, m, size, rate_Bps, NULL);
}

sg_comm_t sim_get_channel(struct coll_call *c, int src, int chan,
                          struct msg **out) {
  return sg_mailbox_get_async(
      channel_mailbox(c->sim, src, rank_of(c), chan), (void **)out);
}

void sim_got_channel(struct coll_call *c, struct msg *m) {
  sim_took(m);
  saw_message(c);
  mark_start(c, m, m->posted);
}

struct msg *sim_sendrecv(struct coll_call *c, int dst, struct msg *out,
                         int src) {
  sg_comm_t comm = sim_send(c, dst, out);
  struct msg *in = sim_recv(c, src);
  sim_wait_send(c, comm);
  return in;
}

void vec_alloc(struct vec *v, bool oracle) {
  size_t m = v->m;
  v->x = m ? g_new0(float, m) : NULL;
  v->exact = m && oracle ? g_new0(double, m) : NULL;
  v->offset = m && oracle ? g_new0(double, m) : NULL;
  v->bound = m && oracle ? g_new0(double, m) : NULL;
}

void vec_release(struct vec *v) {
  g_free(v->x);
  g_free(v->exact);
  g_free(v->offset);
  g_free(v->bound);
  v->x = NULL;
  v->exact = v->offset = v->bound = NULL;
}

void vec_copy(struct vec *dst, size_t b, const struct vec *src, size_t a,
              size_t k) {
  memcpy(dst->x + b, src->x + a, k * sizeof(float));
  if (!dst->exact || !src->exact)
    return;
  memcpy(dst->exact + b, src->exact + a, k * sizeof(double));
  memcpy(dst->offset + b, src->offset + a, k * sizeof(double));
  memcpy(dst->bound + b, src->bound + a, k * sizeof(double));
}

void vec_held(const struct vec *v, uint64_t lo, uint64_t hi, size_t *a,
              size_t *b) {
  if (v->m == v->n) {
    *a = (size_t)lo;
    *b = (size_t)hi;
  } else if (v->m == 0) {
    /* Nothing held (payload none): no position to scale. */
    *a = *b = 0;
  } else {
    /* Held value j stands for position j n / m. */
    *a = (size_t)((long double)lo * v->m / v->n);
    *b = (size_t)((long double)hi * v->m / v->n);
  }
}

void sim_batch_begin(struct coll_call *c) {
  c->batch = true;
  c->enc_launched = c->dec_launched = false;
}

void sim_batch_end(struct coll_call *c) { c->batch = false; }

void sim_codec_time(struct coll_call *c, bool encode, uint64_t n,
                    size_t payload, double share) {
  struct sim *s = c->sim;
  if (s->p->placement == PLACE_NIC)
    return; /* the NIC engine's work travels with the message */
  enum cost_place where = s->p->placement == PLACE_GPU ? COST_GPU : COST_CPU;
  double t;
  if (s->linear) {
    size_t k;
    struct codec_shape *sh = linear_shapes(s, c->bucket, &k);
    t = share * codec_cost_linear_seconds(s->costs, s->codec, where,
                                          encode ? c->lin_round
                                                 : CODEC_COST_FINISH,
                                          sh, k);
    g_free(sh);
  } else {
    t = share *
        codec_cost_seconds(s->costs, s->codec, where, encode, n, payload);
  }
  if (where == COST_GPU && c->batch && !s->linear) {
    /* The step's later messages ride in the first one's kernels. */
    bool *launched = encode ? &c->enc_launched : &c->dec_launched;
    if (*launched)
      t = fmax(t - share * codec_cost_gpu_launch(s->costs, s->codec, encode,
                                                 n, payload),
               0);
    *launched = true;
  }
  if (!(t > 0))
    return;
  if (where == COST_GPU && c->w) {
    double t0 = sim_now();
    sim_gpu(c->w, t);
    sim_span(c->w, t0, sim_now(), ST_CODEC);
  } else {
    sim_cpu(c->w, t, ST_CODEC);
  }
}

/* placement = nic: the engines' work on M (encoded: its payload and
 * size set), from the classes of its values for a codec with value
 * classes (INCEPTIONN's engine, cycle by cycle), from the streaming model
 * otherwise. The payload on the wire is the engine's. */
static void nic_work(struct sim *s, struct msg *m) {
  if (s->p->placement != PLACE_NIC)
    return;
  const struct nic_engine *e = &s->p->nic;
  struct nic_msg nm;
  if (nic_tagged(s->codec) && m->m) {
    uint8_t *tags = g_new(uint8_t, m->m);
    xbt_assert(codec_classes(s->codec, m->data, m->len, m->m, tags, NULL) ==
                   0,
               "%s payload of %zu values", codec_spec(s->codec), m->m);
    nic_inc_message(e, &s->p->framing, s->codec, tags, m->m, m->n, &nm);
    g_free(tags);
    m->bytes = (uint64_t)ceil(nm.payload_bytes);
  } else {
    nic_stream_message(e, &s->p->framing, &s->nic_stream, m->n,
                       (double)m->bytes, &nm);
  }
  m->nic_packets = nm.packets;
  m->tx_s = nm.tx_cycles / e->clock_hz;
  m->rx_s = nm.rx_cycles / e->clock_hz;
  m->tx_stalls = nm.tx_stalls;
  m->rx_stalls = nm.rx_stalls;
  m->fill_s = nm.fill_cycles / e->clock_hz;
}

/* A message of V[lo, hi) without payload yet: counts, shadow. */
static struct msg *msg_of(const struct vec *v, uint64_t lo, uint64_t hi,
                          size_t *a) {
  struct msg *m = g_new0(struct msg, 1);
  m->refs = 1;
  m->n = hi - lo;
  size_t b;
  vec_held(v, lo, hi, a, &b);
  m->m = b - *a;
  if (v->exact && m->m) {
    m->exact = g_memdup2(v->exact + *a, m->m * sizeof(double));
    m->offset = g_memdup2(v->offset + *a, m->m * sizeof(double));
    m->bound = g_memdup2(v->bound + *a, m->m * sizeof(double));
  }
  return m;
}

/* M as plain gradient values of GRAD_BYTES each on the wire ([model]
 * grad_dtype; the values themselves stay floats). */
static void raw_payload(struct msg *m, const struct vec *v, size_t a,
                        int grad_bytes) {
  m->raw = true;
  m->bytes = (uint64_t)grad_bytes * m->n;
  if (m->m) {
    m->len = 4 * m->m;
    m->data = g_malloc(m->len);
    memcpy(m->data, v->x + a, m->len);
  }
  if (m->exact)
    payload_ledger_encode(NULL, m, v->x + a, NULL, NULL);
}

struct msg *sim_pack_raw(struct coll_call *c, const struct vec *v,
                         uint64_t lo, uint64_t hi) {
  size_t a;
  struct msg *m = msg_of(v, lo, hi, &a);
  raw_payload(m, v, a, sim_value_bytes(c));
  return m;
}

struct msg *sim_pack(struct coll_call *c, const struct vec *v, uint64_t lo,
                     uint64_t hi, codec_state_t *state) {
  struct sim *s = c->sim;
  size_t a;
  struct msg *m = msg_of(v, lo, hi, &a);
  if (sim_plain(c)) {
    raw_payload(m, v, a, sim_value_bytes(c));
    return m;
  }
  if (m->m == 0) {
    /* Nothing held: the nominal (worst-case) size, exact for the codecs
     * whose size does not depend on the data (run.c allows only those
     * with payload = none). */
    m->bytes = codec_bound(s->codec, m->n);
    sim_codec_time(c, true, m->n, m->bytes, 1);
    nic_work(s, m);
    return m;
  }
  codec_state_t *own = NULL;
  if (!state) {
    xbt_assert(codec_state_create(s->codec, m->m,
                                  s->p->grad.seed ^ (0x9e3779b97f4a7c15u *
                                                     ++s->pack_count),
                                  &own) == 0,
               "codec state for %zu values", m->m);
    state = own;
  }
  /* The oracle's ledger needs the residual before the encode (after it,
   * the state's own). */
  const float *res = codec_state_residual(state);
  float *rb = m->exact && res ? g_memdup2(res, m->m * sizeof(float)) : NULL;
  size_t cap = codec_bound(s->codec, m->m);
  m->data = g_malloc(cap ? cap : 1);
  ptrdiff_t len = codec_encode(state, v->x + a, m->m, m->data, cap);
  if (len >= 0 && m->exact)
    payload_ledger_encode(s, m, v->x + a, rb, codec_state_residual(state));
  g_free(rb);
  codec_state_free(own);
  if (len < 0) {
    /* NaN or infinity in the gradients: stop the run with a message. */
    if (!s->fatal)
      s->fatal = g_strdup_printf("codec %s: %s", codec_spec(s->codec),
                                 codec_strerror((int)len));
    len = 0;
  }
  m->len = (size_t)len;
  /* Scale the held sample's payload to the simulated values. */
  m->bytes = m->m == m->n
                 ? m->len
                 : (uint64_t)ceill((long double)m->len * m->n / m->m);
  sim_codec_time(c, true, m->n, m->bytes, 1);
  nic_work(s, m);
  return m;
}

void sim_unpack(struct coll_call *c, const struct msg *m, struct vec *v,
                uint64_t lo, uint64_t hi, bool add) {
  struct sim *s = c->sim;
  size_t a, b;
  /* A shared payload (msg_share) is its one part's. */
  if (m->nparts == 1)
    m = m->parts[0];
  vec_held(v, lo, hi, &a, &b);
  xbt_assert(b - a == m->m, "message holds %zu values, range %zu", m->m,
             b - a);
  if (!m->raw)
    sim_codec_time(c, false, m->n, m->bytes, 1);
  if (!m->m)
    return;
  bool ledger = v->exact && m->exact;
  float *before =
      ledger && add ? g_memdup2(v->x + a, m->m * sizeof(float)) : NULL;
  if (m->raw) {
    const float *in = (const float *)(const void *)m->data;
    for (size_t i = 0; i < m->m; i++)
      v->x[a + i] = add ? v->x[a + i] + in[i] : in[i];
  } else {
    int rc =
        add ? codec_decode_add(s->codec, m->data, m->len, v->x + a, m->m)
            : codec_decode(s->codec, m->data, m->len, v->x + a, m->m);
    xbt_assert(rc == 0, "codec %s cannot decode its own payload: %s",
               codec_spec(s->codec), codec_strerror(rc));
  }
  if (ledger)
    payload_ledger_unpack(c, v, a, m, add, before);
  g_free(before);
}
