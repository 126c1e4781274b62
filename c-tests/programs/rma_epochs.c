/* One-sided epochs whose times the simulators must agree on (tests/kernel.rs):
 *
 * 1. fences: 3 epochs, in each of which every rank puts (rank + 1) x 16 KiB
 *    into its right neighbour's window and gets 4 KiB from its left one;
 * 2. a counter: every rank adds 1 to rank 0's counter 5 times with
 *    MPI_Fetch_and_op, each under an exclusive lock;
 * 3. a PSCW ring: 3 epochs, in each of which every rank exposes its window
 *    to its left neighbour and puts (rank % 4 + 1) x 4 KiB into its right
 *    neighbour's;
 * 4. passive target: under MPI_Win_lock_all, every rank accumulates
 *    (rank % 4 + 1) x 2 KiB into its right neighbour's window, flushes,
 *    reads one long of it back with MPI_Get, flushes, puts 2 KiB with
 *    MPI_Rput and waits for it, then compare-and-swaps one int there and
 *    flushes them all: the ranks end at their own times.
 *
 * usage: rma_epochs
 * prints: rma_epochs: rank R end_s T ok K   (MPI_Wtime after the last
 *         timed call; K 1 when the data arrived as sent)
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define BLOCK (16 * 1024)
#define GET 4096
#define EPOCHS 3
#define COUNTS 5
#define ACC 1024
#define RING 4096

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int ok = 1;

    /* 1. fences */
    static char out[BLOCK * 8], in[GET];
    char *base;
    MPI_Win win;
    MPI_Win_allocate(BLOCK * 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, BLOCK * 8);
    for (int e = 0; e < EPOCHS; e++) {
        memset(out, 'a' + (rank + e) % 26, sizeof out);
        MPI_Win_fence(0, win);
        MPI_Put(out, (rank + 1) * BLOCK, MPI_CHAR, right, 0, (rank + 1) * BLOCK, MPI_CHAR, win);
        MPI_Get(in, GET, MPI_CHAR, left, BLOCK * 4, GET, MPI_CHAR, win);
        MPI_Win_fence(0, win);
        ok &= base[0] == 'a' + (left + e) % 26;
    }
    MPI_Win_free(&win);

    /* 2. a counter */
    /* Static: a local whose address only MPI keeps may be cached in a register. */
    static long counter;
    long one = 1, old;
    MPI_Win cwin;
    MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
    for (int i = 0; i < COUNTS; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cwin);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, cwin);
        MPI_Win_unlock(0, cwin);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cwin);
        MPI_Win_unlock(0, cwin);
        ok &= counter == (long)size * COUNTS;
    }
    MPI_Win_free(&cwin);

    /* 3. a PSCW ring */
    static char ring[RING * 4];
    char *rbase;
    MPI_Win rwin;
    MPI_Win_allocate(RING * 4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &rbase, &rwin);
    MPI_Group world, l, r;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &l);
    MPI_Group_incl(world, 1, &right, &r);
    for (int e = 0; e < EPOCHS; e++) {
        memset(ring, 'A' + (rank + e) % 26, sizeof ring);
        MPI_Win_post(l, 0, rwin);
        MPI_Win_start(r, 0, rwin);
        MPI_Put(ring, (rank % 4 + 1) * RING, MPI_CHAR, right, 0, (rank % 4 + 1) * RING, MPI_CHAR, rwin);
        MPI_Win_complete(rwin);
        MPI_Win_wait(rwin);
        ok &= rbase[0] == 'A' + (left + e) % 26;
    }
    MPI_Group_free(&l);
    MPI_Group_free(&r);
    MPI_Group_free(&world);
    MPI_Win_free(&rwin);

    /* 4. passive target */
    long *acc;
    MPI_Win awin;
    MPI_Win_allocate(ACC * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &acc, &awin);
    MPI_Win_lock_all(0, awin);
    for (int i = 0; i < ACC; i++)
        acc[i] = 0;
    MPI_Win_sync(awin);
    MPI_Barrier(MPI_COMM_WORLD);
    static long add[ACC];
    for (int i = 0; i < ACC; i++)
        add[i] = rank + 1;
    int n = (rank % 4 + 1) * (ACC / 4);
    MPI_Accumulate(add, n, MPI_LONG, right, 0, n, MPI_LONG, MPI_SUM, awin);
    MPI_Win_flush(right, awin);
    long got = -1;
    MPI_Get(&got, 1, MPI_LONG, right, 0, 1, MPI_LONG, awin);
    MPI_Win_flush(right, awin);
    ok &= got == rank + 1;
    /* A request form: its wait ends when the put is done. */
    MPI_Request req;
    MPI_Rput(add, ACC / 4, MPI_LONG, right, ACC / 2, ACC / 4, MPI_LONG, awin, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* An int: Open MPI 4.1's osc rdma crashes in an 8-byte compare-and-swap
     * over shared memory (vader). */
    int swap = 100 + rank, compare = rank + 1, was = -1;
    MPI_Compare_and_swap(&swap, &compare, &was, MPI_INT, right, 1, awin);
    MPI_Win_flush_all(awin);
    MPI_Win_unlock_all(awin);
    ok &= was == rank + 1;

    /* The end, after the free (which synchronizes the window's group, as
     * the creations do): nothing timed after it. */
    MPI_Win_free(&awin);
    double end = MPI_Wtime();
    printf("rma_epochs: rank %d end_s %.9f ok %d\n", rank, end, ok);
    MPI_Finalize();
    return 0;
}
