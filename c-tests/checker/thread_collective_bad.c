// expect: thread
// Two threads of each rank enter MPI_Barrier on MPI_COMM_WORLD at once
// (rank 1 a second later, so that rank 0's two are both inside): MPI
// cannot tell which of a rank's collectives on one communicator matches
// which of the other ranks'.
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

static void *member(void *arg) {
    (void)arg;
    MPI_Barrier(MPI_COMM_WORLD); // reported
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank;
    pthread_t t[2];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        sleep(1);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, member, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    MPI_Finalize();
    return 0;
}
