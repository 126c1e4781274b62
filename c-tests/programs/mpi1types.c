/* Builds a type with MPI_Type_hvector (an MPI-1 routine MPI-3 removed;
 * Open MPI 4.1 declares it with OMPI_OMIT_MPI1_COMPAT_DECLS=0) and sends
 * one element of it to itself: every 4th int of 16.
 * prints: mpi1types: rank R size S received A B C D */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, in[16], out[4] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 16; i++)
        in[i] = i * 10 + rank;
    MPI_Datatype every4th;
    MPI_Type_hvector(4, 1, 4 * sizeof(int), MPI_INT, &every4th);
    MPI_Type_commit(&every4th);
    int size;
    MPI_Type_size(every4th, &size);
    MPI_Sendrecv(in, 1, every4th, rank, 0, out, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("mpi1types: rank %d size %d received %d %d %d %d\n", rank, size, out[0], out[1], out[2], out[3]);
    MPI_Type_free(&every4th);
    MPI_Finalize();
    return 0;
}
