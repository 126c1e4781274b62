// expect: none
// The same exchange with MPI_Sendrecv.
#include <mpi.h>

#define N 1024

int main(int argc, char **argv) {
    int rank, size;
    static double x[N], y[N];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(x, N, MPI_DOUBLE, (rank + 1) % size, 0, y, N, MPI_DOUBLE, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
