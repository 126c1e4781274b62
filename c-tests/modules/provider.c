/* Offers a service and globals to other modules (see consumer.c,
 * svccheck.c). In PNMPI_RegistrationPoint it registers:
 *   module name   "sendcounter" (its PNMPI_ModuleName is "counter-provider")
 *   service       "count_sends", sig "p": int count_sends(int *out) stores
 *                 the number of MPI_Send calls it has seen, returns 0
 *   global 'i'    "sends": that number, live
 *   global 'i'    "pokes": other modules may add to it
 *   global 'i'    "hook_calls", "hook_self": its hook provider_hook (run
 *                 through PNMPI_Service_CallHook) counts its calls and
 *                 stores PNMPI_Service_GetModuleSelf there
 * It wraps MPI_Send only, and prints at PNMPI_Fini:
 *   provider rank R: sends S pokes P */
#include <mpi.h>
#include <xmpi.h>
#include <pnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *PNMPI_ModuleName = "counter-provider";

static int sends, pokes, hook_calls, hook_self = -1;

static int count_sends(int *out)
{
    *out = sends;
    return PNMPI_SUCCESS;
}

static void global(const char *name, int *addr)
{
    PNMPI_Global_descriptor_t g;
    strcpy(g.name, name);
    g.sig = 'i';
    g.addr.i = addr;
    if (PNMPI_Service_RegisterGlobal(&g) != PNMPI_SUCCESS)
        fprintf(stderr, "provider: RegisterGlobal %s failed\n", name);
}

void PNMPI_RegistrationPoint(void)
{
    PNMPI_Service_descriptor_t s;
    if (PNMPI_Service_RegisterModule("sendcounter") != PNMPI_SUCCESS)
        fprintf(stderr, "provider: RegisterModule failed\n");
    strcpy(s.name, "count_sends");
    strcpy(s.sig, "p");
    s.fct = (PNMPI_Service_Fct_t)count_sends;
    if (PNMPI_Service_RegisterService(&s) != PNMPI_SUCCESS)
        fprintf(stderr, "provider: RegisterService failed\n");
    global("sends", &sends);
    global("pokes", &pokes);
    global("hook_calls", &hook_calls);
    global("hook_self", &hook_self);
}

void provider_hook(void)
{
    hook_calls++;
    PNMPI_Service_GetModuleSelf(&hook_self);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return XMPI_Send(buf, count, type, dest, tag, comm);
}

void PNMPI_Fini(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    printf("provider rank %s: sends %d pokes %d\n", rank ? rank : "?", sends, pokes);
    fflush(stdout);
}
