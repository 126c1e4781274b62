// expect: argument
// A struct datatype whose displacements add up the members' sizes: its double lies at byte 5.
#include <mpi.h>

struct S {
    int i;
    char c;
    double d;
};

int main(int argc, char **argv) {
    int rank, lengths[3] = {1, 1, 1};
    MPI_Aint displs[3] = {0, sizeof(int), sizeof(int) + sizeof(char)};
    MPI_Datatype types[3] = {MPI_INT, MPI_CHAR, MPI_DOUBLE}, t;
    struct S s = {1, 'a', 2.0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_create_struct(3, lengths, displs, types, &t);
    MPI_Type_commit(&t); // reported
    if (rank == 0)
        MPI_Send(&s, 1, t, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&s, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
