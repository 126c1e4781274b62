// expect: none
// Every rank broadcasts, then every rank reduces.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
