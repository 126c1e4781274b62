/* A small bulk-synchronous program for LLNL PnMPI's own modules
 * (tests/llnl_modules.rs): each of PHASES phases exchanges halos with
 * the neighbours (Irecv/Isend/Waitall), sends a strided column as a
 * derived type (Type_vector) with blocking Send/Recv, then reduces a
 * checksum (Allreduce) and meets at a Barrier. Works at any rank count.
 *
 * With LEAK = leak, each rank also makes a persistent send (tag 9, count
 * N, to its right neighbour) that it never starts nor frees: a request
 * leaked at MPI_Finalize, for the request checks.
 *
 * The run reads the clock around a 2 ms sleep: clock_ok is 1 when
 * MPI_Wtime saw it and MPI_Wtick is positive (a module's clock wrapper in
 * the way, as LLNL's generated ones are, would freeze the clock).
 *
 * usage: bsp_llnl [PHASES [LEAK]]   (default 3)
 * prints on rank 0: bsp_llnl: ranks R phases P sum S clock_ok C
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 8

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int phases = argc > 1 ? atoi(argv[1]) : 3;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    double grid[N][N], halo[2][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            grid[i][j] = rank * 100 + i * N + j;

    MPI_Datatype column;
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    double total = 0;
    for (int p = 0; p < phases; p++) {
        MPI_Request req[4];
        MPI_Status st[4];
        MPI_Irecv(halo[0], N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(halo[1], N, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(grid[N - 1], N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(grid[0], N, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, st);

        /* The first column goes right, one hop; rank 0 starts, the last ends. */
        double col[N];
        if (rank > 0)
            MPI_Recv(col, N, MPI_DOUBLE, rank - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank < size - 1)
            MPI_Send(&grid[0][0], 1, column, rank + 1, 3, MPI_COMM_WORLD);

        double local = 0;
        for (int i = 0; i < N; i++)
            local += halo[0][i] + halo[1][i] + (rank > 0 ? col[i] : 0);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                grid[i][j] += 1;
        double sum;
        MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        total += sum;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&column);
    MPI_Request leaked;
    if (argc > 2 && strcmp(argv[2], "leak") == 0)
        MPI_Send_init(grid[0], N, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &leaked);
    double t0 = MPI_Wtime();
    usleep(2000);
    int clock_ok = MPI_Wtime() - t0 >= 0.0019 && MPI_Wtick() > 0;
    if (rank == 0)
        printf("bsp_llnl: ranks %d phases %d sum %.1f clock_ok %d\n", size, phases, total, clock_ok);
    MPI_Finalize();
    return 0;
}
