// expect: none
// The operation and the persistent request are freed.
#include <mpi.h>

static void add(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv) {
    int x = 1, y = 0;
    MPI_Op op;
    MPI_Request p;
    MPI_Init(&argc, &argv);
    MPI_Op_create(add, 1, &op);
    MPI_Allreduce(&x, &y, 1, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Recv_init(&y, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &p);
    MPI_Request_free(&p);
    MPI_Op_free(&op);
    MPI_Finalize();
    return 0;
}
