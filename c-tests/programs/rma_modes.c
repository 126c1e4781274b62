/* One-sided programs whose every part must end alike under vtime, under
 * virtual ranks and in the replay of their traces (tests/kernel.rs):
 *
 * 1. halo: an MPI_Win_allocate window of two 64 KiB halves; 5 fence
 *    epochs, in each of which every rank puts 64 KiB into each
 *    neighbour's window (its right neighbour's low half, its left's high
 *    half);
 * 2. ring: a PSCW ring over a static buffer (a window in the program's
 *    globals): each rank exposes its window to its left neighbour and
 *    puts 4 KiB into its right neighbour's, 3 times;
 * 3. counter: rank 0's static long; every other rank adds 1 to it 10
 *    times with MPI_Fetch_and_op, each under an exclusive lock (rank 0
 *    takes none, so every hand-over costs the same whatever the order the
 *    run grants them in), then a barrier;
 * 4. shared: an MPI_Win_allocate_shared window of 64 longs a rank over the
 *    node's ranks (MPI_Comm_split_type), under MPI_Win_lock_all: each rank
 *    stores into its own segment, then (after MPI_Win_sync and a barrier)
 *    loads its right neighbour's through MPI_Win_shared_query's pointer,
 *    gets one long of it with MPI_Get and flushes;
 * 5. dynamic: an MPI_Win_create_dynamic window; each rank attaches a
 *    buffer, all-gathers the addresses (MPI_Get_address), and in a fence
 *    epoch puts 1 KiB at its right neighbour's address and accumulates
 *    into its left neighbour's first long; then detaches.
 *
 * usage: rma_modes
 * prints: rma_modes: rank R part P t T   (MPI_Wtime after each part's
 *         window is freed)
 *         rma_modes: rank R end_s T ok K (K 1 when every check held)
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define HALF (64 * 1024)
#define RING 4096
#define COUNTS 10
#define SHARED 64

static char ring_in[RING], ring_out[RING];
static long counter;

static void part(int rank, const char *name)
{
    printf("rma_modes: rank %d part %s t %.9f\n", rank, name, MPI_Wtime());
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int ok = 1;

    /* 1. halo */
    static char out[HALF];
    char *base;
    MPI_Win win;
    MPI_Win_allocate(2 * HALF, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int e = 0; e < 5; e++) {
        memset(out, 'a' + (rank + e) % 26, HALF);
        MPI_Win_fence(0, win);
        MPI_Put(out, HALF, MPI_CHAR, right, 0, HALF, MPI_CHAR, win);
        MPI_Put(out, HALF, MPI_CHAR, left, HALF, HALF, MPI_CHAR, win);
        MPI_Win_fence(0, win);
        ok &= base[0] == 'a' + (left + e) % 26 && base[2 * HALF - 1] == 'a' + (right + e) % 26;
    }
    MPI_Win_free(&win);
    part(rank, "halo");

    /* 2. ring */
    MPI_Win rwin;
    MPI_Win_create(ring_in, RING, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &rwin);
    MPI_Group world, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &lg);
    MPI_Group_incl(world, 1, &right, &rg);
    for (int e = 0; e < 3; e++) {
        memset(ring_out, 'A' + (rank + e) % 26, RING);
        MPI_Win_post(lg, 0, rwin);
        MPI_Win_start(rg, 0, rwin);
        MPI_Put(ring_out, RING, MPI_CHAR, right, 0, RING, MPI_CHAR, rwin);
        MPI_Win_complete(rwin);
        MPI_Win_wait(rwin);
        ok &= ring_in[0] == 'A' + (left + e) % 26 && ring_in[RING - 1] == 'A' + (left + e) % 26;
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&world);
    MPI_Win_free(&rwin);
    part(rank, "ring");

    /* 3. counter */
    MPI_Win cwin;
    MPI_Win_create(&counter, rank == 0 ? sizeof counter : 0, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &cwin);
    long one = 1, old = -1;
    if (rank != 0)
        for (int i = 0; i < COUNTS; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cwin);
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, cwin);
            MPI_Win_unlock(0, cwin);
            ok &= old >= 0 && old < (long)COUNTS * (size - 1);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cwin);
        ok &= counter == (long)COUNTS * (size - 1);
        MPI_Win_unlock(0, cwin);
    }
    MPI_Win_free(&cwin);
    part(rank, "counter");

    /* 4. shared */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    long *mine;
    MPI_Win swin;
    MPI_Win_allocate_shared(SHARED * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &mine, &swin);
    MPI_Win_lock_all(0, swin);
    for (int i = 0; i < SHARED; i++)
        mine[i] = 1000 * nrank + i;
    MPI_Win_sync(swin);
    MPI_Barrier(node);
    MPI_Win_sync(swin);
    int nright = (nrank + 1) % nsize;
    MPI_Aint bytes;
    int unit;
    long *theirs;
    MPI_Win_shared_query(swin, nright, &bytes, &unit, &theirs);
    ok &= bytes == SHARED * (MPI_Aint)sizeof(long) && unit == sizeof(long) && theirs[SHARED - 1] == 1000 * nright + SHARED - 1;
    long got = -1;
    MPI_Get(&got, 1, MPI_LONG, nright, 7, 1, MPI_LONG, swin);
    MPI_Win_flush(nright, swin);
    ok &= got == 1000 * nright + 7;
    MPI_Win_unlock_all(swin);
    MPI_Win_free(&swin);
    MPI_Comm_free(&node);
    part(rank, "shared");

    /* 5. dynamic */
    static long dyn[1 + 1024 / sizeof(long)];
    static long dout[1024 / sizeof(long)];
    MPI_Win dwin;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dwin);
    MPI_Win_attach(dwin, dyn, sizeof dyn);
    MPI_Aint mine_at, at[64];
    MPI_Get_address(dyn, &mine_at);
    MPI_Allgather(&mine_at, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int i = 0; i < (int)(sizeof dout / sizeof(long)); i++)
        dout[i] = 100 * rank + i;
    long add = rank + 1;
    MPI_Win_fence(0, dwin);
    MPI_Put(dout, sizeof dout / sizeof(long), MPI_LONG, right, at[right] + (MPI_Aint)sizeof(long),
            sizeof dout / sizeof(long), MPI_LONG, dwin);
    MPI_Accumulate(&add, 1, MPI_LONG, left, at[left], 1, MPI_LONG, MPI_SUM, dwin);
    MPI_Win_fence(0, dwin);
    ok &= dyn[0] == right + 1 && dyn[1] == 100 * left && dyn[128] == 100 * left + 127;
    MPI_Win_detach(dwin, dyn);
    MPI_Win_free(&dwin);
    part(rank, "dynamic");

    printf("rma_modes: rank %d end_s %.9f ok %d\n", rank, MPI_Wtime(), ok);
    MPI_Finalize();
    return 0;
}
