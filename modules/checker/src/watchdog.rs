//! Deadlock detection across ranks, over the checker's own duplicate of
//! `MPI_COMM_WORLD` (natively, so no tool sees it).
//!
//! Protocol. A rank whose threads are stuck (`blocked`: each thread that
//! calls MPI blocked in a checked call for `deadlock_timeout`, or idle)
//! sends rank 0 its [`RankState`] (a small JSON message, tag `STATE`):
//! its epoch and every blocked thread's call; and another when it is no
//! longer stuck. Rank 0, whenever one of its threads is itself blocked
//! past the timeout (or waiting in `MPI_Finalize`), keeps the latest
//! state of every rank; when all are stuck it sends each a `PROBE` with
//! a round number, and each rank, polling in a blocked loop, looks at its
//! threads once more and answers `REPLY` with its epoch and whether it is
//! still stuck. If every rank answers still stuck in the epoch rank 0
//! has on record, and rank 0 has been stuck for another timeout since it
//! started the round, no thread can progress: rank 0 writes the wait-for
//! graph, a node per blocked thread, and aborts the job.
//!
//! The only false report would be a message in transit for longer than
//! the timeout while every rank waits (the default is 2 s), or a thread
//! idle outside MPI for as long (sleeping) that would then send. A
//! thread that blocks in a routine the checker does not convert (e.g.
//! `MPI_Comm_split`) is never blocked in its sense: that deadlock is not
//! reported.

use crate::blocked::{self, Stuck};
use crate::graph::{self, Blocked};
use crate::report::{self, Class, Report};
use parking_lot::Mutex;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Request, MPI_Status};
use pnmpi_sdk::sys::Handle;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::c_int;
use std::time::Instant;

const STATE: c_int = 1;
const PROBE: c_int = 2;
const REPLY: c_int = 3;

/// The watchdog's state in this process.
struct Watch {
    /// The checker's duplicate of `MPI_COMM_WORLD` (bits).
    comm: u64,
    size: i32,
    /// Sends in flight with their buffers.
    pending: Vec<(MPI_Request, Vec<u8>)>,
    /// Rank 0: the latest state of each rank.
    states: BTreeMap<i32, RankState>,
    /// The epoch this rank last told rank 0 it is stuck in (None: it is
    /// not, as far as rank 0 knows).
    told: Option<u64>,
    /// Rank 0: the round in progress: its number, start, replies.
    round: Option<Round>,
    rounds: u64,
}

/// A confirmation round: its number, start, and each rank's reply (its
/// epoch, still stuck).
type Round = (u64, Instant, BTreeMap<i32, (u64, bool)>);

/// What a rank tells rank 0: whether it is stuck, in which epoch, and
/// its blocked threads.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct RankState {
    stuck: bool,
    epoch: u64,
    threads: Vec<Blocked>,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);

// SAFETY: MPI handles name the same objects from every thread; the
// buffers are owned; the mutex serializes every use.
unsafe impl Send for Watch {}

fn comm_of(w: &Watch) -> MPI_Comm {
    MPI_Comm::from_bits(w.comm)
}

/// Starts the watchdog on `comm`, the checker's duplicate of the world.
pub fn start(comm: MPI_Comm, size: i32) {
    *WATCH.lock() = Some(Watch {
        comm: comm.bits(),
        size,
        pending: Vec::new(),
        states: BTreeMap::new(),
        told: None,
        round: None,
        rounds: 0,
    });
}

/// The watchdog's communicator, if started.
pub fn comm() -> Option<MPI_Comm> {
    WATCH.lock().as_ref().map(comm_of)
}

/// Sends `bytes` to world rank `to` with `tag`, without blocking.
fn post(w: &mut Watch, to: i32, tag: c_int, bytes: Vec<u8>) {
    let mut req = mpi::REQUEST_NULL();
    // SAFETY: the buffer moves into `pending` with the request and stays
    // alive, unmoved on the heap, until the send completes.
    unsafe {
        ffi::PMPI_Isend(
            bytes.as_ptr().cast(),
            bytes.len() as c_int,
            mpi::BYTE(),
            to,
            tag,
            comm_of(w),
            &mut req,
        )
    };
    w.pending.push((req, bytes));
    w.pending.retain_mut(|(req, _)| {
        let mut done: c_int = 0;
        // SAFETY: a request of ours; its status is ignored.
        unsafe { ffi::PMPI_Test(req, &mut done, mpi::STATUS_IGNORE()) };
        done == 0
    });
}

/// Receives a pending message of `tag` from `from` (or any), if any.
fn take(w: &Watch, from: c_int, tag: c_int) -> Option<(i32, Vec<u8>)> {
    let mut flag: c_int = 0;
    // SAFETY: MPI_Status is plain integers; all zeroes is valid.
    let mut status: MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: local out-parameters on our own communicator.
    unsafe { ffi::PMPI_Iprobe(from, tag, comm_of(w), &mut flag, &mut status) };
    if flag == 0 {
        return None;
    }
    let mut n: c_int = 0;
    // SAFETY: the status Iprobe filled.
    unsafe { ffi::PMPI_Get_count(&status, mpi::BYTE(), &mut n) };
    let mut buf = vec![0u8; n.max(0) as usize];
    // SAFETY: `buf` holds the probed message's bytes.
    unsafe {
        ffi::PMPI_Recv(
            buf.as_mut_ptr().cast(),
            n,
            mpi::BYTE(),
            status.MPI_SOURCE,
            tag,
            comm_of(w),
            mpi::STATUS_IGNORE(),
        )
    };
    Some((status.MPI_SOURCE, buf))
}

/// Tells rank 0 this rank's state, if it changed since it last did.
fn tell(w: &mut Watch, now: Option<&Stuck>) {
    let epoch = now.map(|s| s.epoch);
    if epoch == w.told {
        return;
    }
    w.told = epoch;
    let state = RankState {
        stuck: now.is_some(),
        epoch: epoch.unwrap_or_default(),
        threads: now.map(|s| s.threads.clone()).unwrap_or_default(),
    };
    if report::rank() == 0 {
        if !state.stuck {
            w.round = None;
        }
        w.states.insert(0, state);
        return;
    }
    let bytes = serde_json::to_vec(&state).unwrap_or_default();
    post(w, 0, STATE, bytes);
}

/// After a blocked thread's call completed: the rank is no longer stuck.
pub fn released() {
    let mut guard = WATCH.lock();
    if let Some(w) = guard.as_mut() {
        tell(w, None);
    }
}

/// Polls the protocol from a thread blocked past the timeout (`timeout`,
/// in seconds). Rank 0 may declare the deadlock here (and never return).
pub fn poll(timeout: f64) {
    let now = blocked::stuck(timeout);
    let mut guard = WATCH.lock();
    let Some(w) = guard.as_mut() else { return };
    tell(w, now.as_ref());
    let me = report::rank();
    if me != 0 {
        while let Some((_, bytes)) = take(w, 0, PROBE) {
            let round = u64::from_le_bytes(bytes.get(..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]));
            let (epoch, stuck) = now.as_ref().map_or((blocked::epoch(), 0), |s| (s.epoch, 1));
            let reply = [round, epoch, stuck]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            post(w, 0, REPLY, reply);
        }
        return;
    }
    while let Some((from, bytes)) = take(w, mpi::ANY_SOURCE(), STATE) {
        if let Ok(state) = serde_json::from_slice::<RankState>(&bytes) {
            if !state.stuck {
                w.round = None;
            }
            w.states.insert(from, state);
        }
    }
    while let Some((from, bytes)) = take(w, mpi::ANY_SOURCE(), REPLY) {
        let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        if bytes.len() < 24 {
            continue;
        }
        if let Some((round, _, replies)) = w.round.as_mut() {
            if word(0) == *round {
                replies.insert(from, (word(1), word(2) == 1));
            }
        }
    }
    let Some(mine) = now else {
        w.round = None;
        return;
    };
    let all_stuck = (0..w.size).all(|r| w.states.get(&r).is_some_and(|s| s.stuck));
    if !all_stuck {
        w.round = None;
        return;
    }
    match &w.round {
        None => {
            w.rounds += 1;
            let round = w.rounds;
            for r in 1..w.size {
                post(w, r, PROBE, round.to_le_bytes().to_vec());
            }
            w.round = Some((round, Instant::now(), BTreeMap::new()));
        }
        Some((_, started, replies)) => {
            let on_record = |r: i32, epoch: u64| w.states.get(&r).is_some_and(|st| st.epoch == epoch);
            let confirmed = (1..w.size).all(|r| {
                replies
                    .get(&r)
                    .is_some_and(|&(epoch, stuck)| stuck && on_record(r, epoch))
            });
            let stale = (1..w.size).any(|r| {
                replies
                    .get(&r)
                    .is_some_and(|&(epoch, stuck)| !stuck || !on_record(r, epoch))
            });
            if stale {
                w.round = None;
            } else if confirmed
                && started.elapsed().as_secs_f64() >= timeout
                && mine.since.elapsed().as_secs_f64() >= timeout
            {
                let states: Vec<Blocked> = w
                    .states
                    .values()
                    .flat_map(|s| s.threads.iter().cloned())
                    .collect();
                drop(guard);
                declare(&states);
            }
        }
    }
}

/// Reports the deadlock from rank 0 and ends the job.
fn declare(states: &[Blocked]) -> ! {
    let me = states.iter().find(|s| s.rank == 0).cloned().unwrap_or_default();
    let thread = me.thread;
    let check = if states.iter().any(|s| s.standard_send) {
        "potential-deadlock"
    } else {
        "deadlock"
    };
    report::emit(Report {
        class: Class::Deadlock,
        severity: report::Severity::Error,
        check,
        fix: crate::advice::fix(Class::Deadlock.name(), check),
        rank: 0,
        thread,
        call: me.call,
        site: me.site,
        what: graph::describe(
            states,
            match crate::config::get().sends {
                crate::config::Sends::Eager(limit) => Some(limit),
                _ => None,
            },
        ),
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    });
    report::abort_job()
}

/// At `MPI_Finalize`, after every rank left the last blocked loop: gives
/// up the sends still in flight and frees the communicator.
pub fn stop() {
    let Some(mut w) = WATCH.lock().take() else { return };
    if report::rank() == 0 {
        while take(&w, mpi::ANY_SOURCE(), STATE).is_some() || take(&w, mpi::ANY_SOURCE(), REPLY).is_some() {}
    } else {
        while take(&w, 0, PROBE).is_some() {}
    }
    for (req, bytes) in w.pending.drain(..) {
        let mut req = req;
        // SAFETY: an active send request of ours: freed, MPI completes it;
        // its buffer must outlive it, so it is leaked.
        unsafe { ffi::PMPI_Request_free(&mut req) };
        std::mem::forget(bytes);
    }
    let mut comm = comm_of(&w);
    // SAFETY: the checker's own communicator, no longer used.
    unsafe { ffi::PMPI_Comm_free(&mut comm) };
}
