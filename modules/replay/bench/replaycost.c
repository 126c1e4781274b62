/* The replay module's cost per recorded call, for callgrind: one rank
 * messages itself, N rounds of four recorded calls (a wildcard MPI_Recv,
 * a failed MPI_Iprobe, two MPI_Waitany) and five others.
 * usage: replaycost N    prints: replaycost: rounds N recorded 4N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, v, w, flag, k;
    MPI_Request s, r[2];
    MPI_Status st;
    for (int i = 0; i < n; i++) {
        MPI_Isend(&i, 1, MPI_INT, 0, i % 100, MPI_COMM_WORLD, &s);
        MPI_Iprobe(MPI_ANY_SOURCE, 1000, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&i, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[1]);
        MPI_Waitany(2, r, &k, &st);
        MPI_Waitany(2, r, &k, &st);
    }
    printf("replaycost: rounds %d recorded %d\n", n, 4 * n);
    MPI_Finalize();
    return 0;
}
