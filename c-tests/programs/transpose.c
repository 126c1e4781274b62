/* An all-to-all-heavy kernel, as a distributed FFT's transposes are: each
 * iteration, every rank computes on its slab, then exchanges a block of
 * BYTES with every other rank (MPI_Alltoall). The simulator's contention
 * figures replay its trace under 1 to unlimited buses.
 *
 * usage: transpose [BYTES [ITERATIONS [WORK]]]   (default 65536 20 200000)
 * prints: transpose: ranks R bytes B iterations I checksum C time T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long bytes = argc > 1 ? atol(argv[1]) : 65536;
    int iterations = argc > 2 ? atoi(argv[2]) : 20;
    long work = argc > 3 ? atol(argv[3]) : 200000;
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = (size_t)bytes / sizeof(double);
    double *out = malloc(n * size * sizeof(double));
    double *in = malloc(n * size * sizeof(double));
    for (size_t i = 0; i < n * size; i++)
        out[i] = (double)((rank * 31 + i) % 101);
    double checksum = 0, start = MPI_Wtime();
    for (int it = 0; it < iterations; it++) {
        double acc = 0;
        for (long k = 0; k < work; k++)
            acc += out[(size_t)k % (n * size)] * 1.0000001;
        out[0] = acc / (double)work;
        MPI_Alltoall(out, (int)n, MPI_DOUBLE, in, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
        double *t = out;
        out = in;
        in = t;
    }
    for (size_t i = 0; i < n * size; i++)
        checksum += out[i];
    double elapsed = MPI_Wtime() - start;
    double total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("transpose: ranks %d bytes %ld iterations %d checksum %.6e time %.3f\n", size, bytes, iterations,
               total, elapsed);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
