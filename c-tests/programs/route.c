/* Calls MPI_Barrier on communicators of several sizes, for the router
 * module (modules/router.c), and prints on rank 0 the layer log of each:
 *   world: MPI_COMM_WORLD        self: MPI_COMM_SELF
 *   solo:  a split of size 1     pair: a split of size 2 (ranks 2k, 2k+1)
 *   again: MPI_COMM_WORLD once more, after the routed calls
 *   send:  rank 0 sends to rank 1 (not wrapped by the router)
 * then "route: ok" if every barrier returned MPI_SUCCESS. Run with 4 ranks. */
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
    int size, value = 7, bad = 0;
    MPI_Comm solo, pair;
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Communicators are made with PMPI_, so that only barriers are logged. */
    PMPI_Comm_split(MPI_COMM_WORLD, rank, 0, &solo);
    PMPI_Comm_split(MPI_COMM_WORLD, rank / 2, 0, &pair);
    chaincheck_take();

    bad |= MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS;
    show("world");
    bad |= MPI_Barrier(MPI_COMM_SELF) != MPI_SUCCESS;
    show("self");
    bad |= MPI_Barrier(solo) != MPI_SUCCESS;
    show("solo");
    bad |= MPI_Barrier(pair) != MPI_SUCCESS;
    show("pair");
    bad |= MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS;
    show("again");
    if (size >= 2) {
        if (rank == 0)
            MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        show("send");
    }
    if (rank == 0)
        printf("route: %s\n", bad ? "a barrier failed" : "ok");
    fflush(stdout);
    PMPI_Comm_free(&solo);
    PMPI_Comm_free(&pair);
    MPI_Finalize();
    return 0;
}
