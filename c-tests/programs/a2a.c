/* All-to-all traffic across a network whose links the messages share
 * (the shared-link cross-check against smpirun): each iteration an MPI_Alltoall of BYTES per pair,
 * then exchanges of XBYTES with the ranks 4 and 8 away (MPI_Sendrecv
 * both ways), then an MPI_Allreduce of one double. Meant for 16 ranks.
 *
 * usage: a2a [ITERATIONS [BYTES [XBYTES]]]   (default 3 65536 1048576)
 * prints: a2a: ranks P iterations N checksum C
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int iterations = argc > 1 ? atoi(argv[1]) : 3;
    int bytes = argc > 2 ? atoi(argv[2]) : 65536;
    int xbytes = argc > 3 ? atoi(argv[3]) : 1048576;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *send = malloc((size_t)bytes * size);
    char *recv = malloc((size_t)bytes * size);
    char *xout = malloc(xbytes);
    char *xin = malloc(xbytes);
    memset(send, rank, (size_t)bytes * size);
    memset(xout, rank, xbytes);
    double sum = 0;
    for (int it = 0; it < iterations; it++) {
        MPI_Alltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, MPI_COMM_WORLD);
        for (int d = 4; d <= 8; d += 4) {
            int to = (rank + d) % size, from = (rank - d + size) % size;
            MPI_Sendrecv(xout, xbytes, MPI_BYTE, to, d, xin, xbytes, MPI_BYTE, from, d, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
        double mine = recv[0] + xin[0], all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += all;
    }
    if (rank == 0)
        printf("a2a: ranks %d iterations %d checksum %.0f\n", size, iterations, sum);
    free(send);
    free(recv);
    free(xout);
    free(xin);
    MPI_Finalize();
    return 0;
}
