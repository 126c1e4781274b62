/* A random mix of MPI calls, the same on every rank for a given seed: the
 * input of the SimGrid cross-check (tests/sim_simgrid.rs), which traces
 * it, exports it, and replays the export with smpirun and pnmpi sim.
 *
 * Each step, a generator seeded alike on every rank picks one pattern and
 * a message size between 0 and 4 MiB (log-uniform, so both sides of the
 * eager threshold), after an imbalanced compute burst of up to 200 us
 * drawn per rank:
 *   - shift exchange: MPI_Irecv, MPI_Isend, MPI_Waitall;
 *   - wildcard: MPI_Irecv(MPI_ANY_SOURCE), blocking MPI_Send, MPI_Wait;
 *   - MPI_Waitany until both requests are done;
 *   - MPI_Test polled until the receive is done, then MPI_Wait;
 *   - blocking pairs (MPI_Send then MPI_Recv, or the reverse);
 *   - MPI_Sendrecv;
 *   - a persistent receive with MPI_ANY_TAG or MPI_ANY_SOURCE, matched
 *     by MPI_Send, MPI_Ssend or MPI_Bsend;
 *   - MPI_Sendrecv_replace from MPI_ANY_SOURCE;
 *   - MPI_Mprobe and MPI_Mrecv, or MPI_Improbe polled and MPI_Imrecv;
 *   - an MPI_Irecv cancelled unmatched, then MPI_Rsend into a receive
 *     posted before a barrier;
 *   - persistent standard and synchronous sends, started together;
 *   - with MODE coll or all: a collective on MPI_COMM_WORLD or on a split
 *     communicator (every blocking MPI-1 collective, MPI_Scan, and with
 *     MODE all the v collectives and MPI_Reduce_scatter with unequal
 *     counts, and an MPI_Ialltoallv).
 *
 * MODE sim is all with MPI_Sendrecv in place of what the simulators
 * cannot time alike: the matched probes and the cancelled receive, which
 * virtual ranks refuse, and the MPI_Test poll (virtual ranks move a rank
 * that polls in vain when nothing else can happen; vtime's real polls
 * cannot tell).
 *
 * usage: randmix SEED STEPS [p2p|coll|all|sim] [COMPUTE]
 *   (default mode: all; COMPUTE scales every compute burst, default 1;
 *   0 computes nothing, for simulators whose clock only the network moves)
 * prints: randmix: seed S steps N mode M checksum C
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (4u << 20)

static uint64_t next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Log-uniform in [0, max]: as many small as large messages. */
static int size_in(uint64_t *s, unsigned max)
{
    unsigned bits = (unsigned)(next(s) % 23);
    unsigned v = bits ? (1u << (bits - 1)) + (unsigned)(next(s) % (1u << (bits - 1))) : 0;
    return (int)(v > max ? max : v);
}

/* Every burst's scale (COMPUTE). */
static double compute = 1;

static double spin(double us, double x)
{
    us *= compute;
    double t0 = MPI_Wtime();
    while ((MPI_Wtime() - t0) * 1e6 < us)
        for (int i = 0; i < 500; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

/* The count rank i sends rank j in step `step`'s v collective: the same
 * on every rank, unequal between pairs, zero for some. */
static int vcount(uint64_t seed, int step, int i, int j, int max)
{
    uint64_t s = seed * 1000003u + (uint64_t)step * 7919u + (uint64_t)i * 131u + (uint64_t)j;
    uint64_t v = next(&s) % 5;
    return v == 0 ? 0 : (int)(next(&s) % (uint64_t)(max + 1));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: randmix SEED STEPS [p2p|coll|all|sim] [COMPUTE]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t seed = strtoull(argv[1], NULL, 10);
    int steps = atoi(argv[2]);
    const char *mode = argc > 3 ? argv[3] : "all";
    if (argc > 4)
        compute = atof(argv[4]);
    int sim = strcmp(mode, "sim") == 0;
    int colls = strcmp(mode, "p2p") != 0, vcolls = sim || strcmp(mode, "all") == 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);

    unsigned char *a = malloc((size_t)MAX_BYTES * size), *b = malloc((size_t)MAX_BYTES * size);
    memset(a, rank + 1, (size_t)MAX_BYTES * size);
    int *sc = malloc(sizeof(int) * size), *rc = malloc(sizeof(int) * size);
    int *sd = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
    uint64_t shared = seed, mine = seed ^ (0x1234567ull * (uint64_t)(rank + 1));
    double x = 1;
    long checksum = 0;
    int bsize = MAX_BYTES + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    for (int step = 0; step < steps; step++) {
        x = spin((double)(next(&mine) % 200), x);
        int pattern = (int)(next(&shared) % (colls ? 13 : 11));
        if (sim && (pattern == 3 || pattern == 8 || pattern == 9))
            pattern = 5;
        int k = 1 + (int)(next(&shared) % (uint64_t)(size - 1));
        int to = (rank + k) % size, from = (rank + size - k) % size;
        int n = size_in(&shared, MAX_BYTES);
        MPI_Request req[2];
        MPI_Status st, sts[2];
        int idx, flag = 0;
        switch (pattern) {
        case 0:
            MPI_Irecv(b, n, MPI_BYTE, from, step, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, sts);
            break;
        case 1:
            MPI_Irecv(b, n, MPI_BYTE, MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &req[0]);
            MPI_Send(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD);
            MPI_Wait(&req[0], &st);
            checksum += st.MPI_SOURCE == from;
            break;
        case 2:
            MPI_Irecv(b, n, MPI_BYTE, from, step, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD, &req[1]);
            MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
            MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
            break;
        case 3:
            MPI_Irecv(b, n, MPI_BYTE, from, step, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD, &req[1]);
            while (!flag) {
                MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
                x = spin(5, x);
            }
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            break;
        case 4: {
            int partner = rank ^ 1;
            if (partner >= size)
                break;
            if (rank % 2 == 0) {
                MPI_Send(a, n, MPI_BYTE, partner, step, MPI_COMM_WORLD);
                MPI_Recv(b, n, MPI_BYTE, partner, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(b, n, MPI_BYTE, partner, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(a, n, MPI_BYTE, partner, step, MPI_COMM_WORLD);
            }
            break;
        }
        case 5:
            MPI_Sendrecv(a, n, MPI_BYTE, to, step, b, n, MPI_BYTE, from, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        case 6: {
            /* A wildcard source needs the tag: a later step's message from
             * another rank may be in flight already. */
            if (step % 2)
                MPI_Recv_init(b, n, MPI_BYTE, MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &req[0]);
            else
                MPI_Recv_init(b, n, MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &req[0]);
            MPI_Start(&req[0]);
            if (step % 3 == 0)
                MPI_Send(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD);
            else if (step % 3 == 1)
                MPI_Ssend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD);
            else
                MPI_Bsend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD);
            MPI_Wait(&req[0], &st);
            checksum += st.MPI_TAG == step && st.MPI_SOURCE == from;
            MPI_Request_free(&req[0]);
            break;
        }
        case 7:
            memcpy(b, a, (size_t)n);
            MPI_Sendrecv_replace(b, n, MPI_BYTE, to, step, MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &st);
            checksum += st.MPI_SOURCE == from;
            break;
        case 8: {
            MPI_Message m;
            MPI_Isend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD, &req[1]);
            if (step % 2) {
                MPI_Mprobe(MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &m, &st);
                MPI_Mrecv(b, n, MPI_BYTE, &m, &st);
            } else {
                while (!flag) {
                    MPI_Improbe(MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &flag, &m, &st);
                    x = spin(5, x);
                }
                MPI_Imrecv(b, n, MPI_BYTE, &m, &req[0]);
                MPI_Wait(&req[0], &st);
            }
            checksum += st.MPI_SOURCE == from;
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            break;
        }
        case 9: {
            MPI_Request never;
            MPI_Irecv(b, n, MPI_BYTE, from, steps + step, MPI_COMM_WORLD, &never);
            MPI_Cancel(&never);
            MPI_Wait(&never, &st);
            MPI_Test_cancelled(&st, &flag);
            checksum += flag;
            MPI_Irecv(b, n, MPI_BYTE, from, step, MPI_COMM_WORLD, &req[0]);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Rsend(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            break;
        }
        case 10: {
            MPI_Request p[3];
            /* Two tags: SimGrid's replay keys requests by (source,
             * destination, tag), and would wait for only one of two. */
            MPI_Irecv(b, n, MPI_BYTE, from, step, MPI_COMM_WORLD, &p[0]);
            MPI_Irecv(b + MAX_BYTES, n, MPI_BYTE, from, 2 * steps + step, MPI_COMM_WORLD, &p[1]);
            MPI_Send_init(a, n, MPI_BYTE, to, step, MPI_COMM_WORLD, &req[0]);
            MPI_Ssend_init(a, n, MPI_BYTE, to, 2 * steps + step, MPI_COMM_WORLD, &req[1]);
            MPI_Startall(2, req);
            p[2] = req[0];
            MPI_Waitall(3, p, MPI_STATUSES_IGNORE);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            MPI_Request_free(&req[0]);
            MPI_Request_free(&req[1]);
            break;
        }
        default: {
            MPI_Comm comm = pattern == 11 ? MPI_COMM_WORLD : half;
            int cr = pattern == 11 ? rank : hrank, cs = pattern == 11 ? size : hsize;
            int root = (int)(next(&shared) % (uint64_t)cs);
            int which = (int)(next(&shared) % (vcolls ? 16 : 10));
            int c = n / cs; /* per-member share, all buffers fit */
            switch (which) {
            case 0: MPI_Barrier(comm); break;
            case 1: MPI_Bcast(a, n, MPI_BYTE, root, comm); break;
            case 2: MPI_Reduce(a, b, n, MPI_BYTE, MPI_BOR, root, comm); break;
            case 3: MPI_Allreduce(a, b, n, MPI_BYTE, MPI_BOR, comm); break;
            case 4: MPI_Gather(a, c, MPI_BYTE, b, c, MPI_BYTE, root, comm); break;
            case 5: MPI_Scatter(a, c, MPI_BYTE, b, c, MPI_BYTE, root, comm); break;
            case 6: MPI_Allgather(a, c, MPI_BYTE, b, c, MPI_BYTE, comm); break;
            case 7: MPI_Alltoall(a, c, MPI_BYTE, b, c, MPI_BYTE, comm); break;
            case 8: MPI_Scan(a, b, n, MPI_BYTE, MPI_BOR, comm); break;
            case 9: MPI_Reduce_scatter_block(a, b, c, MPI_BYTE, MPI_BOR, comm); break;
            default: {
                /* v collectives: counts[i][j] = vcount(i, j); displacements packed. */
                int off_s = 0, off_r = 0;
                for (int j = 0; j < cs; j++) {
                    sc[j] = vcount(seed, step, cr, j, c);
                    rc[j] = vcount(seed, step, j, cr, c);
                    sd[j] = off_s;
                    rd[j] = off_r;
                    off_s += sc[j];
                    off_r += rc[j];
                }
                switch (which) {
                case 10:
                    MPI_Alltoallv(a, sc, sd, MPI_BYTE, b, rc, rd, MPI_BYTE, comm);
                    break;
                case 11: {
                    /* member j contributes vcount(j, j) */
                    for (int j = 0, o = 0; j < cs; j++) {
                        rc[j] = vcount(seed, step, j, j, c);
                        rd[j] = o;
                        o += rc[j];
                    }
                    MPI_Allgatherv(a, rc[cr], MPI_BYTE, b, rc, rd, MPI_BYTE, comm);
                    break;
                }
                case 12:
                    for (int j = 0, o = 0; j < cs; j++) {
                        rc[j] = vcount(seed, step, j, root, c);
                        rd[j] = o;
                        o += rc[j];
                    }
                    MPI_Gatherv(a, rc[cr], MPI_BYTE, b, rc, rd, MPI_BYTE, root, comm);
                    break;
                case 13:
                    for (int j = 0, o = 0; j < cs; j++) {
                        sc[j] = vcount(seed, step, root, j, c);
                        sd[j] = o;
                        o += sc[j];
                    }
                    MPI_Scatterv(a, sc, sd, MPI_BYTE, b, sc[cr], MPI_BYTE, root, comm);
                    break;
                case 14:
                    for (int j = 0; j < cs; j++)
                        rc[j] = vcount(seed, step, j, j, c);
                    MPI_Reduce_scatter(a, b, rc, MPI_BYTE, MPI_BOR, comm);
                    break;
                default: {
                    MPI_Request r;
                    MPI_Ialltoallv(a, sc, sd, MPI_BYTE, b, rc, rd, MPI_BYTE, comm, &r);
                    x = spin(20, x);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    break;
                }
                }
            }
            }
            break;
        }
        }
        checksum += b[0];
    }
    long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("randmix: seed %llu steps %d mode %s checksum %ld (%d)\n", (unsigned long long)seed, steps, mode,
               total, x > 0);
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
    MPI_Comm_free(&half);
    free(a);
    free(b);
    free(sc);
    free(rc);
    free(sd);
    free(rd);
    MPI_Finalize();
    return 0;
}
