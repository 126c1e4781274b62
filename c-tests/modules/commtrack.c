/* commtrack: a module written only against the documented API of the
 * `comm` module (include/pnmpi/comm.h), loaded above it:
 * `module commtrack`, `module comm`.
 *
 * At MPI_Finalize it lists, on every rank, each communicator the service
 * knows, in creation order ("getCommCount", "getCommByIndex"):
 *   commtrack rank R: #K id I leader L kind NAME parent P rank Q freed F members a b [remote c d]
 * and checks each live one against "getCommInfo" of its handle and
 * against MPI's own size and rank of it (a `commtrack rank R: bad ...`
 * line each time they differ). */
#include <mpi.h>
#include <pnmpi.h>
#include <pnmpi/comm.h>
#include <xmpi.h>
#include <stdio.h>

static const char *kinds[] = {"world", "self", "dup", "split", "create", "cart", "graph", "intercomm", "merge"};

static void list(const int *ranks, int n, char *out, size_t room)
{
    size_t at = 0;
    for (int i = 0; i < n && at < room; i++)
        at += snprintf(out + at, room - at, " %d", ranks[i]);
}

int MPI_Finalize(void)
{
    PNMPI_modHandle_t h;
    PNMPI_Service_descriptor_t s;
    PNMPIMOD_Comm_getInfo_t get_info = NULL;
    PNMPIMOD_Comm_getCount_t get_count = NULL;
    PNMPIMOD_Comm_getByIndex_t by_index = NULL;
    int rank = -1, count = 0;
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (PNMPI_Service_GetModuleByName(PNMPI_MODULE_COMM, &h) == PNMPI_SUCCESS) {
        if (PNMPI_Service_GetServiceByName(h, "getCommInfo", "mp", &s) == PNMPI_SUCCESS)
            get_info = (PNMPIMOD_Comm_getInfo_t)s.fct;
        if (PNMPI_Service_GetServiceByName(h, "getCommCount", "p", &s) == PNMPI_SUCCESS)
            get_count = (PNMPIMOD_Comm_getCount_t)s.fct;
        if (PNMPI_Service_GetServiceByName(h, "getCommByIndex", "ip", &s) == PNMPI_SUCCESS)
            by_index = (PNMPIMOD_Comm_getByIndex_t)s.fct;
    }
    if (!get_info || !get_count || !by_index || get_count(&count) != PNMPI_SUCCESS) {
        printf("commtrack rank %d: services missing\n", rank);
        return XMPI_Finalize();
    }
    for (int k = 0; k < count; k++) {
        PNMPIMOD_Comm_Info_t c, again;
        char members[256] = "", remote[256] = "";
        if (by_index(k, &c) != PNMPI_SUCCESS) {
            printf("commtrack rank %d: bad index %d\n", rank, k);
            continue;
        }
        list(c.members, c.size, members, sizeof members);
        if (c.inter)
            list(c.remote_members, c.remote_size, remote, sizeof remote);
        printf("commtrack rank %d: #%d id %d leader %d kind %s parent %d rank %d freed %d members%s%s%s\n", rank, k,
               c.id, c.leader, c.kind >= 0 && c.kind <= 8 ? kinds[c.kind] : "?", c.parent, c.rank, c.freed, members,
               c.inter ? " remote" : "", remote);
        if (c.freed) {
            if (c.comm != MPI_COMM_NULL)
                printf("commtrack rank %d: bad #%d freed with a handle\n", rank, k);
            continue;
        }
        int size = -1, my = -1;
        XMPI_Comm_size(c.comm, &size);
        XMPI_Comm_rank(c.comm, &my);
        if (get_info(c.comm, &again) != PNMPI_SUCCESS || again.id != c.id || size != c.size || my != c.rank ||
            (c.inter && (XMPI_Comm_remote_size(c.comm, &size), size != c.remote_size)))
            printf("commtrack rank %d: bad #%d against MPI\n", rank, k);
    }
    return XMPI_Finalize();
}
