/* Exports PNMPI_ModuleName and every LLNL PnMPI module hook, and prints
 * when each runs, so the tests can check the order. */
#include <mpi.h>
#include <xmpi.h>
#include <stdio.h>


const char *PNMPI_ModuleName = "hook-tester";

static void say(const char *what)
{
    fprintf(stderr, "hooks: %s\n", what);
    fflush(stderr);
}

void PNMPI_RegistrationPoint(void) { say("RegistrationPoint"); }
void PNMPI_Init(void) { say("Init"); }
void PNMPI_Fini(void) { say("Fini"); }
void PNMPI_UnregistrationPoint(void) { say("UnregistrationPoint"); }

int MPI_Init(int *argc, char ***argv)
{
    say("MPI_Init wrapper");
    return XMPI_Init(argc, argv);
}
