// expect: p2p
// Rank 0 sends 2 doubles; rank 1 receives 4 ints (as many bytes), both
// through MPI 4's large-count routines where the MPI has them
// (MPI_Isend_c, MPI_Recv_c; MPICH 4), else the int ones.
#include <mpi.h>

#if MPI_VERSION >= 4
#define ISEND MPI_Isend_c
#define RECV MPI_Recv_c
#else
#define ISEND MPI_Isend
#define RECV MPI_Recv
#endif

int main(int argc, char **argv) {
    int rank, i[4];
    double d[2] = {1.0, 2.0};
    MPI_Request q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        ISEND(d, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    if (rank == 1)
        RECV(i, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
