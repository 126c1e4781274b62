/* Asks MPI_Init_thread for the thread level LEVEL (0 SINGLE, 1 FUNNELED,
 * 2 SERIALIZED, 3 MULTIPLE) and prints what it was given and what
 * MPI_Query_thread says afterwards. Asking for any level is legal; the
 * answer must be no more than the implementation really provides.
 * With `thread`, rank 0 then starts a thread that asks MPI_Initialized
 * (legal in any thread) and then calls MPI_Comm_size (legal only above
 * MPI_THREAD_FUNNELED).
 *
 * usage: thread_level LEVEL [thread]
 * prints: thread_level: rank R required Q provided P query P
 *         thread_level: thread initialized I
 *         thread_level: thread size S
 */
#include <mpi.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void *other_thread(void *arg)
{
    int flag = -1, size = -1;
    (void)arg;
    MPI_Initialized(&flag);
    printf("thread_level: thread initialized %d\n", flag);
    fflush(stdout);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("thread_level: thread size %d\n", size);
    fflush(stdout);
    return NULL;
}

int main(int argc, char **argv)
{
    static const int levels[4] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                  MPI_THREAD_MULTIPLE};
    int want = levels[(argc > 1 ? atoi(argv[1]) : 0) & 3];
    int rank, provided = -1, query = -1;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Query_thread(&query);
    printf("thread_level: rank %d required %d provided %d query %d\n", rank, want, provided, query);
    fflush(stdout);
    if (rank == 0 && argc > 2 && strcmp(argv[2], "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, other_thread, NULL);
        pthread_join(t, NULL);
    }
    MPI_Finalize();
    return 0;
}
