/* Programs whose critical path is known by construction, for `pnmpi
 * trace analyze`'s tests. Compute is a sleep (see work_ms), but the
 * stencil's, a busy wait (see spin_ms).
 *   pipeline: rank r receives from r-1, computes (r+1) ms, sends to r+1.
 *   stencil F: a barrier, then ITER iterations of compute (5 ms; the last
 *              rank: 10 ms x F), then a ring exchange with both neighbours
 *              (MPI_Irecv, MPI_Isend, MPI_Waitall); F scales the last rank's
 *              compute, for the what-if test (2 ranks: one core each).
 *   master:    rank 0 sends a task to each worker, then receives the
 *              results in rank order and combines them (2 ms); worker w
 *              computes 2 w ms.
 *
 * usage: paths pipeline | paths stencil [F [ITER]] | paths master
 * prints (rank 0): paths: MODE ranks R time T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "Compute" that leaves the core to the others: 4 ranks share the test
 * machine's 2 cores, and spinning ranks would stretch each other's bursts
 * by whole scheduler slices, run to run differently. The tracer sees a gap
 * between calls either way. */
static void work_ms(double ms)
{
    long long ns = (long long)(ms * 1e6);
    struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Compute of an exact wall time, for the what-if test: a busy wait on
 * PMPI_Wtime (the tracer sees no call), which ends on time whether or not
 * the rank lost its core meanwhile; a sleep's end waits for the wake-up.
 * The test runs it with a core per rank. */
static void spin_ms(double ms)
{
    double t0 = PMPI_Wtime();
    while ((PMPI_Wtime() - t0) * 1e3 < ms)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "pipeline";
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double start = MPI_Wtime();
    int value = 0;
    if (strcmp(mode, "pipeline") == 0) {
        if (rank > 0)
            MPI_Recv(&value, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        work_ms(rank + 1);
        value++;
        if (rank + 1 < size)
            MPI_Send(&value, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
    } else if (strcmp(mode, "stencil") == 0) {
        double f = argc > 2 ? atof(argv[2]) : 1.0;
        int iterations = argc > 3 ? atoi(argv[3]) : 20;
        double work = rank == size - 1 ? 10.0 * f : 5.0;
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        double halo[2] = {0, 0}, mine = rank;
        /* All ranks up before the timed part: the span from here to
         * MPI_Finalize leaves out how late each process started. */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int it = 0; it < iterations; it++) {
            spin_ms(work);
            MPI_Request req[4];
            MPI_Status st[4];
            MPI_Irecv(&halo[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(&halo[1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
            MPI_Isend(&mine, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(&mine, 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, st);
            mine = (halo[0] + halo[1] + mine) / 3;
        }
        value = (int)mine;
    } else if (strcmp(mode, "master") == 0) {
        if (rank == 0) {
            for (int w = 1; w < size; w++)
                MPI_Send(&w, 1, MPI_INT, w, 0, MPI_COMM_WORLD);
            for (int w = 1; w < size; w++) {
                int result;
                MPI_Recv(&result, 1, MPI_INT, w, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                value += result;
            }
            work_ms(2);
        } else {
            int task;
            MPI_Recv(&task, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            work_ms(2.0 * rank);
            task *= 2;
            MPI_Send(&task, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        }
    } else {
        if (rank == 0)
            fprintf(stderr, "paths: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double elapsed = MPI_Wtime() - start;
    if (rank == 0)
        printf("paths: %s ranks %d value %d time %.6f\n", mode, size, value, elapsed);
    MPI_Finalize();
    return 0;
}
