//! The module's state: per process either the recorder (a buffer streamed
//! to `D/rank-R.rpl.part`, renamed to `rank-R.rpl` at `MPI_Finalize`) or
//! the replayer (the whole record, read at `MPI_Init`).
//!
//! **Threads.** The module grants `MPI_THREAD_MULTIPLE`. One lock guards
//! the state; the recorder writes every thread's entries into the one
//! stream in the order they happened, marking each change of thread
//! ([`pnmpi_sdk::threads`] numbers them). The replayer splits the record into
//! a lane per thread and gives each call the next entry of its own lane.
//! An entry that makes MPI do something (a forced receive, probe or wait)
//! also waits for its turn: the entries before it in the record, of every
//! thread, must have been replayed, so that two threads that raced for a
//! message or a request get what they got in the recorded run. Failed
//! tests, matches of nonblocking receives and `MPI_Wtime` values wait for
//! nothing: they call no MPI, or are looked up by the posting thread.

use crate::abort::{self, diverge, fail};
use crate::config::config;
use crate::file::Stream;
use crate::format::{self, Encoder, Entry, Header, Kind};
use parking_lot::{Condvar, Mutex, MutexGuard};
use pnmpi_sdk::{constants as mpi, native};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use smallvec::SmallVec;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

/// Not recording or replaying (before `MPI_Init`, after `MPI_Finalize`).
pub const OFF: u8 = 0;
/// Recording.
pub const RECORD: u8 = 1;
/// Replaying.
pub const REPLAY: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(OFF);

/// The current mode: [`OFF`], [`RECORD`] or [`REPLAY`]. Numbers the
/// calling thread at its first call (see [`pnmpi_sdk::threads`]).
#[inline]
pub fn mode() -> u8 {
    let m = MODE.load(Ordering::Relaxed);
    if m != OFF {
        pnmpi_sdk::threads::touch();
    }
    m
}

/// The recorder.
pub struct Recorder {
    out: Stream,
    enc: Encoder,
    /// The thread of the entries written last.
    thread: u32,
    /// Per thread, a run of failed calls not written yet (a few threads:
    /// a scan beats hashing).
    fails: SmallVec<[(u32, Kind, u64); 4]>,
    /// Calls recorded (each failed attempt is one).
    pub calls: u64,
    /// Entries written.
    pub entries: u64,
    /// Matches of wildcard `MPI_Irecv`s (and persistent receives) recorded.
    pub matches: u64,
    /// Threads that recorded something.
    pub threads: HashSet<u32>,
    /// Wildcard receives posted so far, per posting thread.
    posts: SmallVec<[(u32, u64); 4]>,
    /// Pending wildcard `MPI_Irecv`s (and started persistent receives):
    /// request handle to posting thread and number.
    pub pending: HashMap<u64, (u32, u64)>,
    /// Persistent receives from `MPI_ANY_SOURCE` (`MPI_Recv_init`).
    pub persistent: HashSet<u64>,
    /// Whether `MPI_Wtime` is recorded.
    pub wtime: bool,
}

/// Buffered bytes that trigger a write to the file.
const FLUSH_AT: usize = 64 << 10;

impl Recorder {
    fn push_raw(&mut self, e: &Entry) {
        self.enc.put(&mut self.out.buf, e);
        self.entries += 1;
        if self.out.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Makes `thread` the thread of the entries that follow.
    fn switch(&mut self, thread: u32) {
        if thread != self.thread || self.threads.is_empty() {
            self.threads.insert(thread);
        }
        if thread != self.thread {
            self.thread = thread;
            self.push_raw(&Entry::Thread(thread));
        }
    }

    fn close_run(&mut self, thread: u32) {
        if let Some(at) = self.fails.iter().position(|f| f.0 == thread) {
            let (_, kind, n) = self.fails.swap_remove(at);
            self.switch(thread);
            self.push_raw(&Entry::Fails { kind, n });
        }
    }

    /// Records a call of `thread` that failed (a test that found nothing).
    pub fn fail(&mut self, thread: u32, kind: Kind) {
        self.calls += 1;
        match self.fails.iter_mut().find(|f| f.0 == thread) {
            Some((_, k, n)) if *k == kind => *n += 1,
            _ => {
                self.close_run(thread);
                self.fails.push((thread, kind, 1));
            }
        }
    }

    /// Records the outcome of a call of `thread`.
    pub fn push(&mut self, thread: u32, e: Entry) {
        self.close_run(thread);
        self.calls += e.calls();
        self.switch(thread);
        self.push_raw(&e);
    }

    /// Gives `thread`'s next wildcard receive its posting number, which
    /// it returns, and notes it pending under `handle`.
    pub fn post(&mut self, thread: u32, handle: u64) -> u64 {
        let at = match self.posts.iter().position(|p| p.0 == thread) {
            Some(at) => at,
            None => {
                self.posts.push((thread, 0));
                self.posts.len() - 1
            }
        };
        let post = self.posts[at].1;
        self.pending.insert(handle, (thread, post));
        self.posts[at].1 += 1;
        post
    }

    /// Records where the wildcard receive `(thread, post)`, pending under
    /// `handle` when the call that completed it began, matched: under the
    /// thread that posted it, whichever completes it. The handle stays
    /// pending if another thread's receive got it since.
    pub fn matched(&mut self, handle: u64, (thread, post): (u32, u64), (source, tag): (i32, i32)) {
        if self.pending.get(&handle) == Some(&(thread, post)) {
            self.pending.remove(&handle);
        }
        self.matches += 1;
        self.push(thread, Entry::Match { post, source, tag });
    }

    /// Writes the buffer to the file. A failed write is reported once and
    /// the record is then incomplete, which the summary says.
    pub fn flush(&mut self) {
        if let Err(e) = self.out.flush_at(0) {
            pnmpi_sdk::say::warn(
                "replay",
                format_args!("cannot write {}: {e}", self.out.part.display()),
            );
        }
    }

    /// Bytes written to the file: its size, once finished.
    pub fn bytes(&self) -> u64 {
        self.out.bytes
    }

    /// Writes everything; at `MPI_Finalize` (`complete`), renames the file
    /// to its final name.
    pub fn finish(&mut self, complete: bool) -> std::io::Result<PathBuf> {
        let mut open: Vec<u32> = self.fails.iter().map(|f| f.0).collect();
        open.sort_unstable();
        for t in open {
            self.close_run(t);
        }
        self.flush();
        self.out.finish(complete)
    }
}

/// Where an entry stands in the record's order, for the turns.
const UNORDERED: u64 = u64::MAX;

/// One thread's part of the record.
#[derive(Default)]
struct Lane {
    /// Its entries in call order, each with its turn ([`UNORDERED`] for
    /// those that wait for none), without the MATCH entries.
    entries: VecDeque<(u64, Entry)>,
    /// Failed calls left in the current run.
    fails: Option<(Kind, u64)>,
    /// Calls replayed so far: the index of the next one.
    calls: u64,
    /// Wildcard receives posted so far.
    posts: u64,
}

impl Lane {
    /// Whether nothing of the record is left in it.
    fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.fails.is_none()
    }
}

/// `thread`'s lane, made (with those of smaller numbers) if missing.
fn lane(lanes: &mut Vec<Lane>, thread: u32) -> &mut Lane {
    let i = thread as usize;
    if lanes.len() <= i {
        lanes.resize_with(i + 1, Lane::default);
    }
    &mut lanes[i]
}

/// The replayer.
pub struct Replayer {
    /// Per thread number, its entries.
    lanes: Vec<Lane>,
    /// Where wildcard `MPI_Irecv`s matched, by posting thread and number.
    matches: HashMap<(u32, u64), (i32, i32)>,
    /// The turn to be replayed next.
    turn: u64,
    /// The thread of every turn, for messages.
    owners: Vec<u32>,
    /// The file, for messages.
    pub path: PathBuf,
    /// Whether the file is the prefix of a run that did not finish.
    pub partial: bool,
    /// Whether `MPI_Wtime` is in the record.
    pub wtime: bool,
    /// Persistent receives from `MPI_ANY_SOURCE`: handle to their arguments.
    pub persistent: HashMap<u64, RecvArgs>,
    /// Started ones: the application's handle to the `MPI_Irecv` posted
    /// in its place with the recorded source, which completes for it.
    pub shadows: HashMap<u64, u64>,
    /// The thread whose turn is being replayed, inside its call (the
    /// call's index and routine), for the message of a thread that waits.
    inside: Option<(u32, u64, Kind)>,
}

/// The arguments of a persistent receive, as numbers (a static's state
/// must be `Send`), to post it again with another source.
#[derive(Clone, Copy, Debug)]
pub struct RecvArgs {
    /// The buffer's address.
    pub buf: usize,
    /// The count (an `MPI_Count` for `MPI_Recv_init_c`).
    pub count: i64,
    /// The datatype's handle bits.
    pub datatype: u64,
    /// The tag.
    pub tag: i32,
    /// The communicator's handle bits.
    pub comm: u64,
}

/// What the record says about a call.
pub enum Next {
    /// The call fails (a test finds nothing).
    Fail,
    /// The call has this outcome.
    Entry(Entry),
}

impl Replayer {
    /// Splits the record's entries into lanes and turns.
    fn new(entries: Vec<Entry>, path: PathBuf, partial: bool, wtime: bool) -> Replayer {
        let mut lanes: Vec<Lane> = Vec::new();
        let mut matches = HashMap::default();
        let mut owners = Vec::new();
        let mut thread = 0;
        for e in entries {
            match e {
                Entry::Thread(t) => thread = t,
                Entry::Match { post, source, tag } => {
                    matches.insert((thread, post), (source, tag));
                }
                e => {
                    let turn = match e {
                        Entry::Fails { .. } | Entry::Wtime(_) | Entry::RmaRead(_) => UNORDERED,
                        _ => {
                            owners.push(thread);
                            owners.len() as u64 - 1
                        }
                    };
                    lane(&mut lanes, thread).entries.push_back((turn, e));
                }
            }
        }
        // One thread: the order of its own lane is the record's order.
        if lanes.iter().filter(|l| !l.entries.is_empty()).count() <= 1 {
            owners.clear();
            for l in &mut lanes {
                for e in &mut l.entries {
                    e.0 = UNORDERED;
                }
            }
        }
        Replayer {
            lanes,
            matches,
            turn: 0,
            owners,
            path,
            partial,
            wtime,
            persistent: HashMap::default(),
            shadows: HashMap::default(),
            inside: None,
        }
    }

    /// The record's outcome for `thread`'s next call, a `kind` one, its
    /// index among the thread's calls, and its turn; a call of another
    /// kind, or past the end of the thread's record, is a divergence.
    fn take(&mut self, thread: u32, kind: Kind) -> (u64, Next, u64) {
        let missing = (self.lanes.get(thread as usize)).is_none_or(|l| l.calls == 0 && l.is_empty());
        let lane = lane(&mut self.lanes, thread);
        let index = lane.calls;
        lane.calls += 1;
        if let Some((k, n)) = &mut lane.fails {
            if *k != kind {
                let k = *k;
                diverge(
                    thread,
                    index,
                    kind,
                    &format!("the record says {k} (a failed one)"),
                );
            }
            *n -= 1;
            if *n == 0 {
                lane.fails = None;
            }
            return (index, Next::Fail, UNORDERED);
        }
        match lane.entries.pop_front() {
            None => {
                let what = if self.partial {
                    format!(
                        "the record ends here (it is the prefix {} of a run that did not finish)",
                        self.path.display()
                    )
                } else if missing {
                    format!(
                        "the record has no calls of thread {thread} (the recorded run's threads are {})",
                        self.thread_list(thread)
                    )
                } else {
                    "the record ends here: the recorded run made fewer such calls".to_string()
                };
                diverge(thread, index, kind, &what)
            }
            Some((_, Entry::Fails { kind: k, n })) => {
                if k != kind {
                    diverge(
                        thread,
                        index,
                        kind,
                        &format!("the record says {k} (a failed one)"),
                    );
                }
                if n > 1 {
                    lane.fails = Some((k, n - 1));
                }
                (index, Next::Fail, UNORDERED)
            }
            Some((turn, e)) => {
                if e.kind() != kind {
                    diverge(thread, index, kind, &format!("the record says {}", e.kind()));
                }
                (index, Next::Entry(e), turn)
            }
        }
    }

    /// The recorded threads but `but`, for messages.
    fn thread_list(&self, but: u32) -> String {
        let t: Vec<String> = (self.lanes.iter().enumerate())
            .filter(|&(t, l)| t != but as usize && (l.calls > 0 || !l.is_empty()))
            .map(|(t, _)| t.to_string())
            .collect();
        if t.is_empty() {
            return "none".into();
        }
        t.join(", ")
    }

    /// Gives `thread`'s next wildcard receive its posting number; the
    /// source and tag it matched in the record, if it completed there.
    pub fn post(&mut self, thread: u32) -> Option<(i32, i32)> {
        let lane = lane(&mut self.lanes, thread);
        let post = lane.posts;
        lane.posts += 1;
        self.matches.get(&(thread, post)).copied()
    }

    /// What is left of the record at `MPI_Finalize`: `None` if nothing.
    fn leftover(&self) -> Option<String> {
        let left: Vec<(usize, u64, Kind)> = (self.lanes.iter().enumerate())
            .filter_map(|(t, l)| {
                let calls: u64 =
                    l.entries.iter().map(|(_, e)| e.calls()).sum::<u64>() + l.fails.map_or(0, |(_, n)| n);
                let first = l
                    .fails
                    .map(|(k, _)| k)
                    .or_else(|| l.entries.front().map(|(_, e)| e.kind()))?;
                Some((t, calls, first))
            })
            .collect();
        let (t, calls, first) = *left.first()?;
        Some(format!(
            "the program finished, but the record has {calls} more call(s) of thread {t}, the next one {first}"
        ))
    }
}

/// The recorder or the replayer.
pub enum State {
    /// Recording.
    Record(Box<Recorder>),
    /// Replaying.
    Replay(Replayer),
}

/// Whether the results of one-sided reads are recorded (`rma on`) or, as
/// the record's header says, replayed (`crate::rma`).
pub static RMA_READS: AtomicBool = AtomicBool::new(false);

/// Whether wildcard receives' posts are in the record, in the order of
/// every thread's posts: recording, when MPI granted
/// `MPI_THREAD_MULTIPLE`; replaying, as the record's header says
/// (`crate::posts`).
pub static POSTS_ORDERED: AtomicBool = AtomicBool::new(false);

/// The process's state, from `MPI_Init` to `MPI_Finalize`.
pub static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Wakes the threads that wait for their turn.
static TURNS: Condvar = Condvar::new();

/// A turn being replayed: the next turn comes when this is dropped, once
/// the call that forces its outcome returned.
pub struct Turn(u64);

impl Drop for Turn {
    fn drop(&mut self) {
        if self.0 == UNORDERED {
            return;
        }
        if let Some(State::Replay(r)) = &mut *STATE.lock() {
            r.turn = self.0 + 1;
            r.inside = None;
        }
        TURNS.notify_all();
    }
}

/// How long a thread waits for its turn before it says so (once; it goes
/// on waiting: the turn's owner may be blocked for as long in MPI).
const PATIENCE: Duration = Duration::from_secs(10);

/// Replaying: the record's outcome for the calling thread's next `kind`
/// call, once its turn came, with the call's index among its thread's
/// calls and the turn to hold while forcing the outcome. `None` when not
/// replaying.
pub fn next(thread: u32, kind: Kind) -> Option<(u64, Next, Turn)> {
    let mut g = STATE.lock();
    let Some(State::Replay(r)) = &mut *g else {
        return None;
    };
    let (index, next, turn) = r.take(thread, kind);
    if turn != UNORDERED {
        wait_turn(&mut g, thread, index, kind, turn);
        if let Some(State::Replay(r)) = &mut *g {
            r.inside = Some((thread, index, kind));
        }
    }
    Some((index, next, Turn(turn)))
}

/// Waits until `turn` is the next to replay.
fn wait_turn(g: &mut MutexGuard<'_, Option<State>>, thread: u32, index: u64, kind: Kind, turn: u64) {
    let mut said = false;
    loop {
        let now = match &**g {
            Some(State::Replay(r)) => r.turn,
            _ => return,
        };
        if now == turn {
            return;
        }
        if TURNS.wait_for(g, PATIENCE).timed_out() && !said {
            said = true;
            if let Some(State::Replay(r)) = &**g {
                let owner = r.owners.get(r.turn as usize).copied().unwrap_or(thread);
                let state = match r.inside {
                    Some((t, i, k)) if t == owner => format!(
                        "which is inside its call #{i} {k}, forced to the recorded outcome, and MPI has not \
                         completed it (a message not sent, as after a divergence elsewhere)"
                    ),
                    _ => "which has not reached it (a thread that blocks elsewhere, or threads created \
                          otherwise than in the recorded run)"
                        .to_string(),
                };
                pnmpi_sdk::say::warn(
                    "replay",
                    format_args!(
                        "thread {thread}: call #{index} {kind} has waited {}s for its turn: \
                         the record's event before it is thread {owner}'s, {state}",
                        PATIENCE.as_secs()
                    ),
                );
            }
        }
    }
}

/// Starts recording or replaying once MPI is up. An unusable record
/// folder or record stops the job with a message naming it.
pub fn start() {
    let Some(cfg) = config() else { return };
    let rank = native::comm_rank(mpi::COMM_WORLD()).unwrap_or(0);
    let size = native::comm_size(mpi::COMM_WORLD()).unwrap_or(1);
    abort::set_rank(rank);
    let done = cfg.dir.join(format!("rank-{rank}.rpl"));
    let part = cfg.dir.join(format!("rank-{rank}.rpl.part"));
    RMA_READS.store(cfg.record && cfg.rma, Ordering::Relaxed);
    let state = if cfg.record {
        let mut level = 0;
        // SAFETY: a local out-parameter; MPI is initialized.
        unsafe { pnmpi_sdk::sys::ffi::PMPI_Query_thread(&mut level) };
        let ordered = level == mpi::THREAD_MULTIPLE();
        POSTS_ORDERED.store(ordered, Ordering::Relaxed);
        let header = Header {
            flags: if cfg.wtime { format::FLAG_WTIME } else { 0 }
                | if cfg.rma { format::FLAG_RMA } else { 0 }
                | if ordered { format::FLAG_POSTS } else { 0 },
            world: size as u32,
            rank: rank as u32,
        };
        let mut out = Stream::new(part, done, cfg.compress, header.encode());
        if let Err(e) = std::fs::create_dir_all(&cfg.dir).and_then(|_| out.create()) {
            fail(1, format_args!("cannot create {}: {e}", out.part.display()))
        }
        let _ = std::fs::remove_file(cfg.dir.join(format!("rank-{rank}.rpl")));
        let mut r = Box::new(Recorder {
            out,
            enc: Encoder::default(),
            thread: 0,
            fails: SmallVec::new(),
            calls: 0,
            entries: 0,
            matches: 0,
            threads: HashSet::default(),
            posts: SmallVec::new(),
            pending: HashMap::default(),
            persistent: HashSet::default(),
            wtime: cfg.wtime,
        });
        r.flush();
        State::Record(r)
    } else {
        let (path, partial) = if done.is_file() {
            (done, false)
        } else if part.is_file() {
            pnmpi_sdk::say::note(
                "replay",
                format_args!(
                    "replaying {}, the prefix of a recorded run that did not finish",
                    part.display()
                ),
            );
            (part, true)
        } else {
            fail(
                1,
                format_args!("no record {}: record first with mode record", done.display()),
            )
        };
        let decoded = std::fs::read(&path)
            .and_then(crate::file::decompress)
            .map_err(|e| e.to_string())
            .and_then(|(d, zcut)| {
                format::decode(&d)
                    .map(|(h, e, cut)| (h, e, cut || zcut))
                    .map_err(|e| e.to_string())
            });
        let (header, entries, cut) = match decoded {
            Ok(d) => d,
            Err(e) => fail(1, format_args!("cannot read the record {}: {e}", path.display())),
        };
        if header.world != size as u32 || header.rank != rank as u32 {
            fail(
                3,
                format_args!(
                    "the record {} is of rank {} of {} ranks, this run has {size} ranks \
                     (replay with as many ranks as the record)",
                    path.display(),
                    header.rank,
                    header.world
                ),
            )
        }
        let wtime = header.flags & format::FLAG_WTIME != 0;
        RMA_READS.store(header.flags & format::FLAG_RMA != 0, Ordering::Relaxed);
        POSTS_ORDERED.store(header.flags & format::FLAG_POSTS != 0, Ordering::Relaxed);
        State::Replay(Replayer::new(entries, path, partial || cut, wtime))
    };
    crate::cpu_record::start(cfg, rank);
    let m = if cfg.record { RECORD } else { REPLAY };
    *STATE.lock() = Some(state);
    MODE.store(m, Ordering::Relaxed);
}

/// Ends recording (the file gets its final name) or replaying (a record
/// with calls left over is a divergence) at `MPI_Finalize`, before MPI
/// goes down; rank 0 prints the totals.
pub fn finish() {
    let Some(cfg) = config() else { return };
    MODE.store(OFF, Ordering::Relaxed);
    let Some(state) = STATE.lock().take() else { return };
    crate::cpu_record::finish(true);
    let rank = abort::rank();
    match state {
        State::Record(mut r) => {
            let written = r.finish(true);
            if let Err(e) = &written {
                pnmpi_sdk::say::warn("replay", format_args!("cannot finish the record: {e}"));
            }
            let threads = r.threads.len() as u64;
            let totals = native::allreduce(
                &[r.calls, r.matches, r.entries, r.bytes(), threads],
                mpi::SUM(),
                mpi::COMM_WORLD(),
            );
            if let (0, Ok(t)) = (rank, totals) {
                // An event: a call, or the completion of a wildcard receive.
                let events = t[0] + t[1];
                let per = if events == 0 {
                    0.0
                } else {
                    t[3] as f64 / events as f64
                };
                // Rank 0 says the job's totals.
                pnmpi_sdk::say::unranked(
                    "replay",
                    pnmpi_sdk::say::Level::Note,
                    format_args!(
                        "recorded {} calls and {} wildcard receive matches ({} entries) from {} thread(s) \
                         in {} bytes ({per:.2} bytes/event) in {}",
                        t[0],
                        t[1],
                        t[2],
                        t[4],
                        t[3],
                        cfg.dir.display()
                    ),
                );
            }
        }
        State::Replay(r) => {
            if let Some(what) = r.leftover() {
                fail(
                    3,
                    format_args!("at MPI_Finalize: {what} (the run left the record)"),
                )
            }
            let calls: u64 = r.lanes.iter().map(|l| l.calls).sum();
            let totals = native::allreduce(&[calls], mpi::SUM(), mpi::COMM_WORLD());
            if let (0, Ok(t)) = (rank, totals) {
                pnmpi_sdk::say::unranked(
                    "replay",
                    pnmpi_sdk::say::Level::Note,
                    format_args!("replayed {} calls from {}", t[0], cfg.dir.display()),
                );
            }
        }
    }
}

/// The `PNMPI_Fini` hook: a rank that exits without `MPI_Finalize` writes
/// what it recorded, leaving the prefix `rank-R.rpl.part`.
pub fn fini() {
    // try_lock: the hook also runs at the exit of a process that aborts
    // in a divergence, with the lock held.
    crate::cpu_record::finish(false);
    let Some(mut guard) = STATE.try_lock() else { return };
    if let Some(State::Record(mut r)) = guard.take() {
        MODE.store(OFF, Ordering::Relaxed);
        if let Ok(path) = r.finish(false) {
            pnmpi_sdk::say::note(
                "replay",
                format_args!(
                    "exited without MPI_Finalize; its partial record is {}",
                    path.display()
                ),
            );
        }
    }
}
