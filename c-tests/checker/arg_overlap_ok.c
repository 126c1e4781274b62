// expect: none
// The same sum, in place, and into the other half of the array.
#include <mpi.h>

int main(int argc, char **argv) {
    int x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Init(&argc, &argv);
    MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(x, x + 4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
