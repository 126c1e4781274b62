/* Calls a routine that virtual ranks do not provide (one-sided
 * communication), after a barrier: the run must stop naming it.
 *
 * prints: vunsupported: before   (then nothing)
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, data = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("vunsupported: before\n");
        fflush(stdout);
    }
    MPI_Win win;
    MPI_Win_create(&data, sizeof data, sizeof data, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    printf("vunsupported: after\n");
    MPI_Finalize();
    return 0;
}
