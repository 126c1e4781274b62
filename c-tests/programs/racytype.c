/* A nondeterministic bug, for the checker above replay: ranks 1 and 2
 * each send rank 0 four numbers after a random pause (up to 20 ms), rank 1 ints and
 * rank 2 floats; rank 0 receives from MPI_ANY_SOURCE, first four ints,
 * then four floats. When rank 1's message comes first the types match;
 * when rank 2's does, both receives get a message of another type
 * signature. Prints the order the messages came in. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0) fprintf(stderr, "racytype: run with 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        int ints[4];
        float floats[4];
        MPI_Status first, second;
        MPI_Recv(ints, 4, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &first); // RACY_INTS
        MPI_Recv(floats, 4, MPI_FLOAT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &second); // RACY_FLOATS
        printf("racytype: from %d then %d\n", first.MPI_SOURCE, second.MPI_SOURCE);
    } else {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        srand((unsigned)(now.tv_nsec ^ getpid()));
        usleep((useconds_t)(rand() % 20000));
        if (rank == 1) {
            int ints[4] = {1, 2, 3, 4};
            MPI_Send(ints, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
        } else {
            float floats[4] = {1, 2, 3, 4};
            MPI_Send(floats, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
