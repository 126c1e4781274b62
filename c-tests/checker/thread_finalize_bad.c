// expect: thread
// Rank 0 calls MPI_Finalize while its second thread is still inside
// MPI_Recv (rank 1 sends a second later).
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

static volatile int receiving;

static void *receiver(void *arg) {
    int y = 0;
    (void)arg;
    receiving = 1;
    MPI_Recv(&y, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, x = 1;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        pthread_create(&t, NULL, receiver, NULL);
        while (!receiving)
            usleep(1000);
        usleep(100000);
        MPI_Finalize(); // reported
        pthread_join(t, NULL);
        return 0;
    }
    if (rank == 1) {
        sleep(1);
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
