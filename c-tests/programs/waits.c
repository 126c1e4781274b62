/* Injected wait states, for `pnmpi trace analyze`'s tests: one rank
 * busy-waits exactly DELAY_MS before its part, so the others wait for it.
 * It starts once every other rank has told it (a 1-int message) that it
 * is about to enter its own part, so that a loaded machine cannot make
 * them later than the late rank. The spin reads PMPI_Wtime, which the
 * tracer does not see (no traced call per spin), and does not sleep (the
 * delay is wall time however loaded the node is).
 *   sender:  rank 0 sends to rank 1 DELAY_MS late      (Late Sender)
 *   barrier: the last rank enters MPI_Barrier late     (Wait at Barrier)
 *   bcast:   root 1 enters MPI_Bcast late              (Late Broadcast)
 *
 * usage: waits sender|barrier|bcast [DELAY_MS]   (default 2)
 * prints (rank 0): waits: MODE delay D ms
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void spin_ms(double ms)
{
    double t0 = PMPI_Wtime();
    while ((PMPI_Wtime() - t0) * 1e3 < ms)
        ;
}

/* The ranks other than `late` tell it they are ready; it waits for all
 * of them, then spins `ms`. */
static void late_by(int late, double ms, int rank, int size)
{
    int ready = 1;
    if (rank != late) {
        MPI_Send(&ready, 1, MPI_INT, late, 99, MPI_COMM_WORLD);
        return;
    }
    for (int r = 0; r < size; r++)
        if (r != late)
            MPI_Recv(&ready, 1, MPI_INT, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    spin_ms(ms);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "sender";
    double delay = argc > 2 ? atof(argv[2]) : 2.0;
    int rank, size, value = 42;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "sender") == 0) {
        if (rank < 2)
            late_by(0, delay, rank, 2);
        if (rank == 0)
            MPI_Send(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD); // SITE_SEND
        else if (rank == 1)
            MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // SITE_RECV
    } else if (strcmp(mode, "barrier") == 0) {
        late_by(size - 1, delay, rank, size);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "bcast") == 0) {
        late_by(1, delay, rank, size);
        MPI_Bcast(&value, 1, MPI_INT, 1, MPI_COMM_WORLD);
    } else {
        if (rank == 0)
            fprintf(stderr, "waits: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("waits: %s delay %g ms\n", mode, delay);
    MPI_Finalize();
    return 0;
}
