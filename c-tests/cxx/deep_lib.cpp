// A C++ shared library that makes MPI calls for its caller, as solver
// libraries do: exchange() passes a token between ranks 0 and 1 from a
// member function of a class template, below a chain of virtual calls.
// The profiler's call sites must name this file and the marked lines.
#include <mpi.h>

// Set by deep_app's A/B benchmark: while non-zero, the exchange calls
// PMPI_Send and PMPI_Recv, straight into the MPI library past every tool
// (the native arm), instead of MPI_Send and MPI_Recv.
int deep_native = 0;

namespace solver {

using SendFn = int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
using RecvFn = int (*)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);

struct Step {
    virtual ~Step() = default;
    virtual int run(int rank, int depth, int value) = 0;
};

template <typename T>
struct Exchange : Step {
    int run(int rank, int depth, int value) override
    {
        if (depth > 0)
            return next.run(rank, depth - 1, value);
        T v = static_cast<T>(value);
        if (deep_native)
            return swap<PMPI_Send, PMPI_Recv>(rank, v);
        return swap<MPI_Send, MPI_Recv>(rank, v);
    }
    // Rank 0 sends its value to rank 1, which sends it back plus one.
    template <SendFn Send, RecvFn Recv>
    static int swap(int rank, T v)
    {
        if (rank == 0) {
            Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD); // DEEP_SEND
            Recv(&v, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // DEEP_RECV
        } else if (rank == 1) {
            Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // DEEP_RECV1
            v += 1;
            Send(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD); // DEEP_SEND1
        }
        return static_cast<int>(v);
    }
    // The per-call benchmark: `depth` frames down, the fastest of 20
    // batches of MPI_Comm_rank calls, in ns per call.
    double time_calls(int depth, long calls)
    {
        if (depth > 0)
            return next.time_calls(depth - 1, calls);
        const int batches = 20;
        int rank = 0;
        long sum = 0;
        for (long i = 0; i < calls / 10; i++) {
            MPI_Comm_rank(MPI_COMM_WORLD, &rank); // DEEP_RANK_WARM
            sum += rank;
        }
        double best = -1;
        for (int b = 0; b < batches; b++) {
            double start = MPI_Wtime();
            for (long i = 0; i < calls / batches; i++) {
                MPI_Comm_rank(MPI_COMM_WORLD, &rank); // DEEP_RANK
                sum += rank;
            }
            double ns = (MPI_Wtime() - start) * 1e9 / static_cast<double>(calls / batches);
            if (best < 0 || ns < best)
                best = ns;
        }
        return sum < 0 ? -1 : best;
    }
    struct Inner : Step {
        int run(int rank, int depth, int value) override;
        double time_calls(int depth, long calls);
    } next;
};

template <typename T>
int Exchange<T>::Inner::run(int rank, int depth, int value)
{
    Exchange<T> again;
    return again.run(rank, depth, value);
}

template <typename T>
double Exchange<T>::Inner::time_calls(int depth, long calls)
{
    Exchange<T> again;
    return again.time_calls(depth, calls);
}

} // namespace solver

// The library's entry point, `depth` frames above the MPI calls.
int deep_exchange(int rank, int depth, int value)
{
    solver::Exchange<int> e;
    return e.run(rank, depth, value);
}

// The per-call benchmark's entry point: MPI_Comm_rank, timed, about
// 2 x `depth` frames below it.
double deep_time_calls(int depth, long calls)
{
    solver::Exchange<int> e;
    return e.time_calls(depth, calls);
}
