// expect: none
// Rank 0 sends 2 doubles, then 4 ints (16 bytes each, one tag); rank 1
// receives each as what it is, through MPI 4's large-count routines
// where the MPI has them (MPI_Send_c, MPI_Irecv_c, MPI_Mprobe and
// MPI_Mrecv_c; MPICH 4), else the int ones.
#include <mpi.h>

#if MPI_VERSION >= 4
#define SEND MPI_Send_c
#define IRECV MPI_Irecv_c
#define MRECV MPI_Mrecv_c
#else
#define SEND MPI_Send
#define IRECV MPI_Irecv
#define MRECV MPI_Mrecv
#endif

int main(int argc, char **argv) {
    int rank, i[4] = {1, 2, 3, 4};
    double d[2] = {1.0, 2.0};
    MPI_Request q;
    MPI_Message m;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        SEND(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
        SEND(i, 4, MPI_INT, 1, 7, MPI_COMM_WORLD);
    }
    if (rank == 1) {
        IRECV(d, 2, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
        MRECV(i, 4, MPI_INT, &m, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
