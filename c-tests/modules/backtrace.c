/* Unwinds the stack from its MPI_Send wrapper with backtrace() and resolves
 * each frame with dladdr: where is the application's `main`, and is there
 * a libpnmpi frame between this wrapper and it? Frame 0 is this wrapper.
 * Under direct binding, for a call made by main itself, main is frame 1 and
 * no frame lies in libpnmpi. At MPI_Finalize it prints one line per
 * distinct outcome, in the order first seen:
 *   backtrace NAME: rank R frame1 SYM in FILE main at I libpnmpi L calls N
 * (SYM, FILE: frame 1's dli_sname or "?" and basename of dli_fname; I: the
 * index of the first frame in `main`, or -1; L: how many frames before it,
 * or before the end when main is not found, lie in a file whose name
 * contains "libpnmpi"). The program must export main (-rdynamic). The
 * frames of each new outcome go to stderr, for diagnosis. Build with
 * -DNAME=A. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include "layerutil.h"

#define MAX_FRAMES 64
#define MAX_OUTCOMES 8

struct outcome {
    char frame1[128];
    char file1[128];
    int main_at;
    int in_libpnmpi;
    long calls;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct outcome outcomes[MAX_OUTCOMES];
static int noutcomes;
static long overflow, returned;

/* backtrace() loads libgcc_s on its first call: do that before MPI runs. */
__attribute__((constructor)) static void preload_unwinder(void)
{
    void *frames[2];
    backtrace(frames, 2);
}

static int same_outcome(const void *a, const void *b)
{
    const struct outcome *x = a, *y = b;
    return strcmp(x->frame1, y->frame1) == 0 && strcmp(x->file1, y->file1) == 0
           && x->main_at == y->main_at && x->in_libpnmpi == y->in_libpnmpi;
}

__attribute__((noinline)) static void examine(void **frames, int depth)
{
    struct outcome o;
    memset(&o, 0, sizeof o);
    o.main_at = -1;
    strcpy(o.frame1, "?");
    strcpy(o.file1, "?");
    for (int i = 0; i < depth; i++) {
        Dl_info info;
        if (!dladdr(frames[i], &info))
            continue;
        if (i == 1) {
            snprintf(o.frame1, sizeof o.frame1, "%s", info.dli_sname ? info.dli_sname : "?");
            snprintf(o.file1, sizeof o.file1, "%s", base(info.dli_fname));
        }
        if (info.dli_sname && strcmp(info.dli_sname, "main") == 0) {
            o.main_at = i;
            break;
        }
        if (info.dli_fname && strstr(base(info.dli_fname), "libpnmpi"))
            o.in_libpnmpi++;
    }
    pthread_mutex_lock(&lock);
    int before = noutcomes;
    int k = find_or_add(outcomes, &noutcomes, MAX_OUTCOMES, sizeof o, &o, same_outcome);
    if (k < 0) {
        overflow++;
        pthread_mutex_unlock(&lock);
        return;
    }
    if (noutcomes > before) {
        for (int i = 0; i < depth; i++) {
            Dl_info info;
            int found = dladdr(frames[i], &info);
            fprintf(stderr, "backtrace %s: outcome %d frame %d %s in %s\n", ME, k, i,
                    found && info.dli_sname ? info.dli_sname : "?",
                    found ? base(info.dli_fname) : "?");
        }
    }
    outcomes[k].calls++;
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest,
                                       int tag, MPI_Comm comm)
{
    void *frames[MAX_FRAMES];
    int depth = backtrace(frames, MAX_FRAMES);
    examine(frames, depth);
    return send_below(buf, count, type, dest, tag, comm, &returned);
}

int MPI_Finalize(void)
{
    int rank = world_rank();
    pthread_mutex_lock(&lock);
    for (int k = 0; k < noutcomes; k++)
        printf("backtrace %s: rank %d frame1 %s in %s main at %d libpnmpi %d calls %ld\n", ME, rank,
               outcomes[k].frame1, outcomes[k].file1, outcomes[k].main_at, outcomes[k].in_libpnmpi,
               outcomes[k].calls);
    if (overflow)
        printf("backtrace %s: rank %d overflow %ld\n", ME, rank, overflow);
    pthread_mutex_unlock(&lock);
    return finalize_below();
}
