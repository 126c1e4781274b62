/* An algorithmic collective and point-to-point traffic in flight at the
 * same time, for the contention models: the even ranks run allreduces of
 * 64 KiB on their own communicator while the odd ranks swap 1 MiB with
 * the next odd rank, every iteration; then all meet at a barrier. Under a
 * model whose resources the messages share (one bus, a link into and out
 * of each node), the collective's messages and the swaps slow each other
 * down, in the replay of the trace as under virtual ranks.
 *
 * usage: collshare [iterations]   (default 4)
 * prints, per rank after its last call: collshare: rank R end_s T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double start = MPI_Wtime();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 4;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    const int doubles = 8192, swap = 1 << 20;
    double *in = calloc(doubles, sizeof *in), *out = calloc(doubles, sizeof *out);
    char *sbuf = calloc(swap, 1), *rbuf = calloc(swap, 1);
    for (int i = 0; i < iters; i++) {
        if (rank % 2 == 0) {
            in[0] = rank + i;
            MPI_Allreduce(in, out, doubles, MPI_DOUBLE, MPI_SUM, half);
        } else if (hsize > 1) {
            MPI_Request r[2];
            int to = (hrank + 1) % hsize, from = (hrank + hsize - 1) % hsize;
            MPI_Irecv(rbuf, swap, MPI_CHAR, from, i, half, &r[0]);
            MPI_Isend(sbuf, swap, MPI_CHAR, to, i, half, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("collshare: rank %d end_s %.17g\n", rank, MPI_Wtime() - start);
    free(in);
    free(out);
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
