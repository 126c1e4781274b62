/* A tour of the MPI that virtual ranks provide, with results that do
 * not depend on timing: nonblocking collectives, persistent requests,
 * Waitany/Waitsome/Testany, probes, a derived datatype, a Cartesian grid,
 * groups and MPI_Comm_create, MAXLOC and a user operation, the v
 * collectives, reduce-scatter, exscan, and every send mode. Each rank
 * folds what it got into a few numbers; rank 0 gathers and prints them,
 * so a normal run and a virtual-rank run print the same text.
 *
 * prints: vfeatures: rank R a A b B c C d D e E f F
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2x2 matrix product mod a prime, per element of 4 longs: associative,
 * not commutative (inout = in x inout). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int e = 0; e < *len; e++) {
        long *a = (long *)in + 4 * e, *b = (long *)inout + 4 * e, c[4];
        c[0] = (a[0] * b[0] + a[1] * b[2]) % 1000003;
        c[1] = (a[0] * b[1] + a[1] * b[3]) % 1000003;
        c[2] = (a[2] * b[0] + a[3] * b[2]) % 1000003;
        c[3] = (a[2] * b[1] + a[3] * b[3]) % 1000003;
        memcpy(b, c, sizeof c);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long out[6] = {0};

    /* Nonblocking collectives, completed by a Test loop and Waitall. */
    int b = rank == 2 ? 77 : -1, s = 0, flag = 0;
    MPI_Request rq[3];
    MPI_Ibcast(&b, 1, MPI_INT, 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Iallreduce(&rank, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[2]);
    while (!flag)
        MPI_Testall(3, rq, &flag, MPI_STATUSES_IGNORE);
    int *a2 = malloc(size * sizeof(int)), *g2 = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        a2[i] = rank * 100 + i;
    MPI_Request r2[2];
    MPI_Ialltoall(a2, 1, MPI_INT, g2, 1, MPI_INT, MPI_COMM_WORLD, &r2[0]);
    int gsum = 0;
    MPI_Igather(&rank, 1, MPI_INT, rank == 0 ? a2 : NULL, 1, MPI_INT, 0, MPI_COMM_WORLD, &r2[1]);
    MPI_Waitall(2, r2, MPI_STATUSES_IGNORE);
    for (int i = 0; i < size; i++)
        gsum += g2[i];
    out[0] = b * 1000000L + s * 1000L + gsum % 1000;

    /* Persistent ring, three rounds. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, sv = rank, rv = -1;
    MPI_Request pr[2];
    MPI_Send_init(&sv, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &pr[0]);
    MPI_Recv_init(&rv, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &pr[1]);
    long ring = 0;
    for (int k = 0; k < 3; k++) {
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
        sv = rv + 1;
        ring = ring * 100 + rv;
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
    out[1] = ring;

    /* Rank 0 collects one message from each other rank with Waitany,
     * then Waitsome, then Testany; others send with every mode. */
    long any = 0;
    if (rank == 0) {
        int n = size - 1, *v = calloc(n, sizeof(int)), done = 0;
        MPI_Request *r = malloc(n * sizeof(MPI_Request));
        for (int i = 0; i < n; i++)
            MPI_Irecv(&v[i], 1, MPI_INT, i + 1, 3, MPI_COMM_WORLD, &r[i]);
        while (done < n) {
            int idx, cnt, *ids = malloc(n * sizeof(int));
            if (done % 3 == 0) {
                MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE);
                done++;
            } else if (done % 3 == 1) {
                MPI_Waitsome(n, r, &cnt, ids, MPI_STATUSES_IGNORE);
                done += cnt;
            } else {
                int f = 0;
                while (!f)
                    MPI_Testany(n, r, &idx, &f, MPI_STATUS_IGNORE);
                if (idx != MPI_UNDEFINED)
                    done++;
            }
            free(ids);
        }
        for (int i = 0; i < n; i++)
            any += v[i];
        free(v);
        free(r);
    } else {
        int v = rank * rank;
        if (rank % 3 == 0)
            MPI_Ssend(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        else if (rank % 3 == 1)
            MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        else {
            MPI_Request q;
            MPI_Issend(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    }

    /* Probe a message of unknown size, and a column of a matrix as a
     * vector datatype. */
    if (rank == 1) {
        double m[4][5];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                m[i][j] = i * 10 + j;
        MPI_Datatype col;
        MPI_Type_vector(4, 1, 5, MPI_DOUBLE, &col);
        MPI_Type_commit(&col);
        MPI_Send(&m[0][3], 1, col, 0, 4, MPI_COMM_WORLD);
        MPI_Type_free(&col);
    } else if (rank == 0) {
        MPI_Status st;
        int count;
        MPI_Probe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        double c[8] = {0};
        MPI_Recv(c, count, MPI_DOUBLE, st.MPI_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        any = any * 1000 + count * 100 + (long)(c[0] + c[1] + c[2] + c[3]);
    }
    out[2] = any;

    /* A Cartesian grid: shifts and a halo value. */
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int cr, up, down, west, east;
    MPI_Comm_rank(cart, &cr);
    MPI_Cart_coords(cart, cr, 2, coords);
    MPI_Cart_shift(cart, 0, 1, &up, &down);
    MPI_Cart_shift(cart, 1, 1, &west, &east);
    int halo = -5;
    MPI_Sendrecv(&cr, 1, MPI_INT, down, 6, &halo, 1, MPI_INT, up, 6, cart, MPI_STATUS_IGNORE);
    out[3] = coords[0] * 1000000L + coords[1] * 10000L + (halo + 10) * 100L + (east == MPI_PROC_NULL) * 10 +
             (west == MPI_PROC_NULL);
    MPI_Comm_free(&cart);

    /* Groups: the even ranks' communicator, and a translation. */
    MPI_Group world, even;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ne = (size + 1) / 2, *ev = malloc(ne * sizeof(int));
    for (int i = 0; i < ne; i++)
        ev[i] = 2 * i;
    MPI_Group_incl(world, ne, ev, &even);
    MPI_Comm ecomm;
    MPI_Comm_create(MPI_COMM_WORLD, even, &ecomm);
    int tr = -9, er = -1, esum = -1;
    MPI_Group_translate_ranks(world, 1, &rank, even, &tr);
    if (ecomm != MPI_COMM_NULL) {
        MPI_Comm_rank(ecomm, &er);
        MPI_Allreduce(&rank, &esum, 1, MPI_INT, MPI_SUM, ecomm);
        MPI_Comm_free(&ecomm);
    }
    MPI_Group_free(&even);
    MPI_Group_free(&world);
    free(ev);

    /* MAXLOC, a non-commutative user operation, exscan. */
    struct {
        double v;
        int i;
    } mine = {(rank * 7) % size, rank}, best;
    MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Op op;
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_LONG, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(matmul, 0, &op);
    long lv[4] = {rank + 1, 1, 1, 0}, rm[4] = {0};
    MPI_Reduce(lv, rm, 1, mat, op, size - 1, MPI_COMM_WORLD);
    MPI_Bcast(rm, 1, mat, size - 1, MPI_COMM_WORLD);
    long red = (rm[0] * 7 + rm[1] * 11 + rm[2] * 13 + rm[3]) % 1000003;
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
    int ex = -1;
    MPI_Exscan(&rank, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        ex = 0;
    out[4] = ((tr + 1) * 100L + er + 1) * 1000000L + esum * 10000L + best.i * 100L + ex % 100;
    out[5] = red;

    /* The v collectives and reduce-scatter, folded into out[5]. */
    int *cnt = malloc(size * sizeof(int)), *dsp = malloc(size * sizeof(int)), tot = 0;
    for (int i = 0; i < size; i++) {
        cnt[i] = i % 3 + 1;
        dsp[i] = tot;
        tot += cnt[i];
    }
    int *all = malloc(tot * sizeof(int)), *mine_v = malloc(3 * sizeof(int));
    for (int k = 0; k < cnt[rank]; k++)
        mine_v[k] = rank * 10 + k;
    MPI_Allgatherv(mine_v, cnt[rank], MPI_INT, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    long fold = 0;
    for (int i = 0; i < tot; i++)
        fold = (fold * 7 + all[i]) % 1000003;
    int back[3] = {0};
    MPI_Scatterv(all, cnt, dsp, MPI_INT, back, cnt[rank], MPI_INT, 0, MPI_COMM_WORLD);
    int *sc = malloc(size * sizeof(int)), *rs = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int)),
        *rd = malloc(size * sizeof(int));
    int *sb = malloc(3 * size * sizeof(int)), *rb = malloc(3 * size * sizeof(int));
    for (int i = 0, o = 0; i < size; i++) {
        sc[i] = (rank + i) % 3 + 1;
        sd[i] = o;
        for (int k = 0; k < sc[i]; k++)
            sb[o + k] = rank * 1000 + i * 10 + k;
        o += sc[i];
    }
    for (int i = 0, o = 0; i < size; i++) {
        rs[i] = (i + rank) % 3 + 1;
        rd[i] = o;
        o += rs[i];
    }
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rs, rd, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < rd[size - 1] + rs[size - 1]; i++)
        fold = (fold * 7 + rb[i]) % 1000003;
    int *rsb = malloc(2 * size * sizeof(int)), rso[2];
    for (int i = 0; i < 2 * size; i++)
        rsb[i] = rank + i;
    MPI_Reduce_scatter_block(rsb, rso, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    out[5] = (out[5] * 1000003 + fold) % 1000000007 + back[0] + rso[0] * 10 + rso[1];

    long *every = rank == 0 ? malloc(6 * size * sizeof(long)) : NULL;
    MPI_Gather(out, 6, MPI_LONG, every, 6, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            long *l = every + 6 * r;
            printf("vfeatures: rank %d a %ld b %ld c %ld d %ld e %ld f %ld\n", r, l[0], l[1], l[2], l[3], l[4], l[5]);
        }
    MPI_Finalize();
    return 0;
}
