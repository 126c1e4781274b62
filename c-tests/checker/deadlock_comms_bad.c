// expect: deadlock
// Rank 0 broadcasts on one communicator then on another; the other ranks
// on the second first.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1;
    MPI_Comm a, b;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm first = rank == 0 ? a : b, second = rank == 0 ? b : a;
    MPI_Bcast(&x, 1, MPI_INT, 0, first); // reported
    MPI_Bcast(&x, 1, MPI_INT, 0, second);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Finalize();
    return 0;
}
