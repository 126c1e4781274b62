/* A router for the default stack. Its MPI_Barrier wrapper sends barriers
 * on communicators of size 1 to the stack named by its argument `stack`
 * (XMPI_Barrier_NewStack) and the others down its own stack (XMPI_Barrier).
 * After a routed call it calls XMPI_Comm_rank, which must run below the
 * router in the default stack again. Logs "router>Barrier"/"router<Barrier".
 * -DCHANGE: routes with PNMPI_Service_ChangeStack + XMPI_Barrier instead;
 * the thread then stays in the other stack until the wrapper returns, so
 * its XMPI_Comm_rank goes there too. */
#include <mpi.h>
#include <xmpi.h>
#include <pnmpi.h>
#include <stdio.h>
#include "chaincheck.h"

/* pnmpi.h asks modules to declare the _NewStack entry points they use. */
int XMPI_Barrier_NewStack(PNMPI_modHandle_t stack, MPI_Comm comm);

static PNMPI_modHandle_t other = -1;

void PNMPI_Init(void)
{
    const char *name = PNMPI_Service_GetArgumentSelf("stack");
    PNMPI_status_t rc = PNMPI_Service_GetStackByName(name ? name : "", &other);
    if (rc != PNMPI_SUCCESS)
        fprintf(stderr, "router: stack %s: %s\n", name ? name : "(no argument)", PNMPI_Service_strerror(rc));
}

int MPI_Barrier(MPI_Comm comm)
{
    int size, rank, rc;
    chaincheck_log("router", '>', "Barrier");
    PMPI_Comm_size(comm, &size);
    if (size == 1) {
#ifdef CHANGE
        PNMPI_Service_ChangeStack(other);
        rc = XMPI_Barrier(comm);
#else
        rc = XMPI_Barrier_NewStack(other, comm);
#endif
        XMPI_Comm_rank(comm, &rank);
    } else {
        rc = XMPI_Barrier(comm);
    }
    chaincheck_log("router", '<', "Barrier");
    return rc;
}
