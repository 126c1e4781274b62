// expect: none
// hpcc's Latency-Bandwidth controller: rank 0 sends rank 1 an empty
// message (tag 102), then both broadcast; rank 1 receives the message
// after the broadcast. Rank 0's send completes before its receive is
// posted only because MPI buffers it, which every MPI does for a message
// this small (at most the portable eager limit, 4040 bytes): not
// reported under the default `sends eager`, reported as a potential
// deadlock under `sends synchronous` (tests/checker.rs).
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, go = 0, n = 7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Send(&go, 0, MPI_INT, 1, 102, MPI_COMM_WORLD);
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Recv(&go, 0, MPI_INT, 0, 102, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return n == 7 ? 0 : 1;
}
