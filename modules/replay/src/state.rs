//! The module's state: its configuration, and per process either the
//! recorder (a buffer streamed to `D/rank-R.rpl.part`, renamed to
//! `rank-R.rpl` at `MPI_Finalize`) or the replayer (the whole record,
//! read at `MPI_Init`).
//!
//! One lock guards it: the module grants at most `MPI_THREAD_SERIALIZED`,
//! so the lock is never contended and the order of calls is the process's.

use crate::file::Stream;
use crate::format::{self, Encoder, Entry, Header, Kind};
use parking_lot::Mutex;
use pnmpi_sdk::{constants as mpi, native, services};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// Not recording or replaying (before `MPI_Init`, after `MPI_Finalize`).
pub const OFF: u8 = 0;
/// Recording.
pub const RECORD: u8 = 1;
/// Replaying.
pub const REPLAY: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(OFF);

/// The current mode: [`OFF`], [`RECORD`] or [`REPLAY`].
#[inline]
pub fn mode() -> u8 {
    MODE.load(Ordering::Relaxed)
}

/// What the arguments chose.
#[derive(Debug, Clone)]
pub struct Config {
    /// Record (`true`) or replay.
    pub record: bool,
    /// The folder of the rank files.
    pub dir: PathBuf,
    /// Whether `MPI_Wtime`'s values are recorded.
    pub wtime: bool,
    /// Whether records are written gzip-compressed.
    pub compress: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration, once `PNMPI_Init` read it.
pub fn config() -> Option<&'static Config> {
    CONFIG.get()
}

/// Prints `what` and stops this process before MPI starts.
fn stop(what: &str) -> ! {
    eprint!("pnmpi replay: error: {what}\npnmpi replay: stopping before MPI starts\n");
    // A moment for the launcher to read the message before it tears the
    // job down at the first failed rank.
    std::thread::sleep(std::time::Duration::from_millis(200));
    std::process::exit(1)
}

/// The `PNMPI_Init` hook: reads `mode`, `dir`, `wtime`, `compress`
/// (arguments, else `PNMPI_REPLAY_MODE`, `PNMPI_REPLAY_DIR`,
/// `PNMPI_REPLAY_WTIME`, `PNMPI_REPLAY_COMPRESS`).
pub fn load() {
    let arg = |key: &str, var: &str| {
        services::argument(key)
            .or_else(|| std::env::var(var).ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let record = match arg("mode", "PNMPI_REPLAY_MODE").as_deref() {
        Some("record") => true,
        Some("replay") => false,
        Some(other) => stop(&format!("mode: `{other}` is neither record nor replay")),
        None => stop(
            "no mode: give `argument mode record` or `argument mode replay` after `module replay`, \
             or set PNMPI_REPLAY_MODE",
        ),
    };
    let dir = PathBuf::from(arg("dir", "PNMPI_REPLAY_DIR").unwrap_or_else(|| "pnmpi-replay".into()));
    let wtime = match arg("wtime", "PNMPI_REPLAY_WTIME").as_deref() {
        None | Some("off") => false,
        Some("on") => true,
        Some(other) => stop(&format!("wtime: `{other}` is neither on nor off")),
    };
    let compress = match arg("compress", "PNMPI_REPLAY_COMPRESS").as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => stop(&format!("compress: `{other}` is neither on nor off")),
    };
    CONFIG.get_or_init(|| Config {
        record,
        dir,
        wtime,
        compress,
    });
}

/// The registration point: offers the `compute` service
/// ([`crate::cpu_record`]) to the modules above.
pub fn offer_compute() {
    // SAFETY: a function pointer cast to the services' common type; the
    // signature "p" tells callers its real one, `int (*)(uint64_t *)`.
    let f = unsafe {
        std::mem::transmute::<unsafe extern "C" fn(*mut u64) -> std::ffi::c_int, services::ServiceFn>(
            crate::cpu_record::service,
        )
    };
    let offered =
        services::ServiceDescriptor::new("compute", "p", f).and_then(|d| services::register_service(&d));
    if let Err(e) = offered {
        eprintln!("pnmpi replay: cannot offer the compute service: {e}");
    }
}

/// The recorder.
pub struct Recorder {
    out: Stream,
    enc: Encoder,
    /// A run of failed calls not written yet.
    fails: Option<(Kind, u64)>,
    /// Calls recorded (each failed attempt is one).
    pub calls: u64,
    /// Entries written.
    pub entries: u64,
    /// Matches of wildcard `MPI_Irecv`s (and persistent receives) recorded.
    pub matches: u64,
    /// Wildcard receives posted so far.
    pub posts: u64,
    /// Pending wildcard `MPI_Irecv`s (and started persistent receives):
    /// request handle to posting number.
    pub pending: HashMap<u64, u64>,
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

    fn close_run(&mut self) {
        if let Some((kind, n)) = self.fails.take() {
            self.push_raw(&Entry::Fails { kind, n });
        }
    }

    /// Records a call that failed (a test that found nothing).
    pub fn fail(&mut self, kind: Kind) {
        self.calls += 1;
        match &mut self.fails {
            Some((k, n)) if *k == kind => *n += 1,
            _ => {
                self.close_run();
                self.fails = Some((kind, 1));
            }
        }
    }

    /// Records a call's outcome.
    pub fn push(&mut self, e: Entry) {
        self.close_run();
        self.calls += e.calls();
        if let Entry::Match { .. } = e {
            self.matches += 1;
        }
        self.push_raw(&e);
    }

    /// Writes the buffer to the file. A failed write is reported once and
    /// the record is then incomplete, which the summary says.
    pub fn flush(&mut self) {
        if let Err(e) = self.out.flush_at(0) {
            eprintln!("pnmpi replay: cannot write {}: {e}", self.out.part.display());
        }
    }

    /// Bytes written to the file: its size, once finished.
    pub fn bytes(&self) -> u64 {
        self.out.bytes
    }

    /// Writes everything; at `MPI_Finalize` (`complete`), renames the file
    /// to its final name.
    pub fn finish(&mut self, complete: bool) -> std::io::Result<PathBuf> {
        self.close_run();
        self.flush();
        self.out.finish(complete)
    }
}

/// The replayer.
pub struct Replayer {
    /// The record's entries in call order (without the MATCH entries).
    entries: VecDeque<Entry>,
    /// Where wildcard `MPI_Irecv`s matched, by posting number.
    pub matches: HashMap<u64, (i32, i32)>,
    /// Failed calls left in the current run.
    fails: Option<(Kind, u64)>,
    /// Calls replayed so far: the index of the next one.
    pub calls: u64,
    /// Wildcard receives posted so far.
    pub posts: u64,
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
    /// The record's outcome for the next call, a `kind` one; a call of
    /// another kind, or past the end of the record, is a divergence.
    pub fn next(&mut self, kind: Kind, rank: i32) -> Next {
        let index = self.calls;
        self.calls += 1;
        if let Some((k, n)) = &mut self.fails {
            if *k != kind {
                let k = *k;
                diverge(rank, index, kind, &format!("the record says {k} (a failed one)"));
            }
            *n -= 1;
            if *n == 0 {
                self.fails = None;
            }
            return Next::Fail;
        }
        match self.entries.pop_front() {
            None => {
                let what = if self.partial {
                    format!(
                        "the record ends here (it is the prefix {} of a run that did not finish)",
                        self.path.display()
                    )
                } else {
                    "the record ends here: the recorded run made fewer such calls".to_string()
                };
                diverge(rank, index, kind, &what)
            }
            Some(Entry::Fails { kind: k, n }) => {
                if k != kind {
                    diverge(rank, index, kind, &format!("the record says {k} (a failed one)"));
                }
                if n > 1 {
                    self.fails = Some((k, n - 1));
                }
                Next::Fail
            }
            Some(e) => {
                if e.kind() != kind {
                    diverge(rank, index, kind, &format!("the record says {}", e.kind()));
                }
                Next::Entry(e)
            }
        }
    }

    /// What is left of the record at `MPI_Finalize`: `None` if nothing.
    pub fn leftover(&self) -> Option<String> {
        let calls: u64 =
            self.entries.iter().map(Entry::calls).sum::<u64>() + self.fails.map_or(0, |(_, n)| n);
        let first = self
            .fails
            .map(|(k, _)| k)
            .or_else(|| self.entries.front().map(Entry::kind))?;
        Some(format!(
            "the program finished, but the record has {calls} more call(s), the next one {first}"
        ))
    }
}

/// The recorder or the replayer.
pub enum State {
    /// Recording.
    Record(Recorder),
    /// Replaying.
    Replay(Replayer),
}

/// The process's state, from `MPI_Init` to `MPI_Finalize`.
pub static STATE: Mutex<Option<State>> = Mutex::new(None);

/// This process's rank in `MPI_COMM_WORLD`, once MPI is up.
static RANK: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// This process's rank in `MPI_COMM_WORLD` (-1 before `MPI_Init`).
pub fn rank() -> i32 {
    RANK.load(Ordering::Relaxed)
}

/// Reports a divergence from the record and aborts the job: a replayed
/// run that left the record must not go on as if it had not.
pub fn diverge(rank: i32, index: u64, kind: Kind, what: &str) -> ! {
    let msg = format!(
        "pnmpi replay: rank {rank}: call #{index} {kind}: {what} \
         (the program, its inputs or the number of ranks changed since the record)\n"
    );
    let _ = std::io::stderr().write_all(msg.as_bytes());
    abort(3)
}

/// Aborts the whole job with `code`, past the modules below, after a
/// moment for the other ranks' messages: the first abort tears the job
/// down, and MPICH's launcher under load dropped a rank's message that
/// was still being written.
pub fn abort(code: i32) -> ! {
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Every caller runs between MPI_Init and MPI_Finalize.
    pnmpi_mpi_sys::abort::abort_job(code)
}

/// Starts recording or replaying once MPI is up. An unusable record
/// folder or record stops the job with a message naming it.
pub fn start() {
    let Some(cfg) = config() else { return };
    let rank = native::comm_rank(mpi::COMM_WORLD()).unwrap_or(0);
    let size = native::comm_size(mpi::COMM_WORLD()).unwrap_or(1);
    RANK.store(rank, Ordering::Relaxed);
    let done = cfg.dir.join(format!("rank-{rank}.rpl"));
    let part = cfg.dir.join(format!("rank-{rank}.rpl.part"));
    let state = if cfg.record {
        let header = Header {
            flags: if cfg.wtime { format::FLAG_WTIME } else { 0 },
            world: size as u32,
            rank: rank as u32,
        };
        let mut out = Stream::new(part, done, cfg.compress, header.encode());
        if let Err(e) = std::fs::create_dir_all(&cfg.dir).and_then(|_| out.create()) {
            eprintln!(
                "pnmpi replay: rank {rank}: cannot create {}: {e}",
                out.part.display()
            );
            abort(1)
        }
        let _ = std::fs::remove_file(cfg.dir.join(format!("rank-{rank}.rpl")));
        let mut r = Recorder {
            out,
            enc: Encoder::default(),
            fails: None,
            calls: 0,
            entries: 0,
            matches: 0,
            posts: 0,
            pending: HashMap::default(),
            persistent: HashSet::default(),
            wtime: cfg.wtime,
        };
        r.flush();
        State::Record(r)
    } else {
        let (path, partial) = if done.is_file() {
            (done, false)
        } else if part.is_file() {
            eprintln!(
                "pnmpi replay: rank {rank}: replaying {}, the prefix of a recorded run that did not finish",
                part.display()
            );
            (part, true)
        } else {
            // One write: ranks share the launcher's stderr.
            let msg = format!(
                "pnmpi replay: rank {rank}: no record {}: record first with mode record\n",
                done.display()
            );
            let _ = std::io::stderr().write_all(msg.as_bytes());
            abort(1)
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
            Err(e) => {
                eprintln!(
                    "pnmpi replay: rank {rank}: cannot read the record {}: {e}",
                    path.display()
                );
                abort(1)
            }
        };
        if header.world != size as u32 || header.rank != rank as u32 {
            eprintln!(
                "pnmpi replay: rank {rank}: the record {} is of rank {} of {} ranks, this run has {size} ranks \
                 (replay with as many ranks as the record)",
                path.display(),
                header.rank,
                header.world
            );
            abort(3)
        }
        let mut matches = HashMap::default();
        let mut seq = VecDeque::with_capacity(entries.len());
        for e in entries {
            match e {
                Entry::Match { post, source, tag } => {
                    matches.insert(post, (source, tag));
                }
                e => seq.push_back(e),
            }
        }
        State::Replay(Replayer {
            entries: seq,
            matches,
            fails: None,
            calls: 0,
            posts: 0,
            path,
            partial: partial || cut,
            wtime: header.flags & format::FLAG_WTIME != 0,
            persistent: HashMap::default(),
            shadows: HashMap::default(),
        })
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
    let rank = rank();
    match state {
        State::Record(mut r) => {
            let written = r.finish(true);
            if let Err(e) = &written {
                eprintln!("pnmpi replay: rank {rank}: cannot finish the record: {e}");
            }
            let totals = native::allreduce(
                &[r.calls, r.matches, r.entries, r.bytes()],
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
                let msg = format!(
                    "pnmpi replay: recorded {} calls and {} wildcard receive matches ({} entries) in {} bytes \
                     ({per:.2} bytes/event) in {}\n",
                    t[0],
                    t[1],
                    t[2],
                    t[3],
                    cfg.dir.display()
                );
                let _ = std::io::stderr().write_all(msg.as_bytes());
            }
        }
        State::Replay(r) => {
            if let Some(what) = r.leftover() {
                let msg =
                    format!("pnmpi replay: rank {rank}: at MPI_Finalize: {what} (the run left the record)\n");
                let _ = std::io::stderr().write_all(msg.as_bytes());
                abort(3)
            }
            let totals = native::allreduce(&[r.calls], mpi::SUM(), mpi::COMM_WORLD());
            if let (0, Ok(t)) = (rank, totals) {
                let msg = format!(
                    "pnmpi replay: replayed {} calls from {}\n",
                    t[0],
                    cfg.dir.display()
                );
                let _ = std::io::stderr().write_all(msg.as_bytes());
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
            eprintln!(
                "pnmpi replay: rank {} exited without MPI_Finalize; its partial record is {}",
                rank(),
                path.display()
            );
        }
    }
}
