/* Known MPI calls and known computation phases, for the profiler
 * (tests/profiler.rs). Every rank, with size >= 2:
 *
 *   MPI_Comm_rank 1, MPI_Comm_size 1
 *   PHASES times: a "computation" phase of PHASE_MS ms, slept (a sleeper
 *   is woken promptly on a loaded machine, where a spinning process may
 *   lose the CPU for a whole time slice just as its phase ends), then
 *   MPI_Barrier                                       -> Barrier 5
 *   3 tokens round the ring, sent at call site A: 256 MPI_INT (1024 bytes)
 *   2 tokens round the ring, sent at call site B: 64 MPI_DOUBLE (512 bytes)
 *                                                     -> Send 5, Recv 5
 *   MPI_Allreduce of one int                          -> Allreduce 1
 *
 * The two MPI_Send calls are on the lines marked SITE_A and SITE_B, which
 * the test looks up in this file. Rank 0 sends first, the others receive
 * first (no send to oneself, which blocks under MPICH). Rank 0 prints
 * "prof_phases: size N sum S".
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define PHASES 5
#define PHASE_MS 20

/* Sleeps until `ms` milliseconds from now. */
static void phase(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += ms * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {
    }
}

int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    int ints[256] = {0};
    double doubles[64] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "prof_phases: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < PHASES; i++) {
        phase(PHASE_MS);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < 3; i++) {
        if (rank != 0)
            MPI_Recv(ints, 256, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ints[0] += 1;
        MPI_Send(ints, 256, MPI_INT, next, 1, MPI_COMM_WORLD); /* SITE_A */
        if (rank == 0)
            MPI_Recv(ints, 256, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < 2; i++) {
        if (rank != 0)
            MPI_Recv(doubles, 64, MPI_DOUBLE, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        doubles[0] += 1;
        MPI_Send(doubles, 64, MPI_DOUBLE, next, 2, MPI_COMM_WORLD); /* SITE_B */
        if (rank == 0)
            MPI_Recv(doubles, 64, MPI_DOUBLE, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("prof_phases: size %d sum %d\n", size, sum);
    MPI_Finalize();
    return 0;
}
