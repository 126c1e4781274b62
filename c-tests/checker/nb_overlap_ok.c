// expect: none
// Two receives into the two halves of one buffer, and two sends from
// one buffer at once (reading it twice is allowed).
#include <mpi.h>

#define N 1000

int main(int argc, char **argv) {
    int rank, buffer[N] = {0};
    MPI_Request a, b;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Isend(buffer, N / 2, MPI_INT, 1, 7, MPI_COMM_WORLD, &a);
        MPI_Isend(buffer, N / 2, MPI_INT, 1, 7, MPI_COMM_WORLD, &b);
        MPI_Wait(&a, MPI_STATUS_IGNORE);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Irecv(buffer, N / 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &a);
        MPI_Irecv(&buffer[N / 2], N / 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &b);
        MPI_Wait(&a, MPI_STATUS_IGNORE);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
