// expect: none
// Two sends, two requests, one MPI_Waitall; a persistent send started twice.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y[4] = {0};
    MPI_Request q[2], p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Isend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        MPI_Send_init(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &p);
        for (int i = 0; i < 2; i++) {
            MPI_Start(&p);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&p);
    }
    if (rank == 1) {
        MPI_Recv(&y[0], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&y[1], 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&y[2], 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&y[3], 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
