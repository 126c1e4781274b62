// expect: none
// Both groups are freed.
#include <mpi.h>

int main(int argc, char **argv) {
    int first = 0, size;
    MPI_Group world, head;
    MPI_Init(&argc, &argv);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &first, &head);
    MPI_Group_size(head, &size);
    MPI_Group_free(&head);
    MPI_Group_free(&world);
    MPI_Finalize();
    return 0;
}
