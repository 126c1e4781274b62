//! datatype: LLNL PnMPI's datatype service. Another module hands it a
//! buffer, a count and a datatype, and walks the data as its flattened
//! type signature: one item per run of one basic type, with the run's
//! address, basic type, number of elements and element size, in the
//! order of the type map; runs that continue one another are merged.
//! Any type MPI can describe is walked (`MPI_Type_get_envelope` and
//! `MPI_Type_get_contents`, asked natively): contiguous, vector, hvector,
//! indexed, hindexed, indexed and hindexed block, struct, resized,
//! subarray, darray, dup and the predefined pair types, nested in any
//! way, on either MPI, whether or not the type was made after the module
//! was loaded.
//!
//! LLNL's API, unchanged (`include/pnmpi/datatype.h`): the module
//! registers as `datatype-tracking`, with the services
//! `getDatatypeReference` (`"pimp"`: `int (*)(const void *buf, int
//! count, MPI_Datatype, PNMPIMOD_Datatype_Parameters_t *)`, starts a
//! walk), `delDatatypeReference` (`"p"`, ends it) and `getDatatypeSize`
//! (`"mp"`: `int (*)(MPI_Datatype, int *)`, the bytes of data of one
//! element); the caller steps with the header's
//! `PNMPIMOD_Datatype_getItem` and `PNMPIMOD_Datatype_nextItem`. The walk
//! state has LLNL's layout, so modules compiled against LLNL's
//! `datatype.h` (its `dtprint`) walk it too.
//!
//! Each type's runs are computed once and kept until the type is freed
//! (`MPI_Type_free`, wrapped here): load the module where the frees of
//! the types it walks pass through it.

// The unit tests cover the pure logic; what only MPI's answers reach
// (its errors, the combiners' values) is left out of them.
#[cfg_attr(test, allow(dead_code))]
mod contents;
#[cfg_attr(test, allow(dead_code))]
mod flatten;

#[cfg(not(test))]
mod consts;
#[cfg(not(test))]
mod layout;
#[cfg(not(test))]
mod mpi;
#[cfg(not(test))]
mod service;
