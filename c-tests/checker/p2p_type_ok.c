// expect: none
// Rank 0 sends a struct {int; double} x 2; rank 1 receives int, double,
// int, double through another struct type: the same type signature.
#include <mpi.h>
#include <stddef.h>

struct rec { int i; double d; };

int main(int argc, char **argv) {
    int rank;
    struct rec r[2] = {{1, 1.0}, {2, 2.0}};
    MPI_Datatype rt;
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_create_struct(2, lens, disp, types, &rt);
    MPI_Type_commit(&rt);
    if (rank == 0)
        MPI_Send(r, 2, rt, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Request q;
        MPI_Irecv(r, 2, rt, 0, 0, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&rt);
    MPI_Finalize();
    return 0;
}
