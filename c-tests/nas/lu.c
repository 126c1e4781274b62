/* LU, after NPB's LU (SSOR) kernel's pipelined sweeps: symmetric
 * Gauss-Seidel (SSOR) iterations for the 7-point Poisson problem on an
 * NX x NY x NZ grid with zero boundaries, split in columns over a 2-D
 * Cartesian communicator. The lower sweep visits the planes k = 1..NZ in
 * order: for each plane a rank waits (blocking MPI_Recv) for the plane's
 * new boundary values from its west and south neighbours, updates its
 * part of the plane, and sends (MPI_Send) its east and north edges
 * downstream, so the ranks form a wavefront; the upper sweep runs the
 * other way. A face exchange (MPI_Sendrecv) before each sweep gives the
 * old values of the other side. Every point sees the same operands in the
 * same order as one process would, so the grid is the same bit for bit
 * at every rank count; only the norms' sums follow the MPI library.
 *
 * Rank counts: a power of two up to NX * NY (default 64 x 64: 4,096).
 * NAS_PHASE_MS, NAS_SLOW: fixed-length phases between calls (nas.h).
 * prints (rank 0): lu: np N grid NX NY NZ dims PX PY
 *                  lu: iter I rsdnm R   (each SSOR iteration)
 *                  lu: checksum S        (sum of the solution)
 *                  lu: verified yes|NO   (every iteration lowered rsdnm)
 */
#include "nas.h"

#define NX 64
#define NY 64
#define NZ 16
#ifndef ITERS /* -DITERS=N: a longer run (sim/bench/real.sh) */
#define ITERS 8
#endif
#define OMEGA 1.2

static int lx, ly, west, east, south, north;
static MPI_Comm cart;
#define U(i, j, k) u[(((size_t)(i) * (ly + 2)) + (j)) * (NZ + 2) + (k)]
#define F(i, j, k) f[(((size_t)(i) * (ly + 2)) + (j)) * (NZ + 2) + (k)]

/* Copies column i (x = const, all j, k) or row j (y = const) to buf or back. */
static int edge(double *u, int axis, int at, double *buf, int pack)
{
    int c = 0;
    for (int a = 1; a <= (axis ? lx : ly); a++)
        for (int k = 1; k <= NZ; k++) {
            double *p = axis ? &U(a, at, k) : &U(at, a, k);
            if (pack)
                buf[c++] = *p;
            else
                *p = buf[c++];
        }
    return c;
}

/* The four side faces' ghost values from the neighbours (0 at the
 * boundary: MPI_PROC_NULL leaves the ghosts alone). */
static void exchange(double *u, double *sb, double *rb)
{
    int nb[2][2] = {{west, east}, {south, north}}, n[2] = {lx, ly};
    for (int axis = 0; axis < 2; axis++)
        for (int dir = 0; dir < 2; dir++) {
            int to = nb[axis][dir], from = nb[axis][1 - dir];
            int c = edge(u, axis, dir ? n[axis] : 1, sb, 1);
            PHASED(MPI_Sendrecv(sb, c, MPI_DOUBLE, to, 10 + axis * 2 + dir, rb, c, MPI_DOUBLE, from,
                                10 + axis * 2 + dir, cart, MPI_STATUS_IGNORE));
            if (from != MPI_PROC_NULL)
                edge(u, axis, dir ? 0 : n[axis] + 1, rb, 0);
        }
}

static void update(double *u, const double *f, int i, int j, int k)
{
    double s = F(i, j, k) + U(i - 1, j, k) + U(i + 1, j, k) + U(i, j - 1, k) + U(i, j + 1, k) +
               U(i, j, k - 1) + U(i, j, k + 1);
    U(i, j, k) = (1 - OMEGA) * U(i, j, k) + OMEGA * s / 6;
}

/* One pipelined sweep: lower (up 1) from the west/south corner, else upper. */
static void sweep(double *u, const double *f, int lower, double *buf)
{
    int from_x = lower ? west : east, from_y = lower ? south : north;
    int to_x = lower ? east : west, to_y = lower ? north : south;
    int gx = lower ? 0 : lx + 1, gy = lower ? 0 : ly + 1; /* ghost to fill */
    int ex = lower ? lx : 1, ey = lower ? ly : 1;         /* edge to send */
    for (int kk = 1; kk <= NZ; kk++) {
        int k = lower ? kk : NZ + 1 - kk;
        if (from_x != MPI_PROC_NULL) {
            PHASED(MPI_Recv(buf, ly, MPI_DOUBLE, from_x, k, cart, MPI_STATUS_IGNORE));
            for (int j = 1; j <= ly; j++)
                U(gx, j, k) = buf[j - 1];
        }
        if (from_y != MPI_PROC_NULL) {
            PHASED(MPI_Recv(buf, lx, MPI_DOUBLE, from_y, NZ + k, cart, MPI_STATUS_IGNORE));
            for (int i = 1; i <= lx; i++)
                U(i, gy, k) = buf[i - 1];
        }
        for (int ii = 1; ii <= lx; ii++)
            for (int jj = 1; jj <= ly; jj++)
                update(u, f, lower ? ii : lx + 1 - ii, lower ? jj : ly + 1 - jj, k);
        if (to_x != MPI_PROC_NULL) {
            for (int j = 1; j <= ly; j++)
                buf[j - 1] = U(ex, j, k);
            PHASED(MPI_Send(buf, ly, MPI_DOUBLE, to_x, k, cart));
        }
        if (to_y != MPI_PROC_NULL) {
            for (int i = 1; i <= lx; i++)
                buf[i - 1] = U(i, ey, k);
            PHASED(MPI_Send(buf, lx, MPI_DOUBLE, to_y, NZ + k, cart));
        }
    }
}

int main(int argc, char **argv)
{
    int rank, np, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Dims_create(np, 2, dims);
    need_ranks((np & (np - 1)) == 0 && NX % dims[0] == 0 && NY % dims[1] == 0, "lu", np,
               "the rank count must be a power of two up to 4096");
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 2, coords);
    MPI_Cart_shift(cart, 0, 1, &west, &east);
    MPI_Cart_shift(cart, 1, 1, &south, &north);
    nas_phase_begin();
    lx = NX / dims[0];
    ly = NY / dims[1];
    size_t size = (size_t)(lx + 2) * (ly + 2) * (NZ + 2);
    double *u = calloc(size, sizeof *u), *f = calloc(size, sizeof *f);
    int most = (lx > ly ? lx : ly) * NZ;
    double *sb = malloc(most * sizeof *sb), *rb = malloc(most * sizeof *rb);
    for (int i = 1; i <= lx; i++)
        for (int j = 1; j <= ly; j++)
            for (int k = 1; k <= NZ; k++) {
                int x = coords[0] * lx + i, y = coords[1] * ly + j;
                F(i, j, k) = ((x * 7 + y * 13 + k * 29) % 17 - 8) / 64.0;
            }
    if (rank == 0) {
        printf("lu: np %d grid %d %d %d dims %d %d\n", np, NX, NY, NZ, dims[0], dims[1]);
        fflush(stdout);
    }
    double last = INFINITY;
    int falling = 1;
    for (int it = 1; it <= ITERS; it++) {
        exchange(u, sb, rb);
        sweep(u, f, 1, rb);
        exchange(u, sb, rb);
        sweep(u, f, 0, rb);
        exchange(u, sb, rb);
        double r2 = 0, g;
        for (int i = 1; i <= lx; i++)
            for (int j = 1; j <= ly; j++)
                for (int k = 1; k <= NZ; k++) {
                    double r = F(i, j, k) - 6 * U(i, j, k) + U(i - 1, j, k) + U(i + 1, j, k) +
                               U(i, j - 1, k) + U(i, j + 1, k) + U(i, j, k - 1) + U(i, j, k + 1);
                    r2 += r * r;
                }
        PHASED(MPI_Allreduce(&r2, &g, 1, MPI_DOUBLE, MPI_SUM, cart));
        double rsdnm = sqrt(g / ((double)NX * NY * NZ));
        falling &= rsdnm < last;
        last = rsdnm;
        if (rank == 0) {
            printf("lu: iter %d rsdnm %.15e\n", it, rsdnm);
            fflush(stdout);
        }
    }
    double s = 0, sum;
    for (int i = 1; i <= lx; i++)
        for (int j = 1; j <= ly; j++)
            for (int k = 1; k <= NZ; k++)
                s += U(i, j, k);
    PHASED(MPI_Allreduce(&s, &sum, 1, MPI_DOUBLE, MPI_SUM, cart));
    if (rank == 0)
        printf("lu: checksum %.15e\nlu: verified %s\n", sum, falling ? "yes" : "NO");
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
