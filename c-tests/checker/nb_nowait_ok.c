// expect: none
// The receive request is completed by a test loop.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y = 0, done = 0;
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        MPI_Irecv(&y, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &q);
        while (!done)
            MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    }
    if (rank == 0)
        MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
