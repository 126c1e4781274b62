/* Polling for a message from another rank, as codes that overlap work
 * with communication do: the last rank loops on MPI_Iprobe until rank 0's
 * message, sent after some compute, has arrived, then receives it. With
 * virtual ranks in several processes the two ranks run in different
 * processes, so the poller must let the other process's time advance.
 *
 * usage: vpoll [SPIN]   (default 2000000)
 * prints: vpoll: rank R got V after P polls
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long spin = argc > 1 ? atol(argv[1]) : 2000000;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        volatile double x = 1;
        for (long i = 0; i < spin; i++)
            x = x * 1.0000001 + 1e-9;
        int v = 42 + size;
        MPI_Send(&v, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD);
    } else if (rank == size - 1) {
        int flag = 0, v = 0;
        long polls = 0;
        while (!flag) {
            MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            polls++;
        }
        MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("vpoll: rank %d got %d after %s polls\n", rank, v, polls > 0 ? "some" : "no");
    }
    MPI_Finalize();
    return 0;
}
