/* sim/collectives/allgather.c: RedSync's sparse synchronisation (seeds/002
 * Section 2.3, Fig. 4 left): every worker encodes its vector once (with
 * its error-feedback state, as RGC keeps residuals), the encoded messages
 * reach every worker by recursive doubling (step k exchanges the 2^k
 * messages gathered so far), and each worker decodes and sums all p
 * messages, in rank order. With codec none each worker contributes n
 * bytes and the sum costs (p - 1) n gamma.
 *
 * The gather itself is MPICH's recursive-doubling allgather
 * (MPIR_Allgather_intra_recursive_doubling), message for message as SMPI's
 * allgather__rdb runs it (SimGrid 3.32, src/smpi/colls/allgather/
 * allgather-rdb.cpp): at step i a rank exchanges what its subtree of 2^i
 * ranks holds with the partner subtree; when p is not a power of two the
 * ranks whose partner does not exist get the partner subtree's messages
 * from those of their own subtree that did, down a binomial tree (plain
 * sends). It is the collective's allgather (struct collective), which rdb
 * and rabenseifner lend too ([exchange] compression = per-bucket). */
#include "common.h"

#include <xbt/asserts.h>

/* A bundle of the messages HAVE[A, B) that are present: references, its
 * size their sum. */
static struct msg *bundle(struct msg **have, int a, int b) {
  struct msg *m = g_new0(struct msg, 1);
  m->refs = 1;
  for (int i = a; i < b; i++)
    if (have[i])
      msg_bundle_add(m, have[i]);
  return m;
}

/* The messages IN carries into HAVE (by their origin: parts keep it, a
 * bundle's own src being set by sim_send); how many. */
static int take(struct msg *in, struct msg **have) {
  int k = (int)in->nparts;
  for (size_t i = 0; i < in->nparts; i++) {
    struct msg *part = in->parts[i];
    xbt_assert(!have[part->src], "rank %d's message gathered twice", part->src);
    have[part->src] = msg_ref(part);
  }
  msg_free(in);
  return k;
}

/* Binomial completion of step I (mask 2^I) for a subtree whose partner
 * subtree is cut short by p: DONE of its ranks hold the partner's LAST
 * messages from OFFSET; the others get them (SMPI's tree_root, k and
 * num_procs_completed). Returns the count last received. */
static int complete_subtree(struct coll_call *c, struct msg **have, int i,
                            int mask, int done, int offset, int last) {
  int rank = c->rank;
  int k = i;
  for (int tmp = mask >> 1; tmp; tmp >>= 1, k--) {
    int dst = rank ^ tmp;
    int root = rank >> k << k;
    if (dst > rank && rank < root + done && dst >= root + done) {
      sim_wait_send(c, sim_send(c, dst, bundle(have, offset, offset + last)));
    } else if (dst < rank && dst < root + done && rank >= root + done) {
      last = take(sim_recv(c, dst), have);
    }
  }
  return last;
}

static void gather_rdb(struct coll_call *c, struct msg *mine,
                       struct msg **all) {
  int p = c->sim->nworkers, rank = c->rank;
  gather_start(c, p, mine, all);
  int last = 0;
  for (int mask = 1, i = 0; mask < p; mask <<= 1, i++) {
    int dst = rank ^ mask;
    int dst_root = dst >> i << i, my_root = rank >> i << i;
    /* What the caller's subtree holds (ranks past p are none). */
    int held_end = my_root + mask < p ? my_root + mask : p;
    if (dst < p)
      last = take(sim_sendrecv(c, dst, bundle(all, my_root, held_end), dst),
                  all);
    if (dst_root + mask > p)
      last = complete_subtree(c, all, i, mask, p - my_root - mask,
                              my_root + mask, last);
  }
}

extern const struct collective coll_rabenseifner;

static void allgather_worker(struct coll_call *c) {
  /* A bucket that travels uncompressed ([exchange] compress_min) is
   * allreduced densely, by Rabenseifner's algorithm as in the dense SGD
   * it replaces: RedSync does not compress small layers (seeds/002
   * Section 2.1: "For smaller parameter sets such as biases and batch
   * norm layers, we do not compress residuals"), and an allgather of
   * dense vectors would send p times the bytes. */
  if (c->raw) {
    coll_rabenseifner.worker(c);
    return;
  }
  int p = c->sim->nworkers;
  struct msg **have = g_new0(struct msg *, p);
  codec_state_t *st = c->w->states ? c->w->states[c->bucket] : NULL;
  gather_rdb(c, sim_pack(c, c->v, 0, c->v->n, st), have);
  for (int r = 0; r < p; r++) {
    sim_unpack(c, have[r], c->v, 0, c->v->n, r > 0);
    msg_free(have[r]);
  }
  if (!c->sim->codec)
    sim_reduce(c->w, c->sim, (uint64_t)(p - 1) * c->v->n);
  g_free(have);
}

const struct collective coll_allgather = {
    .name = "allgather-rdb",
    .description = "RedSync sparse allreduce: recursive-doubling allgather "
                   "of each worker's encoded vector, then p decodes",
    .formula = "allgather-rdb",
    .pow2 = true,
    .stateful = true,
    /* A reference to every worker's message (have[], 8 bytes) and the
     * bundles' lists of them: 11.2 bytes a pair at 2,048 workers and 11.7
     * at 8,192 (peak RSS over Rabenseifner's, 4 MB, payload none). */
    .pair_bytes = 11,
    .worker = allgather_worker,
    .allgather = gather_rdb,
};
