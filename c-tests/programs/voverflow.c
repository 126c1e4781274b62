/* Rank 3 recurses with 64 KiB frames until its stack overflows (when
 * DEPTH frames do not fit): the run must stop naming rank 3.
 *
 * usage: voverflow [DEPTH]   (default 1000: 64 MiB)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int deep(int n)
{
    volatile char frame[65536];
    memset((char *)frame, n, sizeof frame);
    return n == 0 ? frame[100] : deep(n - 1) + frame[n % 65536];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, depth = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    int v = rank == 3 ? deep(depth) : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("voverflow: survived %d\n", v);
    MPI_Finalize();
    return 0;
}
