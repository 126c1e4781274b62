// expect: p2p
// Rank 0 sends 2 doubles with MPI_Isend; rank 1 receives 4 ints with
// MPI_Irecv (as many bytes).
// The buffer is a char array, storage for either type: the only error
// is the one below.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    double d[2] = {1.0, 2.0};
    char r[16];
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Isend(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (rank == 1) {
        MPI_Irecv(r, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
