// expect: argument
// A derived datatype used after MPI_Type_free.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[8] = {0};
    MPI_Datatype pair;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Datatype kept = pair;
    MPI_Type_free(&pair);
    if (rank == 0)
        MPI_Send(x, 1, kept, 1, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
