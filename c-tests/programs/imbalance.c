/* Deliberately imbalanced compute: each iteration, rank r computes
 * WORK x (1 + r x SKEW) floating-point steps, then all ranks meet in
 * MPI_Allreduce, so the faster ranks wait for the slowest one. The
 * simulator's prediction benchmark replays its trace: the waits must
 * come out of the replay, not from the trace's measured times.
 *
 * usage: imbalance [ITERATIONS [WORK [SKEW]]]   (default 100 200000 0.5)
 * prints: imbalance: ranks R iterations I value V time T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int iterations = argc > 1 ? atoi(argv[1]) : 100;
    long work = argc > 2 ? atol(argv[2]) : 200000;
    double skew = argc > 3 ? atof(argv[3]) : 0.5;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long mine = (long)((double)work * (1.0 + rank * skew));
    double x = 1.0 + rank, sum = 0;
    double start = MPI_Wtime();
    for (int it = 0; it < iterations; it++) {
        for (long k = 0; k < mine; k++)
            x = x * 1.0000001 + 1e-9;
        double part = x, total;
        MPI_Allreduce(&part, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += total;
    }
    double elapsed = MPI_Wtime() - start;
    if (rank == 0)
        printf("imbalance: ranks %d iterations %d value %.6e time %.6f\n", size, iterations, sum, elapsed);
    MPI_Finalize();
    return 0;
}
