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
 * Buffers are SMPI shared mallocs: no real memory per rank.
 *
 * What the measurement must get right (on SimGrid's example dragonfly,
 * each of these done otherwise moves SMPI's time off gradsim's, by 10 ns
 * to 0.6%):
 * - How the ranks start. Every rank sleeps 1 us first (smpi_usleep), as
 *   gradsim's workers compute for the parity test's 1 us, so that in both
 *   the collective begins when all ranks wake at one instant. SimGrid
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
#include <simgrid/engine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: smpi_coll allreduce|ps N\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int n = atoi(argv[2]), rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ps = strcmp(argv[1], "ps") == 0;
  size_t gathered = ps ? (size_t)size : 1;
  float *a = SMPI_SHARED_MALLOC(sizeof(float) * (size_t)n);
  float *b = SMPI_SHARED_MALLOC(sizeof(float) * (size_t)n * gathered);
  usleep(1);
  double t0 = simgrid_get_clock();
  if (ps) {
    MPI_Gather(a, n, MPI_FLOAT, b, n, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
    MPI_Bcast(a, n, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double t = simgrid_get_clock() - t0, last;
  sleep(100000);
  MPI_Reduce(&t, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("simulated_s %.12f\n", last);
  SMPI_SHARED_FREE(a);
  SMPI_SHARED_FREE(b);
  MPI_Finalize();
  return 0;
}
