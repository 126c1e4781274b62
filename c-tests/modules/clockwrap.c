/* Wraps MPI_Wtime and MPI_Wtick as LLNL's wrapper generator does for every
 * routine, but returns a frozen clock (0), so a caller can tell whether its
 * clock reads went through it; counts them, and prints at PNMPI_Fini:
 *   clockwrap rank R: Wtime w Wtick t
 * Built with -DWRAPS it asks libpnmpi for its clock wrappers to be called
 * (PNMPI_WRAPS_CLOCK); without, they are not, as under LLNL's libpnmpi. */
#include <mpi.h>
#include <xmpi.h>
#include <pnmpi.h>
#include <stdio.h>

#ifdef WRAPS
PNMPI_WRAPS_CLOCK;
#endif

static int wtimes, wticks, rank = -1;

double MPI_Wtime(void)
{
    wtimes++;
    return 0.0;
}

double MPI_Wtick(void)
{
    wticks++;
    return XMPI_Wtick();
}

int MPI_Comm_rank(MPI_Comm comm, int *r)
{
    int err = XMPI_Comm_rank(comm, r);
    if (comm == MPI_COMM_WORLD)
        rank = *r;
    return err;
}

void PNMPI_Fini(void)
{
    printf("clockwrap rank %d: Wtime %d Wtick %d\n", rank, wtimes, wticks);
    fflush(stdout);
}
