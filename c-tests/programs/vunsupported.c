/* Calls a routine that virtual ranks do not provide (MPI I/O), after a
 * barrier: the run must stop naming it.
 *
 * prints: vunsupported: before   (then nothing)
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("vunsupported: before\n");
        fflush(stdout);
    }
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, "vunsupported.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    printf("vunsupported: after\n");
    MPI_Finalize();
    return 0;
}
