/* Passes a token round a ring (each rank adds one) and reduces the sum of
 * the ranks; rank 0 prints both, so a test can check results are intact. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, token = 0, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (size == 1) {
        /* A blocking send to oneself may wait forever (MPICH does). */
        token = 1;
    } else if (rank == 0) {
        token = 1;
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += 1;
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* MPI_Wtime returns a double: check the value survives the stub. */
    double t0 = MPI_Wtime();
    usleep(2000);
    double elapsed = MPI_Wtime() - t0;
    if (rank == 0)
        printf("ring: size %d token %d sum %d wtime_ok %d\n", size, token, sum,
               elapsed >= 0.0019 && elapsed < 10.0);
    MPI_Finalize();
    return 0;
}
