// expect: none
// Rank 0 sends 2 doubles; rank 1 receives them with MPI_ANY_SOURCE and
// MPI_ANY_TAG into room for 4.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    double d[4] = {1.0, 2.0};
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Isend(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (rank == 1) {
        MPI_Irecv(d, 4, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
        MPI_Waitall(1, &q, MPI_STATUSES_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
