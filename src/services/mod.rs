//! The services modules use to cooperate (LLNL PnMPI's `PNMPI_Service_*`
//! API, declared in `include/pnmpi.h`): module and stack lookup, named
//! services and globals, arguments, Pcontrol state and hooks.
//!
//! Names are limited to [`NAME_MAX`] bytes and service signatures to
//! [`SIG_MAX`], the sizes of the descriptor fields in `pnmpi.h`; a longer
//! name is refused with `PNMPI_FAILURE`, never truncated.

mod api;
mod descriptor;
mod registry;
mod status;

/// Size of the `name` fields of the descriptors, terminating NUL included.
pub const NAME_MAX: usize = 256;
/// Size of a service descriptor's `sig` field, terminating NUL included.
pub const SIG_MAX: usize = 64;
