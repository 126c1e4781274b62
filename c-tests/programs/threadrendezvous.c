/* Two ranks under MPI_THREAD_MULTIPLE each send 1 MiB (a rendezvous) to
 * the other from one thread, while another thread of each posts the
 * matching receive only after 0.8 s: both sends wait longer than vtime's
 * deadlock probe delay, yet no deadlock is there. Prints "threadrendezvous:
 * rank R ok" once both threads are joined and the data is right. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BYTES (1 << 20)

static int rank;
static char *out, *in;

static void *sender(void *arg)
{
    (void)arg;
    MPI_Send(out, BYTES, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD);
    return NULL;
}

static void *receiver(void *arg)
{
    (void)arg;
    usleep(800000);
    MPI_Recv(in, BYTES, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE || size != 2) {
        fprintf(stderr, "threadrendezvous: needs MPI_THREAD_MULTIPLE and 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    out = malloc(BYTES);
    in = calloc(BYTES, 1);
    for (int i = 0; i < BYTES; i++)
        out[i] = (char)(rank + i);
    pthread_t s, r;
    pthread_create(&s, NULL, sender, NULL);
    pthread_create(&r, NULL, receiver, NULL);
    pthread_join(s, NULL);
    pthread_join(r, NULL);
    int bad = 0;
    for (int i = 0; i < BYTES; i++)
        bad += in[i] != (char)(1 - rank + i);
    if (bad == 0)
        printf("threadrendezvous: rank %d ok\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
