// expect: nonblocking
// The send buffer is written while its MPI_Isend is in progress.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[64] = {0}, y[64];
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Isend(x, 64, MPI_INT, 1, 0, MPI_COMM_WORLD, &q);
        x[10] = 42;
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (rank == 1)
        MPI_Recv(y, 64, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
