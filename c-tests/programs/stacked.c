/* Known MPI calls for tools stacked on each other (tests/profiler.rs: the
 * tracer above the profiler above the count module). Every call below is
 * one the bundled tools also make for their own housekeeping (ranks,
 * sizes, messages, a duplicate communicator, a gather, the groups of a new
 * communicator, datatype sizes), so a tool's own call that leaks into the
 * chain shows in the counts of the modules below it. Every rank, with
 * size >= 2:
 *
 *   MPI_Comm_rank 2, MPI_Comm_size 1
 *   3 tokens round the ring (rank 0 sends first)   -> Send 3, Recv 3
 *   MPI_Barrier 2
 *   MPI_Comm_split (even and odd ranks), then MPI_Comm_free of it
 *   MPI_Comm_dup of MPI_COMM_WORLD, then MPI_Comm_free  -> Comm_free 2
 *   MPI_Gatherv to rank 0 of rank+1 ints each
 *   MPI_Allreduce of one int
 *
 * Rank 0 prints "stacked: size N sum S gathered G". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, again, token = 0, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &again);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            token++;
            MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_free(&half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_free(&dup);

    int mine[64];
    for (int i = 0; i <= rank && i < 64; i++)
        mine[i] = rank;
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    int *all = malloc(sizeof(int) * (size * (size + 1) / 2));
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = total;
        total += r + 1;
    }
    MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    int gathered = 0;
    if (rank == 0)
        for (int i = 0; i < total; i++)
            gathered += all[i];

    MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("stacked: size %d sum %d gathered %d\n", size, sum, gathered);
    free(counts);
    free(displs);
    free(all);
    MPI_Finalize();
    return 0;
}
