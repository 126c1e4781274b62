/* FT, after NPB's 3-D FFT kernel: random initial data (NPB's randlc), a
 * forward 3-D FFT, then ITERS times: evolve the spectrum as the heat
 * equation does, an inverse 3-D FFT and NPB's checksum of 1,024 points.
 * The grid NX x NY x NZ is split in z-slabs for the x and y transforms;
 * MPI_Alltoall transposes it to x-slabs for the z transform, and back.
 *
 * Rank counts: a divisor of 256 (a power of two up to 256).
 * prints (rank 0): ft: np N grid NX NY NZ
 *                  ft: iter T checksum RE IM   (each iteration)
 *                  ft: verified yes|NO  (the inverse of the forward FFT
 *                                       gives back the data to 1e-12)
 */
#include "nas.h"
#include <complex.h>

#define NX 256
#define NY 8
#define NZ 256
#ifndef ITERS /* -DITERS=N: a longer run (sim/bench/real.sh) */
#define ITERS 6
#endif
#define ALPHA 1e-6

typedef double complex cplx;

/* In-place radix-2 FFT of v[0], v[stride], ... (n a power of two), sign -1
 * forward, +1 inverse (not normalized); tmp holds n values. */
static void fft(cplx *v, int n, int stride, int sign, cplx *tmp)
{
    for (int i = 0; i < n; i++)
        tmp[i] = v[(size_t)i * stride];
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            cplx t = tmp[i];
            tmp[i] = tmp[j];
            tmp[j] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1)
        for (int k = 0; k < len / 2; k++) {
            double angle = sign * 2 * M_PI * k / len;
            cplx w = cos(angle) + I * sin(angle);
            for (int i = 0; i < n; i += len) {
                cplx a = tmp[i + k], b = w * tmp[i + k + len / 2];
                tmp[i + k] = a + b;
                tmp[i + k + len / 2] = a - b;
            }
        }
    for (int i = 0; i < n; i++)
        v[(size_t)i * stride] = tmp[i];
}

static int np, nzl, nxl; /* ranks, z planes and x columns per rank */
static cplx *sendbuf, *recvbuf, *tmp;

/* z-slabs a[zl][y][x]: the x and y transforms. */
static void fft_xy(cplx *a, int sign)
{
    for (int zl = 0; zl < nzl; zl++)
        for (int y = 0; y < NY; y++)
            fft(a + ((size_t)zl * NY + y) * NX, NX, 1, sign, tmp);
    for (int zl = 0; zl < nzl; zl++)
        for (int x = 0; x < NX; x++)
            fft(a + (size_t)zl * NY * NX + x, NY, NX, sign, tmp);
}

/* x-slabs b[xl][y][z]: the z transforms. */
static void fft_z(cplx *b, int sign)
{
    for (int xl = 0; xl < nxl; xl++)
        for (int y = 0; y < NY; y++)
            fft(b + ((size_t)xl * NY + y) * NZ, NZ, 1, sign, tmp);
}

/* z-slabs a[zl][y][x] to x-slabs b[xl][y][z], or back (to_x 0). */
static void transpose(cplx *a, cplx *b, int to_x)
{
    size_t block = (size_t)nzl * NY * nxl, at = 0;
    for (int d = 0; d < np; d++)
        for (int i = 0; i < (to_x ? nzl : nxl); i++)
            for (int y = 0; y < NY; y++)
                for (int j = 0; j < (to_x ? nxl : nzl); j++)
                    sendbuf[at++] = to_x ? a[((size_t)i * NY + y) * NX + d * nxl + j]
                                         : b[((size_t)i * NY + y) * NZ + d * nzl + j];
    MPI_Alltoall(sendbuf, (int)block, MPI_C_DOUBLE_COMPLEX, recvbuf, (int)block,
                 MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
    at = 0;
    for (int s = 0; s < np; s++)
        for (int i = 0; i < (to_x ? nzl : nxl); i++)
            for (int y = 0; y < NY; y++)
                for (int j = 0; j < (to_x ? nxl : nzl); j++) {
                    cplx v = recvbuf[at++];
                    if (to_x)
                        b[((size_t)j * NY + y) * NZ + s * nzl + i] = v;
                    else
                        a[((size_t)j * NY + y) * NX + s * nxl + i] = v;
                }
}

static int wave(int k, int n) { return k < n / 2 ? k : k - n; }

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    need_ranks(NZ % np == 0 && NX % np == 0, "ft", np, "the rank count must divide 256");
    nzl = NZ / np;
    nxl = NX / np;
    size_t local = (size_t)nzl * NY * NX;
    cplx *u0 = malloc(local * sizeof *u0), *a = malloc(local * sizeof *a);
    cplx *u1 = malloc(local * sizeof *u1), *b = malloc(local * sizeof *b);
    sendbuf = malloc(local * sizeof *sendbuf);
    recvbuf = malloc(local * sizeof *recvbuf);
    tmp = malloc((NX > NZ ? NX : NZ) * sizeof *tmp);

    /* NPB's initial conditions: the global sequence in x, y, z order. */
    double seed = skip(314159265.0, NAS_A, 2 * (int64_t)NX * NY * nzl * rank);
    for (size_t i = 0; i < local; i++) {
        double re = randlc(&seed, NAS_A);
        u0[i] = re + I * randlc(&seed, NAS_A);
    }
    for (size_t i = 0; i < local; i++)
        a[i] = u0[i];
    fft_xy(a, -1);
    transpose(a, u1, 1);
    fft_z(u1, -1);

    if (rank == 0) {
        printf("ft: np %d grid %d %d %d\n", np, NX, NY, NZ);
        fflush(stdout);
    }
    double ntotal = (double)NX * NY * NZ;
    for (int t = 1; t <= ITERS; t++) {
        for (int xl = 0; xl < nxl; xl++)
            for (int y = 0; y < NY; y++)
                for (int z = 0; z < NZ; z++) {
                    int kx = wave(rank * nxl + xl, NX), ky = wave(y, NY), kz = wave(z, NZ);
                    double k2 = (double)kx * kx + (double)ky * ky + (double)kz * kz;
                    size_t i = ((size_t)xl * NY + y) * NZ + z;
                    b[i] = u1[i] * exp(-4 * ALPHA * M_PI * M_PI * k2 * t);
                }
        fft_z(b, 1);
        transpose(a, b, 0);
        fft_xy(a, 1);
        cplx sum = 0, total;
        for (int j = 1; j <= 1024; j++) {
            int q = j % NX, r = 3 * j % NY, s = 5 * j % NZ;
            if (s / nzl == rank)
                sum += a[((size_t)(s % nzl) * NY + r) * NX + q] / ntotal;
        }
        MPI_Allreduce(&sum, &total, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("ft: iter %d checksum %.15e %.15e\n", t, creal(total), cimag(total));
            fflush(stdout);
        }
    }
    /* The inverse of the unevolved spectrum gives back the initial data. */
    fft_z(u1, 1);
    transpose(a, u1, 0);
    fft_xy(a, 1);
    double err = 0, worst;
    for (size_t i = 0; i < local; i++)
        err = fmax(err, cabs(a[i] / ntotal - u0[i]));
    MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ft: verified %s\n", worst < 1e-12 ? "yes" : "NO");
    MPI_Finalize();
    return 0;
}
