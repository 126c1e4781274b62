// expect: none
// Rank 0 sends 4 ints; rank 1 has room for 8 and asks how many came.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, n = 0, x[8] = {0};
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(x, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Recv(x, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        if (n != 4)
            printf("got %d ints\n", n);
    }
    MPI_Finalize();
    return 0;
}
