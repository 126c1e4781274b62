//! Writes a trace as a GOAL schedule (`pnmpi trace export --format goal`),
//! for LogGOPSim and for `pnmpi sim replay`: each rank's calls in program
//! order, from the replay's own reading of the trace ([`OpSource`]), so
//! that wildcards carry the source they matched and persistent requests
//! their sends and receives.
//!
//! - CPU bursts between calls, and calls that do not communicate, are
//!   `calc` of their traced ns.
//! - A blocking send or receive is required by what follows it; a
//!   nonblocking one is *i*required (what follows starts once it started),
//!   and the wait that completes it is a `calc 0` that requires it.
//! - A collective is expanded into the point-to-point messages of its
//!   default algorithm (the replay's `algorithmic` mode), on tags from
//!   2^30 up that count the communicator's collectives.
//! - A rank's threads are its CPUs (`cpu T`).
//!
//! GOAL has no communicators: point-to-point messages keep their MPI tag.

use super::parse::ANY;
use crate::algorithms::{Shape, Step};
use crate::input::{Op, OpKind, OpSource, ReqId};
use crate::kernel::coll;
use crate::SimError;
use rustc_hash::FxHashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Ranks.
    pub ranks: u32,
    /// GOAL ops (sends, receives, computations).
    pub ops: u64,
    /// Collective calls expanded into messages.
    pub collectives: u64,
    /// One-sided calls written as their traced time: GOAL has no
    /// one-sided operations.
    pub one_sided: u64,
}

/// The first tag of collectives' messages.
const COLL_TAG: u32 = 1 << 30;

/// How what follows an op depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    /// Once it ended (`requires`).
    End,
    /// Once it started (`irequires`).
    Start,
}

/// One rank's schedule being written.
struct RankWriter {
    text: String,
    next: u64,
    cpu: u8,
    /// What the next op waits for.
    point: Vec<(u64, After)>,
    /// The ops a request's completion waits for.
    reqs: FxHashMap<ReqId, Vec<u64>>,
    /// Per communicator, its collectives so far.
    colls: FxHashMap<i64, u32>,
    /// Nonblocking receives' labels and where their op's text is, for a
    /// cancel.
    recvs: FxHashMap<ReqId, (u64, std::ops::Range<usize>)>,
    ops: u64,
}

impl RankWriter {
    /// Appends `op` (text without label) depending on the program point,
    /// and returns its label.
    fn op(&mut self, op: &str) -> u64 {
        let l = self.next;
        self.next += 1;
        self.ops += 1;
        let _ = write!(self.text, "l{l}: {op}");
        if self.cpu > 0 {
            let _ = write!(self.text, " cpu {}", self.cpu);
        }
        self.text.push('\n');
        for &(on, how) in &self.point {
            let dep = if how == After::End {
                "requires"
            } else {
                "irequires"
            };
            let _ = writeln!(self.text, "l{l} {dep} l{on}");
        }
        l
    }

    /// A computation of `ns` (none for less than 1 ns), which what follows
    /// requires.
    fn calc(&mut self, ns: f64) {
        let ns = ns.round();
        if ns >= 1.0 {
            let l = self.op(&format!("calc {}", ns as u64));
            self.point = vec![(l, After::End)];
        }
    }

    /// A join of the program point and `ops` (`calc 0`), which what
    /// follows requires.
    fn join(&mut self, ops: &[u64]) {
        self.point.extend(ops.iter().map(|&o| (o, After::End)));
        let l = self.op("calc 0");
        self.point = vec![(l, After::End)];
    }

    fn send(&mut self, to: u32, tag: u32, bytes: u64) -> u64 {
        self.op(&format!("send {bytes}b to {to} tag {tag}"))
    }

    fn recv(&mut self, from: Option<u32>, tag: u32, bytes: u64) -> u64 {
        let from = from.map_or("-1".to_string(), |f| f.to_string());
        let tag = if tag == ANY {
            "-1".to_string()
        } else {
            tag.to_string()
        };
        self.op(&format!("recv {bytes}b from {from} tag {tag}"))
    }

    /// Request `req`'s receive, cancelled: GOAL has no cancel, so the
    /// receive becomes a `calc 0` under its label, which what depends on
    /// it keeps (a cancel that succeeded: the receive matched nothing).
    fn cancel(&mut self, req: ReqId) {
        let Some((l, range)) = self.recvs.remove(&req) else {
            return;
        };
        let cpu = if self.cpu > 0 {
            format!(" cpu {}", self.cpu)
        } else {
            String::new()
        };
        let now = format!("l{l}: calc 0{cpu}");
        // Shifts the later receives' places.
        let shift = now.len() as isize - range.len() as isize;
        let at = range.start;
        self.text.replace_range(range, &now);
        for (_, r) in self.recvs.values_mut() {
            if r.start > at {
                *r = (r.start as isize + shift) as usize..(r.end as isize + shift) as usize;
            }
        }
    }
}

/// An MPI tag as a GOAL tag: `MPI_ANY_TAG` (negative) is `-1`.
fn tag(t: i64) -> u32 {
    u32::try_from(t).ok().filter(|&t| t != ANY).unwrap_or(ANY)
}

/// Writes `src` as a GOAL schedule at `path` (through `path.part`,
/// renamed once whole); `progress` is told of the ops read.
pub fn export(src: &mut dyn OpSource, path: &Path, progress: &dyn Fn(u64)) -> Result<Written, SimError> {
    let io = |e: std::io::Error| SimError::Input {
        file: path.display().to_string(),
        line: 0,
        what: format!("cannot write it: {e}"),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let tmp = std::path::PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let world = src.world_size();
    let actors = src.actors().to_vec();
    let mut written = Written {
        ranks: world,
        ..Written::default()
    };
    writeln!(
        out,
        "// written by pnmpi trace export --format goal\nnum_ranks {world}"
    )
    .map_err(io)?;
    let mut steps = Vec::new();
    for rank in 0..world {
        let mut w = RankWriter {
            text: String::new(),
            next: 0,
            cpu: 0,
            point: Vec::new(),
            reqs: FxHashMap::default(),
            colls: FxHashMap::default(),
            recvs: FxHashMap::default(),
            ops: 0,
        };
        for (a, actor) in actors.iter().enumerate().filter(|(_, x)| x.rank == rank) {
            w.cpu = u8::try_from(actor.thread).unwrap_or(u8::MAX);
            w.point.clear();
            let mut op = Op::default();
            let mut read = 0;
            while src.next(a, &mut op)? {
                read += 1;
                rank_op(&mut w, &op, rank, &*src, &mut steps, &mut written);
                if read % 65536 == 0 {
                    progress(65536);
                }
            }
            progress(read % 65536);
        }
        written.ops += w.ops;
        write!(out, "\nrank {rank} {{\n{}}}\n", w.text).map_err(io)?;
    }
    out.flush().map_err(io)?;
    drop(out);
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(written)
}

/// Writes one op of rank `rank` into `w`.
fn rank_op(
    w: &mut RankWriter,
    op: &Op,
    rank: u32,
    src: &dyn OpSource,
    steps: &mut Vec<Step>,
    x: &mut Written,
) {
    w.calc(op.gap);
    match &op.kind {
        OpKind::Init | OpKind::Finalize => {}
        OpKind::Local => w.calc(op.dur),
        OpKind::Rma { .. } => {
            x.one_sided += 1;
            w.calc(op.dur);
        }
        &OpKind::Cancel(req) => {
            w.cancel(req);
            w.calc(op.dur);
        }
        &OpKind::Send {
            to,
            tag: t,
            bytes,
            req,
            ..
        } => {
            let l = w.send(to, tag(t), bytes);
            follow(w, l, req);
        }
        &OpKind::Recv {
            from,
            tag: t,
            bytes,
            req,
            ..
        } => {
            let at = w.text.len();
            let l = w.recv(from, tag(t), bytes);
            if let Some(r) = req {
                let end = w.text[at..].find('\n').map_or(w.text.len(), |n| at + n);
                w.recvs.insert(r, (l, at..end));
            }
            follow(w, l, req);
        }
        &OpKind::Sendrecv {
            to,
            stag,
            sbytes,
            from,
            rtag,
            rbytes,
            ..
        } => {
            let s = w.send(to, tag(stag), sbytes);
            let r = w.recv(Some(from), tag(rtag), rbytes);
            w.point = vec![(s, After::End), (r, After::End)];
        }
        OpKind::Wait(done) => {
            let ops: Vec<u64> = done
                .iter()
                .filter_map(|c| w.reqs.remove(&c.req))
                .flatten()
                .collect();
            if !ops.is_empty() {
                w.join(&ops);
            }
        }
        OpKind::Coll {
            op: c,
            comm,
            bytes,
            root,
            req,
            counts,
        } => {
            let Some(members) = src.members(*comm, rank) else {
                return w.calc(op.dur);
            };
            let Some(me) = members.iter().position(|&m| m == rank) else {
                return w.calc(op.dur);
            };
            let shape = Shape {
                coll: *c,
                size: members.len() as u32,
                me: me as u32,
                root: root
                    .and_then(|r| members.iter().position(|&m| m == r))
                    .unwrap_or(0) as u32,
                bytes: *bytes,
            };
            steps.clear();
            coll::steps(coll::default_algorithm(*c), &shape, counts.as_deref(), steps);
            let seq = w.colls.entry(*comm).or_insert(0);
            let t = COLL_TAG + (*seq % COLL_TAG);
            *seq += 1;
            x.collectives += 1;
            let start = w.point.clone();
            let mut posted = Vec::new();
            for s in steps.iter() {
                match *s {
                    Step::Isend { to, bytes } => posted.push(w.send(members[to as usize], t, bytes)),
                    Step::Irecv { from, bytes } => {
                        posted.push(w.recv(Some(members[from as usize]), t, bytes))
                    }
                    Step::WaitAll => {
                        w.join(&posted);
                        posted.clear();
                    }
                }
            }
            if !posted.is_empty() {
                w.join(&posted);
            }
            if let Some(r) = req {
                // Nonblocking: its wait waits for its last step; the
                // program goes on from where it was.
                let last = w.point.iter().map(|p| p.0).collect();
                w.reqs.insert(*r, last);
                w.point = start;
            }
        }
    }
}

/// What follows a point-to-point op `l`: it ended (blocking), or it
/// started and its request's wait will wait for it.
fn follow(w: &mut RankWriter, l: u64, req: Option<ReqId>) {
    match req {
        None => w.point = vec![(l, After::End)],
        Some(r) => {
            w.reqs.entry(r).or_default().push(l);
            w.point = vec![(l, After::Start)];
        }
    }
}
