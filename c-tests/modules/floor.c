/* The least any tracer must do per call, as a module to benchmark beside
 * the real tools (tests/profiler.rs, deep_app_ab_overhead_bench): wrap
 * MPI_Send and MPI_Recv and read the clock before and after the call
 * (the time-stamp counter, as the tracer does). Built with
 *   -DFLOOR_RECORD  also keeps a raw 24-byte record of each call (start,
 *                   end, peer, tag) in a 256 KiB buffer, with no encoding;
 *   -DFLOOR_WRITE   also writes each full buffer, and the rest at
 *                   MPI_Finalize, to floor-<world rank>.raw in the working
 *                   folder, as the tracer writes its rank files.
 * Without either it only sums the calls' ticks. */
#include <mpi.h>
#include <xmpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
static inline unsigned long long ticks(void) { return __rdtsc(); }
#else
#include <time.h>
static inline unsigned long long ticks(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}
#endif

struct record {
    unsigned long long start, end;
    int peer, tag;
};

#define RECORDS (256 * 1024 / sizeof(struct record))
static struct record records[RECORDS];
static unsigned long filled;
static volatile unsigned long long total;
static int out = -1;

static void write_out(void)
{
#ifdef FLOOR_WRITE
    if (out >= 0 && filled > 0 && write(out, records, filled * sizeof records[0]) < 0)
        perror("floor: write");
#endif
    filled = 0;
}

static inline void keep(unsigned long long start, unsigned long long end, int peer, int tag)
{
#if defined(FLOOR_RECORD) || defined(FLOOR_WRITE)
    struct record *r = &records[filled++];
    r->start = start;
    r->end = end;
    r->peer = peer;
    r->tag = tag;
    if (filled == RECORDS)
        write_out();
#else
    (void)peer;
    (void)tag;
    total += end - start;
#endif
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = XMPI_Init(argc, argv);
#ifdef FLOOR_WRITE
    int rank;
    char name[64];
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(name, sizeof name, "floor-%d.raw", rank);
    out = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0)
        perror(name);
#endif
    return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    unsigned long long start = ticks();
    int rc = XMPI_Send(buf, count, type, dest, tag, comm);
    keep(start, ticks(), dest, tag);
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    unsigned long long start = ticks();
    int rc = XMPI_Recv(buf, count, type, source, tag, comm, status);
    keep(start, ticks(), source, tag);
    return rc;
}

int MPI_Finalize(void)
{
    write_out();
    if (out >= 0)
        close(out);
    return XMPI_Finalize();
}
