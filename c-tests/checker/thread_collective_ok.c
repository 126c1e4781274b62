// expect: none
// Two threads of each rank enter MPI_Barrier at once, each on its own
// duplicate of MPI_COMM_WORLD.
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

static MPI_Comm comm[2];

static void *member(void *arg) {
    MPI_Barrier(*(MPI_Comm *)arg);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank;
    pthread_t t[2];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 2; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm[i]);
    if (rank == 1)
        sleep(1);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, member, &comm[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        MPI_Comm_free(&comm[i]);
    MPI_Finalize();
    return 0;
}
