/* A module written only against LLNL PnMPI's documented module API:
 * PNMPI_modHandle_t, PNMPI_status_t, descriptors filled with strcpy,
 * addr.i, PNMPI_SUCCESS, PNMPI_Service_*, PNMPI_RegistrationPoint and
 * XMPI_ calls. Built with -Wall -Wextra -Werror against include/pnmpi.h.
 * It registers as "llnl-style", offers service "get_sends" (sig "p") and
 * global "sends" ('i'), looks both up again by name in PNMPI_Init, and at
 * MPI_Finalize prints, on every rank:
 *   llnl rank R: sends S service S' global G greeting V init I */
#include <mpi.h>
#include <pnmpi.h>
#include <xmpi.h>
#include <stdio.h>
#include <string.h>

static int sends;
static PNMPI_Service_descriptor_t service;
static PNMPI_Global_descriptor_t global;
static const char *greeting = "(none)";
static PNMPI_status_t init_status = PNMPI_FAILURE;

static int get_sends(int *out)
{
    *out = sends;
    return PNMPI_SUCCESS;
}

void PNMPI_RegistrationPoint(void)
{
    PNMPI_Service_descriptor_t s;
    PNMPI_Global_descriptor_t g;
    PNMPI_Service_RegisterModule("llnl-style");
    strcpy(s.name, "get_sends");
    strcpy(s.sig, "p");
    s.fct = (PNMPI_Service_Fct_t)get_sends;
    PNMPI_Service_RegisterService(&s);
    strcpy(g.name, "sends");
    g.sig = 'i';
    g.addr.i = &sends;
    PNMPI_Service_RegisterGlobal(&g);
}

void PNMPI_Init(void)
{
    PNMPI_modHandle_t handle;
    PNMPI_status_t err = PNMPI_Service_GetModuleByName("llnl-style", &handle);
    if (err == PNMPI_SUCCESS)
        err = PNMPI_Service_GetServiceByName(handle, "get_sends", "p", &service);
    if (err == PNMPI_SUCCESS)
        err = PNMPI_Service_GetGlobalByName(handle, "sends", 'i', &global);
    if (err == PNMPI_SUCCESS)
        err = PNMPI_Service_GetArgument(handle, "greeting", &greeting);
    init_status = err;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return XMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Finalize(void)
{
    int rank, by_service = -1;
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (init_status == PNMPI_SUCCESS)
        ((int (*)(int *))service.fct)(&by_service);
    printf("llnl rank %d: sends %d service %d global %d greeting %s init %s\n", rank, sends, by_service,
           init_status == PNMPI_SUCCESS ? *global.addr.i : -1, greeting, PNMPI_Service_strerror(init_status));
    fflush(stdout);
    return XMPI_Finalize();
}
