/* fakempi: stand-in libraries for the patcher's tests, built with plain `cc -nostdlib`.
 *   default       defines PMPI_Send and pmpi_send_ (an "MPI"; link with fakempi.map to give
 *                 them the version FAKEMPI_1.0, so tools linked against it carry versioned
 *                 imports);
 *   -DAS_PNMPI    defines XMPI_Send and xmpi_send_ instead (a "libpnmpi" for --against,
 *                 which lacks most of ptool's entry points);
 *   -DNO_FORTRAN  leaves out the Fortran routine.
 */
#ifdef AS_PNMPI
#define C_SEND XMPI_Send
#define F_SEND xmpi_send_
#else
#define C_SEND PMPI_Send
#define F_SEND pmpi_send_
#endif

int C_SEND(const void *buf, int count, int type, int dest, int tag, int comm)
{
    return buf == 0 ? count + type + dest + tag + comm : 0;
}

#ifndef NO_FORTRAN
void F_SEND(const void *buf, const int *count, const int *type, const int *dest, const int *tag,
            const int *comm, int *ierr)
{
    *ierr = C_SEND(buf, *count, *type, *dest, *tag, *comm);
}
#endif
