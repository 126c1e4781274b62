// expect: none
// Datatypes of the variables' own C types: unsigned, enum as MPI_INT,
// addresses as MPI_AINT, a struct's bytes as MPI_BYTE, a bool.
#include <mpi.h>
#include <stdbool.h>

enum colour { RED, GREEN, BLUE };

int main(int argc, char **argv) {
    int rank;
    unsigned u[2] = {1, 2};
    enum colour col[2] = {GREEN, BLUE};
    MPI_Aint where[2] = {0, 0};
    struct { int n; double x; } s = {3, 4.0};
    bool flags[3] = {true, false, true};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_address(&s.n, &where[0]);
    MPI_Get_address(&s.x, &where[1]);
    int peer = 1 - rank;
    if (rank < 2) {
        MPI_Sendrecv_replace(u, 2, MPI_UNSIGNED, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(col, 2, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(where, 2, MPI_AINT, peer, 2, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(&s, sizeof s, MPI_BYTE, peer, 3, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv_replace(flags, 3, MPI_C_BOOL, peer, 4, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return (int)u[0] - 1 + (col[0] == GREEN ? 0 : 1) + (s.n - 3);
}
