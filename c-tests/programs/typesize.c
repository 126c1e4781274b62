/* Datatype sizes as a tool records them: rank 0 sends rank 1 one item of
 * a derived type, frees the type, creates another of a different size
 * (which the MPI may give the same handle) and sends one item of that.
 * Each send's and receive's bytes must be its own type's: 12, then 20.
 *
 * usage: typesize            (2 ranks)
 * prints (rank 0): typesize: reused R   (1 if the second type got the
 *                  first one's handle)
 */
#include <mpi.h>
#include <stdio.h>

static void exchange(int rank, MPI_Datatype t, int tag)
{
    int buf[8] = {0};
    if (rank == 0)
        MPI_Send(buf, 1, t, 1, tag, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, 1, t, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype first, second;
    MPI_Type_contiguous(3, MPI_INT, &first);
    MPI_Type_commit(&first);
    exchange(rank, first, 1);
    MPI_Datatype old = first;
    MPI_Type_free(&first);
    MPI_Type_contiguous(5, MPI_INT, &second);
    MPI_Type_commit(&second);
    exchange(rank, second, 2);
    int reused = second == old;
    MPI_Type_free(&second);
    if (rank == 0)
        printf("typesize: reused %d\n", reused);
    MPI_Finalize();
    return 0;
}
