/* Computes without communicating, for the vtime processor model: each
 * rank runs a floating-point loop between two MPI_Wtime calls and prints
 * the virtual (MPI_Wtime) and the thread CPU time (CLOCK_THREAD_CPUTIME_ID)
 * the loop took. Under vtime the first is the second times cpu_factor.
 *
 * usage: compute [STEPS]   (default 20000000)
 * prints: compute: rank R wtime_s W cpu_s C value V
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long steps = argc > 1 ? atol(argv[1]) : 20000000L;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double w0 = MPI_Wtime();
    double c0 = cpu_seconds();
    double x = 1.0;
    for (long i = 0; i < steps; i++)
        x = x * 1.0000001 + 1e-9;
    double c1 = cpu_seconds();
    double w1 = MPI_Wtime();
    printf("compute: rank %d wtime_s %.9f cpu_s %.9f value %.3f\n", rank, w1 - w0, c1 - c0, x);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
