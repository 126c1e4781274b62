/* A rank's messages to itself in a loop, with no other rank to wait for:
 * its instruction count grows by the same amount each round, so the
 * difference of two lengths (callgrind) is the cost of a round, without
 * the polling that makes waits on other processes vary. For the
 * piggyback overhead in docs/performance.md.
 *
 * Each round: with MODE b, one MPI_Sendrecv of BYTES with self (a blocking
 * send and receive; a plain MPI_Send to self may wait for its receive
 * forever, as under MPICH); with MODE n, MPI_Irecv and MPI_Isend to self
 * and MPI_Waitall.
 *
 * usage: selfloop ROUNDS BYTES MODE     prints: selfloop: rounds R bytes B mode M
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8;
    char mode = argc > 3 ? argv[3][0] : 'b';
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *out = calloc(bytes + 1, 1), *in = calloc(bytes + 1, 1);
    for (int i = 0; i < rounds; i++) {
        if (mode == 'b') {
            MPI_Sendrecv(out, bytes, MPI_CHAR, rank, 0, in, bytes, MPI_CHAR, rank, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        } else {
            MPI_Request r[2];
            MPI_Irecv(in, bytes, MPI_CHAR, rank, 0, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(out, bytes, MPI_CHAR, rank, 0, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
    }
    printf("selfloop: rounds %d bytes %d mode %c\n", rounds, bytes, mode);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
