/* guide_example: the C module of docs/writing-modules.md.
 *
 * Counts the MPI_Send calls of each rank and the bytes they send, and
 * prints them when the application calls MPI_Finalize, tagged with the
 * configuration's `argument label NAME`. The count is also offered to
 * other modules as the global "sends".
 *
 * Build: mpicc -shared -fPIC -I/opt/pnmpi/include -o guide_example.so guide_example.c
 */
#include <mpi.h>
#include <pnmpi/pnmpi.h>
#include <pnmpi/xmpi.h>
#include <stdio.h>
#include <string.h>

/* Names this module in libpnmpi's messages and in GetModuleByName. */
const char *PNMPI_ModuleName = "guide_example";

/* Updated atomically: under MPI_THREAD_MULTIPLE, threads send at once. */
static long sends, bytes;
static const char *label = "";

/* Hook: all modules are loaded, MPI has not started. Offer the counter. */
void PNMPI_RegistrationPoint(void)
{
    PNMPI_Global_descriptor_t global;
    memset(&global, 0, sizeof global);
    strcpy(global.name, "sends");
    global.sig = 'l';
    global.addr.l = &sends;
    PNMPI_status_t status = PNMPI_Service_RegisterGlobal(&global);
    if (status != PNMPI_SUCCESS)
        fprintf(stderr, "guide_example: cannot register sends: %s\n", PNMPI_Service_strerror(status));
}

/* Hook: after every module's RegistrationPoint. Read the arguments. */
void PNMPI_Init(void)
{
    const char *value = PNMPI_Service_GetArgumentSelf("label");
    if (value)
        label = value;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int size = 0;
    /* A nested call: it enters MPI_Type_size's chain below this module. */
    XMPI_Type_size(type, &size);
    __atomic_add_fetch(&sends, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&bytes, (long)count * size, __ATOMIC_RELAXED);
    /* The next layer: the next module that wraps MPI_Send, or MPI. */
    return XMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Finalize(void)
{
    int rank;
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("guide_example[%s] rank %d: %ld sends, %ld bytes\n", label, rank,
           __atomic_load_n(&sends, __ATOMIC_RELAXED), __atomic_load_n(&bytes, __ATOMIC_RELAXED));
    fflush(stdout);
    return XMPI_Finalize();
}
