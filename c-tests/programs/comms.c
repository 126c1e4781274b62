/* Communicators of every kind, for the `comm` service
 * (c-tests/modules/commtrack.c lists them at MPI_Finalize;
 * tests/llnl_services.rs has the lists computed by hand). In order:
 *   split of world by rank % 2, keys reversed (members by falling rank);
 *   a dup of it, freed; a 2x2 cart of world; its rows (Cart_sub);
 *   world ranks 1 and 3 (Comm_create; the others get MPI_COMM_NULL), freed;
 *   an intercommunicator between the two halves; its merge (odd ranks high);
 *   a ring graph of world.
 * Each is checked by a barrier or an allreduce on it.
 *
 * usage: comms            (4 ranks)
 * prints: comms: rank R sum S   (the allreduce of world ranks on the merge)
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    MPI_Comm half, dup, cart, row, pair, inter, merged, ring;
    MPI_Group world_group, odd_group;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "comms: needs 4 ranks, got %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_dup(half, &dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);

    int dims[2] = {2, 2}, periods[2] = {1, 0}, keep[2] = {0, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep, &row);
    MPI_Barrier(row);

    int odd[2] = {1, 3};
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, 2, odd, &odd_group);
    MPI_Comm_create(MPI_COMM_WORLD, odd_group, &pair);
    if (pair != MPI_COMM_NULL) {
        MPI_Barrier(pair);
        MPI_Comm_free(&pair);
    }
    MPI_Group_free(&odd_group);
    MPI_Group_free(&world_group);

    /* The other half's local rank 0 is its highest world rank. */
    int remote_leader = rank % 2 ? 2 : 3;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 7, &inter);
    MPI_Intercomm_merge(inter, rank % 2, &merged);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);

    int index[4] = {2, 4, 6, 8}, edges[8] = {1, 3, 0, 2, 1, 3, 2, 0};
    MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &ring);
    MPI_Barrier(ring);

    printf("comms: rank %d sum %d\n", rank, sum);
    MPI_Finalize();
    return 0;
}
