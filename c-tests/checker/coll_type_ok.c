// expect: none
// The root broadcasts 4 ints, the others receive 2 pairs of ints: the
// same type signature.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[4] = {0};
    MPI_Datatype pair;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    if (rank == 0)
        MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Bcast(x, 2, pair, 0, MPI_COMM_WORLD);
    MPI_Type_free(&pair);
    MPI_Finalize();
    return 0;
}
