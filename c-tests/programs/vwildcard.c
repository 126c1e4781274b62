/* A wildcard receive whose virtual order differs from the real one:
 * rank 1 sends a large message at once, rank 2 computes first, then
 * sends a small one. On a network where the large message takes longer
 * than the computation, rank 2's message arrives first in virtual time,
 * although rank 1 posted its send first in real time. Rank 0 receives
 * both with MPI_ANY_SOURCE and prints which came first, and which send
 * was posted first by the wall clock (CLOCK_MONOTONIC).
 *
 * usage: vwildcard [BYTES [SPIN]]   (default 1000000 and 100000)
 * prints: vwildcard: first_matched R first_posted_real S t_us T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int bytes = argc > 1 ? atoi(argv[1]) : 1000000;
    long spin = argc > 2 ? atol(argv[2]) : 100000;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(bytes, 1);
    double posted = 0;
    if (rank == 1) {
        posted = now_real();
        MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 2) {
        volatile double x = 1;
        for (long i = 0; i < spin; i++)
            x = x * 1.0000001 + 1e-9;
        posted = now_real();
        MPI_Send(buf, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    double when[3];
    MPI_Gather(&posted, 1, MPI_DOUBLE, when, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Status st;
        MPI_Recv(buf, bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int first = st.MPI_SOURCE;
        double t = MPI_Wtime();
        MPI_Recv(buf, bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        printf("vwildcard: first_matched %d first_posted_real %d t_us %.3f\n", first, when[1] <= when[2] ? 1 : 2,
               1e6 * t);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
