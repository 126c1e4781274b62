/* ptool_min: a minimal PMPI tool that needs no mpi.h, so plain `cc -nostdlib` can build the
 * unusual variants the patcher must handle:
 *   - ELF32 (`-m32`), linked against libfakempi.so for versioned imports (PMPI_Send@FAKEMPI_1.0);
 *   - Fortran-style imports (pmpi_send_), which are renamed only when libpnmpi defines them;
 *   - with -DCLASH, an exported function whose name ends in "PMPI_Send". Linkers store the
 *     import's name as the tail of that name, so renaming it would corrupt the export and the
 *     patcher must refuse.
 */
int PMPI_Send(const void *buf, int count, int type, int dest, int tag, int comm);
void pmpi_send_(const void *buf, const int *count, const int *type, const int *dest,
                const int *tag, const int *comm, int *ierr);

int MPI_Send(const void *buf, int count, int type, int dest, int tag, int comm)
{
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

void mpi_send_(const void *buf, const int *count, const int *type, const int *dest,
               const int *tag, const int *comm, int *ierr)
{
    pmpi_send_(buf, count, type, dest, tag, comm, ierr);
}

#ifdef CLASH
int tool_PMPI_Send(void)
{
    return 0;
}
#endif
