//! profiler: pnmpi's bundled profiler module.
//!
//! It wraps every MPI routine of the routine table and records, per rank
//! and from `MPI_Init` to `MPI_Finalize`: each routine's count, min, max,
//! total and average time and the bytes it moves; the computation
//! granularity (time between MPI calls) and communication overhead (time
//! inside MPI) as distributions, as BCS-MPI's monitoring system (MMDS)
//! does; latency and size distributions of chosen routines; and, as mpiP
//! does, statistics per call site of the application. At `MPI_Finalize`
//! rank 0 gathers every rank's profile on the module's own duplicate of
//! `MPI_COMM_WORLD` and writes a text report, JSON and an SVG picture.
//!
//! Arguments (`argument KEY VALUE` after `module profiler`): `output`
//! (the text report's path, default `pnmpi-profile.txt`; `.json` and
//! `.svg` beside it), `resolution` and `range` of both distributions (or
//! `comp_resolution`, `comp_range`, `comm_resolution`, `comm_range`),
//! `distributions` (routines, `*` and `?` allowed), `latency_resolution`,
//! `latency_range`, `size_resolution`, `size_range`, `callsites on|off`.
//!
//! Where it sits in the chain decides what it sees: below another module
//! it also profiles the calls that module passes down (`XMPI_`, and every
//! call of a patched PMPI tool); above, it does not. Its own housekeeping
//! (its communicator, the report's gather) goes straight to the MPI
//! library (`pnmpi_sdk::native`), past the modules below it.

mod bytes;
mod clock;
mod config;
mod profile;
mod report;
mod row;
mod state;
mod svg;

use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sizes::SizeCache;
use pnmpi_sdk::{constants, native, say, Comm};
use std::ffi::c_int;
use std::sync::OnceLock;

// Called for MPI_Wtime and MPI_Wtick: it counts clock reads as calls.
pnmpi_sdk::wraps_clock!();

pnmpi_sdk::module! {
    name: "profiler",
    init: config::load,
}

/// The module's duplicate of `MPI_COMM_WORLD`, for its report.
struct World(Comm);

// SAFETY: an MPI communicator handle names the same communicator in every
// thread of the process; MPI, not the handle, synchronizes its use.
unsafe impl Send for World {}
// SAFETY: as above; the handle itself is never written after MPI_Init.
unsafe impl Sync for World {}

static WORLD: OnceLock<World> = OnceLock::new();

/// Every routine but those that start and end the profile: time the call,
/// count it under its routine and its call site.
macro_rules! profile {
    ($id:literal, MPI_Init, $($rest:tt)*) => {};
    ($id:literal, MPI_Init_thread, $($rest:tt)*) => {};
    ($id:literal, MPI_Finalize, $($rest:tt)*) => {};
    ($id:literal, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
     $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
        /// Times and counts the call around the next layer.
        ///
        /// # Safety
        /// Called by libpnmpi with the arguments of the MPI routine it is
        /// named after.
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            const WAITS: bool = state::waits(stringify!($mpi));
            const FREES_TYPE: bool = pnmpi_mpi_sys::same_bytes(stringify!($mpi).as_bytes(), b"MPI_Type_free");
            let bytes = |sizes: &SizeCache| bytes::moved!($mpi; sizes; $($a),*);
            let call = state::Call::enter::<WAITS>($id, bytes);
            // SAFETY: this call's own arguments, unchanged, to the next
            // layer's entry point of the same C signature.
            let result = unsafe { pnmpi_sdk::raw::$xmpi($($a),*) };
            call.leave($id, bytes);
            if FREES_TYPE {
                // The freed handle may name another type from now on.
                pnmpi_sdk::sizes::forget_sizes();
            }
            result
        }
    };
}

pnmpi_mpi_sys::for_each_routine!(profile);

pnmpi_sdk::wrap! {
    /// Starts the profile at its entry.
    fn MPI_Init(_argc, _argv) {
        start(routine::MPI_Init, || next!())
    }

    /// Starts the profile at its entry.
    fn MPI_Init_thread(_argc, _argv, _required, _provided) {
        start(routine::MPI_Init_thread, || next!())
    }

    /// Ends the profile at its entry and writes the report, then finalizes.
    fn MPI_Finalize() {
        finish();
        next!()
    }
}

/// Runs MPI's initialization `init`, duplicates `MPI_COMM_WORLD` for the
/// report, sets the time base and records the call as routine `id`.
fn start(id: usize, init: impl FnOnce() -> c_int) -> c_int {
    let sp = pnmpi_sdk::callsite::stack_pointer();
    let begin = clock::stamp();
    let rc = init();
    if rc != constants::SUCCESS() {
        return rc;
    }
    match native::comm_dup(constants::COMM_WORLD()) {
        Ok(comm) => {
            WORLD.get_or_init(|| World(comm));
        }
        Err(e) => say::warn(
            "profiler",
            format_args!("cannot duplicate MPI_COMM_WORLD ({e}): no report"),
        ),
    }
    clock::calibrate(begin);
    let end = clock::ticks();
    if let Some(block) = state::block() {
        block.record(id, sp, begin.ticks, end, true, 0);
    }
    rc
}

/// Closes the profile and has rank 0 write the report.
fn finish() {
    let end = clock::stamp();
    let started = std::time::Instant::now();
    let (Some(clock), Some(world), Some(config)) = (clock::get(), WORLD.get(), config::get()) else {
        return;
    };
    let me = state::block();
    if let Some(block) = me {
        block.close(end.ticks);
    }
    let rank = native::comm_rank(world.0).unwrap_or(-1);
    let profile = profile::collect(rank, clock, end, me);
    match report::gather_and_write(world.0, profile, config) {
        Ok(Some(path)) => say::note(
            "profiler",
            format_args!(
                "wrote {} (with .json and .svg) in {:.1} ms",
                path.display(),
                started.elapsed().as_secs_f64() * 1e3
            ),
        ),
        Ok(None) => {}
        Err(e) => say::warn("profiler", e),
    }
    if let Err(e) = native::comm_free(world.0) {
        say::warn("profiler", format_args!("cannot free its communicator: {e}"));
    }
}
