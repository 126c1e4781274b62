/* How steady is this machine's CPU time? vtime's processor model charges
 * each compute interval its thread CPU time (CLOCK_THREAD_CPUTIME_ID), so
 * its prediction can be no steadier than the CPU time of the same code
 * run again. This times three kernels, each REPS times in thread CPU
 * time, alone on whatever core it is given (pin it with taskset):
 *   jacobi-256  one Jacobi sweep over two 258 x 258 grids (1 MiB,
 *               memory-bound: the stencil.c of the vtime tests, 256 a side)
 *   jacobi-64   the same over 66 x 66 grids (68 KiB, cache-resident)
 *   fp-chain    100,000 dependent multiply-adds (no memory traffic; the
 *               imbalance.c of the vtime tests)
 * and prints, for each, the mean, median and fastest rep in us. Run it
 * several times in a row: on a dedicated core the means agree to well
 * under 1 %; where the means of consecutive runs differ by more, no
 * CPU-time processor model can agree with itself to 1 % on that code.
 *
 *   gcc -O2 -o cpuspeed bench/c/cpuspeed.c
 *   for i in $(seq 10); do taskset -c 0 ./cpuspeed 5000; done
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *t, int reps)
{
    double sum = 0;
    for (int r = 0; r < reps; r++)
        sum += t[r];
    qsort(t, reps, sizeof *t, by_value);
    printf("%-10s mean %8.2f us  median %8.2f us  fastest %8.2f us\n", name, sum / reps, t[reps / 2], t[0]);
}

/* One Jacobi sweep of an n x n interior, b from a. */
static void sweep(int n, const double *a, double *b)
{
    int w = n + 2;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            b[i * w + j] = 0.25 * (a[(i - 1) * w + j] + a[(i + 1) * w + j] + a[i * w + j - 1] + a[i * w + j + 1]);
}

static void jacobi(const char *name, int n, double *t, int reps)
{
    size_t cells = (size_t)(n + 2) * (n + 2);
    double *a = calloc(cells, sizeof *a), *b = calloc(cells, sizeof *b);
    if (!a || !b) {
        perror("calloc");
        exit(1);
    }
    for (size_t i = 0; i < cells; i++)
        a[i] = (double)(i % 7);
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_us();
        sweep(n, a, b);
        t[r] = cpu_us() - t0;
        double *x = a;
        a = b;
        b = x;
    }
    report(name, t, reps);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5000;
    if (reps < 1) {
        fprintf(stderr, "usage: cpuspeed [REPS]   (REPS >= 1, default 5000)\n");
        return 2;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) {
        perror("malloc");
        return 1;
    }
    jacobi("jacobi-256", 256, t, reps);
    jacobi("jacobi-64", 64, t, reps);
    volatile double seed = 1.0;
    double x = seed;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu_us();
        for (long k = 0; k < 100000; k++)
            x = x * 1.0000001 + 1e-9;
        t[r] = cpu_us() - t0;
    }
    seed = x;
    report("fp-chain", t, reps);
    free(t);
    return 0;
}
