// expect: none
// Every rank gathers to all pieces of different lengths (rank r gives
// r + 1 elements), which a v collective allows.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x[4] = {1, 2, 3, 4}, y[8] = {0};
    int counts[2] = {1, 2}, displs[2] = {0, 1}, ones[2] = {1, 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Allgatherv(x, rank + 1, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(x, ones, displs, MPI_INT, y, ones, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
