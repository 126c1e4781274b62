// expect: none
// The send buffer is written only after its MPI_Isend completed.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[64] = {0}, y[64];
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Isend(x, 64, MPI_INT, 1, 0, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        x[10] = 42;
    }
    if (rank == 1)
        MPI_Recv(y, 64, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
