/* CG, after NPB's conjugate gradient kernel: the inverse power method on
 * a sparse symmetric positive definite matrix, each outer iteration
 * solving A z = x by CG_ITERS conjugate gradient steps. Rows are
 * distributed in blocks; the sparse product gathers the search direction
 * with MPI_Allgather, the dot products are MPI_Allreduce.
 *
 * The matrix (n = 2^LOG2_N rows): row i has the diagonal and the columns
 * i +- OFF[k] (mod n), with values drawn from the unordered pair, so
 * that A is symmetric, and a diagonal that dominates (positive definite).
 *
 * Rank counts: a power of two up to n (default n = 8192).
 * usage: cg [LOG2_N]   (NAS_PHASE_MS, NAS_SLOW: fixed-length phases, nas.h)
 * prints (rank 0): cg: np N n ROWS nonzeros NNZ
 *                  cg: iter I zeta Z   (each outer iteration)
 *                  cg: verified yes|NO  (the last residual is below 1e-3)
 * The residual itself is not printed: near convergence it is a
 * cancellation that magnifies the last bits of the dot products, whose
 * order of summation is the MPI library's (as NPB, which checks zeta).
 */
#include "nas.h"

#ifndef OUTER /* -DOUTER=N: a longer run (sim/bench/real.sh) */
#define OUTER 2
#endif
#define CG_ITERS 10
#define NOFF 6
#define SHIFT 10.0

static const int64_t OFF[NOFF] = {1, 7, 61, 359, 1021, 2039};

/* A pseudo-random value in (0, 1) for the unordered pair (i, j): two
 * randlc steps from an odd seed made of the pair (exact in any language). */
static double pair_value(int64_t i, int64_t j)
{
    int64_t lo = i < j ? i : j, hi = i < j ? j : i;
    double seed = (double)(2 * (lo * 8191 + hi * 131071) + 1);
    randlc(&seed, NAS_A);
    return randlc(&seed, NAS_A);
}

static double dot(const double *a, const double *b, int m)
{
    double local = 0, global;
    for (int i = 0; i < m; i++)
        local += a[i] * b[i];
    PHASED(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return global;
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    nas_phase_begin();
    int log_n = argc > 1 ? atoi(argv[1]) : 13;
    int64_t n = (int64_t)1 << log_n;
    need_ranks(log_n >= 12 && log_n <= 24 && np <= n && (np & (np - 1)) == 0, "cg", np,
               "the rank count must be a power of two up to n, and LOG2_N 12 to 24");
    int m = (int)(n / np);
    int64_t row0 = (int64_t)m * rank;

    /* This rank's rows in compressed sparse row form. */
    int per = 2 * NOFF + 1;
    int *col = malloc((size_t)m * per * sizeof *col);
    double *val = malloc((size_t)m * per * sizeof *val);
    for (int r = 0; r < m; r++) {
        int64_t i = row0 + r;
        double offsum = 0;
        for (int k = 0; k < NOFF; k++)
            for (int s = 0; s < 2; s++) {
                int64_t j = s ? (i + OFF[k]) % n : (i - OFF[k] + n) % n;
                double v = -pair_value(i, j);
                col[r * per + 1 + 2 * k + s] = (int)j;
                val[r * per + 1 + 2 * k + s] = v;
                offsum -= v;
            }
        col[r * per] = (int)i;
        val[r * per] = offsum + 0.1 + pair_value(i, i);
    }

    double *x = malloc(m * sizeof *x), *z = malloc(m * sizeof *z), *r = malloc(m * sizeof *r);
    double *p = malloc(m * sizeof *p), *q = malloc(m * sizeof *q), *pfull = malloc(n * sizeof *pfull);
    for (int i = 0; i < m; i++)
        x[i] = 1.0;
    if (rank == 0) {
        printf("cg: np %d n %lld nonzeros %lld\n", np, (long long)n, (long long)n * per);
        fflush(stdout);
    }
    double rnorm = 0;
    for (int it = 1; it <= OUTER; it++) {
        /* z = A^-1 x by CG from z = 0. */
        for (int i = 0; i < m; i++) {
            z[i] = 0;
            r[i] = p[i] = x[i];
        }
        double rho = dot(r, r, m);
        for (int cgit = 0; cgit < CG_ITERS; cgit++) {
            PHASED(MPI_Allgather(p, m, MPI_DOUBLE, pfull, m, MPI_DOUBLE, MPI_COMM_WORLD));
            for (int i = 0; i < m; i++) {
                double s = 0;
                for (int k = 0; k < per; k++)
                    s += val[i * per + k] * pfull[col[i * per + k]];
                q[i] = s;
            }
            double alpha = rho / dot(p, q, m);
            for (int i = 0; i < m; i++) {
                z[i] += alpha * p[i];
                r[i] -= alpha * q[i];
            }
            double rho0 = rho;
            rho = dot(r, r, m);
            for (int i = 0; i < m; i++)
                p[i] = r[i] + rho / rho0 * p[i];
        }
        /* The residual ||x - A z||, as NPB reports it. */
        PHASED(MPI_Allgather(z, m, MPI_DOUBLE, pfull, m, MPI_DOUBLE, MPI_COMM_WORLD));
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int k = 0; k < per; k++)
                s += val[i * per + k] * pfull[col[i * per + k]];
            q[i] = x[i] - s;
        }
        rnorm = sqrt(dot(q, q, m));
        double zeta = SHIFT + 1.0 / dot(x, z, m);
        double znorm = 1.0 / sqrt(dot(z, z, m));
        for (int i = 0; i < m; i++)
            x[i] = znorm * z[i];
        if (rank == 0) {
            printf("cg: iter %d zeta %.15e\n", it, zeta);
            fflush(stdout);
        }
    }
    if (rank == 0)
        printf("cg: verified %s\n", rnorm < 1e-3 ? "yes" : "NO");
    MPI_Finalize();
    return 0;
}
