// expect: argument
// An allreduce with MPI_OP_NULL.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
