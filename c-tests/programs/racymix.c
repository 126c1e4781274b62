/* A racy program for the replay module: rank 0 receives from every other
 * rank with each call whose outcome MPI chooses, and folds into a checksum
 * the sources in arrival order and the number of failed polls, so that
 * both the matching and the control flow show in the output.
 *
 * Phases (tag = phase), M messages from each sender in each:
 *   1. MPI_Iprobe(ANY_SOURCE) polling, then MPI_Recv of the probed message;
 *   2. MPI_Irecv(ANY_SOURCE) per sender, polled with MPI_Test;
 *   3. the same, polled with MPI_Testany;
 *   4. the same, completed with MPI_Waitsome;
 *   5. MPI_Improbe(ANY_SOURCE) polling, then MPI_Mrecv;
 *   6. batches of MPI_Irecv(ANY_SOURCE), polled with MPI_Testall;
 *   7. MPI_Mprobe(ANY_SOURCE) + MPI_Mrecv, and MPI_Probe(ANY_SOURCE) +
 *      MPI_Recv, alternately;
 *   8. persistent receives from ANY_SOURCE, one per sender, started with
 *      MPI_Startall, completed with MPI_Waitany;
 *   9. one persistent receive from ANY_SOURCE, MPI_Start + MPI_Wait;
 *  10. MPI_Sendrecv receiving from ANY_SOURCE (sending to each sender in
 *      turn, tag 11);
 *  11. (tag 12) MPI 4's large-count forms where the MPI has them (MPICH
 *      4; the int forms under an MPI 3 such as Open MPI 4.1), in turn:
 *      MPI_Recv_c, MPI_Irecv_c + MPI_Wait, and a persistent
 *      MPI_Recv_init_c + MPI_Start + MPI_Wait, all from ANY_SOURCE.
 *
 * usage: racymix [M]   (default 20)
 * prints (rank 0): racymix: messages N checksum C
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#if MPI_VERSION >= 4
typedef MPI_Count count_t;
#define RECV_L MPI_Recv_c
#define IRECV_L MPI_Irecv_c
#define RECV_INIT_L MPI_Recv_init_c
#else
typedef int count_t;
#define RECV_L MPI_Recv
#define IRECV_L MPI_Irecv
#define RECV_INIT_L MPI_Recv_init
#endif

static unsigned long checksum = 1469598103934665603ul;
static long messages;

static void combine(long v)
{
    checksum = (checksum ^ (unsigned long)v) * 1099511628211ul;
}

static void got(int source, int value)
{
    combine(source * 100000L + value);
    messages++;
}

static void spin(double us)
{
    double t0 = MPI_Wtime();
    while ((MPI_Wtime() - t0) * 1e6 < us)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int m = argc > 1 ? atoi(argv[1]) : 20;
    int w = size - 1;
    if (rank != 0) {
        int v;
        for (int phase = 1; phase <= 11; phase++)
            for (int i = 0; i < m; i++) {
                spin((rank * 7 + i * 13) % 30);
                v = rank * 1000 + i;
                MPI_Send(&v, 1, MPI_INT, 0, phase == 11 ? 12 : phase, MPI_COMM_WORLD);
            }
        for (int i = 0; i < m; i++)
            MPI_Recv(&v, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    }
    int total = m * w, v;
    int *vals = malloc(sizeof(int) * w), *idx = malloc(sizeof(int) * w);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * w);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * w);
    MPI_Status st;
    long polls = 0;

    /* 1 */
    for (int n = 0; n < total;) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            polls++;
            continue;
        }
        MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        got(st.MPI_SOURCE, v);
        n++;
    }
    combine(polls);

    /* 2, 3, 4: w receives outstanding, reposted until total are posted. */
    for (int phase = 2; phase <= 4; phase++) {
        int posted = 0, n = 0;
        polls = 0;
        for (int i = 0; i < w && posted < total; i++, posted++)
            MPI_Irecv(&vals[i], 1, MPI_INT, MPI_ANY_SOURCE, phase, MPI_COMM_WORLD, &reqs[i]);
        for (int i = 0; n < total; i = (i + 1) % w) {
            int k = 0;
            if (phase == 2) {
                int flag = 0;
                if (reqs[i] != MPI_REQUEST_NULL)
                    MPI_Test(&reqs[i], &flag, &sts[0]);
                if (flag) {
                    idx[0] = i;
                    k = 1;
                }
            } else if (phase == 3) {
                int flag, j;
                MPI_Testany(w, reqs, &j, &flag, &sts[0]);
                if (flag && j != MPI_UNDEFINED) {
                    idx[0] = j;
                    k = 1;
                }
            } else {
                MPI_Waitsome(w, reqs, &k, idx, sts);
            }
            if (k == 0)
                polls++;
            for (int j = 0; j < k; j++) {
                int r = idx[j];
                got(sts[j].MPI_SOURCE, vals[r]);
                n++;
                if (posted < total) {
                    MPI_Irecv(&vals[r], 1, MPI_INT, MPI_ANY_SOURCE, phase, MPI_COMM_WORLD, &reqs[r]);
                    posted++;
                }
            }
        }
        combine(polls);
    }

    /* 5 */
    polls = 0;
    for (int n = 0; n < total;) {
        int flag;
        MPI_Message msg;
        MPI_Improbe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, &msg, &st);
        if (!flag) {
            polls++;
            continue;
        }
        MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
        got(st.MPI_SOURCE, v);
        n++;
    }
    combine(polls);

    /* 6: batches of w. */
    polls = 0;
    for (int n = 0; n < total; n += w) {
        for (int i = 0; i < w; i++)
            MPI_Irecv(&vals[i], 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &reqs[i]);
        int flag = 0;
        while (!flag) {
            MPI_Testall(w, reqs, &flag, sts);
            polls += !flag;
        }
        for (int i = 0; i < w; i++)
            got(sts[i].MPI_SOURCE, vals[i]);
    }
    combine(polls);

    /* 7 */
    for (int n = 0; n < total; n++) {
        if (n % 2) {
            MPI_Message msg;
            MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &msg, &st);
            MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
        } else {
            MPI_Probe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
            MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        got(st.MPI_SOURCE, v);
    }

    /* 8 */
    for (int i = 0; i < w; i++)
        MPI_Recv_init(&vals[i], 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &reqs[i]);
    for (int round = 0; round < m; round++) {
        MPI_Startall(w, reqs);
        for (int k = 0; k < w; k++) {
            int j;
            MPI_Waitany(w, reqs, &j, &st);
            got(st.MPI_SOURCE, vals[j]);
        }
    }
    for (int i = 0; i < w; i++)
        MPI_Request_free(&reqs[i]);

    /* 9 */
    MPI_Request p;
    MPI_Recv_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &p);
    for (int n = 0; n < total; n++) {
        MPI_Start(&p);
        MPI_Wait(&p, &st);
        got(st.MPI_SOURCE, v);
    }
    MPI_Request_free(&p);

    /* 10 */
    for (int n = 0; n < total; n++) {
        MPI_Sendrecv(&n, 1, MPI_INT, n % w + 1, 11, &v, 1, MPI_INT, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
        got(st.MPI_SOURCE, v);
    }

    /* 11 */
    count_t one = 1;
    for (int n = 0; n < total; n++) {
        if (n % 3 == 0) {
            RECV_L(&v, one, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st);
        } else if (n % 3 == 1) {
            IRECV_L(&v, one, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &p);
            MPI_Wait(&p, &st);
        } else {
            RECV_INIT_L(&v, one, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &p);
            MPI_Start(&p);
            MPI_Wait(&p, &st);
            MPI_Request_free(&p);
        }
        got(st.MPI_SOURCE, v);
    }

    printf("racymix: messages %ld checksum %lu\n", messages, checksum);
    free(vals);
    free(idx);
    free(reqs);
    free(sts);
    MPI_Finalize();
    return 0;
}
