// expect: argument
// A struct datatype whose displacements add up the members' sizes (the
// double at byte 4), where C aligns it at byte 8.
#include <mpi.h>

struct particle { int id; double mass; };

int main(int argc, char **argv) {
    int rank;
    struct particle p[3];
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_create_struct(2, lens, disps, types, &t);
    MPI_Type_commit(&t);
    for (int i = 0; i < 3; i++) {
        p[i].id = i;
        p[i].mass = 1.0;
    }
    if (rank == 0)
        MPI_Send(p, 3, t, 1, 0, MPI_COMM_WORLD); // reported
    else if (rank == 1)
        MPI_Recv(p, 3, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // reported
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
