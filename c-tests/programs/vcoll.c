/* A NAS IS-style key exchange: each iteration every rank computes (its
 * time grows with its rank), tells every other how many keys it will send
 * (MPI_Alltoall of counts), then sends them with MPI_Alltoallv, counts
 * unequal from peer to peer and from iteration to iteration. Then the
 * other `v` collectives with unequal counts: MPI_Allgatherv,
 * MPI_Gatherv (root 0), MPI_Scatterv (root size-1), MPI_Reduce_scatter,
 * and an MPI_Ialltoallv overlapped with compute and finished by MPI_Wait.
 *
 *   vcoll [iterations] [keys]     (default 6 iterations, 3000 keys)
 *
 * Each rank prints, for the test to check against the trace, the bytes it
 * sent to and received from each peer over all iterations in each
 * routine: "vcoll R ROUTINE sent|received b0,b1,...". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLTOALLV, ALLGATHERV, GATHERV, SCATTERV, REDUCE_SCATTER, IALLTOALLV, ROUTINES };
static const char *names[ROUTINES] = {"MPI_Alltoallv", "MPI_Allgatherv", "MPI_Gatherv",
                                      "MPI_Scatterv", "MPI_Reduce_scatter", "MPI_Ialltoallv"};
static long *sent[ROUTINES], *received[ROUTINES];
static int rank, size;

/* Keys rank `from` sends rank `to` in iteration `it`: unequal per pair. */
static int keys_for(int from, int to, int it, int keys)
{
    return keys / 2 + (int)(((unsigned)(from * 7 + to * 13 + it * 5) * 2654435761u) % (unsigned)keys);
}

static double work(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++)
        x += 1e-9 * (double)(i % 7);
    return x;
}

static void note(int routine, const int *scounts, const int *rcounts)
{
    for (int j = 0; j < size; j++) {
        if (scounts)
            sent[routine][j] += (long)scounts[j] * (long)sizeof(int);
        if (rcounts)
            received[routine][j] += (long)rcounts[j] * (long)sizeof(int);
    }
}

static void print(int routine)
{
    for (int side = 0; side < 2; side++) {
        long *v = side ? received[routine] : sent[routine];
        long any = 0;
        for (int j = 0; j < size; j++)
            any |= v[j];
        if (!any)
            continue;
        /* One write per line, so that the launcher's forwarding never
         * interleaves another rank's output inside it. */
        char line[4096];
        int at = snprintf(line, sizeof line, "vcoll %d %s %s ", rank, names[routine], side ? "received" : "sent");
        for (int j = 0; j < size && at < (int)sizeof line - 24; j++)
            at += snprintf(line + at, sizeof line - at, "%s%ld", j ? "," : "", v[j]);
        printf("%s\n", line);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 6;
    int keys = argc > 2 ? atoi(argv[2]) : 3000;
    double sink = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int r = 0; r < ROUTINES; r++) {
        sent[r] = calloc(size, sizeof(long));
        received[r] = calloc(size, sizeof(long));
    }
    int *scounts = malloc(size * sizeof(int)), *rcounts = malloc(size * sizeof(int));
    int *sdispls = malloc(size * sizeof(int)), *rdispls = malloc(size * sizeof(int));
    int *sbuf = malloc((size_t)size * 2 * keys * sizeof(int));
    int *rbuf = malloc((size_t)size * 2 * keys * sizeof(int));
    for (long i = 0; i < (long)size * 2 * keys; i++)
        sbuf[i] = (int)i;
    for (int it = 0; it < iterations; it++) {
        sink += work(200000L * (1 + rank));
        /* The key exchange. */
        for (int j = 0; j < size; j++)
            scounts[j] = keys_for(rank, j, it, keys);
        MPI_Alltoall(scounts, 1, MPI_INT, rcounts, 1, MPI_INT, MPI_COMM_WORLD);
        sdispls[0] = rdispls[0] = 0;
        for (int j = 1; j < size; j++) {
            sdispls[j] = sdispls[j - 1] + scounts[j - 1];
            rdispls[j] = rdispls[j - 1] + rcounts[j - 1];
        }
        MPI_Alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
        note(ALLTOALLV, scounts, rcounts);

        /* Allgatherv: rank j contributes keys_for(j, 0, it) keys. */
        for (int j = 0; j < size; j++) {
            rcounts[j] = keys_for(j, 0, it, keys);
            rdispls[j] = j ? rdispls[j - 1] + rcounts[j - 1] : 0;
        }
        MPI_Allgatherv(sbuf, rcounts[rank], MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
        note(ALLGATHERV, NULL, rcounts);

        /* Gatherv to 0: the root's counts only are significant. */
        MPI_Gatherv(sbuf, rcounts[rank], MPI_INT, rbuf, rcounts, rdispls, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            note(GATHERV, NULL, rcounts);

        /* Scatterv from the last rank. */
        MPI_Scatterv(sbuf, rcounts, rdispls, MPI_INT, rbuf, rcounts[rank], MPI_INT, size - 1, MPI_COMM_WORLD);
        if (rank == size - 1)
            note(SCATTERV, rcounts, NULL);

        /* Reduce_scatter: unequal shares. */
        MPI_Reduce_scatter(sbuf, rbuf, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        note(REDUCE_SCATTER, NULL, rcounts);

        /* Ialltoallv overlapped with compute. */
        MPI_Request req;
        for (int j = 0; j < size; j++) {
            scounts[j] = keys_for(rank, j, it + 100, keys / 4);
            rcounts[j] = keys_for(j, rank, it + 100, keys / 4);
        }
        for (int j = 1; j < size; j++) {
            sdispls[j] = sdispls[j - 1] + scounts[j - 1];
            rdispls[j] = rdispls[j - 1] + rcounts[j - 1];
        }
        MPI_Ialltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD, &req);
        sink += work(100000);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        note(IALLTOALLV, scounts, rcounts);
    }
    /* A rank at a time: under load, MPICH's launcher has split a line
     * of one rank's with another's output even so. */
    for (int p = 0; p < size; p++) {
        if (p == rank)
            for (int r = 0; r < ROUTINES; r++)
                print(r);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (sink < 0)
        printf("%f\n", sink);
    MPI_Finalize();
    return 0;
}
