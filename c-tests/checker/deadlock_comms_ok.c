// expect: none
// Every rank broadcasts on one communicator then on another.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1;
    MPI_Comm a, b;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Bcast(&x, 1, MPI_INT, 0, a);
    MPI_Bcast(&x, 1, MPI_INT, 0, b);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Finalize();
    return 0;
}
