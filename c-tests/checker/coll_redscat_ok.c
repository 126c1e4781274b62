// expect: none
// Every rank reduce-scatters with MPI_SUM, by blocks and by counts.
#include <mpi.h>

int main(int argc, char **argv) {
    int size, x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {0}, counts[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 8; i++)
        counts[i] = 1;
    MPI_Reduce_scatter_block(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (size <= 8)
        MPI_Reduce_scatter(x, y, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
