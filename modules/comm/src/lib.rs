//! comm: pnmpi's communicator tracking service (LLNL PnMPI has none of
//! its own), and LLNL's communication callbacks (`events.rs`, `calls.rs`:
//! its `comm` module's interface, for a tool that registers them at run
//! time instead of being compiled with LLNL's `comm.c`). Every communicator the application makes
//! (`MPI_Comm_dup`, `_dup_with_info`, `_split`, `_split_type`, `_create`,
//! `_create_group`, `MPI_Cart_create`, `_sub`, `MPI_Graph_create`,
//! `MPI_Dist_graph_create`, `_adjacent`, `MPI_Intercomm_create`,
//! `_merge`), and `MPI_COMM_WORLD` and `MPI_COMM_SELF`, gets a record:
//! an id that all its members agree on (the maximum of their proposals,
//! one `MPI_Allreduce` on the new communicator, natively, at its
//! creation), the lowest world rank among its members (with the id, a
//! name unique across processes), the call that made it and the id of
//! the one it was made from, this process's rank, and the world ranks of
//! its members (and of the remote group of an intercommunicator).
//! `MPI_Comm_free` and `MPI_Comm_disconnect` mark it freed; freed records
//! are kept, in creation order, with their member lists.
//!
//! The C API (`include/pnmpi/comm.h`): the module registers as
//! `comm-tracking`, with the services `getCommInfo` (`"mp"`: `int
//! (*)(MPI_Comm, PNMPIMOD_Comm_Info_t *)`), `getCommCount` (`"p"`: `int
//! (*)(int *)`, records so far, freed ones included) and `getCommByIndex`
//! (`"ip"`: `int (*)(int, PNMPIMOD_Comm_Info_t *)`, in creation order),
//! and `registerCallbacks` (`"p"`: `int (*)(const
//! PNMPIMOD_Comm_Callbacks_t *)`, `include/pnmpi/commsub.h`).
//! Load it where the application's communicator calls pass through it
//! (below the modules that ask, or anywhere above the MPI).

mod registry;

#[cfg(not(test))]
mod calls;
#[cfg(not(test))]
mod events;
#[cfg(not(test))]
mod track;
