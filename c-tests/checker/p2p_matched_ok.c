// expect: none
// Rank 0 sends 2 doubles, then 4 ints, then 2 doubles (16 bytes each,
// one tag); rank 1 receives the first with MPI_Mprobe and MPI_Mrecv, the
// second with MPI_Recv, the third with MPI_Improbe and MPI_Imrecv, each
// as what it is.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, flag = 0, i[4] = {1, 2, 3, 4};
    double d[2] = {1.0, 2.0};
    MPI_Message m;
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Send(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
        MPI_Send(i, 4, MPI_INT, 1, 7, MPI_COMM_WORLD);
        MPI_Send(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
    }
    if (rank == 1) {
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        MPI_Mrecv(d, 2, MPI_DOUBLE, &m, MPI_STATUS_IGNORE);
        MPI_Recv(i, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        while (!flag)
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
        MPI_Imrecv(d, 2, MPI_DOUBLE, &m, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
