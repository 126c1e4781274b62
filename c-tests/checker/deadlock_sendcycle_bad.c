// expect: deadlock
// Every rank sends to the next, then receives: it completes only if MPI
// buffers the standard sends (a potential deadlock). The messages are of
// 8192 bytes, above the portable eager limit (4040 bytes: Open MPI's
// shared memory sends no more eagerly), so whether it completes depends
// on the MPI: natively it hangs under Open MPI 4.1 and completes under
// MPICH 4.0 (ch4:ucx buffers up to 8255 bytes). Small messages are
// buffered by every MPI: the checker does not report them (sends eager).
#include <mpi.h>

#define N 1024

int main(int argc, char **argv) {
    int rank, size;
    static double x[N], y[N];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Send(x, N, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD);
    MPI_Recv(y, N, MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
