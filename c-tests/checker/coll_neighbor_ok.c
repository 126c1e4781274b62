// expect: none
// On a ring, every rank gathers from its neighbours, then exchanges with
// them, blocking and not.
#include <mpi.h>

int main(int argc, char **argv) {
    int size, dims[1] = {0}, periods[1] = {1}, x[2] = {1, 2}, y[2] = {0};
    MPI_Comm ring;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims[0] = size;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, ring);
    MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, ring, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
