/* Ping-pong between ranks 0 and 1 (MPI_Send / MPI_Recv), for the trace
 * size benchmark; other ranks only take part in the final MPI_Barrier.
 *
 * usage: pingpong [ROUNDS [BYTES]]   (default 10000 8)
 * prints: pingpong: rounds R bytes B us_per_round X
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 10000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(bytes > 0 ? bytes : 1, 1);
    double start = MPI_Wtime();
    if (size >= 2 && rank < 2) {
        for (int i = 0; i < rounds; i++) {
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
            }
        }
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("pingpong: rounds %d bytes %d us_per_round %.3f\n", rounds, bytes, 1e6 * elapsed / rounds);
    free(buf);
    MPI_Finalize();
    return 0;
}
