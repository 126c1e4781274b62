/* The tracer's completeness check: 4 ranks make a known set of calls, so
 * that tests/tracer.rs can check that the merged trace holds every call
 * once with the right routine, peer, tag, bytes and communicator.
 *
 * Per rank r (of 4), in this order:
 *   MPI_Init, MPI_Comm_rank, MPI_Comm_size
 *   ring: MPI_Irecv from r-1 and MPI_Isend to r+1 (tag 10, 100 ints), MPI_Waitall
 *   rank 0: 3 x MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) of up to 4 doubles;
 *   ranks 1-3: MPI_Send to 0 of r doubles, tag 20 + r
 *   rank 1: MPI_Irecv(MPI_ANY_SOURCE, tag 30) of 1 int, MPI_Wait with
 *   MPI_STATUS_IGNORE; rank 2: MPI_Send of 1 int to 1, tag 30
 *   MPI_Comm_split (color r % 2, key r): {0, 2} and {1, 3}
 *   on the split: MPI_Allreduce of 1 double, MPI_Bcast of 16 ints from
 *   its rank 0, MPI_Barrier; then MPI_Comm_free
 *   MPI_Barrier, MPI_Reduce of 2 ints to rank 3, MPI_Iallreduce of 1 int
 *   and MPI_Wait on MPI_COMM_WORLD
 *   MPI_Finalize
 * Rank 0 prints "tracecheck: ok" when every result is right.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "tracecheck: needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    int out[100], in[100];
    for (int i = 0; i < 100; i++)
        out[i] = rank * 1000 + i;
    MPI_Request ring[2];
    MPI_Irecv(in, 100, MPI_INT, (rank + 3) % 4, 10, MPI_COMM_WORLD, &ring[0]);
    MPI_Isend(out, 100, MPI_INT, (rank + 1) % 4, 10, MPI_COMM_WORLD, &ring[1]);
    MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);
    bad |= in[99] != ((rank + 3) % 4) * 1000 + 99;

    double d[4] = {0};
    if (rank == 0) {
        int seen = 0;
        for (int i = 0; i < 3; i++) {
            MPI_Status st;
            MPI_Recv(d, 4, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            bad |= st.MPI_TAG != 20 + st.MPI_SOURCE;
            seen |= 1 << st.MPI_SOURCE;
        }
        bad |= seen != 0xe;
    } else {
        MPI_Send(d, rank, MPI_DOUBLE, 0, 20 + rank, MPI_COMM_WORLD);
    }
    int one = 7;
    if (rank == 1) {
        MPI_Request req;
        MPI_Irecv(&one, 1, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        bad |= one != 42;
    } else if (rank == 2) {
        one = 42;
        MPI_Send(&one, 1, MPI_INT, 1, 30, MPI_COMM_WORLD);
    }

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    double x = rank, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, half);
    bad |= sum != (rank % 2 ? 4.0 : 2.0);
    int b[16];
    for (int i = 0; i < 16; i++)
        b[i] = rank < 2 ? 5 : 0;
    MPI_Bcast(b, 16, MPI_INT, 0, half);
    bad |= b[15] != 5;
    MPI_Barrier(half);
    MPI_Comm_free(&half);

    MPI_Barrier(MPI_COMM_WORLD);
    int two[2] = {rank, 1}, total[2] = {0, 0};
    MPI_Reduce(two, total, 2, MPI_INT, MPI_SUM, 3, MPI_COMM_WORLD);
    if (rank == 3)
        bad |= total[0] != 6 || total[1] != 4;
    int y = 1, ysum = 0;
    MPI_Request ireq;
    MPI_Iallreduce(&y, &ysum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ireq);
    MPI_Wait(&ireq, MPI_STATUS_IGNORE);
    bad |= ysum != 4;

    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("tracecheck: %s\n", anybad ? "WRONG RESULTS" : "ok");
    MPI_Finalize();
    return anybad;
}
