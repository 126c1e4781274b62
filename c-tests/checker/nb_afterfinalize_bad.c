// expect: nonblocking
// A barrier after MPI_Finalize.
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}
