// expect: none
// Two threads of rank 0 wait at once, each on its own request.
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

static MPI_Request req[2];
static volatile int waiting;

static void *waiter(void *arg) {
    (void)arg;
    waiting = 1;
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, x[2] = {1, 2}, y[2] = {0};
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Irecv(&y[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&y[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &req[1]);
        pthread_create(&t, NULL, waiter, NULL);
        while (!waiting)
            usleep(1000);
        usleep(100000);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        pthread_join(t, NULL);
    } else if (rank == 1) {
        sleep(1);
        MPI_Send(&x[0], 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        MPI_Send(&x[1], 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
