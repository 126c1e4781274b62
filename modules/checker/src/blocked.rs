//! This rank's threads blocked in checked calls past the timeout, and
//! whether the rank as a whole is stuck: each of its threads that made a
//! checked call (`threads::seen`) is blocked, or idle, a thread outside
//! MPI whose processor time (`/proc/self/task/TID/stat`) has not grown
//! for a timeout (joining the blocked threads, waiting on a lock).
//! A rank where one thread blocks while another computes or makes MPI
//! calls is not stuck: the other may yet send what the first waits for.
//!
//! Every change (a thread blocks past the timeout, or its call completes)
//! bumps the rank's epoch, which the watchdog's confirmation rounds
//! compare.

use crate::graph::Blocked;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often the processor times of the threads outside MPI are read.
const READ_EVERY: Duration = Duration::from_millis(20);

/// Since when the rank has been quiet: its epoch then, the instant, and
/// the processor times of its other threads (kernel id, ticks).
type Quiet = (u64, Instant, Vec<(i32, u64)>);

/// The rank's threads blocked past the timeout, and what was last found.
struct Local {
    /// By thread number.
    blocked: BTreeMap<u32, Blocked>,
    epoch: u64,
    quiet: Option<Quiet>,
    /// When those times were last read.
    read: Option<Instant>,
}

static LOCAL: Mutex<Local> = Mutex::new(Local {
    blocked: BTreeMap::new(),
    epoch: 0,
    quiet: None,
    read: None,
});

/// The rank found stuck: its epoch, its blocked threads, and since when.
pub struct Stuck {
    pub epoch: u64,
    pub threads: Vec<Blocked>,
    pub since: Instant,
}

/// A thread is blocked past the timeout in `state`.
pub fn block(state: Blocked) {
    let mut l = LOCAL.lock();
    l.blocked.insert(state.thread, state);
    l.epoch += 1;
}

/// Thread `thread`'s blocked call completed.
pub fn unblock(thread: u32) {
    let mut l = LOCAL.lock();
    l.blocked.remove(&thread);
    l.epoch += 1;
}

/// The rank's epoch (changes with every block and unblock).
pub fn epoch() -> u64 {
    LOCAL.lock().epoch
}

/// Thread `tid`'s processor time in clock ticks (user and system), None
/// if it ended.
fn ticks(tid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // "tid (comm) S ppid ...": after the last ')', the state is field 3,
    // utime and stime fields 14 and 15.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Whether the rank is stuck now (see the module): every thread that
/// made a checked call is blocked past the timeout, or has been idle for
/// `timeout` seconds while the others were.
pub fn stuck(timeout: f64) -> Option<Stuck> {
    let mut l = LOCAL.lock();
    if l.blocked.is_empty() {
        l.quiet = None;
        return None;
    }
    let epoch = l.epoch;
    let now = Instant::now();
    let fresh = l.read.is_some_and(|r| now.duration_since(r) < READ_EVERY);
    let same = l.quiet.as_ref().is_some_and(|q| q.0 == epoch);
    if !(fresh && same) {
        let others: Vec<i32> = crate::threads::seen()
            .into_iter()
            .filter(|(n, _)| !l.blocked.contains_key(n))
            .map(|(_, tid)| tid)
            .collect();
        let times: Vec<(i32, u64)> = others.into_iter().filter_map(|t| Some((t, ticks(t)?))).collect();
        l.read = Some(now);
        if !l.quiet.as_ref().is_some_and(|q| q.0 == epoch && q.2 == times) {
            l.quiet = Some((epoch, now, times));
        }
    }
    let (_, since, times) = l.quiet.as_ref()?;
    if !times.is_empty() && since.elapsed().as_secs_f64() < timeout {
        return None;
    }
    Some(Stuck {
        epoch,
        threads: l.blocked.values().cloned().collect(),
        since: *since,
    })
}
