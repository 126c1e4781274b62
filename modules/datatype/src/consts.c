/* The MPI constants the datatype module needs that pnmpi-mpi-sys does not
 * carry: the array orders, and the predefined pair types
 * (MPI_FLOAT_INT, ...) with their parts at the offsets this compiler lays
 * the matching C structs out at. Compiled against the native mpi.h by
 * build.rs. */
#include <mpi.h>
#include <stddef.h>

const int pnmpi_datatype_order_c = MPI_ORDER_C;
const int pnmpi_datatype_order_fortran = MPI_ORDER_FORTRAN;

/* A predefined pair type: its first part at offset 0, its second at
 * `second_at`. */
struct pnmpi_datatype_pair {
    MPI_Datatype pair, first, second;
    long second_at;
};

struct float_int { float a; int b; };
struct double_int { double a; int b; };
struct long_int { long a; int b; };
struct short_int { short a; int b; };
struct long_double_int { long double a; int b; };
struct two_int { int a; int b; };
struct two_float { float a; float b; };
struct two_double { double a; double b; };

const struct pnmpi_datatype_pair pnmpi_datatype_pairs[] = {
    {MPI_FLOAT_INT, MPI_FLOAT, MPI_INT, offsetof(struct float_int, b)},
    {MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT, offsetof(struct double_int, b)},
    {MPI_LONG_INT, MPI_LONG, MPI_INT, offsetof(struct long_int, b)},
    {MPI_SHORT_INT, MPI_SHORT, MPI_INT, offsetof(struct short_int, b)},
    {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT, offsetof(struct long_double_int, b)},
    {MPI_2INT, MPI_INT, MPI_INT, offsetof(struct two_int, b)},
    {MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER, offsetof(struct two_int, b)},
    {MPI_2REAL, MPI_REAL, MPI_REAL, offsetof(struct two_float, b)},
    {MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, offsetof(struct two_double, b)},
};
const int pnmpi_datatype_pair_count = sizeof pnmpi_datatype_pairs / sizeof pnmpi_datatype_pairs[0];

/* The darray distributions and the default distribution argument. */
const int pnmpi_datatype_distribute_block = MPI_DISTRIBUTE_BLOCK;
const int pnmpi_datatype_distribute_cyclic = MPI_DISTRIBUTE_CYCLIC;
const int pnmpi_datatype_distribute_none = MPI_DISTRIBUTE_NONE;
const int pnmpi_datatype_distribute_dflt_darg = MPI_DISTRIBUTE_DFLT_DARG;
