/* One-sided communication in the four ways applications use it, for the
 * trace, the profiler and the OTF2 export (tests/rma.rs), on 4 ranks:
 *
 * 1. halo: an MPI_Win_allocate window of two 128 KiB halves; 5 fence
 *    epochs, in each of which every rank puts 128 KiB into each
 *    neighbour's window (its right neighbour's low half, its left's high
 *    half); the first fence asserts MPI_MODE_NOPRECEDE, the closing one
 *    MPI_MODE_NOSUCCEED.
 * 2. counter: an MPI_Win_create window over one long; every rank adds 1
 *    to rank 0's counter 10 times with MPI_Fetch_and_op under an
 *    exclusive lock.
 * 3. ring: a PSCW ring on an MPI_Win_create window of 4 KiB: each rank
 *    exposes its window to its left neighbour (MPI_Win_post) and puts
 *    4 KiB into its right neighbour's (MPI_Win_start ... MPI_Win_complete),
 *    3 times.
 * 4. shared: an MPI_Win_allocate_shared window of 64 longs per rank over
 *    the node's ranks, under MPI_Win_lock_all: each rank stores its rank
 *    in its own segment, then (after MPI_Win_sync and a barrier) reads its
 *    right neighbour's with MPI_Get, adds to it with MPI_Accumulate and
 *    MPI_Rput, swaps with MPI_Compare_and_swap, and flushes.
 *
 * usage: rma_halo
 * prints: rma_halo: ranks R halo H counter C ring G shared S
 * (each check 1 when the data arrived as sent)
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define HALF (128 * 1024)
#define EPOCHS 5
#define COUNTS 10
#define RING_BYTES 4096
#define RINGS 3
#define SEGMENT 64

static int halo(int rank, int size)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    static char out[HALF];
    char *base;
    MPI_Win win;
    MPI_Win_allocate(2 * HALF, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, 2 * HALF);
    int ok = 1;
    for (int e = 0; e < EPOCHS; e++) {
        memset(out, 'a' + (rank + e) % 26, HALF);
        MPI_Win_fence(e == 0 ? MPI_MODE_NOPRECEDE : 0, win);
        MPI_Put(out, HALF, MPI_CHAR, right, 0, HALF, MPI_CHAR, win);
        MPI_Put(out, HALF, MPI_CHAR, left, HALF, HALF, MPI_CHAR, win);
        MPI_Win_fence(e == EPOCHS - 1 ? MPI_MODE_NOSUCCEED : 0, win);
        /* The low half came from the left neighbour, the high from the right. */
        ok &= base[0] == 'a' + (left + e) % 26 && base[HALF - 1] == 'a' + (left + e) % 26;
        ok &= base[HALF] == 'a' + (right + e) % 26 && base[2 * HALF - 1] == 'a' + (right + e) % 26;
    }
    MPI_Win_free(&win);
    return ok;
}

static long counter(int rank, int size)
{
    /* Static: a local whose address only MPI keeps may be cached in a register. */
    static long value;
    long one = 1, old;
    MPI_Win win;
    MPI_Win_create(&value, sizeof value, sizeof value, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < COUNTS; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    /* Rank 0's counter, to every rank. */
    MPI_Bcast(&value, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return value == (long)COUNTS * size;
}

static int ring(int rank, int size)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    static char buf[RING_BYTES], out[RING_BYTES];
    MPI_Group world, from, to;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &from);
    MPI_Group_incl(world, 1, &right, &to);
    MPI_Win win;
    MPI_Win_create(buf, RING_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int ok = 1;
    for (int i = 0; i < RINGS; i++) {
        memset(out, 'A' + (rank + i) % 26, RING_BYTES);
        MPI_Win_post(from, 0, win);
        MPI_Win_start(to, 0, win);
        MPI_Put(out, RING_BYTES, MPI_CHAR, right, 0, RING_BYTES, MPI_CHAR, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        ok &= buf[0] == 'A' + (left + i) % 26 && buf[RING_BYTES - 1] == 'A' + (left + i) % 26;
    }
    MPI_Win_free(&win);
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
    return ok;
}

static int shared(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    int right = (rank + 1) % size;
    long *mine;
    MPI_Win win;
    MPI_Win_allocate_shared(SEGMENT * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &mine, &win);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < SEGMENT; i++)
        mine[i] = rank;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    long got[SEGMENT], two = 2, swapped = -1, expect = rank, mine_now = 100 + rank;
    MPI_Get(got, SEGMENT, MPI_LONG, right, 0, SEGMENT, MPI_LONG, win);
    MPI_Win_flush(right, win);
    int ok = got[0] == right && got[SEGMENT - 1] == right;
    MPI_Barrier(node);
    /* Each rank adds to its right neighbour's element 1 and 2, and swaps
     * its right neighbour's element 3 (which holds that rank) for 100 + rank. */
    MPI_Accumulate(&two, 1, MPI_LONG, right, 1, 1, MPI_LONG, MPI_SUM, win);
    MPI_Request req;
    MPI_Rput(&two, 1, MPI_LONG, right, 2, 1, MPI_LONG, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect = right;
    MPI_Compare_and_swap(&mine_now, &expect, &swapped, MPI_LONG, right, 3, win);
    MPI_Win_flush_all(win);
    ok &= swapped == right;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int left = (rank + size - 1) % size;
    ok &= mine[1] == rank + 2 && mine[2] == 2 && mine[3] == 100 + left;
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int h = halo(rank, size);
    int c = (int)counter(rank, size);
    int g = ring(rank, size);
    int s = shared();
    int mine[4] = {h, c, g, s}, all[4];
    MPI_Allreduce(mine, all, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_halo: ranks %d halo %d counter %d ring %d shared %d\n", size, all[0], all[1], all[2],
               all[3]);
    MPI_Finalize();
    return 0;
}
