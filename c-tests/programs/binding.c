/* Calls MPI_Send from two known places, for the direct-binding tests
 * (tests/binding.rs): once from main itself, then N times (`iters N`,
 * default 5) from app_send_site, a function of its own that the tests build
 * with -rdynamic so that dladdr can name both. Ranks 0 and 1 exchange each
 * message (0 sends, 1 receives and sends it back; tag 1 for main's, 2 for
 * the others); further ranks only take part in the collective calls. With
 * `threads T` (MPI_THREAD_MULTIPLE), T threads each make the N exchanges
 * instead, with tags 100+t. Each exchange also calls MPI_Comm_rank. So, per
 * rank 0 or 1, with M = N (or N*T with threads):
 *   MPI_Send 1+M, MPI_Recv 1+M, MPI_Comm_rank 1+M, MPI_Comm_size 1,
 *   MPI_Barrier 1
 * and each rank prints
 *   binding: rank R size S sent X received Y errors E */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, iters = 5;
static long sent, received, errors;

/* Not inlined, not cloned, and it works after the call (no tail call): the
 * MPI_Send wrapper's return address lies in this function. */
__attribute__((noinline, noclone)) int app_send_site(const int *value, int dest, int tag)
{
    int rc = MPI_Send(value, 1, MPI_INT, dest, tag, MPI_COMM_WORLD);
    __atomic_add_fetch(&sent, 1, __ATOMIC_RELAXED);
    return rc;
}

static void receive(int expected, int source, int tag)
{
    int value = -1;
    MPI_Recv(&value, 1, MPI_INT, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    __atomic_add_fetch(&received, 1, __ATOMIC_RELAXED);
    if (value != expected)
        __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
}

/* Named too (noinline, exported): between app_send_site and main. */
__attribute__((noinline, noclone)) void exchanges(int tag)
{
    for (int i = 0; i < iters; i++) {
        int me = -1, value = tag * 100000 + i;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me != rank)
            __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
        if (rank == 0) {
            app_send_site(&value, 1, tag);
            receive(value + 1, 1, tag);
        } else if (rank == 1) {
            receive(value, 0, tag);
            value++;
            app_send_site(&value, 0, tag);
        }
    }
}

static void *worker(void *arg)
{
    exchanges(100 + (int)(long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "iters") == 0)
            iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "threads") == 0)
            threads = atoi(argv[i + 1]);
    }
    if (threads > 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "binding: MPI provides thread level %d only\n", provided);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* main's own call site. */
    int value = 7;
    if (rank == 0) {
        MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        __atomic_add_fetch(&sent, 1, __ATOMIC_RELAXED);
        receive(8, 1, 1);
    } else if (rank == 1) {
        receive(7, 0, 1);
        value = 8;
        MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        __atomic_add_fetch(&sent, 1, __ATOMIC_RELAXED);
    }

    if (threads > 0) {
        pthread_t ids[64];
        if (threads > 64)
            threads = 64;
        for (int t = 0; t < threads; t++)
            pthread_create(&ids[t], NULL, worker, (void *)(long)t);
        for (int t = 0; t < threads; t++)
            pthread_join(ids[t], NULL);
    } else {
        exchanges(2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("binding: rank %d size %d sent %ld received %ld errors %ld\n", rank, size, sent, received,
           errors);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
