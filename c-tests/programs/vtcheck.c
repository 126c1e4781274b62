/* vtime's exactness check: 4 ranks run phases of known virtual duration
 * on a uniform network whose message of s bytes costs L + s / B ns (the
 * simple model), with cpu_factor 0 so that only the network moves the
 * clocks. Every phase starts after an MPI_Barrier (all clocks then agree)
 * and each rank compares the MPI_Wtime difference over the phase with
 * the model's answer, to 0.01 ns.
 *
 *   A  wildcards: ranks 1-3 MPI_Send 8r bytes (tag r) to rank 0, which
 *      takes them with MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG)
 *   B  nonblocking: rank 0 MPI_Irecv from 1 (100 B) and 2 (200 B), then
 *      MPI_Waitsome until both are in; ranks 1, 2 MPI_Isend + MPI_Wait
 *   C  probes: rank 0 polls MPI_Iprobe for rank 2's 100 B (tag 8) and
 *      MPI_Recv's it, then MPI_Mprobe + MPI_Mrecv rank 3's 1000 B (tag 7)
 *   D  MPI_Sendrecv of 400 B round the ring, then MPI_Sendrecv_replace
 *      of 400 B the other way, with MPI_STATUS_IGNORE
 *   E  persistent: ranks 0 and 1 ping-pong 64 B 3 times with
 *      MPI_Send_init/MPI_Recv_init, MPI_Start, MPI_Startall, MPI_Wait(all)
 *   F  communicators: MPI_Comm_split {0,2} {1,3}, MPI_Allreduce of one
 *      double on it; MPI_Comm_dup of the world, MPI_Ibarrier + MPI_Wait on
 *      the duplicate; MPI_Iallreduce of one double on the world, MPI_Test
 *      until done
 *   G  collectives: MPI_Bcast of 100 B, MPI_Alltoall of 8 B blocks,
 *      MPI_Gatherv of 16 B to rank 0 in place
 *
 * usage: vtcheck L_NS B_BYTES_PER_NS
 * prints: "vtcheck: ok" on rank 0, or a line per wrong phase
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double L, B;
static int rank, bad;

/* One message of s bytes. */
static double cost(double s) { return L + s / B; }

static double t0;
static void begin(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
}

static void end(const char *phase, double want)
{
    double got = (MPI_Wtime() - t0) * 1e9;
    if (fabs(got - want) > 0.01) {
        printf("vtcheck: rank %d phase %s got %.3f ns want %.3f ns\n", rank, phase, got, want);
        bad++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: vtcheck L_NS B_BYTES_PER_NS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    L = atof(argv[1]);
    B = atof(argv[2]);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "vtcheck: needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static char buf[4][4096], big[4096];
    MPI_Status st;

    /* A */
    begin();
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            MPI_Recv(buf[0], 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        end("A", cost(24));
    } else {
        MPI_Send(buf[0], 8 * rank, MPI_BYTE, 0, rank, MPI_COMM_WORLD);
        end("A", 0);
    }

    /* B */
    begin();
    if (rank == 0) {
        MPI_Request r[2];
        MPI_Irecv(buf[1], 100, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(buf[2], 200, MPI_BYTE, 2, 0, MPI_COMM_WORLD, &r[1]);
        int left = 2;
        while (left > 0) {
            int n, idx[2];
            MPI_Waitsome(2, r, &n, idx, MPI_STATUSES_IGNORE);
            left -= n;
        }
        end("B", cost(200));
    } else if (rank <= 2) {
        MPI_Request r;
        MPI_Isend(buf[0], 100 * rank, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        end("B", 0);
    } else {
        end("B", 0);
    }

    /* C */
    begin();
    if (rank == 0) {
        int flag = 0;
        while (!flag)
            MPI_Iprobe(2, 8, MPI_COMM_WORLD, &flag, &st);
        MPI_Recv(buf[1], 100, MPI_BYTE, 2, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Message msg;
        MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &msg, &st);
        MPI_Mrecv(big, 1000, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        end("C", cost(1000));
    } else if (rank == 2) {
        MPI_Send(buf[0], 100, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
        end("C", 0);
    } else if (rank == 3) {
        MPI_Send(big, 1000, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        end("C", 0);
    } else {
        end("C", 0);
    }

    /* D */
    begin();
    {
        int right = (rank + 1) % 4, left = (rank + 3) % 4;
        MPI_Sendrecv(buf[0], 400, MPI_BYTE, right, 5, buf[1], 400, MPI_BYTE, left, 5, MPI_COMM_WORLD, &st);
        MPI_Sendrecv_replace(buf[1], 400, MPI_BYTE, left, 6, right, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        end("D", 2 * cost(400));
    }

    /* E */
    begin();
    if (rank <= 1) {
        int peer = 1 - rank;
        MPI_Request r[2];
        MPI_Send_init(buf[0], 64, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &r[0]);
        MPI_Recv_init(buf[1], 64, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &r[1]);
        for (int i = 0; i < 3; i++) {
            if (rank == 0) {
                MPI_Startall(2, r);
                MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            } else {
                MPI_Start(&r[1]);
                MPI_Wait(&r[1], MPI_STATUS_IGNORE);
                MPI_Start(&r[0]);
                MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            }
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        end("E", rank == 0 ? 6 * cost(64) : 5 * cost(64));
    } else {
        end("E", 0);
    }

    /* F */
    begin();
    {
        MPI_Comm half, dup;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        double x = rank, y;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, half);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Request r;
        MPI_Ibarrier(dup, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r);
        int flag = 0;
        while (!flag)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        if (y != 3)
            bad++;
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
        /* log2(2) x cost(8), then log2(4) x cost(0), then log2(4) x cost(8) */
        end("F", cost(8) + 2 * cost(0) + 2 * cost(8));
    }

    /* G */
    begin();
    {
        MPI_Bcast(buf[0], 100, MPI_BYTE, 1, MPI_COMM_WORLD);
        MPI_Alltoall(buf[1], 8, MPI_BYTE, buf[2], 8, MPI_BYTE, MPI_COMM_WORLD);
        int counts[4] = {16, 16, 16, 16}, displs[4] = {0, 16, 32, 48};
        if (rank == 0)
            MPI_Gatherv(MPI_IN_PLACE, 16, MPI_BYTE, buf[3], counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        else
            MPI_Gatherv(buf[3], 16, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, 0, MPI_COMM_WORLD);
        /* bcast: log2(4) x cost(100); alltoall, gather: (4 - 1) x cost(block) */
        end("G", 2 * cost(100) + 3 * cost(8) + 3 * cost(16));
    }

    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("vtcheck: ok\n");
    MPI_Finalize();
    return 0;
}
