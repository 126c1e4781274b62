/* The delay layer of the paper's section 5.4: each MPI_Send takes 100 us
 * longer; every other routine is left alone. The wait spins on the clock
 * rather than sleeping, so the added time is exact. */
#include <mpi.h>
#include <xmpi.h>
#include <time.h>


static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    double until = now() + 100e-6;
    while (now() < until)
        ;
    return XMPI_Send(buf, count, type, dest, tag, comm);
}
