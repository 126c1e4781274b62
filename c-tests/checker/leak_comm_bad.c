// expect: leak
// A split communicator is never freed.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Comm half;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Barrier(half);
    MPI_Finalize();
    return 0;
}
