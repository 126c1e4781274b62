// A C++ application whose MPI calls come from its own shared library
// (deep_lib.cpp), with 30 and more frames of its own recursion above:
// the profiler must still find each call site, in constant time.
//
// usage: deep_app [ROUNDS [DEPTH]]   (default 100 30)
// prints: deep_app: rounds R depth D token T
//         loop_ns_per_round X   (rank 0's loop, MPI_Wtime)
// usage: deep_app bench CALLS DEPTH   (the per-call benchmark, on each rank)
// prints: ns_per_call X   (rank 0; the fastest of 20 batches of
//         MPI_Comm_rank calls made DEPTH frames of the application's and
//         about 2 x DEPTH of the library's below main)
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <string>

int deep_exchange(int rank, int depth, int value);
double deep_time_calls(int depth, long calls);

static double bench(int frames, int depth, long calls)
{
    if (frames == 0)
        return deep_time_calls(depth, calls);
    return bench(frames - 1, depth, calls) + 0 * frames;
}

static int recurse(int rank, int frames, int depth, int value)
{
    if (frames == 0)
        return deep_exchange(rank, depth, value);
    return recurse(rank, frames - 1, depth, value) + 0 * frames;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 3 && std::string(argv[1]) == "bench") {
        long calls = std::atol(argv[2]);
        int depth = std::atoi(argv[3]);
        double ns = bench(depth, depth, calls);
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me == 0)
            std::printf("ns_per_call %.3f\n", ns);
        MPI_Finalize();
        return 0;
    }
    int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
    int depth = argc > 2 ? std::atoi(argv[2]) : 30;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int token = 0;
    double start = MPI_Wtime();
    for (int i = 0; i < rounds; i++)
        token = recurse(rank, depth, depth, token);
    double ns = (MPI_Wtime() - start) * 1e9 / (rounds > 0 ? rounds : 1);
    if (rank == 0) {
        std::printf("deep_app: rounds %d depth %d token %d\n", rounds, depth, token);
        std::printf("loop_ns_per_round %.1f\n", ns);
    }
    MPI_Finalize();
    return 0;
}
