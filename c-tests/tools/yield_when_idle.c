/* yield_when_idle: the test suite's answer to MPICH's busy polling.
 *
 * MPICH 4.0 (Debian's ch4:ucx) spins in ucp_worker_progress while a rank
 * waits, and never gives its core away, so when ranks outnumber cores
 * (the suite runs 4 to 16 ranks on 2 cores) a message waits for the
 * scheduler's time slice at every hop: a 2,000-step ring of 8 ranks takes
 * 15 s where Open MPI, which turns on mpi_yield_when_idle itself when it
 * is oversubscribed, takes 2.6 s. Preloaded into every MPICH rank by the
 * tests' launcher (tests/common), this wrapper yields the core after 16
 * polls in a row that found nothing to do: the same ring then takes
 * 0.02 s. It changes when a rank gives way, never what MPI does.
 *
 * Build: cc -O2 -shared -fPIC -o libyield_when_idle.so yield_when_idle.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

/* UCX's own progress function, found at the first call. */
static progress_fn real_progress;

/* Idle polls in a row, per thread (MPI_THREAD_MULTIPLE programs poll
 * from several threads). */
static __thread unsigned idle_polls;

/* UCX's function: next in the global scope, or in libucp itself when a
 * program dlopened MPI without RTLD_GLOBAL (as Python loads mpi4py). Two
 * threads that race here store the same address. */
static progress_fn find_real_progress(void)
{
    progress_fn f = __atomic_load_n(&real_progress, __ATOMIC_ACQUIRE);
    if (f)
        return f;
    f = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!f) {
        void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
        if (ucp)
            f = (progress_fn)dlsym(ucp, "ucp_worker_progress");
    }
    __atomic_store_n(&real_progress, f, __ATOMIC_RELEASE);
    return f;
}

unsigned ucp_worker_progress(void *worker)
{
    unsigned events = find_real_progress()(worker);
    if (events != 0) {
        idle_polls = 0;
    } else if (++idle_polls >= 16) {
        idle_polls = 0;
        sched_yield();
    }
    return events;
}
