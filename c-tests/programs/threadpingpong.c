/* Threads of ranks 0 and 1 ping-pong under MPI_THREAD_MULTIPLE, for
 * vtime's clock per thread. argv: mode ("together": the threads run at
 * once, each on its own duplicate of MPI_COMM_WORLD; "inturn": each is
 * created once the one before it has been joined, all on one duplicate,
 * and the main thread prints "threadpingpong: joined rank R thread T
 * at_us A", A its MPI_Wtime after the join),
 * threads, rounds and bytes per message. Rank 0 sends first. Each thread
 * prints "threadpingpong: rank R thread T end_us E", E its MPI_Wtime at
 * its end, in us. Ranks past 1 only initialize and finalize. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 8

static int rank, rounds, bytes;
static MPI_Comm comms[MAX_THREADS];

struct player {
    int index;
    MPI_Comm comm;
};

static void *play(void *arg)
{
    struct player *p = arg;
    char *buf = calloc((size_t)bytes + 1, 1);
    int other = 1 - rank;
    for (int i = 0; i < rounds; i++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, other, p->index, p->comm);
            MPI_Recv(buf, bytes, MPI_BYTE, other, p->index, p->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, other, p->index, p->comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, other, p->index, p->comm);
        }
    }
    printf("threadpingpong: rank %d thread %d end_us %.3f\n", rank, p->index, MPI_Wtime() * 1e6);
    fflush(stdout);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    if (argc != 5) {
        fprintf(stderr, "usage: threadpingpong together|inturn THREADS ROUNDS BYTES\n");
        return 2;
    }
    int together = strcmp(argv[1], "together") == 0, threads = atoi(argv[2]);
    rounds = atoi(argv[3]);
    bytes = atoi(argv[4]);
    if (threads < 1 || threads > MAX_THREADS)
        threads = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "threadpingpong: MPI provides thread level %d only\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int t = 0; t < threads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    struct player players[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    for (int t = 0; rank < 2 && t < threads; t++) {
        players[t].index = t;
        players[t].comm = comms[together ? t : 0];
        pthread_create(&ids[t], NULL, play, &players[t]);
        if (!together) {
            pthread_join(ids[t], NULL);
            printf("threadpingpong: joined rank %d thread %d at_us %.3f\n", rank, t, MPI_Wtime() * 1e6);
        }
    }
    for (int t = 0; together && rank < 2 && t < threads; t++)
        pthread_join(ids[t], NULL);
    MPI_Finalize();
    return 0;
}
