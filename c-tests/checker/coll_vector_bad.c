// expect: collective
// Rank 0 gathers pieces of every rank to all while the others exchange
// pieces all to all.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x[4] = {1, 2, 3, 4}, y[8] = {0};
    int counts[2] = {1, 1}, displs[2] = {0, 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0)
        MPI_Allgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD); // reported
    else
        MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD); // reported
    MPI_Finalize();
    return 0;
}
