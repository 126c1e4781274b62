//! The `replay` module: deterministic record and replay of the outcomes
//! that the MPI library chooses.
//!
//! **Record** (`argument mode record`) stores, per rank, in
//! `D/rank-R.rpl`: the source and tag matched by every wildcard
//! `MPI_Recv`, `MPI_Probe`, `MPI_Mprobe`, `MPI_Sendrecv`; the source
//! matched by every `MPI_Irecv(MPI_ANY_SOURCE)` and every start of a
//! persistent one, at its completion; the flags of
//! `MPI_Iprobe`, `MPI_Improbe`, `MPI_Test`, `MPI_Testall`, `MPI_Testany`,
//! `MPI_Testsome` as runs of failures before each success, as LLNL's
//! ReMPI does; which requests `MPI_Waitany`, `MPI_Waitsome`,
//! `MPI_Testany`, `MPI_Testsome` completed, in order; with `wtime on`,
//! `MPI_Wtime`'s values; the results of one-sided reads (`rma`); for
//! vtime above it, through the `compute`
//! service (`cpu_record`), the CPU time it charges between calls.
//!
//! **Replay** (`argument mode replay`) forces those outcomes, so that
//! message matching and the program's control flow repeat; a run that
//! leaves the record stops with an error naming the rank, the call and its
//! index. `docs/replay.md` is the guide; `format` describes the file.
//!
//! Under `MPI_THREAD_MULTIPLE` each thread (numbered by `pnmpi_sdk::threads`, in the
//! order the process created them) records and replays its own outcomes,
//! and the outcomes that make MPI act are replayed in the recorded order
//! across threads (`state`); wildcard receives are posted in the recorded
//! order of every thread's posts (`posts`).
//!
//! Arguments (`argument KEY VALUE` after `module replay`), else the
//! environment: `mode` / `PNMPI_REPLAY_MODE` (`record` or `replay`,
//! required), `dir` / `PNMPI_REPLAY_DIR` (default `pnmpi-replay`), `wtime`
//! / `PNMPI_REPLAY_WTIME` (`on` or `off`, the default), `compress` /
//! `PNMPI_REPLAY_COMPRESS` (gzip: `on`, the default, or `off`).

#[cfg(not(test))]
mod abort;
#[cfg(not(test))]
mod config;
pub mod cpu_format;
#[cfg(not(test))]
mod cpu_record;
pub mod file;
pub mod format;
#[cfg(not(test))]
mod posts;
#[cfg(not(test))]
mod rma;
#[cfg(not(test))]
mod state;
#[cfg(not(test))]
mod wrappers;

// Called for MPI_Wtime and MPI_Wtick: it records and replays MPI_Wtime.
#[cfg(not(test))]
pnmpi_sdk::wraps_clock!();

#[cfg(not(test))]
pnmpi_sdk::module! {
    name: "replay",
    registration_point: cpu_record::offer,
    init: config::load,
    fini: state::fini,
}
