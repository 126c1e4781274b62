// expect: argument
// A vector of 4 floats at one place (stride 0): its elements overlap, and each rank receives into it.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    float buf[16] = {0};
    MPI_Datatype t;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_create_hvector(4, 1, 0, MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    MPI_Recv(buf, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // reported
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
