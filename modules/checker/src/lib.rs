//! checker: pnmpi's MPI correctness checker module.
//!
//! It checks an unmodified application's MPI calls as they happen and
//! reports each error with the rank, the call, the call site (file:line,
//! found as the profiler finds it, `pnmpi_sdk::callsite`) and what is
//! wrong, and what to change (`advice`), as text on stderr and JSON in
//! `OUTPUT/rank-N.json`:
//!
//! - invalid arguments (`args`): communicator, rank, tag, count, root,
//!   datatype (null, freed, uncommitted), op, a NULL buffer with data,
//!   overlapping send and receive buffers;
//! - buffers against the C variables they point into (`buftype`,
//!   `debuginfo`, `ctype`, `typemap`): a count past the variable's end, a
//!   datatype whose elements are not the variable's C types;
//! - collective mismatches across ranks (`collective`, `desc`,
//!   `pending`; the wrappers in `coll`, `coll_v`, `coll_scan`,
//!   `coll_neighbor`): another routine, root, operation or type signature
//!   at the same point of a communicator's sequence of blocking
//!   collectives, or of nonblocking ones, compared at their start;
//! - point-to-point mismatches (`p2p`, `p2psig`, `matched`): a message
//!   longer than its receive (found before MPI's error handler ends the
//!   job), a message whose type signature is not the receive's, also for
//!   messages matched by `MPI_Mprobe`/`MPI_Improbe`;
//! - deadlocks (`wait`, `blocked`, `watchdog`, `graph`): every rank
//!   stuck (each of its threads that calls MPI blocked, or idle), with
//!   the wait-for graph, a node per blocked thread; cycles of standard sends that complete only
//!   because MPI buffers them beyond the portable eager limit (`sends
//!   eager`, the default), or at all (`sends synchronous`);
//! - nonblocking misuse (`requests`, `concurrency`, `gate`): requests
//!   never completed, started again while active, send buffers written
//!   before completion, buffers of active requests overlapped by another
//!   call (a potential data race), calls after `MPI_Finalize`;
//! - messages never received before `MPI_Finalize` (`lifecycle`);
//! - leaks at `MPI_Finalize` (`lifecycle`), as notes: communicators,
//!   groups, datatypes, operations, windows, persistent requests;
//! - one-sided communication (`rma`, `rma_sync`, `windows`): accesses
//!   outside an epoch or outside the target's window, origin and target
//!   signatures, origin buffers written before completion, fences and
//!   frees compared across ranks, locks inside fence epochs, windows
//!   freed with operations pending; a pending operation's buffer used by
//!   another call, and conflicting accesses of one target in one epoch
//!   (`race`, `rma_race`);
//! - datatype layouts against C's (`layout`), operations against the
//!   types they reduce (`ops`), an exit without `MPI_Finalize`;
//! - MPI's rules on threads (`threads`): calls above the granted thread
//!   level, one request waited on by two threads or one communicator's
//!   collectives entered by two at once, `MPI_Finalize` while another
//!   thread is in MPI.
//!
//! Arguments (`argument KEY VALUE` after `module checker`, see `config`):
//! `action report|abort`, `output DIR`, `deadlock_timeout SECONDS`,
//! `sends eager|synchronous|buffered`, `eager_limit BYTES`, `exit_code N`. docs/checker.md is the
//! manual.

pub mod graph;
pub mod layout;
pub mod origin;
pub mod race;
pub mod sig;
pub mod windows;

#[cfg(not(test))]
mod advice;
#[cfg(not(test))]
mod args;
#[cfg(not(test))]
mod blocked;
#[cfg(not(test))]
mod buftype;
#[cfg(not(test))]
mod checksum;
#[cfg(not(test))]
mod coll;
#[cfg(not(test))]
mod coll_neighbor;
#[cfg(not(test))]
mod coll_scan;
#[cfg(not(test))]
mod coll_v;
#[cfg(not(test))]
mod collective;
#[cfg(not(test))]
mod concurrency;
pub mod config;
#[cfg(not(test))]
mod consts;
#[cfg(not(test))]
mod contents;
mod ctype;
mod debuginfo;
#[cfg(not(test))]
mod desc;
#[cfg(not(test))]
mod gate;
#[cfg(not(test))]
mod lifecycle;
#[cfg(not(test))]
mod matched;
#[cfg(not(test))]
mod objects;
#[cfg(not(test))]
mod ops;
#[cfg(not(test))]
mod p2p;
#[cfg(not(test))]
mod p2p_c;
#[cfg(not(test))]
mod p2psig;
#[cfg(not(test))]
mod pending;
#[cfg(not(test))]
mod registry;
#[cfg(not(test))]
mod report;
#[cfg(not(test))]
mod requests;
#[cfg(not(test))]
mod rma;
#[cfg(not(test))]
mod rma_race;
#[cfg(not(test))]
mod rma_sync;
#[cfg(not(test))]
mod site;
#[cfg(not(test))]
mod thread_rules;
#[cfg(not(test))]
mod threads;
#[cfg(not(test))]
mod typemap;
#[cfg(not(test))]
mod types;
#[cfg(not(test))]
mod wait;
#[cfg(not(test))]
mod watchdog;

#[cfg(not(test))]
pnmpi_sdk::module! {
    name: "checker",
    init: config::load,
}
