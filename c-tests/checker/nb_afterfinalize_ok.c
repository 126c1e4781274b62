// expect: none
// MPI_Finalized after MPI_Finalize, as the standard allows.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int done = 0;
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    MPI_Finalized(&done);
    if (!done)
        printf("not finalized?\n");
    return 0;
}
