/* tests/parity/smpi_coll.c: the collectives gradsim names after MPICH,
 * run by SimGrid SMPI for tests/parity/parity.sh and bench/. One call on
 * N floats, every rank starting at the same simulated time (no barrier
 * before: a barrier's ranks leave it at different times); prints the time
 * the last rank finished, which is what gradsim's exchange_s measures.
 *
 *   smpi_coll allreduce N    MPI_Allreduce (algorithm: smpi/allreduce)
 *   smpi_coll ps N           gradsim's ps with one aggregator (the last
 *                            rank): MPI_Gather to it (SMPI's default,
 *                            linear), then MPI_Bcast from it (binomial
 *                            tree: smpi/bcast:binomial_tree)
 *   smpi_coll zero2 N        ZeRO-2's exchange, sharded over every rank:
 *                            MPI_Reduce_scatter_block of N floats (N a
 *                            multiple of the ranks; smpi/reduce_scatter),
 *                            then MPI_Allgather of the shards
 *                            (smpi/allgather)
 *   smpi_coll zero3 N F B    ZeRO-3's iteration of one unit (gradsim's
 *                            zero3 in mode = sync): MPI_Allgather, F us
 *                            of forward, MPI_Allgather again, B us of
 *                            backward, MPI_Reduce_scatter_block; from
 *                            time 0, as gradsim's first gather starts
 *   smpi_coll hsdp N F B G   HSDP's (zero3's inside each machine of G
 *                            ranks, MPI_Comm_split by rank / G), then
 *                            MPI_Allreduce of the shard across machines
 *                            (ranks of one rank % G; smpi/allreduce)
 * Buffers are SMPI shared mallocs: no real memory per rank.
 *
 * What the measurement must get right (on SimGrid's example dragonfly,
 * each of these done otherwise moves SMPI's time off gradsim's, by 10 ns
 * to 0.6%):
 * - How the ranks start. Every rank sleeps 1 us first (smpi_usleep), as
 *   gradsim's workers compute for the parity test's 1 us, so that in both
 *   the collective begins when all ranks wake at one instant (zero3
 *   starts at time 0, as gradsim's first gather does; hsdp sleeps until
 *   t = 1000 s after its MPI_Comm_split, which leaves the ranks at
 *   different times). SimGrid
 *   resumes actors woken at one instant in an order of its own (8 ranks:
 *   0 1 2 3 4 5 6 7 from time 0, 0 1 2 3 6 4 7 5 after one sleep,
 *   7 5 4 3 6 1 2 0 after two), so their first messages are posted in
 *   that order, and under SimGrid's default lazy sharing update
 *   (network/optim:Lazy) that order can change the result where links
 *   carry both directions (the dragonfly's limiters): rdb on 40 hosts of
 *   the example dragonfly takes 0.9445 s from time 0 or after two sleeps,
 *   0.9502 s after one or three (0.9502 s in all four under
 *   network/optim:Full); gradsim gives the same two times from time 0
 *   and after its 1 us of computation.
 * - MPI_Wtime's own time (smpi/wtime, 10 ns by default): it reads the
 *   clock and then sleeps, so SMPI's times counted those 10 ns, and the
 *   sleep is one more wake-up at one instant. The clock is read with
 *   simgrid_get_clock() instead.
 * - Collecting the times: the MPI_Reduce that gathers them must not start
 *   while another rank is still in the collective (its messages would
 *   share links with the collective's), so every rank first sleeps far
 *   longer than any collective here lasts. */
#include <mpi.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr,
            "usage: smpi_coll allreduce|ps|zero2 N | zero3 N F B | "
            "hsdp N F B G\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int n = atoi(argv[2]), rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ps = strcmp(argv[1], "ps") == 0;
  int zero2 = strcmp(argv[1], "zero2") == 0;
  int zero3 = strcmp(argv[1], "zero3") == 0;
  int hsdp = strcmp(argv[1], "hsdp") == 0;
  if ((zero3 && argc < 5) || (hsdp && argc < 6)) {
    fprintf(stderr, "usage: smpi_coll zero3 N F B | hsdp N F B G\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* The shards' communicator: every rank, or (hsdp) the machine's. */
  MPI_Comm in = MPI_COMM_WORLD, across = MPI_COMM_NULL;
  int g = size;
  if (hsdp) {
    g = atoi(argv[5]);
    if (g < 1 || size % g != 0) {
      fprintf(stderr, "smpi_coll hsdp: G = %d does not divide %d ranks\n", g,
              size);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank / g, rank, &in);
    MPI_Comm_split(MPI_COMM_WORLD, rank % g, rank, &across);
    zero3 = 1;
  }
  if ((zero2 || zero3) && n % g != 0) {
    fprintf(stderr, "smpi_coll %s: N = %d is not a multiple of %d ranks\n",
            argv[1], n, g);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t gathered = ps ? (size_t)size : 1;
  float *a = SMPI_SHARED_MALLOC(sizeof(float) * (size_t)n);
  float *b = SMPI_SHARED_MALLOC(sizeof(float) * (size_t)n * gathered);
  int shard = n / g;
  /* hsdp's MPI_Comm_split left the ranks at different times: all start
   * at one instant, well after. */
  if (hsdp)
    sg_actor_sleep_until(1000);
  if (!zero3)
    usleep(1);
  double t0 = simgrid_get_clock();
  if (ps) {
    MPI_Gather(a, n, MPI_FLOAT, b, n, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
    MPI_Bcast(a, n, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
  } else if (zero2) {
    MPI_Reduce_scatter_block(a, b, shard, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allgather(b, shard, MPI_FLOAT, a, shard, MPI_FLOAT, MPI_COMM_WORLD);
  } else if (zero3) {
    MPI_Allgather(b, shard, MPI_FLOAT, a, shard, MPI_FLOAT, in);
    usleep((useconds_t)atoi(argv[3]));
    MPI_Allgather(b, shard, MPI_FLOAT, a, shard, MPI_FLOAT, in);
    usleep((useconds_t)atoi(argv[4]));
    MPI_Reduce_scatter_block(a, b, shard, MPI_FLOAT, MPI_SUM, in);
    if (hsdp)
      MPI_Allreduce(b, a, shard, MPI_FLOAT, MPI_SUM, across);
  } else {
    MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double t = simgrid_get_clock() - t0, last;
  sleep(100000);
  MPI_Reduce(&t, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("simulated_s %.12f\n", last);
  if (hsdp) {
    MPI_Comm_free(&in);
    MPI_Comm_free(&across);
  }
  SMPI_SHARED_FREE(a);
  SMPI_SHARED_FREE(b);
  MPI_Finalize();
  return 0;
}
