/* bench/smpi_allreduce.c: one MPI_Allreduce of N floats under SimGrid
 * SMPI, for bench/ring1024.sh. Buffers are SMPI shared mallocs (no real
 * memory per rank); prints the simulated time of the call on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = argc > 1 ? atoi(argv[1]) : 16777216;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  float *a = SMPI_SHARED_MALLOC(sizeof(float) * (size_t)n);
  float *b = SMPI_SHARED_MALLOC(sizeof(float) * (size_t)n);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  if (rank == 0)
    printf("simulated_allreduce_s %.9f\n", t1 - t0);
  SMPI_SHARED_FREE(a);
  SMPI_SHARED_FREE(b);
  MPI_Finalize();
  return 0;
}
