/* Makes a known number of calls in each Pcontrol phase, so tests can check
 * exactly which calls a module saw. Every rank, with size >= 2:
 *
 *   phase 1 (before any MPI_Pcontrol): Comm_rank 1, Comm_size 1, Send 1, Recv 1, Barrier 1
 *   MPI_Pcontrol(2)               phase 2: Send 2, Recv 2, Barrier 2, Comm_rank 1
 *   MPI_Pcontrol(3)               phase 3: Barrier 3
 *   MPI_Pcontrol(1)               phase 1: Comm_rank 1, Barrier 4
 *
 * Totals: Send 3, Recv 3, Barrier 10, Comm_rank 3, Comm_size 1, Pcontrol 3.
 * Rank 0 prints "counts: size N token T". */
#include <mpi.h>
#include <stdio.h>

static int rank, size;

/* One token round the ring: one Send and one Recv on every rank (no send
 * to oneself, which blocks under MPICH). */
static int ring(int token)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
    return token;
}

static void barriers(int n)
{
    for (int i = 0; i < n; i++)
        MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "counts: needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    token = ring(token);
    barriers(1);

    MPI_Pcontrol(2);
    token = ring(token);
    token = ring(token);
    barriers(2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_Pcontrol(3);
    barriers(3);

    MPI_Pcontrol(1);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    barriers(4);

    if (rank == 0)
        printf("counts: size %d token %d\n", size, token);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
