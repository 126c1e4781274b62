//! MPI's datatype combiners (`MPI_COMBINER_X`), whose values are macros
//! that bindgen cannot evaluate: `constants.c` lists them, compiled
//! against the native `mpi.h`, and [`combiner`] names a value. The
//! checker and the datatype module both decode `MPI_Type_get_envelope`
//! with it.

/// A type constructor (`MPI_COMBINER_X`), in `constants.c`'s order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    HvectorInteger,
    Indexed,
    Hindexed,
    HindexedInteger,
    IndexedBlock,
    HindexedBlock,
    Struct,
    StructInteger,
    Subarray,
    Darray,
    Resized,
    F90Real,
    F90Complex,
    F90Integer,
}

/// Every combiner, in `constants.c`'s order.
pub const COMBINERS: [Combiner; 19] = [
    Combiner::Named,
    Combiner::Dup,
    Combiner::Contiguous,
    Combiner::Vector,
    Combiner::Hvector,
    Combiner::HvectorInteger,
    Combiner::Indexed,
    Combiner::Hindexed,
    Combiner::HindexedInteger,
    Combiner::IndexedBlock,
    Combiner::HindexedBlock,
    Combiner::Struct,
    Combiner::StructInteger,
    Combiner::Subarray,
    Combiner::Darray,
    Combiner::Resized,
    Combiner::F90Real,
    Combiner::F90Complex,
    Combiner::F90Integer,
];

extern "C" {
    static pnmpi_sys_combiners: [i32; 19];
    static pnmpi_sys_combiner_count: i32;
}

/// The combiner whose MPI value is `value`, if MPI defines it.
pub fn combiner(value: i32) -> Option<Combiner> {
    // SAFETY: an immutable C array initialised at load time.
    let values = unsafe { &pnmpi_sys_combiners };
    // SAFETY: as above.
    debug_assert_eq!(unsafe { pnmpi_sys_combiner_count } as usize, COMBINERS.len());
    values.iter().position(|&v| v == value).map(|i| COMBINERS[i])
}
