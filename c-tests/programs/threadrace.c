/* Threads that call MPI at once, and race. Under MPI_THREAD_MULTIPLE, on
 * every rank 4 threads each make 50 MPI_Sendrecv around a ring, each on its
 * own duplicate of MPI_COMM_WORLD. Then two threads of rank 0 (argv[1]
 * threads, up to 4, if given) race for the
 * 60 messages that the other ranks send to MPI_ANY_SOURCE with one tag,
 * with jitter: each thread folds the sources it got into its own checksum,
 * so the pair changes from run to run. Each thread stops at a stop message
 * (-1), which rank 1 sends to each once every data message has been matched
 * (MPI_Ssend, then a barrier of the senders).
 *
 * Prints "threadrace: provided P multiple M" on every rank, "threadrace:
 * rank R ring ok" when every ring message came from the left neighbour
 * with the right value, and on rank 0 "threadrace: thread T got N
 * messages" and "threadrace: checksums A B". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define RING_THREADS 4
#define ROUNDS 50
#define MESSAGES 60
#define TAG 7
#define MAX_RACERS 4

static int rank, size;
static MPI_Comm ring[RING_THREADS], race;
static long ring_errors;

static void *ring_thread(void *arg)
{
    int t = (int)(long)arg;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < ROUNDS; i++) {
        int out = rank * 1000 + t * 100 + i, in = -1;
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_INT, right, t, &in, 1, MPI_INT, left, t, ring[t], &st);
        if (in != left * 1000 + t * 100 + i || st.MPI_SOURCE != left)
            __atomic_add_fetch(&ring_errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

struct racer {
    unsigned long checksum;
    int got;
};

static void *race_thread(void *arg)
{
    struct racer *me = arg;
    for (;;) {
        int v;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, TAG, race, &st);
        if (v < 0)
            return NULL;
        me->checksum = me->checksum * 31 + (unsigned long)st.MPI_SOURCE;
        me->got++;
    }
}

int main(int argc, char **argv)
{
    int provided, racers = argc > 1 ? atoi(argv[1]) : 2;
    if (racers < 1 || racers > MAX_RACERS)
        racers = 2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("threadrace: provided %d multiple %d\n", provided, MPI_THREAD_MULTIPLE);
    fflush(stdout);
    if (provided < MPI_THREAD_MULTIPLE || size < 2) {
        MPI_Finalize();
        return 1;
    }
    for (int t = 0; t < RING_THREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &ring[t]);
    MPI_Comm_dup(MPI_COMM_WORLD, &race);

    pthread_t threads[RING_THREADS];
    for (int t = 0; t < RING_THREADS; t++)
        pthread_create(&threads[t], NULL, ring_thread, (void *)(long)t);
    for (int t = 0; t < RING_THREADS; t++)
        pthread_join(threads[t], NULL);
    if (ring_errors == 0)
        printf("threadrace: rank %d ring ok\n", rank);
    fflush(stdout);

    MPI_Comm senders;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0, rank, &senders);
    if (rank == 0) {
        struct racer r[MAX_RACERS] = {{0, 0}};
        pthread_t t[MAX_RACERS];
        for (int i = 0; i < racers; i++)
            pthread_create(&t[i], NULL, race_thread, &r[i]);
        for (int i = 0; i < racers; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < racers; i++)
            printf("threadrace: thread %d got %d messages\n", i, r[i].got);
        printf("threadrace: checksums");
        for (int i = 0; i < racers; i++)
            printf(" %lu", r[i].checksum);
        printf("\n");
    } else {
        srand((unsigned)getpid() ^ (unsigned)(MPI_Wtime() * 1e6));
        int share = MESSAGES / (size - 1) + (rank <= MESSAGES % (size - 1));
        for (int i = 0; i < share; i++) {
            usleep((useconds_t)(rand() % 300));
            MPI_Ssend(&i, 1, MPI_INT, 0, TAG, race);
        }
        MPI_Barrier(senders);
        if (rank == 1) {
            int stop = -1;
            for (int i = 0; i < racers; i++)
                MPI_Send(&stop, 1, MPI_INT, 0, TAG, race);
        }
    }
    fflush(stdout);
    MPI_Comm_free(&senders);
    MPI_Comm_free(&race);
    for (int t = 0; t < RING_THREADS; t++)
        MPI_Comm_free(&ring[t]);
    MPI_Finalize();
    return 0;
}
