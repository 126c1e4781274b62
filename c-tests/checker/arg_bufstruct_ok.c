// expect: none
// A struct datatype built with offsetof and resized to the struct's
// size, sending an array of three; then one member's part alone.
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

struct particle { int id; char tag; double mass; };

int main(int argc, char **argv) {
    int rank;
    struct particle *p = malloc(3 * sizeof *p);
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(struct particle, id), offsetof(struct particle, tag),
                         offsetof(struct particle, mass)};
    MPI_Datatype types[3] = {MPI_INT, MPI_CHAR, MPI_DOUBLE}, t, whole;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_create_struct(3, lens, disps, types, &t);
    MPI_Type_create_resized(t, 0, sizeof(struct particle), &whole);
    MPI_Type_commit(&whole);
    for (int i = 0; i < 3; i++) {
        p[i].id = i;
        p[i].tag = 'a';
        p[i].mass = 1.0;
    }
    if (rank == 0) {
        MPI_Send(p, 3, whole, 1, 0, MPI_COMM_WORLD);
        MPI_Send(&p[1].mass, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(p, 3, whole, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&p[1].mass, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&t);
    MPI_Type_free(&whole);
    MPI_Finalize();
    free(p);
    return 0;
}
