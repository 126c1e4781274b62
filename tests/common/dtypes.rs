//! What the `datatype` service must walk for c-tests/programs/dtypes.c.

/// The runs (`offset TYPE count size`), as c-tests/modules/dtwalk.c prints them, of each send of
/// c-tests/programs/dtypes.c, computed by hand from the constructors' arguments (x86-64 C
/// layouts), by tag.
pub const WALKS: &[&str] = &[
    // 3 ints.
    "tag 1: size 4 runs 0 INT 3 4",
    // 2 of contiguous(4, double): one run of 8.
    "tag 2: size 32 runs 0 DOUBLE 8 8",
    // vector(3, 2, 4, int).
    "tag 3: size 24 runs 0 INT 2 4 | 16 INT 2 4 | 32 INT 2 4",
    // 2 of hvector(2, 3, 40 bytes, short), extent 46: the first element's last block and the
    // second's first touch.
    "tag 4: size 12 runs 0 SHORT 3 2 | 40 SHORT 6 2 | 86 SHORT 3 2",
    // indexed(lens 1 2 1, disps 4 0 2, int): the last two blocks touch.
    "tag 5: size 16 runs 16 INT 1 4 | 0 INT 3 4",
    // hindexed(lens 2 1, bytes 8 32, double).
    "tag 6: size 24 runs 8 DOUBLE 2 8 | 32 DOUBLE 1 8",
    // indexed_block(2, disps 0 5 2, float).
    "tag 7: size 24 runs 0 FLOAT 2 4 | 20 FLOAT 2 4 | 8 FLOAT 2 4",
    // 2 of struct { char c[3]; double d; int i[2]; } resized to its 24 bytes.
    "tag 8: size 19 runs 0 CHAR 3 1 | 8 DOUBLE 1 8 | 16 INT 2 4 | 24 CHAR 3 1 | 32 DOUBLE 1 8 | 40 INT 2 4",
    // 3 of int resized to 12 bytes.
    "tag 9: size 4 runs 0 INT 1 4 | 12 INT 1 4 | 24 INT 1 4",
    // subarray 4x5, 2x3 at (1, 2), C order, int: rows at elements 7 and 12.
    "tag 10: size 24 runs 28 INT 3 4 | 48 INT 3 4",
    // The same in Fortran order, double: columns at elements 9, 13 and 17.
    "tag 11: size 48 runs 72 DOUBLE 2 8 | 104 DOUBLE 2 8 | 136 DOUBLE 2 8",
    // 2 MPI_DOUBLE_INT: { double; int } pairs of 16 bytes.
    "tag 12: size 12 runs 0 DOUBLE 1 8 | 8 INT 1 4 | 16 DOUBLE 1 8 | 24 INT 1 4",
    // contiguous(2, vector(2, 1, 2, int)), the vector's extent 12: its runs touch in the middle.
    "tag 13: size 16 runs 0 INT 1 4 | 8 INT 2 4 | 20 INT 1 4",
    // dup of that vector.
    "tag 14: size 8 runs 0 INT 1 4 | 8 INT 1 4",
    // darray: rank 1's block of 8 doubles over 2 processes.
    "tag 15: size 32 runs 32 DOUBLE 4 8",
    // No data: one run of no elements.
    "tag 16: size 4 runs 0 INT 0 4",
];
