// expect: none
// Buffers that fit their variables: a whole array, the second half of
// one, a struct member, a char array as storage for doubles, a global
// array gathered into at the root.
#include <mpi.h>

struct cell { int id; double v[2]; };
static double gathered[64];

int main(int argc, char **argv) {
    int rank, size, counts[4] = {1, 2, 3, 4};
    struct cell c = {7, {1.5, 2.5}};
    char raw[2 * sizeof(double)];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        MPI_Send(counts, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Send(&counts[2], 2, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Send(c.v, 2, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(counts, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&counts[2], 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(raw, 2, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (size <= 32)
        MPI_Gather(c.v, 2, MPI_DOUBLE, gathered, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return counts[0] - 1 + raw[0] * 0;
}
