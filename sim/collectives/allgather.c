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
 * sends): gather_rdb, in common.c, which rdb and rabenseifner lend too as
 * their allgather ([exchange] compression = per-bucket). */
#include "common.h"

#include <xbt/asserts.h>

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
    .gathers = true,
    /* A reference to every worker's message (have[], 8 bytes) and the
     * bundles' lists of them: 11.2 bytes a pair at 2,048 workers and 11.7
     * at 8,192 (peak RSS over Rabenseifner's, 4 MB, payload none). */
    .pair_bytes = 11,
    .worker = allgather_worker,
    .allgather = gather_rdb,
};
