/* A module whose import cannot be resolved: dlopen with RTLD_NOW fails and
 * names the symbol. */
#include <mpi.h>
#include <xmpi.h>

void pnmpi_test_symbol_that_does_not_exist(void);

int MPI_Barrier(MPI_Comm comm)
{
    pnmpi_test_symbol_that_does_not_exist();
    return XMPI_Barrier(comm);
}
