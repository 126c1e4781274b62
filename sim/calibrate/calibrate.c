/* pnmpi-calibrate: measures this machine for `pnmpi sim calibrate`
 * (PSINSBench's role). `pnmpi sim calibrate` starts it on every rank, then
 * fits the measurements and writes the machine file; this program only
 * measures and writes raw figures.
 *
 * usage: pnmpi-calibrate RAW_FILE SECONDS
 *   RAW_FILE  rank 0 writes the figures there (RAW_FILE.part, renamed when
 *             complete); format: one record per line, see below
 *   SECONDS   time budget, split between the measurements
 *
 * Records (times in seconds, sizes in bytes):
 *   ranks N | hosts H | host RANK NAME | mpi LIBRARY_VERSION_FIRST_LINE
 *   p2p LEVEL BYTES ONE_WAY        LEVEL intra|inter: half a ping-pong round, the
 *                                  fastest median of 3 sweeps over the sizes
 *   eager BYTES                    largest size a send completes before its receive is posted
 *   send_overhead SECONDS          time in MPI_Send of 1 byte, receiver ready
 *   gap SECONDS                    interval between back-to-back 1-byte MPI_Isend
 *   coll NAME P BYTES SECONDS      mean time of one call over P ranks, slowest rank
 * Progress goes to stderr from rank 0. Exit status 2 for bad arguments or
 * fewer than 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;
static double budget;
static FILE *raw;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void progress(const char *what)
{
    if (rank == 0) {
        fprintf(stderr, "pnmpi sim calibrate: %s\n", what);
        fflush(stderr);
    }
}

/* Half the median round trip of `bytes` between ranks a and b, measured
 * for about `seconds`; every rank calls it, only a and b take part. */
static double pingpong(int a, int b, long bytes, double seconds, char *buf)
{
    double result = 0;
    if (rank == a || rank == b) {
        int peer = rank == a ? b : a;
        int reps = 0;
        if (rank == a) { /* three warm-up rounds; the last sets the count */
            double once = 0;
            for (int w = 0; w < 3; w++) {
                double t0 = MPI_Wtime();
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                once = MPI_Wtime() - t0;
            }
            reps = (int)(seconds / (once > 1e-7 ? once : 1e-7));
            reps = reps < 5 ? 5 : reps > 200000 ? 200000 : reps;
            MPI_Send(&reps, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
        } else {
            for (int w = 0; w < 3; w++) {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
            MPI_Recv(&reps, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        double *rounds = malloc(sizeof(double) * (size_t)reps);
        for (int i = 0; i < reps; i++) {
            double s = MPI_Wtime();
            if (rank == a) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
            }
            rounds[i] = MPI_Wtime() - s;
        }
        result = median(rounds, reps) / 2;
        free(rounds);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return result;
}

/* The largest power-of-two size whose MPI_Send returns before a receive
 * posted 2 ms late: the eager/rendezvous threshold. Noise only ever
 * makes a send slower, so one fast send of three says eager. */
static long eager_threshold(char *buf, long max)
{
    long eager = 0;
    const double delay = 2e-3;
    for (long bytes = 1; bytes <= max; bytes *= 2) {
        int eagerly = 0;
        for (int attempt = 0; attempt < 3 && !eagerly; attempt++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                double s = MPI_Wtime();
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
                eagerly = MPI_Wtime() - s < delay / 2;
            } else if (rank == 1) {
                double s = MPI_Wtime();
                while (MPI_Wtime() - s < delay)
                    ;
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Bcast(&eagerly, 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
        if (!eagerly)
            break;
        eager = bytes;
    }
    return eager;
}

/* Send overhead and gap for 1-byte messages from rank 0 to rank 1. */
static void overheads(char *buf, double *overhead, double *gap)
{
    enum { N = 200 };
    MPI_Request reqs[N];
    *overhead = *gap = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double sends[N];
        for (int i = 0; i < N; i++) {
            double s = MPI_Wtime();
            MPI_Send(buf, 1, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
            sends[i] = MPI_Wtime() - s;
        }
        *overhead = median(sends, N);
        MPI_Recv(buf, 1, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double s = MPI_Wtime();
        for (int i = 0; i < N; i++)
            MPI_Isend(buf + i, 1, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &reqs[i]);
        *gap = (MPI_Wtime() - s) / N;
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        for (int i = 0; i < N; i++)
            MPI_Irecv(buf + N + i, 1, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &reqs[i]);
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            MPI_Irecv(buf + N + i, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]);
        MPI_Send(buf, 1, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static const char *COLLS[] = {"barrier", "bcast", "reduce", "allreduce", "gather",
                              "scatter", "allgather", "alltoall"};
enum { NCOLLS = sizeof COLLS / sizeof *COLLS };

/* One call of collective `c` with `bytes` per process (the tracer's
 * count x type size) on `comm` of `p` ranks. */
static void collective(int c, long bytes, MPI_Comm comm, int p, char *s, char *r)
{
    int n = (int)bytes;
    switch (c) {
    case 0: MPI_Barrier(comm); break;
    case 1: MPI_Bcast(s, n, MPI_BYTE, 0, comm); break;
    case 2: MPI_Reduce(s, r, n, MPI_BYTE, MPI_BOR, 0, comm); break;
    case 3: MPI_Allreduce(s, r, n, MPI_BYTE, MPI_BOR, comm); break;
    case 4: MPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, 0, comm); break;
    case 5: MPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, 0, comm); break;
    case 6: MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, comm); break;
    case 7: MPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, comm); break;
    }
    (void)p;
}

/* Mean time of one call on the slowest rank of `comm`, for about `seconds`. */
static double time_collective(int c, long bytes, MPI_Comm comm, int p, double seconds, char *s, char *r)
{
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    collective(c, bytes, comm, p, s, r);
    double once = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&once, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    int reps = (int)(seconds / (slowest > 1e-7 ? slowest : 1e-7));
    reps = reps < 3 ? 3 : reps > 100000 ? 100000 : reps;
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++)
        collective(c, bytes, comm, p, s, r);
    double mean = (MPI_Wtime() - t0) / reps;
    MPI_Allreduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (budget = atof(argv[2])) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: pnmpi-calibrate RAW_FILE SECONDS\n");
        MPI_Finalize();
        return 2;
    }
    if (size < 2) {
        fprintf(stderr, "pnmpi sim calibrate: needs at least 2 ranks to measure messages; "
                        "run it as: mpirun -np 2 pnmpi sim calibrate -o machine.toml\n");
        MPI_Finalize();
        return 2;
    }
    char part[4096] = "";
    if (rank == 0) {
        snprintf(part, sizeof part, "%s.part", argv[1]);
        raw = fopen(part, "w");
        if (!raw) {
            perror(part);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    /* Hosts: node ids by processor name, in order of first rank. */
    char name[MPI_MAX_PROCESSOR_NAME] = "", *names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    int len;
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    int hosts = 0, inter_peer = -1, intra_peer = -1;
    for (int i = 0; i < size; i++) {
        int first = 1;
        for (int j = 0; j < i; j++)
            first &= strcmp(names + (size_t)i * MPI_MAX_PROCESSOR_NAME, names + (size_t)j * MPI_MAX_PROCESSOR_NAME) != 0;
        hosts += first;
        int same = strcmp(names, names + (size_t)i * MPI_MAX_PROCESSOR_NAME) == 0;
        if (i > 0 && same && intra_peer < 0)
            intra_peer = i;
        if (!same && inter_peer < 0)
            inter_peer = i;
    }
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n")] = 0;
        fprintf(raw, "ranks %d\nhosts %d\nmpi %s\n", size, hosts, version);
        for (int i = 0; i < size; i++)
            fprintf(raw, "host %d %s\n", i, names + (size_t)i * MPI_MAX_PROCESSOR_NAME);
    }

    const long max_p2p = 4L << 20;
    char *buf = calloc((size_t)max_p2p, 1);
    int sizes = 0;
    for (long b = 1; b <= max_p2p; b *= 2)
        sizes++;
    int levels = (intra_peer >= 0) + (inter_peer >= 0);
    /* Every size is measured in PASSES sweeps and keeps its fastest
     * median: noise only ever makes a round slower, and a burst of it
     * (another process starting, a page-cache flush) then spoils one
     * sweep of a size instead of its only window. */
    enum { PASSES = 3 };
    double *best = malloc(sizeof(double) * (size_t)(2 * sizes));
    for (int level = 0; level < 2; level++) {
        int peer = level == 0 ? intra_peer : inter_peer;
        if (peer < 0)
            continue;
        progress(level == 0 ? "point-to-point within a node" : "point-to-point across nodes");
        for (int pass = 0; pass < PASSES; pass++) {
            int i = 0;
            for (long b = 1; b <= max_p2p; b *= 2, i++) {
                double t = pingpong(0, peer, b, 0.4 * budget / levels / sizes / PASSES, buf);
                if (pass == 0 || t < best[level * sizes + i])
                    best[level * sizes + i] = t;
            }
        }
        int i = 0;
        for (long b = 1; b <= max_p2p; b *= 2, i++)
            if (rank == 0)
                fprintf(raw, "p2p %s %ld %.9e\n", level == 0 ? "intra" : "inter", b, best[level * sizes + i]);
    }
    free(best);
    progress("eager threshold, send overhead and gap");
    long eager = eager_threshold(buf, 1L << 20);
    double overhead, gap;
    overheads(buf, &overhead, &gap);
    if (rank == 0)
        fprintf(raw, "eager %ld\nsend_overhead %.9e\ngap %.9e\n", eager, overhead, gap);

    static const long coll_sizes[] = {8, 1024, 16384, 131072, 1048576};
    enum { NSIZES = sizeof coll_sizes / sizeof *coll_sizes };
    int counts = 0;
    for (int p = 2; p <= size; p = p * 2 > size && p < size ? size : p * 2)
        counts++;
    double each = 0.55 * budget / (counts * NCOLLS * NSIZES);
    char *s = calloc((size_t)coll_sizes[NSIZES - 1] * (size_t)size, 1);
    char *r = calloc((size_t)coll_sizes[NSIZES - 1] * (size_t)size, 1);
    for (int p = 2; p <= size; p = p * 2 > size && p < size ? size : p * 2) {
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, rank < p ? 0 : MPI_UNDEFINED, rank, &comm);
        char what[64];
        snprintf(what, sizeof what, "collectives on %d ranks", p);
        progress(what);
        for (int c = 0; c < NCOLLS; c++)
            for (int k = 0; k < NSIZES; k++) {
                long bytes = c == 0 ? 0 : coll_sizes[k];
                if (c == 0 && k > 0)
                    break;
                double t = 0;
                if (comm != MPI_COMM_NULL)
                    t = time_collective(c, bytes, comm, p, each, s, r);
                if (rank == 0)
                    fprintf(raw, "coll %s %d %ld %.9e\n", COLLS[c], p, bytes, t);
            }
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        MPI_Barrier(MPI_COMM_WORLD);
        if (p == size)
            break;
    }
    int failed = 0;
    if (rank == 0) {
        failed = fclose(raw) != 0 || rename(part, argv[1]) != 0;
        if (failed)
            perror(argv[1]);
    }
    free(s);
    free(r);
    free(buf);
    free(names);
    MPI_Finalize();
    return failed;
}
