// expect: collective
// On a ring, rank 0 gathers from its neighbours while the others
// exchange with theirs.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, dims[1] = {0}, periods[1] = {1}, x[2] = {1, 2}, y[2] = {0};
    MPI_Comm ring;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims[0] = size;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Comm_rank(ring, &rank);
    if (rank == 0)
        MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, ring); // reported
    else
        MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, ring); // reported
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
