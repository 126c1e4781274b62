/* Per-rank globals and a tour of MPI, for virtual ranks: every rank
 * keeps different values in a static counter, an initialized global
 * array and a global double, across collectives and messages (so that
 * under `pnmpi run --vranks` other ranks run in between); rank 0 gathers
 * and prints everything, so a normal run and a virtual-rank run print
 * the same text.
 *
 * usage: vglobals       prints lines starting with "vglobals:"
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int counter;                 /* .bss */
int table[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* .data */
double scale = 1.5;                 /* .data */

static void bump(int rank)
{
    for (int i = 0; i <= rank; i++)
        counter++;
    table[rank % 8] += rank;
    scale *= rank + 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bump(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    bump(rank);

    /* Even and odd ranks, reversed by key. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    int hrank, hsize, hsum;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);

    /* A ring with wildcard receives, nonblocking. */
    int token = rank * 7, got = -1;
    MPI_Request rq[2];
    MPI_Status st;
    MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, rank, MPI_COMM_WORLD, &rq[1]);
    MPI_Wait(&rq[0], &st);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);

    /* Scan, broadcast, all-to-all, sendrecv. */
    int prefix;
    MPI_Scan(&rank, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double root_scale = scale;
    MPI_Bcast(&root_scale, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
    int *out = malloc(size * sizeof(int)), *in = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        out[i] = rank * 1000 + i;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
    int a2a = 0;
    for (int i = 0; i < size; i++)
        a2a += in[i] % 1000 == rank && in[i] / 1000 == i;
    int left = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 5, &left, 1, MPI_INT, (rank + size - 1) % size, 5,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    long line[12] = {rank, counter, table[rank % 8], (long)scale, hrank, hsize, hsum,
                     got * 1000 + st.MPI_SOURCE * 10 + count, prefix, (long)root_scale, a2a, left};
    long *all = rank == 0 ? malloc(12 * size * sizeof(long)) : NULL;
    MPI_Gather(line, 12, MPI_LONG, all, 12, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            long *l = all + 12 * r;
            printf("vglobals: rank %ld counter %ld table %ld scale %ld half %ld/%ld sum %ld ring %ld scan %ld bcast %ld a2a %ld left %ld\n",
                   l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], l[10], l[11]);
        }
        free(all);
    }
    MPI_Comm_free(&half);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
