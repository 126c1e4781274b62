/* One-sided operations through derived and pair datatypes, whose data
 * must arrive as the native MPI delivers it (tests/kernel.rs runs it
 * natively, as virtual ranks in one process and spread over two):
 *
 * 1. a strided put: each rank puts 8 doubles into every other slot of its
 *    right neighbour's window (target type MPI_Type_vector(8, 1, 2));
 * 2. a strided MPI_Rget of its left neighbour's odd slots, waited for,
 *    and an MPI_Get_accumulate (MPI_SUM) of 1.0 into 8 slots of its right
 *    neighbour's, which fetches what was there;
 * 3. MPI_MAXLOC of each rank's (rank, rank) MPI_DOUBLE_INT pair into rank
 *    0's pair, through MPI_Accumulate on a window over a static array.
 * Each part is a fence epoch; the data is checked after each.
 *
 * usage: rma_types
 * prints: rma_types: rank R end_s T ok K   (MPI_Wtime at the end; K 1
 *         when every check held)
 */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 64

struct pair {
    double v;
    int i;
};

static struct pair best[4];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int ok = 1;

    double *w;
    MPI_Win win;
    MPI_Win_allocate(SLOTS * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win);
    for (int i = 0; i < SLOTS; i++)
        w[i] = rank * 100 + i;
    MPI_Datatype every_other;
    MPI_Type_vector(8, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);

    /* 1. a strided put */
    double out[8];
    for (int k = 0; k < 8; k++)
        out[k] = 1000 * rank + k;
    MPI_Win_fence(0, win);
    MPI_Put(out, 8, MPI_DOUBLE, right, 0, 1, every_other, win);
    MPI_Win_fence(0, win);
    for (int k = 0; k < 8; k++)
        ok &= w[2 * k] == 1000 * left + k && w[2 * k + 1] == rank * 100 + 2 * k + 1;

    /* 2. a strided get, and a fetching accumulate */
    double got[8], before[8], ones[8];
    for (int k = 0; k < 8; k++)
        ones[k] = 1.0;
    MPI_Request req;
    MPI_Rget(got, 8, MPI_DOUBLE, left, 1, 1, every_other, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Get_accumulate(ones, 8, MPI_DOUBLE, before, 8, MPI_DOUBLE, right, 32, 8, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int k = 0; k < 8; k++) {
        ok &= got[k] == left * 100 + 2 * k + 1;
        ok &= before[k] == right * 100 + 32 + k;
        ok &= w[32 + k] == rank * 100 + 32 + k + 1;
    }

    /* 3. MPI_MAXLOC of pairs */
    best[0].v = -1.0;
    best[0].i = -1;
    MPI_Win pairs;
    MPI_Win_create(best, sizeof best, sizeof best[0], MPI_INFO_NULL, MPI_COMM_WORLD, &pairs);
    struct pair mine = {(double)rank, rank};
    MPI_Win_fence(0, pairs);
    MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC, pairs);
    MPI_Win_fence(0, pairs);
    if (rank == 0)
        ok &= best[0].v == size - 1 && best[0].i == size - 1;

    MPI_Win_free(&pairs);
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    printf("rma_types: rank %d end_s %.9f ok %d\n", rank, MPI_Wtime(), ok);
    MPI_Finalize();
    return 0;
}
