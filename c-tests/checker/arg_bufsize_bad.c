// expect: argument
// A receive of 8 ints into an array of 4 (the message has 4: it fits,
// by luck; a longer one would overwrite the stack).
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, counts[4] = {1, 2, 3, 4};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(counts, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(counts, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // reported
    MPI_Finalize();
    return counts[0] - 1;
}
