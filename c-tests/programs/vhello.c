/* Hello world at scale: MPI_Init, rank and size, an MPI_Allreduce of the
 * ranks, MPI_Barrier, MPI_Finalize. Rank 0 prints the size and the sum,
 * and whether the sum is size * (size - 1) / 2.
 *
 * prints: vhello: ranks N sum S ok|WRONG
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long mine = rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("vhello: ranks %d sum %lld %s\n", size, sum,
               sum == (long long)size * (size - 1) / 2 ? "ok" : "WRONG");
    MPI_Finalize();
    return 0;
}
