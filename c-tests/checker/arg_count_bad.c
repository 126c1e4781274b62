// expect: argument
// A negative count on every rank's broadcast.
#include <mpi.h>

int main(int argc, char **argv) {
    int x[4] = {0};
    MPI_Init(&argc, &argv);
    MPI_Bcast(x, -4, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
