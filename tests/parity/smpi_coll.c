/* tests/parity/smpi_coll.c: the collectives gradsim names after MPICH,
 * run by SimGrid SMPI for tests/parity/parity.sh and bench/. One call on
 * N floats, every rank starting at simulated time 0 (no barrier before:
 * a barrier's ranks leave it at different times); prints the time the
 * last rank finished, which is what gradsim's exchange_s measures.
 *
 *   smpi_coll allreduce N    MPI_Allreduce (algorithm: smpi/allreduce)
 *   smpi_coll ps N           gradsim's ps with one aggregator (the last
 *                            rank): MPI_Gather to it (SMPI's default,
 *                            linear), then MPI_Bcast from it (binomial
 *                            tree: smpi/bcast:binomial_tree)
 * Buffers are SMPI shared mallocs: no real memory per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  double t0 = MPI_Wtime();
  if (ps) {
    MPI_Gather(a, n, MPI_FLOAT, b, n, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
    MPI_Bcast(a, n, MPI_FLOAT, size - 1, MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double t = MPI_Wtime() - t0, last;
  MPI_Reduce(&t, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("simulated_s %.9f\n", last);
  SMPI_SHARED_FREE(a);
  SMPI_SHARED_FREE(b);
  MPI_Finalize();
  return 0;
}
