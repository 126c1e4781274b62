// expect: none
// The window's memory is a local array of the function that frees the window.
#include <mpi.h>

__attribute__((noinline)) static void use(void) {
    int mem[8] = {0};
    MPI_Win win;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    use();
    MPI_Finalize();
    return 0;
}
