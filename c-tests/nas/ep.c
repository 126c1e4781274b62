/* EP, after NPB's embarrassingly parallel kernel: Gaussian pairs by the
 * Marsaglia polar method from NPB's randlc, in 2^BATCHES batches of
 * 2^BATCH_LOG pairs, each batch starting at its own point of one global
 * sequence; the ranks take contiguous blocks of batches (any rank count;
 * above 2^BATCHES ranks some ranks have none), then MPI_Allreduce the sums
 * and the counts per annulus.
 *
 * usage: ep [LOG2_BATCHES]   (default 14: 16,384 batches of 1,024 pairs)
 * prints (rank 0): ep: np N pairs P gaussians G sx SX sy SY
 *                  ep: counts Q0 ... Q9
 *                  ep: verified yes|NO   (counts add up to G)
 */
#include "nas.h"

#define BATCH_LOG 10
#define NQ 10

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int log_batches = argc > 1 ? atoi(argv[1]) : 14;
    need_ranks(log_batches >= 0 && log_batches <= 30, "ep", np, "LOG2_BATCHES must be 0 to 30");
    int64_t batches = (int64_t)1 << log_batches, pairs = (int64_t)1 << BATCH_LOG;
    int64_t first = batches * rank / np, last = batches * (rank + 1) / np;

    /* The multiplier that jumps over one batch (2 numbers a pair). */
    double jump = skip(1.0, NAS_A, 2 * pairs);
    double *x = malloc(2 * pairs * sizeof *x);
    double sums[2] = {0, 0}, q[NQ] = {0};
    for (int64_t k = first; k < last; k++) {
        double seed = skip(271828183.0, jump, k);
        for (int64_t i = 0; i < 2 * pairs; i++)
            x[i] = randlc(&seed, NAS_A);
        for (int64_t i = 0; i < pairs; i++) {
            double x1 = 2 * x[2 * i] - 1, x2 = 2 * x[2 * i + 1] - 1;
            double t = x1 * x1 + x2 * x2;
            if (t <= 1 && t > 0) {
                double f = sqrt(-2 * log(t) / t), gx = x1 * f, gy = x2 * f;
                int l = (int)fmax(fabs(gx), fabs(gy));
                q[l < NQ ? l : NQ - 1] += 1;
                sums[0] += gx;
                sums[1] += gy;
            }
        }
    }
    free(x);
    double total[2], counts[NQ];
    MPI_Allreduce(sums, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(q, counts, NQ, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        double g = 0;
        for (int l = 0; l < NQ; l++)
            g += counts[l];
        printf("ep: np %d pairs %lld gaussians %.0f sx %.15e sy %.15e\n", np,
               (long long)(batches * pairs), g, total[0], total[1]);
        printf("ep: counts");
        for (int l = 0; l < NQ; l++)
            printf(" %.0f", counts[l]);
        printf("\n");
        printf("ep: verified %s\n", g > 0.78 * batches * pairs && g < 0.79 * batches * pairs ? "yes" : "NO");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
