/* Asks MPI_Init_thread for the thread level LEVEL (0 SINGLE, 1 FUNNELED,
 * 2 SERIALIZED, 3 MULTIPLE) and prints what it was given and what
 * MPI_Query_thread says afterwards. Asking for any level is legal; the
 * answer must be no more than the implementation really provides.
 *
 * usage: thread_level LEVEL
 * prints: thread_level: rank R required Q provided P query P
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    static const int levels[4] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                  MPI_THREAD_MULTIPLE};
    int want = levels[(argc > 1 ? atoi(argv[1]) : 0) & 3];
    int rank, provided = -1, query = -1;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Query_thread(&query);
    printf("thread_level: rank %d required %d provided %d query %d\n", rank, want, provided, query);
    MPI_Finalize();
    return 0;
}
