// expect: none
// Under MPI_THREAD_MULTIPLE, each rank's second thread sends tag 1 before
// it receives tag 2: the first thread's receive of tag 1 completes, then
// its send of tag 2 meets the other rank's second thread.
#include <mpi.h>
#include <pthread.h>

static int to, from;

static void *second(void *arg) {
    int x = 2, y = 0;
    (void)arg;
    MPI_Send(&x, 1, MPI_INT, to, 1, MPI_COMM_WORLD);
    MPI_Recv(&y, 1, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, size, x = 1, y = 0;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;
    pthread_create(&t, NULL, second, NULL);
    MPI_Recv(&y, 1, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, to, 2, MPI_COMM_WORLD);
    pthread_join(t, NULL);
    MPI_Finalize();
    return 0;
}
