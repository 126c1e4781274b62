// expect: deadlock
// Both ranks receive first: neither send is ever reached.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (rank + 1) % size;
    int from = (rank + size - 1) % size;
    MPI_Recv(&y, 1, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
