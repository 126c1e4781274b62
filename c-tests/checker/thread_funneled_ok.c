// expect: none
// Under MPI_THREAD_FUNNELED, a second thread of each rank computes while
// the thread that initialized MPI makes the exchange.
#include <mpi.h>
#include <pthread.h>

static double sum;

static void *compute(void *arg) {
    (void)arg;
    for (int i = 1; i <= 1000000; i++)
        sum += 1.0 / i;
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, x = 1, y = 0;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pthread_create(&t, NULL, compute, NULL);
    if (rank == 0)
        MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_join(t, NULL);
    MPI_Finalize();
    return sum > 0 ? 0 : 1;
}
