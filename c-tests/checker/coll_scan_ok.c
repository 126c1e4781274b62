// expect: none
// Every rank computes the same prefix sums, inclusive and exclusive.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y = 0, z = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return y == rank + 1 ? 0 : 1;
}
