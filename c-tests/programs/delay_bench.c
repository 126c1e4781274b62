/* Times 0-byte ping-pongs between ranks 0 and 1 and prints the one-way
 * latency, for the delay layer (paper section 5.4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, iterations = argc > 1 ? atoi(argv[1]) : 200;
    char byte;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int warm = 0; warm < 2; warm++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (int i = 0; i < iterations; i++) {
            if (rank == 0) {
                MPI_Send(&byte, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&byte, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(&byte, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&byte, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double elapsed = MPI_Wtime() - start;
        if (warm == 1 && rank == 0)
            printf("delay: one_way_us %.3f\n", elapsed / iterations / 2 * 1e6);
    }
    MPI_Finalize();
    return 0;
}
