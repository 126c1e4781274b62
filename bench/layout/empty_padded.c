/* An empty MPI_Comm_rank layer whose code and GOT slot sit at an offset
 * within their pages chosen at build time (-DPAD=k: k cache lines), so
 * that a chain of copies built with different k does not put every
 * layer's code and GOT slot in the same cache sets. Used by
 * bench/layout/run.sh to separate a layer's cost from cache aliasing. */
#include <mpi.h>
#include <xmpi.h>

#define STR2(x) #x
#define STR(x) STR2(x)

__asm__(".text\n.skip " STR(PAD) " * 64\n.section .data.rel.ro,\"aw\"\n.skip " STR(PAD) " * 64\n.previous");

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    return XMPI_Comm_rank(comm, rank);
}
