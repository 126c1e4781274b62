/* Messages a rank sends to itself, among messages to its neighbours: the
 * SimGrid cross-check (tests/sim_simgrid.rs) checks that both simulators
 * charge a message to self as a copy in memory.
 *
 * Each iteration: an imbalanced compute burst; MPI_Irecv and MPI_Isend to
 * self and to the ring's next rank, MPI_Waitall; MPI_Sendrecv with self;
 * an eager MPI_Send to self received by MPI_Recv; every 5 iterations an
 * MPI_Allreduce.
 *
 * usage: selfsend BYTES ITERATIONS     prints: selfsend: rank R sum S
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double spin(int us)
{
    double t0 = MPI_Wtime(), x = 1;
    while ((MPI_Wtime() - t0) * 1e6 < us)
        x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 100000;
    int iterations = argc > 2 ? atoi(argv[2]) : 20;
    char *out = malloc(bytes + 1), *in = malloc(bytes + 1), *self = malloc(bytes + 1);
    char small_out[64], small_in[64];
    memset(out, rank + 1, bytes);
    long sum = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int it = 0; it < iterations; it++) {
        spin(50 + 30 * rank);
        MPI_Request r[4];
        MPI_Irecv(self, bytes, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(in, bytes, MPI_CHAR, prev, 2, MPI_COMM_WORLD, &r[1]);
        MPI_Isend(out, bytes, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &r[2]);
        MPI_Isend(out, bytes, MPI_CHAR, next, 2, MPI_COMM_WORLD, &r[3]);
        MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        sum += self[bytes / 2] + in[0];
        MPI_Sendrecv(out, bytes, MPI_CHAR, rank, 3, self, bytes, MPI_CHAR, rank, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        memset(small_out, it, sizeof small_out);
        MPI_Send(small_out, sizeof small_out, MPI_CHAR, rank, 4, MPI_COMM_WORLD);
        MPI_Recv(small_in, sizeof small_in, MPI_CHAR, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += small_in[0];
        if (it % 5 == 4) {
            long total;
            MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            sum = total % 1000003;
        }
    }
    printf("selfsend: rank %d sum %ld\n", rank, sum);
    free(out);
    free(in);
    free(self);
    MPI_Finalize();
    return 0;
}
