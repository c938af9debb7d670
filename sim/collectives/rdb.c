/* sim/collectives/rdb.c: recursive doubling (butterfly) and Rabenseifner's
 * allreduce (recursive halving reduce-scatter, recursive doubling
 * allgather), after Thakur, Rabenseifner and Gropp (2005), the papers the
 * seeds cite (RedSync Section 2.3; GradientFlow's MPI baseline).
 *
 * A number of workers p that is not a power of two is folded first: of
 * the first 2r ranks (r = p - p', p' the largest power of two <= p) the
 * even ones send their vector to the next odd one, which sums it and
 * takes part; at the end the odd ones send the result back. */
#include "common.h"

#include <simgrid/comm.h>

struct fold {
  int q;     /* p' */
  int rem;   /* r */
  int newrank; /* -1 for a rank folded away */
};

static struct fold fold_of(int p, int rank) {
  struct fold f = {1, 0, -1};
  while (f.q * 2 <= p)
    f.q *= 2;
  f.rem = p - f.q;
  if (rank < 2 * f.rem)
    f.newrank = rank % 2 ? rank / 2 : -1;
  else
    f.newrank = rank - f.rem;
  return f;
}

static int real_rank(const struct fold *f, int newrank) {
  return newrank < f->rem ? 2 * newrank + 1 : newrank + f->rem;
}

/* Before: even ranks of the first 2r give their vector to the next one. */
static void fold_in(struct coll_call *c, const struct fold *f) {
  if (c->rank >= 2 * f->rem)
    return;
  if (f->newrank < 0) {
    sim_wait_send(c, sim_send(c, c->rank + 1,
                              sim_pack(c, c->v, 0, c->v->n, NULL)));
  } else {
    struct msg *in = sim_recv(c, c->rank - 1);
    sim_unpack(c, in, c->v, 0, c->v->n, true);
    sim_reduce(c->w, c->sim, c->v->n);
    msg_free(in);
  }
}

static void fold_out(struct coll_call *c, const struct fold *f) {
  if (c->rank >= 2 * f->rem)
    return;
  if (f->newrank < 0) {
    struct msg *in = sim_recv(c, c->rank + 1);
    sim_unpack(c, in, c->v, 0, c->v->n, false);
    msg_free(in);
  } else {
    sim_wait_send(c, sim_send(c, c->rank - 1,
                              sim_pack(c, c->v, 0, c->v->n, NULL)));
  }
}

static void rdb_worker(struct coll_call *c) {
  struct fold f = fold_of(c->sim->nworkers, c->rank);
  fold_in(c, &f);
  if (f.newrank >= 0)
    for (int mask = 1; mask < f.q; mask *= 2) {
      int partner = real_rank(&f, f.newrank ^ mask);
      struct msg *out = sim_pack(c, c->v, 0, c->v->n, NULL);
      struct msg *in = sim_sendrecv(c, partner, out, partner);
      sim_unpack(c, in, c->v, 0, c->v->n, true);
      sim_reduce(c->w, c->sim, c->v->n);
      msg_free(in);
    }
  fold_out(c, &f);
}

static void rabenseifner_worker(struct coll_call *c) {
  struct fold f = fold_of(c->sim->nworkers, c->rank);
  fold_in(c, &f);
  if (f.newrank >= 0) {
    uint64_t lo = 0, hi = c->v->n;
    /* Window of each step, to walk back in the allgather. */
    uint64_t los[64], his[64];
    int steps = 0;
    for (int mask = f.q / 2; mask >= 1; mask /= 2, steps++) {
      int partner = real_rank(&f, f.newrank ^ mask);
      uint64_t mid = lo + (hi - lo) / 2;
      bool low = !(f.newrank & mask);
      uint64_t klo = low ? lo : mid, khi = low ? mid : hi;
      uint64_t slo = low ? mid : lo, shi = low ? hi : mid;
      los[steps] = lo;
      his[steps] = hi;
      struct msg *out = sim_pack(c, c->v, slo, shi, NULL);
      struct msg *in = sim_sendrecv(c, partner, out, partner);
      sim_unpack(c, in, c->v, klo, khi, true);
      sim_reduce(c->w, c->sim, khi - klo);
      msg_free(in);
      lo = klo;
      hi = khi;
    }
    for (int mask = 1, s = steps - 1; mask < f.q; mask *= 2, s--) {
      int partner = real_rank(&f, f.newrank ^ mask);
      /* The partner holds the other half of the window of step s. */
      uint64_t plo = los[s] == lo ? hi : los[s];
      uint64_t phi = los[s] == lo ? his[s] : lo;
      struct msg *out = sim_pack(c, c->v, lo, hi, NULL);
      struct msg *in = sim_sendrecv(c, partner, out, partner);
      sim_unpack(c, in, c->v, plo, phi, false);
      msg_free(in);
      lo = los[s];
      hi = his[s];
    }
  }
  fold_out(c, &f);
}

const struct collective coll_rdb = {
    .name = "rdb",
    .description = "recursive doubling (butterfly) allreduce, the MPI "
                   "baseline; non-powers of two folded",
    .formula = "rdb",
    .worker = rdb_worker,
};

const struct collective coll_rabenseifner = {
    .name = "rabenseifner",
    .description = "recursive halving reduce-scatter, recursive doubling "
                   "allgather (RedSync Eq. 2); non-powers of two folded",
    .formula = "rabenseifner",
    .worker = rabenseifner_worker,
};
