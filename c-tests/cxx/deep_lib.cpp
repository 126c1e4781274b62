// A C++ shared library that makes MPI calls for its caller, as solver
// libraries do: exchange() passes a token between ranks 0 and 1 from a
// member function of a class template, below a chain of virtual calls.
// The profiler's call sites must name this file and the marked lines.
#include <mpi.h>

namespace solver {

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
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD); // DEEP_SEND
            MPI_Recv(&v, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // DEEP_RECV
        } else if (rank == 1) {
            MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // DEEP_RECV1
            v += 1;
            MPI_Send(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD); // DEEP_SEND1
        }
        return static_cast<int>(v);
    }
    struct Inner : Step {
        int run(int rank, int depth, int value) override;
    } next;
};

template <typename T>
int Exchange<T>::Inner::run(int rank, int depth, int value)
{
    Exchange<T> again;
    return again.run(rank, depth, value);
}

} // namespace solver

// The library's entry point, `depth` frames above the MPI calls.
int deep_exchange(int rank, int depth, int value)
{
    solver::Exchange<int> e;
    return e.run(rank, depth, value);
}
