/* Nonblocking messages completed by every wait and test, blocking
 * Sendrecv and Ssend, and 8 collectives, between 2 ranks, for LLNL's
 * communication callbacks served by `comm` (c-tests/modules/commevents.c
 * counts them; tests/llnl_services.rs has the counts).
 *
 * Seven rounds, each rank sending its peer and receiving from it: round 1
 * one Irecv and one Isend, each completed by MPI_Wait; round 2 the same
 * by MPI_Test polling; rounds 3 to 7 two of each, completed by
 * MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome and MPI_Testall.
 * Then one MPI_Sendrecv, one MPI_Ssend from rank 0 to MPI_Recv on rank 1,
 * and MPI_Bcast, Gather, Scatter, Allgather, Alltoall, Reduce, Scan and
 * Reduce_scatter.
 *
 * usage: completions            (2 ranks)
 * prints: completions: rank R sum S
 */
#include <mpi.h>
#include <stdio.h>

static int rank, peer;
static long sum;
static int in[4], out[4];
static MPI_Request req[4];

/* Posts `n` receives from and `n` sends to the peer (tags 10 + k). */
static void post(int n, int round)
{
    for (int k = 0; k < n; k++) {
        out[k] = 100 * round + 10 * rank + k;
        MPI_Irecv(&in[k], 1, MPI_INT, peer, 10 + k, MPI_COMM_WORLD, &req[k]);
        MPI_Isend(&out[k], 1, MPI_INT, peer, 10 + k, MPI_COMM_WORLD, &req[n + k]);
    }
}

static void received(int n)
{
    for (int k = 0; k < n; k++)
        sum += in[k];
}

int main(int argc, char **argv)
{
    int flag, index, outcount, indices[4], left;
    MPI_Status st[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;

    post(1, 1);
    MPI_Wait(&req[0], &st[0]);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    received(1);

    post(1, 2);
    for (int k = 0; k < 2; k++)
        for (flag = 0; !flag;)
            MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE);
    received(1);

    post(2, 3);
    for (int k = 0; k < 4; k++)
        MPI_Waitany(4, req, &index, &st[0]);
    received(2);

    post(2, 4);
    for (left = 4; left > 0;) {
        MPI_Testany(4, req, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED)
            left--;
    }
    received(2);

    post(2, 5);
    for (left = 4; left > 0; left -= outcount)
        MPI_Waitsome(4, req, &outcount, indices, st);
    received(2);

    post(2, 6);
    for (left = 4; left > 0; left -= outcount)
        MPI_Testsome(4, req, &outcount, indices, MPI_STATUSES_IGNORE);
    received(2);

    post(2, 7);
    for (flag = 0; !flag;)
        MPI_Testall(4, req, &flag, st);
    received(2);

    int x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, peer, 20, &y, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sum += y;
    if (rank == 0)
        MPI_Ssend(&x, 1, MPI_INT, 1, 21, MPI_COMM_WORLD);
    else
        MPI_Recv(&y, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    int two[2] = {rank, rank}, got[2] = {0, 0}, counts[2] = {1, 1}, one = 0;
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&x, 1, MPI_INT, got, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(two, 1, MPI_INT, &one, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Allgather(&x, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(two, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Reduce(&x, &one, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Scan(&x, &one, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter(two, &one, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    sum += one;

    printf("completions: rank %d sum %ld\n", rank, sum);
    MPI_Finalize();
    return 0;
}
