// expect: none
// A derived datatype freed after its last use.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[8] = {0};
    MPI_Datatype pair;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    if (rank == 0)
        MPI_Send(x, 1, pair, 1, 0, MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Recv(x, 1, pair, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&pair);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
