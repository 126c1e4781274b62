/* A module that calls a function no library defines, on one path only
 * (MPI_Barrier), as binary tools built without an optional part do:
 * libpnmpi loads it with lazy binding and warns; a program that never
 * takes the path runs. With MISSING_MPI the function is an MPI routine
 * no library defines (a module built against another MPI): the load
 * stops. */
#include <mpi.h>
#include <xmpi.h>

#ifdef MISSING_MPI
#define pnmpi_test_function_that_does_not_exist PMPI_Pnmpi_test_routine
#endif
void pnmpi_test_function_that_does_not_exist(void);

int MPI_Barrier(MPI_Comm comm)
{
    pnmpi_test_function_that_does_not_exist();
    return XMPI_Barrier(comm);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return XMPI_Send(buf, count, type, dest, tag, comm);
}
