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
// usage: deep_app ab BLOCKS ROUNDS DEPTH   (the tools' cost per round, A/B)
// prints: ab_native_ns_per_round X ab_tools_ns_per_round Y
//         ab_tools_over_native_pct M q1 A q3 B   (rank 0)
//   2 x BLOCKS + 1 blocks of ROUNDS rounds, the even ones calling PMPI_
//   (native), the odd ones MPI_ (through libpnmpi and its tools): each
//   tool block against the mean of the native blocks either side of it,
//   the median and quartiles of those ratios, in % over native. Blocks a
//   few ms apart share the machine's state, which separate runs do not.
#include <mpi.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int deep_exchange(int rank, int depth, int value);
double deep_time_calls(int depth, long calls);
extern int deep_native;

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

static void ab(int rank, long blocks, int rounds, int depth)
{
    std::vector<double> secs;
    int token = 0;
    for (long b = 0; b < 2 * blocks + 1; b++) {
        deep_native = b % 2 == 0;
        double start = MPI_Wtime();
        for (int i = 0; i < rounds; i++)
            token = recurse(rank, depth, depth, token);
        secs.push_back(MPI_Wtime() - start);
    }
    deep_native = 0;
    if (rank != 0)
        return;
    std::vector<double> pct;
    double native = secs[0], tools = 0;
    for (size_t k = 1; k + 1 < secs.size(); k += 2) {
        pct.push_back(100 * (secs[k] / ((secs[k - 1] + secs[k + 1]) / 2) - 1));
        native += secs[k + 1];
        tools += secs[k];
    }
    std::sort(pct.begin(), pct.end());
    size_t n = pct.size();
    std::printf("deep_app: ab blocks %ld rounds %d depth %d token %d\n", blocks, rounds, depth, token);
    std::printf("ab_native_ns_per_round %.1f ab_tools_ns_per_round %.1f\n",
                native * 1e9 / (double(blocks + 1) * rounds), tools * 1e9 / (double(blocks) * rounds));
    std::printf("ab_tools_over_native_pct %.3f q1 %.3f q3 %.3f\n", pct[n / 2], pct[n / 4], pct[3 * n / 4]);
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
    if (argc > 4 && std::string(argv[1]) == "ab") {
        long blocks = std::atol(argv[2]);
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (blocks > 0)
            ab(me, blocks, std::atoi(argv[3]), std::atoi(argv[4]));
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
