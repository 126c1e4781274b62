/* Four threads call wrapped routines concurrently under
 * MPI_THREAD_MULTIPLE, each on its own communicator. Every call's layer log
 * must equal the log of the same call made alone by the main thread. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chaincheck.h"

#define THREADS 4
#define ITERATIONS 2000

static int rank, size;
static MPI_Comm comms[THREADS];
static char ref_rank[4096], ref_send[4096], ref_recv[4096];
static long mismatches, calls;

static void check(const char *expected)
{
    const char *log = chaincheck_take();
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (strcmp(log, expected) != 0) {
        if (__atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED) <= 5)
            fprintf(stderr, "threads: mismatch: got '%s', want '%s'\n", log, expected);
    }
}

static void one_round(MPI_Comm comm, int tag, int reference)
{
    int me, value = tag;
    MPI_Comm_rank(comm, &me);
    if (reference)
        strcpy(ref_rank, chaincheck_take());
    else
        check(ref_rank);
    if (size < 2)
        return;
    if (rank == 0) {
        MPI_Send(&value, 1, MPI_INT, 1, tag, comm);
        if (reference)
            strcpy(ref_send, chaincheck_take());
        else
            check(ref_send);
    } else if (rank == 1) {
        MPI_Recv(&value, 1, MPI_INT, 0, tag, comm, MPI_STATUS_IGNORE);
        if (reference)
            strcpy(ref_recv, chaincheck_take());
        else
            check(ref_recv);
        if (value != tag)
            __atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);
    }
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < ITERATIONS; i++)
        one_round(comms[t], t, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    chaincheck_take();
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "threads: MPI provides thread level %d only\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int t = 0; t < THREADS; t++)
        PMPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    one_round(comms[0], 0, 1);
    if (rank == 0)
        printf("reference Comm_rank: %s\nreference Send: %s\n", ref_rank, ref_send);
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    printf("threads: rank %d checked %ld calls, %ld mismatches\n", rank, calls, mismatches);
    fflush(stdout);
    PMPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
