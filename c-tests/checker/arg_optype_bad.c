// expect: argument
// MPI_PROD on C booleans, which only the logical operations reduce.
#include <mpi.h>
#include <stdbool.h>

int main(int argc, char **argv) {
    bool mine = true, all = false;
    MPI_Init(&argc, &argv);
    MPI_Allreduce(&mine, &all, 1, MPI_C_BOOL, MPI_PROD, MPI_COMM_WORLD); // reported
    MPI_Finalize();
    return 0;
}
