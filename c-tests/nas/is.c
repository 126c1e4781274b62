/* IS, after NPB's integer sort: 2^20 keys below 2^16 (NPB's key
 * generator: a quarter of MAX_KEY times the sum of four randlc numbers),
 * bucket sorted over the ranks ITERS times. Each iteration counts the keys
 * per bucket (MPI_Allreduce of the counts), gives each rank a contiguous
 * range of buckets holding about its share of the keys, exchanges the
 * number of keys each rank sends each other with MPI_Alltoall, the keys
 * themselves with MPI_Alltoallv, and ranks them locally by counting. Like
 * NPB, iteration i first changes two keys to i and MAX_KEY - i.
 *
 * Rank counts: a power of two up to 1,024 (the buckets).
 * prints (rank 0): is: np N keys K maxkey M buckets B
 *                  is: iter I ranksum S  (sum of the global rank of every
 *                                        key's value, times its count)
 *                  is: sorted checksum C  (sum of key x global position)
 *                  is: verified yes|NO  (the keys are in order across the
 *                                       ranks and none was lost)
 */
#include "nas.h"

#define LOG_KEYS 20
#define MAX_KEY (1 << 16)
#define NB 1024
#define SHIFT 6 /* key >> SHIFT is its bucket */
#ifndef ITERS /* -DITERS=N: a longer run (sim/bench/real.sh) */
#define ITERS 10
#endif

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    need_ranks(np <= NB && (np & (np - 1)) == 0, "is", np, "the rank count must be a power of two up to 1024");
    int64_t total = (int64_t)1 << LOG_KEYS;
    int m = (int)(total / np);
    int *key = malloc(m * sizeof *key), *sorted = malloc(m * sizeof *sorted);
    int *recv = malloc(4 * (size_t)m * sizeof *recv); /* room for an unbalanced share */
    int count[NB], all[NB], start[NB], owner[NB];
    int *scount = malloc(np * sizeof(int)), *rcount = malloc(np * sizeof(int));
    int *sdispl = malloc(np * sizeof(int)), *rdispl = malloc(np * sizeof(int));
    int64_t *vcount = malloc(MAX_KEY * sizeof *vcount);

    double seed = skip(314159265.0, NAS_A, 4 * (int64_t)m * rank);
    for (int i = 0; i < m; i++) {
        double x = randlc(&seed, NAS_A);
        x += randlc(&seed, NAS_A);
        x += randlc(&seed, NAS_A);
        x += randlc(&seed, NAS_A);
        key[i] = (int)(MAX_KEY / 4 * x);
    }
    if (rank == 0) {
        printf("is: np %d keys %lld maxkey %d buckets %d\n", np, (long long)total, MAX_KEY, NB);
        fflush(stdout);
    }
    int got = 0, lo = 0, hi = 0;
    int64_t before = 0;
    for (int it = 1; it <= ITERS; it++) {
        if (rank == 0) {
            key[it] = it;
            key[it + ITERS] = MAX_KEY - it;
        }
        /* Local bucket sort, then the global counts. */
        for (int b = 0; b < NB; b++)
            count[b] = 0;
        for (int i = 0; i < m; i++)
            count[key[i] >> SHIFT]++;
        start[0] = 0;
        for (int b = 1; b < NB; b++)
            start[b] = start[b - 1] + count[b - 1];
        for (int i = 0; i < m; i++)
            sorted[start[key[i] >> SHIFT]++] = key[i];
        MPI_Allreduce(count, all, NB, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        /* Buckets to ranks: rank r takes buckets until its running total
         * reaches (r + 1) / np of the keys (NPB's split). */
        int64_t run = 0;
        for (int b = 0, r = 0; b < NB; b++) {
            owner[b] = r;
            run += all[b];
            if (run >= total * (r + 1) / np && r < np - 1)
                r++;
        }
        for (int d = 0; d < np; d++)
            scount[d] = 0;
        for (int b = 0; b < NB; b++)
            scount[owner[b]] += count[b];
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
        sdispl[0] = rdispl[0] = 0;
        for (int d = 1; d < np; d++) {
            sdispl[d] = sdispl[d - 1] + scount[d - 1];
            rdispl[d] = rdispl[d - 1] + rcount[d - 1];
        }
        got = rdispl[np - 1] + rcount[np - 1];
        if (got > 4 * m) {
            fprintf(stderr, "is: rank %d received %d keys, over 4 times its share\n", rank, got);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Alltoallv(sorted, scount, sdispl, MPI_INT, recv, rcount, rdispl, MPI_INT, MPI_COMM_WORLD);
        /* My key values and the keys below them (none if I own no bucket). */
        lo = MAX_KEY;
        hi = 0;
        before = 0;
        for (int b = 0; b < NB; b++) {
            if (owner[b] < rank)
                before += all[b];
            if (owner[b] == rank) {
                lo = lo < b << SHIFT ? lo : b << SHIFT;
                hi = (b + 1) << SHIFT;
            }
        }
        for (int v = lo; v < hi; v++)
            vcount[v] = 0;
        for (int i = 0; i < got; i++)
            vcount[recv[i]]++;
        int64_t sum = 0, at = before;
        for (int v = lo; v < hi; v++) {
            sum += vcount[v] * at;
            at += vcount[v];
        }
        int64_t ranksum;
        MPI_Allreduce(&sum, &ranksum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("is: iter %d ranksum %lld\n", it, (long long)ranksum);
            fflush(stdout);
        }
    }
    /* Full verification of the last iteration: the keys in order. */
    int k = 0;
    for (int v = lo; v < hi; v++)
        for (int64_t c = 0; c < vcount[v]; c++)
            recv[k++] = v;
    int ok = k == got, edge[2] = {got ? recv[0] : MAX_KEY, got ? recv[got - 1] : -1}, prev = -1;
    int64_t check = 0, pos = before;
    for (int i = 0; i < got; i++)
        check += (int64_t)recv[i] * ++pos;
    /* The largest key of the ranks before me (-1 if none) is below my first. */
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < np - 1 ? rank + 1 : MPI_PROC_NULL;
    int carry = edge[1] >= 0 ? edge[1] : -1;
    MPI_Status st;
    MPI_Sendrecv(&carry, 1, MPI_INT, right, 7, &prev, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    ok &= got == 0 || prev <= edge[0];
    int64_t mine[2] = {check, got}, sums[2];
    int all_ok;
    MPI_Allreduce(mine, sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("is: sorted checksum %lld\n", (long long)sums[0]);
        printf("is: verified %s\n", all_ok && sums[1] == total ? "yes" : "NO");
    }
    MPI_Finalize();
    return 0;
}
