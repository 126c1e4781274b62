// expect: none
// A ring shift in place, then a persistent ready send (MPI_Rsend_init)
// whose receive is posted first.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, x[4] = {0}, y = 0;
    MPI_Request p, q;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv_replace(x, 4, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    if (rank == 1)
        MPI_Irecv(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &q);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Rsend_init(&y, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &p);
        MPI_Start(&p);
        MPI_Wait(&p, MPI_STATUS_IGNORE);
        MPI_Request_free(&p);
    }
    if (rank == 1)
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
