/* Derived datatypes of every constructor, each sent once from rank 0 to
 * rank 1 (tag = the case's number) and received with the same type, for
 * the `datatype` service's walk (c-tests/modules/dtwalk.c prints each
 * send's flattened signature; tests/llnl_services.rs has the signatures
 * computed by hand).
 *
 * usage: dtypes            (2 ranks)
 * prints (rank 1): dtypes: received N   (the number of cases)
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

struct mixed {
    char c[3];
    double d;
    int i[2];
};

static int rank, cases;

/* Sends `count` of `t` from rank 0 to rank 1, as case `tag`, and frees
 * `t` if it is derived. */
static void exchange(MPI_Datatype t, int count, int derived)
{
    static double buf[512];
    int tag = ++cases;
    if (derived)
        MPI_Type_commit(&t);
    if (rank == 0)
        MPI_Send(buf, count, t, 1, tag, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, count, t, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (derived)
        MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    MPI_Datatype t, inner;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* 1 */ exchange(MPI_INT, 3, 0);
    /* 2 */ MPI_Type_contiguous(4, MPI_DOUBLE, &t); exchange(t, 2, 1);
    /* 3 */ MPI_Type_vector(3, 2, 4, MPI_INT, &t); exchange(t, 1, 1);
    /* 4 */ MPI_Type_create_hvector(2, 3, 40, MPI_SHORT, &t); exchange(t, 2, 1);
    {
        int lens[3] = {1, 2, 1}, disps[3] = {4, 0, 2};
        /* 5 */ MPI_Type_indexed(3, lens, disps, MPI_INT, &t); exchange(t, 1, 1);
    }
    {
        int lens[2] = {2, 1};
        MPI_Aint disps[2] = {8, 32};
        /* 6 */ MPI_Type_create_hindexed(2, lens, disps, MPI_DOUBLE, &t); exchange(t, 1, 1);
    }
    {
        int disps[3] = {0, 5, 2};
        /* 7 */ MPI_Type_create_indexed_block(3, 2, disps, MPI_FLOAT, &t); exchange(t, 1, 1);
    }
    {
        int lens[3] = {3, 1, 2};
        MPI_Aint disps[3] = {offsetof(struct mixed, c), offsetof(struct mixed, d), offsetof(struct mixed, i)};
        MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        MPI_Type_create_struct(3, lens, disps, types, &inner);
        /* 8 */ MPI_Type_create_resized(inner, 0, sizeof(struct mixed), &t); exchange(t, 2, 1);
        MPI_Type_free(&inner);
    }
    /* 9 */ MPI_Type_create_resized(MPI_INT, 0, 12, &t); exchange(t, 3, 1);
    {
        int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
        /* 10 */ MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t); exchange(t, 1, 1);
        /* 11 */ MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t); exchange(t, 1, 1);
    }
    /* 12 */ exchange(MPI_DOUBLE_INT, 2, 0);
    MPI_Type_vector(2, 1, 2, MPI_INT, &inner);
    /* 13 */ MPI_Type_contiguous(2, inner, &t); exchange(t, 1, 1);
    /* 14 */ MPI_Type_dup(inner, &t); exchange(t, 1, 1);
    MPI_Type_free(&inner);
    {
        int gsizes[1] = {8}, distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {2};
        /* 15 */ MPI_Type_create_darray(2, 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_DOUBLE, &t); exchange(t, 1, 1);
    }
    /* 16 */ exchange(MPI_INT, 0, 0);

    if (rank == 1)
        printf("dtypes: received %d\n", cases);
    MPI_Finalize();
    return 0;
}
