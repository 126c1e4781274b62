/* Who called this layer? The MPI_Send wrapper takes its own return address
 * (__builtin_return_address(0)) and resolves it with dladdr. Under direct
 * binding the first module's caller is the application's function that
 * called MPI_Send, and the caller of a module further down is the MPI_Send
 * wrapper of the module above it (in that module's file): no libpnmpi frame
 * in between. At MPI_Finalize it prints, for each distinct caller, one line
 *   retaddr NAME in SELF: rank R caller SYM in FILE calls N
 * (SELF: basename of this module's own file, which differs for a private
 * copy; SYM: dladdr's dli_sname or "?"; FILE: basename of dli_fname), in the
 * order the callers were first seen. Thread-safe (MPI_THREAD_MULTIPLE).
 * Build with -DNAME=A and optionally:
 *   -DCALL_SIZE         the Send wrapper also calls XMPI_Comm_size, which
 *                       this module does not wrap, and prints at Finalize
 *                       "retaddr NAME in SELF: rank R sizes S wrong W"
 *                       (S calls, W results that differ from PMPI_Comm_size)
 *   -DIMPORT_CHANGESTACK  imports PNMPI_Service_ChangeStack (never called),
 *                       which forces the dispatcher (needs -I include) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include "layerutil.h"
#ifdef IMPORT_CHANGESTACK
#include <pnmpi.h>
#endif

#define MAX_SITES 16

/* One distinct return address, and how often it was seen. */
struct site {
    void *address;
    long calls;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct site sites[MAX_SITES];
static int nsites;
static long overflow, returned;
#ifdef CALL_SIZE
static long sizes, wrong_sizes;
#endif

/* A local function: its address is in this module's own file. */
static void self_marker(void)
{
}

static const char *self_file(void)
{
    Dl_info info;
    if (!dladdr((void *)&self_marker, &info))
        return "?";
    return base(info.dli_fname);
}

static int same_site(const void *a, const void *b)
{
    return ((const struct site *)a)->address == ((const struct site *)b)->address;
}

static void record(void *address)
{
    struct site site = {address, 0};
    pthread_mutex_lock(&lock);
    int i = find_or_add(sites, &nsites, MAX_SITES, sizeof site, &site, same_site);
    if (i < 0)
        overflow++;
    else
        sites[i].calls++;
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest,
                                       int tag, MPI_Comm comm)
{
    record(__builtin_return_address(0));
#ifdef CALL_SIZE
    int size = -1, native = -2;
    XMPI_Comm_size(comm, &size);
    PMPI_Comm_size(comm, &native);
    __atomic_add_fetch(&sizes, 1, __ATOMIC_RELAXED);
    if (size != native)
        __atomic_add_fetch(&wrong_sizes, 1, __ATOMIC_RELAXED);
#endif
#ifdef IMPORT_CHANGESTACK
    /* Never true: the import is what matters. */
    if (getenv("RETADDR_CHANGE_STACK_NEVER_SET"))
        PNMPI_Service_ChangeStack(0);
#endif
    /* Counts the return: no tail call, so this frame stays on the stack
     * and the module below sees a return address inside this function. */
    return send_below(buf, count, type, dest, tag, comm, &returned);
}

int MPI_Finalize(void)
{
    int rank = world_rank();
    const char *self = self_file();
    pthread_mutex_lock(&lock);
    long calls = 0;
    for (int i = 0; i < nsites; i++) {
        Dl_info info;
        const char *sym = "?", *file = "?";
        if (dladdr(sites[i].address, &info)) {
            if (info.dli_sname)
                sym = info.dli_sname;
            file = base(info.dli_fname);
        }
        printf("retaddr %s in %s: rank %d caller %s in %s calls %ld\n", ME, self, rank, sym, file,
               sites[i].calls);
        calls += sites[i].calls;
    }
    if (overflow || calls != __atomic_load_n(&returned, __ATOMIC_RELAXED))
        printf("retaddr %s in %s: rank %d overflow %ld recorded %ld returned %ld\n", ME, self, rank,
               overflow, calls, __atomic_load_n(&returned, __ATOMIC_RELAXED));
    pthread_mutex_unlock(&lock);
#ifdef CALL_SIZE
    printf("retaddr %s in %s: rank %d sizes %ld wrong %ld\n", ME, self, rank, sizes, wrong_sizes);
#endif
    return finalize_below();
}
