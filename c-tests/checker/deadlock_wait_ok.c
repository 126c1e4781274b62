// expect: none
// Each rank starts its receive and its send, then waits for both.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x = 1, y = 0;
    MPI_Request q[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (rank + 1) % size;
    int from = (rank + size - 1) % size;
    MPI_Irecv(&y, 1, MPI_INT, from, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Finalize();
    return 0;
}
