// expect: thread
// Under MPI_THREAD_FUNNELED, a second thread of each rank makes the
// exchange: only the thread that initialized MPI may call it.
#include <mpi.h>
#include <pthread.h>

static int rank;

static void *exchange(void *arg) {
    int x = 1, y = 0;
    (void)arg;
    if (rank == 0)
        MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); // reported
    else if (rank == 1)
        MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // reported
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_create(&t, NULL, exchange, NULL);
    pthread_join(t, NULL);
    MPI_Finalize();
    return 0;
}
