// expect: none
// MPI_LAND on C booleans.
#include <mpi.h>
#include <stdbool.h>

int main(int argc, char **argv) {
    bool mine = true, all = false;
    MPI_Init(&argc, &argv);
    MPI_Allreduce(&mine, &all, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 0 : 1;
}
