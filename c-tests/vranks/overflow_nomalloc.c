/* Rank 3 overflows its stack, as voverflow.c, after setting a flag that
 * makes the program's own allocator (which interposes malloc for the
 * whole process, libvranks included) stop the run: the overflow
 * handler runs in a signal, where the allocator may be mid-call (its
 * lock held, its lists half-updated), so it must not allocate.
 *
 * prints nothing; stops with the overflow report, or with
 * "overflow_nomalloc: the allocator was called ..." if the handler
 * allocated.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static volatile int overflowing;

static void caught(void)
{
    static const char msg[] = "overflow_nomalloc: the allocator was called after the stack overflowed\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(4);
    _exit(3);
}

void *malloc(size_t n)
{
    if (overflowing)
        caught();
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (overflowing)
        caught();
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (overflowing)
        caught();
    return __libc_realloc(p, n);
}

void free(void *p)
{
    if (overflowing)
        caught();
    __libc_free(p);
}

static int deep(int n)
{
    volatile char frame[65536];
    memset((char *)frame, n, sizeof frame);
    return n == 0 ? frame[100] : deep(n - 1) + frame[n % 65536];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 0;
    if (rank == 3) {
        overflowing = 1;
        v = deep(1000);
        overflowing = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("overflow_nomalloc: survived %d\n", v);
    MPI_Finalize();
    return 0;
}
