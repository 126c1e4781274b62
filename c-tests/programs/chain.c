/* Calls a fixed sequence of MPI routines and prints, on rank 0, the layer
 * log of each call: which modules it passed through, in which order. */
#include <mpi.h>
#include <stdio.h>
#include "chaincheck.h"

static int rank;

static void show(const char *what)
{
    chaincheck_show(rank, what);
}

int main(int argc, char **argv)
{
    int size, value = 7;
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    show("Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    show("Comm_rank");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    show("Comm_size");
    if (size >= 2) {
        if (rank == 0)
            MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        show("Send");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    show("Barrier");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
