/* A 2-D Jacobi stencil: each rank owns an N x N block of a periodic grid
 * of ranks (MPI_Dims_create, MPI_Cart_create, MPI_Cart_shift), exchanges
 * one-cell halos with its 4 neighbours each iteration (MPI_Irecv,
 * MPI_Isend, MPI_Waitall), and every CHECK iterations agrees on the
 * residual with MPI_Allreduce. The demo traces it, and the benchmarks
 * time it with and without the tracer.
 *
 * usage: stencil [N [ITERATIONS [CHECK]]]   (default 256 200 10)
 * prints: stencil: ranks R grid PxQ n N iterations I residual X time T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT(a, i, j) (a)[(size_t)(i) * (n + 2) + (j)]

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 256;
    int iterations = argc > 2 ? atoi(argv[2]) : 200;
    int check = argc > 3 ? atoi(argv[3]) : 10;
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
    MPI_Comm_rank(grid, &rank);
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);

    double *a = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
    double *b = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
    double *sendbuf = malloc(4 * (size_t)n * sizeof(double));
    double *recvbuf = malloc(4 * (size_t)n * sizeof(double));
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            AT(a, i, j) = (double)((rank * 7 + i * 3 + j) % 17);

    double residual = 0, start = MPI_Wtime();
    for (int it = 0; it < iterations; it++) {
        /* Halos: rows are contiguous, columns are packed. */
        double *s[4] = {sendbuf, sendbuf + n, sendbuf + 2 * n, sendbuf + 3 * n};
        double *r[4] = {recvbuf, recvbuf + n, recvbuf + 2 * n, recvbuf + 3 * n};
        memcpy(s[0], &AT(a, 1, 1), n * sizeof(double));
        memcpy(s[1], &AT(a, n, 1), n * sizeof(double));
        for (int i = 0; i < n; i++) {
            s[2][i] = AT(a, i + 1, 1);
            s[3][i] = AT(a, i + 1, n);
        }
        int peer[4] = {up, down, left, right};
        MPI_Request req[8];
        for (int k = 0; k < 4; k++)
            MPI_Irecv(r[k], n, MPI_DOUBLE, peer[k], k ^ 1, grid, &req[k]);
        for (int k = 0; k < 4; k++)
            MPI_Isend(s[k], n, MPI_DOUBLE, peer[k], k, grid, &req[4 + k]);
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        memcpy(&AT(a, 0, 1), r[0], n * sizeof(double));
        memcpy(&AT(a, n + 1, 1), r[1], n * sizeof(double));
        for (int i = 0; i < n; i++) {
            AT(a, i + 1, 0) = r[2][i];
            AT(a, i + 1, n + 1) = r[3][i];
        }
        double local = 0;
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) {
                double v = 0.25 * (AT(a, i - 1, j) + AT(a, i + 1, j) + AT(a, i, j - 1) + AT(a, i, j + 1));
                local += (v - AT(a, i, j)) * (v - AT(a, i, j));
                AT(b, i, j) = v;
            }
        double *t = a;
        a = b;
        b = t;
        if (check > 0 && (it + 1) % check == 0)
            MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, grid);
    }
    double elapsed = MPI_Wtime() - start;
    if (rank == 0)
        printf("stencil: ranks %d grid %dx%d n %d iterations %d residual %.6e time %.3f\n", size, dims[0],
               dims[1], n, iterations, residual, elapsed);
    MPI_Comm_free(&grid);
    free(a);
    free(b);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return 0;
}
