// expect: rma
// The window's memory is a local array of a function that returns before the window is freed.
#include <mpi.h>

// Not inlined: its frame is gone once it returns (inlined at -O2, the
// array would live in main's frame, still alive at MPI_Win_free).
__attribute__((noinline)) static void create(MPI_Win *win) {
    int mem[8] = {0};
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, win);
}

int main(int argc, char **argv) {
    MPI_Win win;
    MPI_Init(&argc, &argv);
    create(&win);
    MPI_Win_free(&win); // reported
    MPI_Finalize();
    return 0;
}
