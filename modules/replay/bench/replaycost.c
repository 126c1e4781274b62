/* The replay module's cost per recorded call, for callgrind: one rank
 * messages itself, N rounds of four recorded calls (a wildcard MPI_Recv,
 * a failed MPI_Iprobe, two MPI_Waitany) and five others. With T > 0,
 * under MPI_THREAD_MULTIPLE, T threads each make the N rounds at once,
 * each on its own duplicate of MPI_COMM_WORLD.
 * usage: replaycost N [T]    prints: replaycost: rounds N threads T recorded 4NT
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16

static int n;

static void rounds(MPI_Comm comm)
{
    int v, w, flag, k;
    MPI_Request s, r[2];
    MPI_Status st;
    for (int i = 0; i < n; i++) {
        MPI_Isend(&i, 1, MPI_INT, 0, i % 100, comm, &s);
        MPI_Iprobe(MPI_ANY_SOURCE, 1000, comm, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 7, comm, &r[0]);
        MPI_Isend(&i, 1, MPI_INT, 0, 7, comm, &r[1]);
        MPI_Waitany(2, r, &k, &st);
        MPI_Waitany(2, r, &k, &st);
    }
}

static void *thread(void *comm)
{
    rounds(*(MPI_Comm *)comm);
    return NULL;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 1000;
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    if (threads < 0 || threads > MAX_THREADS)
        threads = 0;
    if (threads == 0) {
        MPI_Init(&argc, &argv);
        rounds(MPI_COMM_WORLD);
    } else {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "replaycost: MPI_THREAD_MULTIPLE not granted\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Comm comms[MAX_THREADS];
        pthread_t t[MAX_THREADS];
        for (int i = 0; i < threads; i++)
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, thread, &comms[i]);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < threads; i++)
            MPI_Comm_free(&comms[i]);
    }
    int t = threads > 0 ? threads : 1;
    printf("replaycost: rounds %d threads %d recorded %d\n", n, threads, 4 * n * t);
    MPI_Finalize();
    return 0;
}
