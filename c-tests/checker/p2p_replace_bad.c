// expect: p2p
// Ranks 0 and 1 swap 4 elements in place: rank 0 as ints, rank 1 as
// floats (as many bytes).
// The buffer is a char array, storage for either type: the only error
// is the one below.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    char x[16] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank < 2)
        MPI_Sendrecv_replace(x, 4, rank == 0 ? MPI_INT : MPI_FLOAT, 1 - rank, 0, 1 - rank, 0, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
