// expect: argument
// A derived datatype used without MPI_Type_commit.
#include <mpi.h>

int main(int argc, char **argv) {
    int x[8] = {0};
    MPI_Datatype pair;
    MPI_Init(&argc, &argv);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Bcast(x, 4, pair, 0, MPI_COMM_WORLD);
    MPI_Type_free(&pair);
    MPI_Finalize();
    return 0;
}
