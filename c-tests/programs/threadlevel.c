/* Asks MPI_THREAD_MULTIPLE and prints what MPI (and the modules) granted.
 * prints (each rank): threadlevel: provided P multiple M */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    printf("threadlevel: provided %d multiple %d\n", provided, MPI_THREAD_MULTIPLE);
    MPI_Finalize();
    return 0;
}
