/* Wraps MPI_Type_hvector, an MPI-1 routine MPI-3 removed, which Open MPI
 * 4.1 still exports and declares only with OMPI_OMIT_MPI1_COMPAT_DECLS=0,
 * as LLNL PnMPI's `datatype` module does: it prints each call and calls
 * the next layer through XMPI_Type_hvector.
 *   mpi1compat: MPI_Type_hvector count C blocklength B stride S */
#include <mpi.h>
#include <xmpi.h>
#include <stdio.h>

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    printf("mpi1compat: MPI_Type_hvector count %d blocklength %d stride %ld\n", count, blocklength,
           (long)stride);
    return XMPI_Type_hvector(count, blocklength, stride, oldtype, newtype);
}
