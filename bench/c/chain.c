/* A stand-alone model of libpnmpi's dispatch, without MPI, to tell what
 * makes deep chains slow per layer (docs/performance.md, "libpnmpi: cost
 * per call, per layer, at start-up").
 * It is not part of the suite; build and run it by hand:
 *
 *   gcc -O2 -o chain bench/c/chain.c && ./chain                 # packed
 *   gcc -O2 -DALIGN=4096 -o chain bench/c/chain.c && ./chain    # aliased
 *
 * Each of 128 "layers" tail-jumps into one shared `descend`, which reads a
 * thread-local level, stores the next one, calls the next layer through a
 * table from one indirect call site, and restores the level: one frame
 * per layer, as in src/stubs.rs. ALIGN places every layer at the start of
 * its own ALIGN-byte block: with 4096, all layers share their address
 * bits below 12, as the same code in N copies of one module does.
 * `rec` is a plain recursion of the same depth (one call site, one return
 * address), the return-stack-buffer case alone.
 *
 * prints: depth, ns per chain call, ns per layer, ns per recursion, ns per
 * level; each the fastest of 7 repetitions.
 */
#include <stdio.h>
#include <time.h>

#ifndef ALIGN
#define ALIGN 64
#endif
#define LAYERS 128

typedef long (*layer_fn)(long);
static layer_fn table[LAYERS + 1];
static __thread int level __attribute__((tls_model("initial-exec")));

__attribute__((noinline)) long descend(long x)
{
    int current = level;
    layer_fn next = table[current];
    if (!next) {
        return x;
    }
    level = current + 1;
    long r = next(x);
    level = current;
    return r;
}

#define LAYER(name) \
    __attribute__((noinline, aligned(ALIGN))) long name(long x) { return descend(x); }
#define ENTRY(name) name,
#define R2(M, b) M(b##0) M(b##1)
#define R4(M, b) R2(M, b##0) R2(M, b##1)
#define R8(M, b) R4(M, b##0) R4(M, b##1)
#define R16(M, b) R8(M, b##0) R8(M, b##1)
#define R32(M, b) R16(M, b##0) R16(M, b##1)
#define R64(M, b) R32(M, b##0) R32(M, b##1)
#define R128(M, b) R64(M, b##0) R64(M, b##1)

R128(LAYER, layer_)
static layer_fn layers[LAYERS] = {R128(ENTRY, layer_)};

__attribute__((noinline)) long rec(long x, int depth)
{
    if (depth == 0) {
        return x;
    }
    long r = rec(x, depth - 1);
    __asm__ volatile("" ::: "memory"); /* no tail call: one frame per level */
    return r + 1;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    static const int depths[] = {1, 4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 128};
    long sum = 0;
    for (unsigned k = 0; k < sizeof depths / sizeof *depths; k++) {
        int depth = depths[k];
        for (int i = 0; i <= LAYERS; i++) {
            table[i] = i < depth ? layers[i] : 0;
        }
        long calls = 20000000L / depth;
        double chain = 1e30, recursion = 1e30;
        for (int rep = 0; rep < 7; rep++) {
            double start = now_ns();
            for (long i = 0; i < calls; i++) {
                sum += descend(i);
            }
            double t = (now_ns() - start) / (double)calls;
            chain = t < chain ? t : chain;
            start = now_ns();
            for (long i = 0; i < calls; i++) {
                sum += rec(i, depth);
            }
            t = (now_ns() - start) / (double)calls;
            recursion = t < recursion ? t : recursion;
        }
        printf("%3d %9.2f %6.2f %9.2f %6.2f\n", depth, chain, chain / depth, recursion, recursion / depth);
    }
    return sum == 42; /* keeps the calls' results live */
}
