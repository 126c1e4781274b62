// expect: none
// The vector datatype is freed.
#include <mpi.h>

int main(int argc, char **argv) {
    int x[16] = {0};
    MPI_Datatype col;
    MPI_Init(&argc, &argv);
    MPI_Type_vector(4, 1, 4, MPI_INT, &col);
    MPI_Type_commit(&col);
    MPI_Bcast(x, 1, col, 0, MPI_COMM_WORLD);
    MPI_Type_free(&col);
    MPI_Finalize();
    return 0;
}
