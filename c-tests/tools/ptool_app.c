/* ptool_app: an MPI program for running patched tools. Rank 0 sends three ints to every
 * other rank, in three messages; each other rank receives them and prints its rank.
 *
 * Build: mpicc -o ptool_app ptool_app.c -L. -lptool ...
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, value[3] = {1, 2, 3};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int peer = 1; peer < size; peer++) {
        for (int i = 0; i < 3; i++) {
            if (rank == 0)
                MPI_Send(&value[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD);
            else if (rank == peer)
                MPI_Recv(&value[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
