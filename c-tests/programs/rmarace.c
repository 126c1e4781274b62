/* One-sided reads whose values the timing decides, and control flow that
 * follows them, as a lock-based counter or queue does (mpi4py's
 * util.sync). Every rank but 0 takes a ticket from a counter on rank 0
 * (MPI_Fetch_and_op under a shared lock) after a random pause, and sends
 * it to rank 0. Rank 0 polls: each round it reads the counter (MPI_Get
 * under a shared lock) and tests its wildcard receives (MPI_Testall),
 * until every rank took its ticket; then it waits for them. Then each
 * rank but 0 swaps its rank into a slot of rank 0's window
 * (MPI_Compare_and_swap, the first one in wins) and a 2-element
 * MPI_Get_accumulate with MPI_NO_OP reads the slot and the counter.
 *
 * It prints, per rank, its ticket and what it read, and rank 0 the order
 * of arrivals, so the output changes from run to run; the number of
 * rank 0's polls changes too, and so does its count of failed tests.
 *
 * usage: rmarace [PAUSE_US]   (default 2000: the largest random pause) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pause = argc > 1 ? atoi(argv[1]) : 2000;
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[0] = 0;  /* the counter */
    mem[1] = -1; /* the slot */
    MPI_Barrier(MPI_COMM_WORLD);
    srand((unsigned)(time(NULL) ^ (getpid() << 8)));
    int ticket = -1;
    if (rank == 0) {
        MPI_Request *reqs = malloc((size_t)(size - 1) * sizeof *reqs);
        int *got = malloc((size_t)(size - 1) * sizeof *got);
        for (int i = 0; i < size - 1; i++)
            MPI_Irecv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &reqs[i]);
        int seen = 0;
        int polls = 0, flag = 0;
        while (seen < size - 1) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(&seen, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
            MPI_Testall(size - 1, reqs, &flag, MPI_STATUSES_IGNORE);
            polls++;
        }
        if (!flag)
            MPI_Waitall(size - 1, reqs, MPI_STATUSES_IGNORE);
        printf("rmarace: rank 0 polls %d arrivals", polls);
        for (int i = 0; i < size - 1; i++)
            printf(" %d", got[i]);
        printf("\n");
        free(reqs);
        free(got);
    } else {
        usleep((useconds_t)(rand() % (pause + 1)));
        int one = 1;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Fetch_and_op(&one, &ticket, MPI_INT, 0, 0, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        MPI_Send(&ticket, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    usleep((useconds_t)(rand() % (pause + 1)));
    int me = rank, empty = -1, old = -2, both[2] = {-3, -3}, none[2] = {0, 0};
    /* Atomics on int, as mpi4py's util.sync uses: Open MPI 4.1.4's osc rdma
     * crashes in an 8-byte MPI_Compare_and_swap over vader (its emulated
     * compare-and-swap), a 4-byte one works. Not from rank 0 to itself. */
    if (rank != 0) {
        MPI_Win_lock_all(0, win);
        MPI_Compare_and_swap(&me, &empty, &old, MPI_INT, 0, 1, win);
        MPI_Win_flush(0, win);
        MPI_Get_accumulate(none, 2, MPI_INT, both, 2, MPI_INT, 0, 0, 2, MPI_INT, MPI_NO_OP, win);
        MPI_Win_unlock_all(win);
    }
    printf("rmarace: rank %d ticket %d swapped %d read %d %d\n", rank, ticket, old, both[0], both[1]);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
