// A C++ application whose MPI calls come from its own shared library
// (deep_lib.cpp), with 30 and more frames of its own recursion above:
// the profiler must still find each call site, in constant time.
//
// usage: deep_app [ROUNDS [DEPTH]]   (default 100 30)
// prints: deep_app: rounds R depth D token T
#include <mpi.h>
#include <cstdio>
#include <cstdlib>

int deep_exchange(int rank, int depth, int value);

static int recurse(int rank, int frames, int depth, int value)
{
    if (frames == 0)
        return deep_exchange(rank, depth, value);
    return recurse(rank, frames - 1, depth, value) + 0 * frames;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
    int depth = argc > 2 ? std::atoi(argv[2]) : 30;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int token = 0;
    for (int i = 0; i < rounds; i++)
        token = recurse(rank, depth, depth, token);
    if (rank == 0)
        std::printf("deep_app: rounds %d depth %d token %d\n", rounds, depth, token);
    MPI_Finalize();
    return 0;
}
