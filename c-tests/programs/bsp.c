/* A bulk-synchronous kernel for the jitter benchmark: each phase computes
 * a fixed amount of work (calibrated at start to QUANTUM_US on this core),
 * then all ranks meet in MPI_Barrier. Rank 0 reports the run's time
 * against pure compute: PHASES x the fastest phase's compute time, which
 * is the work without noise.
 *
 * usage: bsp [QUANTUM_US [PHASES]]   (default 1000 2000)
 * prints: bsp: ranks R phases P quantum_us Q pure_s X total_s T slowdown_pct S
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double work(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double quantum = (argc > 1 ? atof(argv[1]) : 1000.0) * 1e-6;
    int phases = argc > 2 ? atoi(argv[2]) : 2000;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Calibrate: the fastest of 20 runs of 1e6 steps sets the step time. */
    double best = 1e30, sink = 0;
    for (int i = 0; i < 20; i++) {
        double t = MPI_Wtime();
        sink += work(1000000);
        t = MPI_Wtime() - t;
        best = t < best ? t : best;
    }
    long steps = (long)(quantum / best * 1e6);
    MPI_Bcast(&steps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double fastest = 1e30;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int p = 0; p < phases; p++) {
        double t = MPI_Wtime();
        sink += work(steps);
        t = MPI_Wtime() - t;
        fastest = t < fastest ? t : fastest;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double total = MPI_Wtime() - start, pure;
    MPI_Reduce(&fastest, &pure, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bsp: ranks %d phases %d quantum_us %.1f pure_s %.6f total_s %.6f slowdown_pct %.3f\n", size, phases,
               pure * 1e6, pure * phases, total, 100.0 * (total / (pure * phases) - 1.0));
    if (sink == 42.0) /* keeps the work from being optimised away */
        printf("bsp: %g\n", sink);
    MPI_Finalize();
    return 0;
}
