/* A ring halo exchange with imbalanced compute, as bulk-synchronous codes
 * do it: each step rank r computes (1 + r/4) units, posts a receive from
 * each neighbour, sends to each (MPI_Irecv, MPI_Irecv, MPI_Isend,
 * MPI_Isend, MPI_Waitall), and optionally joins an MPI_Allreduce every
 * step and an MPI_Bcast on a split communicator every 10 steps. The
 * SimGrid cross-check traces it at message sizes on both sides of the
 * eager threshold.
 *
 * usage: halo BYTES [STEPS [UNIT_US [COLLECTIVES]]]   (default 10 100 0)
 * prints: halo: ranks R bytes B steps S checksum C
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fixed amount of work, as a real code's compute is: `us` units of 600
 * dependent floating-point steps (about a microsecond on a current core).
 * Not a loop on MPI_Wtime, which under a virtual clock would make the
 * compute depend on what each MPI_Wtime call costs. */
static double spin(double us, double x)
{
    long steps = (long)(us * 600.0);
    for (long i = 0; i < steps; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: halo BYTES [STEPS [UNIT_US [COLLECTIVES]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = strtoull(argv[1], NULL, 10);
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    double unit = argc > 3 ? atof(argv[3]) : 100.0;
    int collectives = argc > 4 ? atoi(argv[4]) : 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    char *out = malloc(bytes + 1), *in_l = malloc(bytes + 1), *in_r = malloc(bytes + 1);
    memset(out, rank + 1, bytes + 1);
    double x = rank, sum = 0;
    long checksum = 0;
    for (int s = 0; s < steps; s++) {
        x = spin(unit * (1.0 + rank / 4.0), x);
        MPI_Request req[4];
        MPI_Irecv(in_l, (int)bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in_r, (int)bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(out, (int)bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(out, (int)bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        if (bytes > 0)
            checksum += in_l[0] + in_r[bytes - 1];
        if (collectives) {
            double mine = (double)checksum, all;
            MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            sum += all;
            if (s % 10 == 0)
                MPI_Bcast(out, (int)bytes, MPI_BYTE, 0, half);
        }
    }
    long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("halo: ranks %d bytes %zu steps %d checksum %ld (%g %g)\n", size, bytes, steps, total, sum, x > 0 ? 1.0 : 0.0);
    MPI_Comm_free(&half);
    free(out);
    free(in_l);
    free(in_r);
    MPI_Finalize();
    return 0;
}
