// expect: argument
// Ints sent as floats: the same size, another type.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, vals[4] = {1, 2, 3, 4};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(vals, 4, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // reported
    else if (rank == 1)
        MPI_Recv(vals, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // reported
    MPI_Finalize();
    return 0;
}
