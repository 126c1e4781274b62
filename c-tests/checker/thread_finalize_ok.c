// expect: none
// Rank 0 joins its second thread, inside MPI_Recv until rank 1 sends a
// second later, before MPI_Finalize.
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

static void *receiver(void *arg) {
    int y = 0;
    (void)arg;
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
        pthread_join(t, NULL);
    } else if (rank == 1) {
        sleep(1);
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
