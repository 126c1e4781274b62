// expect: none
// A ring: even ranks send first, odd ranks receive first.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (rank + 1) % size;
    int from = (rank + size - 1) % size;
    if (rank % 2 == 0) {
        MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(&y, 1, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&y, 1, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
