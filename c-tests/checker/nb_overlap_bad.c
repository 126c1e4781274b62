// expect: nonblocking
// Two receives into overlapping halves of one buffer, both active.
#include <mpi.h>

#define N 1000

int main(int argc, char **argv) {
    int rank, buffer[N] = {0};
    MPI_Request a, b;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Send(buffer, N, MPI_INT, 1, 7, MPI_COMM_WORLD);
        MPI_Send(buffer, N / 2, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Irecv(buffer, N, MPI_INT, 0, 7, MPI_COMM_WORLD, &a);
        MPI_Irecv(&buffer[N / 2], N / 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &b); // reported
        MPI_Wait(&a, MPI_STATUS_IGNORE);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
