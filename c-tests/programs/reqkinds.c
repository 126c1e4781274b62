/* Every kind of point-to-point request a correct program may use, each at
 * an eager size and a rendezvous size, between rank pairs (0,1), (2,3)...:
 * the replay must run each as it ran, without a false deadlock
 * (tests/sim_reqkinds.rs).
 *
 *  1. persistent receive with MPI_ANY_TAG, matched by MPI_Send, MPI_Ssend
 *     and MPI_Bsend;
 *  2. persistent receive with MPI_ANY_SOURCE, matched by MPI_Rsend (posted
 *     first, behind a barrier);
 *  3. persistent sends (MPI_Send_init, MPI_Ssend_init, MPI_Bsend_init),
 *     started with MPI_Startall, into plain receives;
 *  4. MPI_Sendrecv_replace with MPI_ANY_SOURCE;
 *  5. MPI_Mprobe + MPI_Mrecv, and MPI_Improbe + MPI_Imrecv, with wildcards;
 *  6. MPI_Irecv cancelled (it never matches), then a plain exchange;
 *  7. MPI_Issend polled with MPI_Test into MPI_Irecv(MPI_ANY_SOURCE).
 *
 * usage: reqkinds BYTES [standard]     prints: reqkinds: rank R bytes B sum S
 * (`standard`: every send in standard mode, for formats without modes)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, peer, bytes;

/* The synchronous and buffered sends, or, with the argument `standard`,
 * MPI_Send and its kin in their place (the request kinds stay). */
typedef int send_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int isend_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
static send_fn *ssend = MPI_Ssend, *bsend = MPI_Bsend;
static isend_fn *ssend_init = MPI_Ssend_init, *bsend_init = MPI_Bsend_init, *issend = MPI_Issend;
static char *sbuf, *rbuf;
static long sum;

static void fill(int seed)
{
    for (int i = 0; i < bytes; i++)
        sbuf[i] = (char)(seed + i * 7 + rank);
}

static void add(void)
{
    for (int i = 0; i < bytes; i++)
        sum = (sum * 31 + (unsigned char)rbuf[i]) % 1000000007L;
}

/* 1: the even rank receives through a persistent ANY_TAG receive; the odd
 * one sends in standard, synchronous and buffered mode. */
static void persistent_any_tag(void)
{
    int pack;
    MPI_Pack_size(bytes, MPI_CHAR, MPI_COMM_WORLD, &pack);
    int bsize = pack + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    if (rank % 2 == 0) {
        MPI_Request r;
        MPI_Status st;
        MPI_Recv_init(rbuf, bytes, MPI_CHAR, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 3; i++) {
            MPI_Start(&r);
            MPI_Wait(&r, &st);
            add();
            sum += st.MPI_TAG;
        }
        MPI_Request_free(&r);
    } else {
        fill(1);
        MPI_Send(sbuf, bytes, MPI_CHAR, peer, 11, MPI_COMM_WORLD);
        ssend(sbuf, bytes, MPI_CHAR, peer, 12, MPI_COMM_WORLD);
        bsend(sbuf, bytes, MPI_CHAR, peer, 13, MPI_COMM_WORLD);
    }
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
}

/* 2: the odd rank receives through a persistent ANY_SOURCE receive,
 * started before the barrier, so that the even rank's ready send finds it
 * posted. */
static void persistent_any_source_rsend(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    if (rank % 2 == 1) {
        MPI_Recv_init(rbuf, bytes, MPI_CHAR, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0) {
        fill(2);
        MPI_Rsend(sbuf, bytes, MPI_CHAR, peer, 21, MPI_COMM_WORLD);
    } else {
        MPI_Wait(&r, &st);
        add();
        sum += st.MPI_SOURCE;
        MPI_Request_free(&r);
    }
}

/* 3: persistent sends of each mode, both started at once. */
static void persistent_sends(void)
{
    int pack;
    MPI_Pack_size(bytes, MPI_CHAR, MPI_COMM_WORLD, &pack);
    int bsize = pack + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    char *s2 = malloc(bytes + 1), *s3 = malloc(bytes + 1);
    if (rank % 2 == 1) {
        MPI_Request r[3];
        fill(3);
        memcpy(s2, sbuf, bytes);
        memcpy(s3, sbuf, bytes);
        MPI_Send_init(sbuf, bytes, MPI_CHAR, peer, 31, MPI_COMM_WORLD, &r[0]);
        ssend_init(s2, bytes, MPI_CHAR, peer, 32, MPI_COMM_WORLD, &r[1]);
        bsend_init(s3, bytes, MPI_CHAR, peer, 33, MPI_COMM_WORLD, &r[2]);
        MPI_Startall(3, r);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; i++)
            MPI_Request_free(&r[i]);
    } else {
        for (int tag = 33; tag >= 31; tag--) {
            MPI_Recv(rbuf, bytes, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            add();
        }
    }
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
    free(s2);
    free(s3);
}

/* 4: both ranks exchange in place, the receive from any source. */
static void sendrecv_replace(void)
{
    MPI_Status st;
    fill(4);
    memcpy(rbuf, sbuf, bytes);
    MPI_Sendrecv_replace(rbuf, bytes, MPI_CHAR, peer, 41, MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, &st);
    add();
    sum += st.MPI_SOURCE;
}

/* 5: matched probes: blocking, then nonblocking (polled). */
static void matched_probes(void)
{
    if (rank % 2 == 0) {
        fill(5);
        MPI_Send(sbuf, bytes, MPI_CHAR, peer, 51, MPI_COMM_WORLD);
        MPI_Send(sbuf, bytes, MPI_CHAR, peer, 52, MPI_COMM_WORLD);
    } else {
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(rbuf, bytes, MPI_CHAR, &m, &st);
        add();
        sum += st.MPI_TAG;
        int flag = 0;
        while (!flag)
            MPI_Improbe(MPI_ANY_SOURCE, 52, MPI_COMM_WORLD, &flag, &m, &st);
        MPI_Request r;
        MPI_Imrecv(rbuf, bytes, MPI_CHAR, &m, &r);
        MPI_Wait(&r, &st);
        add();
        sum += st.MPI_SOURCE;
    }
}

/* 6: a receive that is cancelled before anything matches it. */
static void cancelled(void)
{
    MPI_Request r;
    MPI_Status st;
    int cancelled = 0;
    MPI_Irecv(rbuf, bytes, MPI_CHAR, peer, 61, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    sum += cancelled;
    fill(6);
    MPI_Sendrecv(sbuf, bytes, MPI_CHAR, peer, 62, rbuf, bytes, MPI_CHAR, peer, 62, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    add();
}

/* 7: a synchronous send polled into a wildcard receive. */
static void polled_ssend(void)
{
    MPI_Request r;
    int done = 0, polls = 0;
    fill(7);
    if (rank % 2 == 0)
        issend(sbuf, bytes, MPI_CHAR, peer, 71, MPI_COMM_WORLD, &r);
    else
        MPI_Irecv(rbuf, bytes, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        polls++;
    }
    if (rank % 2 == 1)
        add();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "reqkinds: needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bytes = argc > 1 ? atoi(argv[1]) : 1024;
    if (argc > 2 && strcmp(argv[2], "standard") == 0) {
        ssend = bsend = MPI_Send;
        ssend_init = bsend_init = MPI_Send_init;
        issend = MPI_Isend;
    }
    peer = rank ^ 1;
    sbuf = malloc(bytes + 1);
    rbuf = malloc(bytes + 1);
    persistent_any_tag();
    persistent_any_source_rsend();
    persistent_sends();
    sendrecv_replace();
    matched_probes();
    cancelled();
    polled_ssend();
    MPI_Barrier(MPI_COMM_WORLD);
    printf("reqkinds: rank %d bytes %d sum %ld\n", rank, bytes, sum);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
