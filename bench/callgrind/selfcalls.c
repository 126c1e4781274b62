/* The checker's common path without waiting, for tests/callgrind.rs:
 * each rank calls MPI with itself as the peer, so that no call waits for
 * another rank and the instructions per call do not depend on timing.
 * usage: selfcalls ROUNDS blocking|nonblocking|allreduce
 *   blocking:    MPI_Send + MPI_Recv of 8 doubles to and from itself
 *   nonblocking: MPI_Irecv + MPI_Isend + MPI_Wait + MPI_Wait
 *   allreduce:   MPI_Allreduce of 8 doubles on MPI_COMM_SELF */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, rounds = argc > 1 ? atoi(argv[1]) : 1000;
    const char *mode = argc > 2 ? argv[2] : "blocking";
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    MPI_Request req[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < rounds; i++) {
        if (strcmp(mode, "blocking") == 0) {
            MPI_Send(x, 8, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD);
            MPI_Recv(y, 8, MPI_DOUBLE, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (strcmp(mode, "nonblocking") == 0) {
            MPI_Irecv(y, 8, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(x, 8, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &req[1]);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        } else {
            MPI_Allreduce(x, y, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
        }
    }
    if (y[0] != 1.0) {
        fprintf(stderr, "selfcalls: wrong data\n");
        return 1;
    }
    MPI_Finalize();
    return 0;
}
