//! Blocking calls as test loops: the checker makes each blocking call it
//! checks nonblocking (`MPI_Recv` becomes `MPI_Improbe`, `MPI_Send`
//! `MPI_Issend`, `MPI_Bcast` `MPI_Ibcast`, `MPI_Wait` `MPI_Test`...) and
//! tests it until it completes. Past `deadlock_timeout` the thread tells
//! its rank's `blocked` threads that it is blocked, and polls the
//! watchdog, so that a deadlock is reported instead of hanging. The loop also settles the comparisons of
//! nonblocking collectives under way (`pending`).

use crate::config;
use crate::graph::Blocked;
use crate::report;
use crate::site::Here;
use crate::{blocked, threads, watchdog};
use pnmpi_sdk::constants as mpi;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// Tight tests before the loop starts yielding the processor.
const SPIN: Duration = Duration::from_micros(50);
/// After this, the loop sleeps between tests.
const YIELD: Duration = Duration::from_millis(10);
const NAP: Duration = Duration::from_micros(100);

/// Runs `test` until it reports completion (`Ok(true)`) or an error code;
/// `describe` says what the call waits for, asked only if it blocks past
/// the timeout.
pub fn block_on(
    here: &Here,
    describe: impl Fn() -> Blocked,
    mut test: impl FnMut() -> Result<bool, c_int>,
) -> c_int {
    // Most calls complete at the first test: no clock read for them.
    match test() {
        Ok(true) => return mpi::SUCCESS(),
        Ok(false) => {}
        Err(code) => return code,
    }
    let start = Instant::now();
    let timeout = config::get().timeout;
    let mut announced = false;
    let mut tests = 0u64;
    let rc = loop {
        // The comparisons of nonblocking collectives under way, which a
        // rank blocked here may be the only one to settle.
        crate::pending::progress();
        match test() {
            Ok(true) => break mpi::SUCCESS(),
            Ok(false) => {}
            Err(code) => break code,
        }
        tests += 1;
        if !tests.is_multiple_of(64) {
            continue;
        }
        let waited = start.elapsed();
        if waited < SPIN {
            continue;
        }
        if waited < YIELD {
            std::thread::yield_now();
            continue;
        }
        std::thread::sleep(NAP);
        if waited.as_secs_f64() < timeout {
            continue;
        }
        if !announced {
            let mut state = describe();
            state.rank = report::rank();
            state.thread = threads::current();
            state.call = here.call().to_string();
            state.site = here.site();
            blocked::block(state);
            announced = true;
        }
        watchdog::poll(timeout);
    };
    if announced {
        blocked::unblock(threads::current());
        watchdog::released();
    }
    rc
}

/// The outcome of a test call (`MPI_Test`, `MPI_Iprobe`...): `call` sets
/// the flag it is given and returns MPI's code.
pub fn flagged(call: impl FnOnce(&mut c_int) -> c_int) -> Result<bool, c_int> {
    let mut flag: c_int = 0;
    let rc = call(&mut flag);
    if rc != mpi::SUCCESS() {
        return Err(rc);
    }
    Ok(flag != 0)
}

/// What a call waits for: explicit world ranks, or any rank.
pub fn waiting_for(peers: Vec<i32>, any: bool, waits: String) -> Blocked {
    Blocked {
        peers,
        any,
        waits,
        ..Blocked::default()
    }
}
