// expect: p2p
// Rank 0 sends 2 doubles; rank 1 matches the message with MPI_Mprobe and
// receives it with MPI_Mrecv as 4 ints (as many bytes).
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, i[4];
    double d[2] = {1.0, 2.0};
    MPI_Message m;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        MPI_Mrecv(i, 4, MPI_INT, &m, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
