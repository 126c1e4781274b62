// expect: collective
// The root gathers 2 ints from each rank; the others send 3.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[3] = {1, 2, 3}, all[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Gather(x, rank == 0 ? 2 : 3, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
