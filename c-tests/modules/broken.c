/* A module whose import cannot be resolved even lazily: a variable (a data
 * relocation, bound when the file is loaded). dlopen fails and names it. */
#include <mpi.h>
#include <xmpi.h>

extern int pnmpi_test_symbol_that_does_not_exist;

int MPI_Barrier(MPI_Comm comm)
{
    if (pnmpi_test_symbol_that_does_not_exist == 42)
        return MPI_ERR_OTHER;
    return XMPI_Barrier(comm);
}
