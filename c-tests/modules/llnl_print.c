/* A module written against LLNL PnMPI's print API (pnmpi/debug_io.h): a
 * warning and a debug message after MPI_Init, with an int, a string and a
 * double (which C passes in vector registers); with -DERROR, an error in
 * MPI_Finalize, which stops the run. */
#define PNMPI_MESSAGE_PREFIX "llnl_print"
#include <mpi.h>
#include <pnmpi/debug_io.h>
#include <xmpi.h>

int MPI_Init(int *argc, char ***argv)
{
    int rc = XMPI_Init(argc, argv);
    PNMPI_Warning("warning %d %s %.2f\n", 7, "seven", 2.5);
    PNMPI_Debug(PNMPI_DEBUG_MODULE, "debug %d %.1f\n", 3, 0.5);
    return rc;
}

int MPI_Finalize(void)
{
#ifdef ERROR
    PNMPI_Error("error %d\n", 9);
#endif
    return XMPI_Finalize();
}
