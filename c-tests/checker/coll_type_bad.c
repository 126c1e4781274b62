// expect: collective
// The root broadcasts 4 ints, the others receive 4 floats (as many bytes).
// The buffer is a char array, storage for either type: the only error
// is the one below.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    char x[16] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(x, 4, rank == 0 ? MPI_INT : MPI_FLOAT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
