/* MG, after NPB's multigrid kernel: V-cycles for the periodic Poisson
 * problem A u = v on an N^3 grid (A the 7-point Laplacian, v ten +1 and
 * ten -1 charges at places drawn by NPB's randlc). The grid is split in
 * blocks over a periodic 3-D Cartesian communicator (MPI_Dims_create,
 * MPI_Cart_create); every smoothing and residual exchanges the six faces
 * of the block with MPI_Sendrecv to the MPI_Cart_shift neighbours, one
 * axis after the other (so edges and corners arrive too, as NPB's comm3).
 * Levels halve the block while it stays at least 2 points a side, so
 * their number depends on the rank count. Weighted Jacobi smoothing,
 * restriction by a quarter of the sum of the 8 children (Galerkin for
 * the piecewise constant prolongation: P^T A P is 4 A on the coarse
 * grid), piecewise constant prolongation.
 *
 * Rank counts: a power of two up to N^3/8 (N = 64: up to 32,768).
 * usage: mg [N]   (a power of two, default 64)
 * prints (rank 0): mg: np N grid G dims PX PY PZ levels L
 *                  mg: cycle C rnm2 R2 rnmu RU   (each V-cycle)
 *                  mg: verified yes|NO  (every cycle lowered rnm2, by 10 in all)
 */
#include "nas.h"

#ifndef CYCLES /* -DCYCLES=N: a longer run (sim/bench/real.sh) */
#define CYCLES 3
#endif
#define MAXLEV 16

typedef struct {
    int n[3];
    double *u, *f, *r;
} Level;

static MPI_Comm cart;
static int up[3], down[3];
static double *sendbuf, *recvbuf;

static size_t points(const int n[3]) { return (size_t)(n[0] + 2) * (n[1] + 2) * (n[2] + 2); }
#define AT(n, i, j, k) ((((size_t)(i) * ((n)[1] + 2) + (j)) * ((n)[2] + 2)) + (k))

/* Copies the plane `at` of axis `axis` of a (with ghosts) to buf or back. */
static size_t face(double *a, const int n[3], int axis, int at, double *buf, int pack)
{
    int lo[3] = {0, 0, 0}, hi[3] = {n[0] + 2, n[1] + 2, n[2] + 2};
    lo[axis] = at;
    hi[axis] = at + 1;
    size_t c = 0;
    for (int i = lo[0]; i < hi[0]; i++)
        for (int j = lo[1]; j < hi[1]; j++)
            for (int k = lo[2]; k < hi[2]; k++) {
                if (pack)
                    buf[c++] = a[AT(n, i, j, k)];
                else
                    a[AT(n, i, j, k)] = buf[c++];
            }
    return c;
}

/* Fills the ghost layer of a from the neighbours (NPB's comm3). */
static void exchange(double *a, const int n[3])
{
    for (int axis = 0; axis < 3; axis++) {
        int count = (int)face(a, n, axis, n[axis], sendbuf, 1);
        MPI_Sendrecv(sendbuf, count, MPI_DOUBLE, up[axis], axis, recvbuf, count, MPI_DOUBLE,
                     down[axis], axis, cart, MPI_STATUS_IGNORE);
        face(a, n, axis, 0, recvbuf, 0);
        face(a, n, axis, 1, sendbuf, 1);
        MPI_Sendrecv(sendbuf, count, MPI_DOUBLE, down[axis], 3 + axis, recvbuf, count, MPI_DOUBLE,
                     up[axis], 3 + axis, cart, MPI_STATUS_IGNORE);
        face(a, n, axis, n[axis] + 1, recvbuf, 0);
    }
}

/* r = f - A u, over the interior (u's ghosts exchanged first). */
static void residual(Level *l)
{
    const int *n = l->n;
    exchange(l->u, n);
    for (int i = 1; i <= n[0]; i++)
        for (int j = 1; j <= n[1]; j++)
            for (int k = 1; k <= n[2]; k++) {
                const double *u = l->u;
                double au = 6 * u[AT(n, i, j, k)] - u[AT(n, i - 1, j, k)] - u[AT(n, i + 1, j, k)] -
                            u[AT(n, i, j - 1, k)] - u[AT(n, i, j + 1, k)] - u[AT(n, i, j, k - 1)] -
                            u[AT(n, i, j, k + 1)];
                l->r[AT(n, i, j, k)] = l->f[AT(n, i, j, k)] - au;
            }
}

/* Weighted Jacobi: u += (2/3) r / 6. */
static void smooth(Level *l, int sweeps)
{
    const int *n = l->n;
    for (int s = 0; s < sweeps; s++) {
        residual(l);
        for (int i = 1; i <= n[0]; i++)
            for (int j = 1; j <= n[1]; j++)
                for (int k = 1; k <= n[2]; k++)
                    l->u[AT(n, i, j, k)] += l->r[AT(n, i, j, k)] / 9.0;
    }
}

static void vcycle(Level *lev, int l, int levels)
{
    Level *fine = &lev[l];
    if (l == levels - 1) {
        smooth(fine, 2);
        return;
    }
    smooth(fine, 1);
    residual(fine);
    Level *coarse = &lev[l + 1];
    const int *n = fine->n, *m = coarse->n;
    for (int i = 1; i <= m[0]; i++)
        for (int j = 1; j <= m[1]; j++)
            for (int k = 1; k <= m[2]; k++) {
                double s = 0;
                for (int c = 0; c < 8; c++)
                    s += fine->r[AT(n, 2 * i - 1 + (c >> 2), 2 * j - 1 + (c >> 1 & 1), 2 * k - 1 + (c & 1))];
                coarse->f[AT(m, i, j, k)] = s / 4;
            }
    for (size_t p = 0; p < points(m); p++)
        coarse->u[p] = 0;
    vcycle(lev, l + 1, levels);
    for (int i = 1; i <= n[0]; i++)
        for (int j = 1; j <= n[1]; j++)
            for (int k = 1; k <= n[2]; k++)
                fine->u[AT(n, i, j, k)] += coarse->u[AT(m, (i + 1) / 2, (j + 1) / 2, (k + 1) / 2)];
    smooth(fine, 1);
}

/* The L2 norm (over the global grid) and the largest magnitude of r. */
static void norms(Level *l, double *rnm2, double *rnmu, int global)
{
    const int *n = l->n;
    double s[2] = {0, 0}, g[2];
    for (int i = 1; i <= n[0]; i++)
        for (int j = 1; j <= n[1]; j++)
            for (int k = 1; k <= n[2]; k++) {
                double v = l->r[AT(n, i, j, k)];
                s[0] += v * v;
                s[1] = fmax(s[1], fabs(v));
            }
    MPI_Allreduce(&s[0], &g[0], 1, MPI_DOUBLE, MPI_SUM, cart);
    MPI_Allreduce(&s[1], &g[1], 1, MPI_DOUBLE, MPI_MAX, cart);
    *rnm2 = sqrt(g[0] / ((double)global * global * global));
    *rnmu = g[1];
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int g = argc > 1 ? atoi(argv[1]) : 64;
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3];
    MPI_Dims_create(np, 3, dims);
    need_ranks(g >= 4 && (g & (g - 1)) == 0 && (np & (np - 1)) == 0 && g % dims[0] == 0 &&
                   g % dims[1] == 0 && g % dims[2] == 0 && g / dims[0] >= 2 && g / dims[1] >= 2 &&
                   g / dims[2] >= 2,
               "mg", np, "the rank count must be a power of two up to N^3/8, N a power of two");
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 3, coords);
    for (int a = 0; a < 3; a++)
        MPI_Cart_shift(cart, a, 1, &down[a], &up[a]);

    Level lev[MAXLEV];
    int levels = 0, n[3] = {g / dims[0], g / dims[1], g / dims[2]};
    size_t biggest = (size_t)(n[0] + 2) * (n[1] + 2) + (size_t)(n[1] + 2) * (n[2] + 2) + (size_t)(n[0] + 2) * (n[2] + 2);
    sendbuf = malloc(biggest * sizeof *sendbuf);
    recvbuf = malloc(biggest * sizeof *recvbuf);
    for (;;) {
        Level *l = &lev[levels++];
        for (int a = 0; a < 3; a++)
            l->n[a] = n[a];
        l->u = calloc(points(n), sizeof(double));
        l->f = calloc(points(n), sizeof(double));
        l->r = calloc(points(n), sizeof(double));
        if (n[0] % 2 || n[1] % 2 || n[2] % 2 || n[0] < 4 || n[1] < 4 || n[2] < 4 || levels == MAXLEV)
            break;
        for (int a = 0; a < 3; a++)
            n[a] /= 2;
    }

    /* The charges: +1 at ten places, -1 at ten others (from one global
     * sequence, so every rank draws the same places). */
    double seed = 314159265.0;
    for (int c = 0; c < 20; c++) {
        int p[3], mine = 1;
        for (int a = 0; a < 3; a++) {
            p[a] = (int)(randlc(&seed, NAS_A) * g);
            int lo = coords[a] * lev[0].n[a];
            mine &= p[a] >= lo && p[a] < lo + lev[0].n[a];
            p[a] -= lo - 1;
        }
        if (mine)
            lev[0].f[AT(lev[0].n, p[0], p[1], p[2])] += c < 10 ? 1 : -1;
    }
    if (rank == 0) {
        printf("mg: np %d grid %d dims %d %d %d levels %d\n", np, g, dims[0], dims[1], dims[2], levels);
        fflush(stdout);
    }
    double rnm2, rnmu, first, last;
    int falling = 1;
    residual(&lev[0]);
    norms(&lev[0], &first, &rnmu, g);
    last = first;
    for (int c = 1; c <= CYCLES; c++) {
        vcycle(lev, 0, levels);
        residual(&lev[0]);
        norms(&lev[0], &rnm2, &rnmu, g);
        falling &= rnm2 < last;
        last = rnm2;
        if (rank == 0) {
            printf("mg: cycle %d rnm2 %.15e rnmu %.15e\n", c, rnm2, rnmu);
            fflush(stdout);
        }
    }
    if (rank == 0)
        printf("mg: verified %s\n", falling && rnm2 < first / 10 ? "yes" : "NO");
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
