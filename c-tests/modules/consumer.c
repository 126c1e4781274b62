/* Uses provider.c's service and global. In PNMPI_Init it looks up the
 * module registered as "sendcounter", its service "count_sends" (sig "p")
 * and its global "sends" ('i'), and prints
 *   consumer init: module H service STATUS global STATUS
 * Its MPI_Send wrapper then, before going down, calls the service, reads
 * the global, adds one to the provider's global "pokes" and prints
 *   consumer rank R send K: service S global G
 * where K counts the sends the consumer saw. */
#include <mpi.h>
#include <xmpi.h>
#include <pnmpi.h>
#include <stdio.h>

static int (*count_sends)(int *);
static int *sends, *pokes;
static int seen;

void PNMPI_Init(void)
{
    PNMPI_modHandle_t h = -1;
    PNMPI_Service_descriptor_t s;
    PNMPI_Global_descriptor_t g, p;
    PNMPI_status_t m = PNMPI_Service_GetModuleByName("sendcounter", &h);
    PNMPI_status_t rs = PNMPI_Service_GetServiceByName(h, "count_sends", "p", &s);
    PNMPI_status_t rg = PNMPI_Service_GetGlobalByName(h, "sends", 'i', &g);
    PNMPI_status_t rp = PNMPI_Service_GetGlobalByName(h, "pokes", 'i', &p);
    printf("consumer init: module %d (%d) service %d global %d %d\n", h, m, rs, rg, rp);
    fflush(stdout);
    if (rs == PNMPI_SUCCESS)
        count_sends = (int (*)(int *))s.fct;
    if (rg == PNMPI_SUCCESS)
        sends = g.addr.i;
    if (rp == PNMPI_SUCCESS)
        pokes = p.addr.i;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rank, by_service = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    seen++;
    if (count_sends)
        count_sends(&by_service);
    if (pokes)
        (*pokes)++;
    printf("consumer rank %d send %d: service %d global %d\n", rank, seen, by_service, sends ? *sends : -1);
    fflush(stdout);
    return XMPI_Send(buf, count, type, dest, tag, comm);
}
