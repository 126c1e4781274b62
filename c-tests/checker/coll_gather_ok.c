// expect: none
// Every rank sends 2 ints; the root gathers them, in place for its own.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[2] = {1, 2}, all[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        all[0] = 1;
        all[1] = 2;
        MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    } else {
        MPI_Gather(x, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Allgather(x, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
