/* A C library of a Fortran application, which calls MPI itself: each rank
 * sends its rank to the right and receives from the left, with the
 * communicator the Fortran side passed as a Fortran handle. */
#include <mpi.h>

void clib_exchange(const MPI_Fint *fcomm, int *received)
{
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, received, 1, MPI_INT, (rank + size - 1) % size, 3, // CSITE_SENDRECV
                 comm, MPI_STATUS_IGNORE);
}
