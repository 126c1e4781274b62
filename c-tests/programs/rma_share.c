/* One-sided data sharing links (tests/rma.rs): 4 ranks, two fence epochs
 * on an MPI_Win_allocate window of 3 MiB on rank 0:
 *
 * A. ranks 1, 2 and 3 each put 1 MiB into rank 0's window at once: their
 *    data converges on rank 0's link;
 * B. rank 1 alone puts 1 MiB there.
 *
 * usage: rma_share
 * prints: rma_share: rank R ok K   (K 1 when rank 0's window holds the data)
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define MIB (1024 * 1024)

static char out[MIB];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(rank == 0 ? 3 * MIB : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(out, 'a' + rank, MIB);
    MPI_Win_fence(0, win);
    if (rank > 0 && rank < 4)
        MPI_Put(out, MIB, MPI_CHAR, 0, (MPI_Aint)(rank - 1) * MIB, MIB, MPI_CHAR, win);
    MPI_Win_fence(0, win);
    int ok = rank != 0 || (base[0] == 'b' && base[MIB] == 'c' && base[3 * MIB - 1] == 'd');
    MPI_Win_fence(0, win);
    if (rank == 1)
        MPI_Put(out, MIB, MPI_CHAR, 0, 0, MIB, MPI_CHAR, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    printf("rma_share: rank %d ok %d\n", rank, ok);
    MPI_Finalize();
    return 0;
}
