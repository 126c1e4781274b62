/* A counting layer whose wrappers end in a tail call: `return XMPI_X(...)`
 * right after the count, which gcc -O2 compiles to a `jmp` (the tests check
 * the disassembly). Under direct binding that jump lands straight in the
 * next layer, so this layer leaves no frame: the module below sees the
 * layer above this one as its caller. Wraps MPI_Send and MPI_Comm_rank and
 * prints at MPI_Finalize, on stdout:
 *   tailcall NAME: rank R Send S Comm_rank C
 * Build with -DNAME=A, -O2. */
#include "layerutil.h"

static long sends, ranks;

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    __atomic_add_fetch(&sends, 1, __ATOMIC_RELAXED);
    return XMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    __atomic_add_fetch(&ranks, 1, __ATOMIC_RELAXED);
    return XMPI_Comm_rank(comm, rank);
}

int MPI_Finalize(void)
{
    printf("tailcall %s: rank %s Send %ld Comm_rank %ld\n", ME, env_rank(),
           __atomic_load_n(&sends, __ATOMIC_RELAXED), __atomic_load_n(&ranks, __ATOMIC_RELAXED));
    return finalize_below();
}
