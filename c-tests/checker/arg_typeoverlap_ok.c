// expect: none
// A vector of 4 floats at one place (stride 0) is sent, which is legal; rank 1 receives 4 floats.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    float buf[16] = {0};
    MPI_Datatype t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_create_hvector(4, 1, 0, MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    if (rank == 0)
        MPI_Send(buf, 1, t, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(buf, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
