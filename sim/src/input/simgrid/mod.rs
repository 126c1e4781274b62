//! SimGrid's time-independent traces (`smpirun -replay`): an index file
//! listing one action file per rank, each line `<rank> <action> args`.
//! Read line by line, per rank, so a trace of any length streams.
//!
//! `compute <flops>` becomes a CPU burst of `flops / flops_per_ns` ns
//! (1 by default: `pnmpi trace export --format simgrid` writes 1 flop per
//! traced ns). Requests of `isend`/`irecv` are awaited by `wait [src dst
//! tag]` (the oldest outstanding one of that key, or the oldest of all)
//! or `waitall`.

mod lines;

use crate::algorithms::member_bytes;
use crate::input::ops::{Actor, Completion, Measured, Op, OpKind, OpSource, ReqId, VCounts, NO_SITE};
use crate::SimError;
use lines::{int, number, Line, Lines};
use pnmpi_trace::routine::Coll;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The routine names ops from a SimGrid trace carry: [`Op::routine`] is
/// an [`Action`]'s routine index into it.
const ROUTINES: &[&str] = &[
    "compute",
    "send",
    "isend",
    "recv",
    "irecv",
    "wait",
    "waitall",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "gather",
    "scatter",
    "allgather",
    "reducescatter",
    "alltoallv",
    "allgatherv",
    "gatherv",
    "scatterv",
    "sleep",
    "other",
];

/// The actions the reader knows. A discriminant below `Init` is the
/// index of the action's routine name in [`ROUTINES`]; `Init` and the
/// ones after it are all the routine "other".
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    Compute,
    Send,
    Isend,
    Recv,
    Irecv,
    Wait,
    Waitall,
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Alltoall,
    Gather,
    Scatter,
    Allgather,
    Reducescatter,
    Alltoallv,
    Allgatherv,
    Gatherv,
    Scatterv,
    Sleep = 20,
    Init,
    Finalize,
    /// `comm_size`, `comm_split`, `comm_dup`: no communication.
    Local,
}

impl Action {
    /// The action named `name`; the most frequent ones are tried first.
    fn parse(name: &[u8]) -> Option<Action> {
        Some(match name {
            b"compute" => Action::Compute,
            b"irecv" => Action::Irecv,
            b"isend" => Action::Isend,
            b"wait" => Action::Wait,
            b"waitall" => Action::Waitall,
            b"send" => Action::Send,
            b"recv" => Action::Recv,
            b"allreduce" => Action::Allreduce,
            b"barrier" => Action::Barrier,
            b"bcast" => Action::Bcast,
            b"reduce" => Action::Reduce,
            b"alltoall" => Action::Alltoall,
            b"allgather" => Action::Allgather,
            b"gather" => Action::Gather,
            b"scatter" => Action::Scatter,
            b"alltoallv" => Action::Alltoallv,
            b"allgatherv" => Action::Allgatherv,
            b"gatherv" => Action::Gatherv,
            b"scatterv" => Action::Scatterv,
            b"reducescatter" => Action::Reducescatter,
            b"sleep" => Action::Sleep,
            b"init" => Action::Init,
            b"finalize" => Action::Finalize,
            b"comm_size" | b"comm_split" | b"comm_dup" => Action::Local,
            _ => return None,
        })
    }

    /// Index of the action's routine name in [`ROUTINES`].
    fn routine(self) -> u32 {
        (self as u32).min(Action::Init as u32)
    }
}

impl<'a> Line<'a> {
    /// Non-negative number `i`.
    fn num(&self, i: usize, what: What) -> Result<f64, Bad> {
        let w = self.word(i).ok_or(Bad::Missing(what))?;
        if let Some(v) = int(w) {
            return Ok(v as f64);
        }
        match number(w) {
            Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(Bad::Invalid(i, what)),
        }
    }

    /// `n` sizes from word `at` on, in one pass over the line.
    fn sizes(&self, at: usize, n: usize) -> Result<Vec<u64>, Bad> {
        let v: Vec<u64> = self
            .all()
            .skip(at)
            .take(n)
            .enumerate()
            .map(|(k, w)| match int(w) {
                Some(v) => Ok(v),
                None => number(w)
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .map(|v| v as u64)
                    .ok_or(Bad::Invalid(at + k, What::Size)),
            })
            .collect::<Result<_, _>>()?;
        if v.len() < n {
            return Err(Bad::Missing(What::Size));
        }
        Ok(v)
    }

    /// World rank `i`.
    fn rank(&self, i: usize, world: u32) -> Result<u32, Bad> {
        if let Some(v) = self.word(i).and_then(int) {
            return match u32::try_from(v) {
                Ok(r) if r < world => Ok(r),
                _ => Err(Bad::Outside(i)),
            };
        }
        let r = self.num(i, What::Rank)?;
        if r.fract() != 0.0 || r >= f64::from(world) {
            return Err(Bad::Outside(i));
        }
        Ok(r as u32)
    }
}

/// What a numeric argument is, for messages.
#[derive(Clone, Copy, Debug)]
enum What {
    FlopCount,
    Duration,
    Rank,
    Tag,
    Size,
}

impl What {
    fn name(self) -> &'static str {
        match self {
            What::FlopCount => "flop count",
            What::Duration => "duration",
            What::Rank => "rank",
            What::Tag => "tag",
            What::Size => "size",
        }
    }
}

/// Why a line is wrong, small enough to return cheaply; [`Bad::describe`]
/// makes the message, from the line's words, only when it is reported.
#[derive(Clone, Copy, Debug)]
enum Bad {
    /// The action lacks an argument.
    Missing(What),
    /// Word `.0` is not a non-negative number.
    Invalid(usize, What),
    /// Word `.0` is not a rank of the world.
    Outside(usize),
    /// A `wait` with no matching outstanding request.
    NoRequest,
}

impl Bad {
    fn describe(self, line: &Line<'_>, world: u32) -> String {
        let words = line.words();
        let text = |w: &[u8]| String::from_utf8_lossy(w).into_owned();
        match self {
            Bad::Missing(what) => format!("`{}` needs {}", text(words[1]), what.name()),
            Bad::Invalid(i, what) => format!(
                "`{}` is not a valid {}",
                text(line.word(i).unwrap_or_default()),
                what.name()
            ),
            Bad::Outside(i) => {
                let r = line.word(i).and_then(number).unwrap_or(f64::NAN);
                format!("rank {r} is outside 0..{world}")
            }
            Bad::NoRequest => format!(
                "`{}`: no outstanding request to wait for",
                String::from_utf8_lossy(line.text).trim_end()
            ),
        }
    }
}

/// What a line adds: CPU time before the next call, or the call.
enum Parsed {
    Burst(f64),
    Call(OpKind),
}

/// A rank's requests: issued by `isend`/`irecv`, awaited by `wait` and
/// `waitall`.
struct Requests {
    /// The rank's actor, the high half of its request ids.
    actor: u32,
    next: u32,
    /// Outstanding requests, oldest first: (src, dst, tag) key and id.
    outstanding: Vec<((u32, u32, i64), ReqId)>,
}

impl Requests {
    fn issue(&mut self, key: (u32, u32, i64)) -> ReqId {
        let id = (u64::from(self.actor) << 32) | u64::from(self.next);
        self.next += 1;
        self.outstanding.push((key, id));
        id
    }

    /// Parses the words of one line (`<rank> <action> args`) of action
    /// `action`; a wait's completions go into `completions` (empty).
    fn parse(
        &mut self,
        action: Action,
        line: &Line<'_>,
        world: u32,
        flops_per_ns: f64,
        completions: &mut Vec<Completion>,
    ) -> Result<Parsed, Bad> {
        let me = self.actor;
        let words = line.words();
        let num = |i, what| line.num(i, what);
        let rank = |i| line.rank(i, world);
        // send/recv: `<peer> <tag> <size> [datatype]`, or the older `<peer> <size>`.
        let p2p = || -> Result<(u32, i64, u64), Bad> {
            let peer = rank(2)?;
            if words.len() >= 5 {
                Ok((peer, num(3, What::Tag)? as i64, num(4, What::Size)? as u64))
            } else {
                Ok((peer, 0, num(3, What::Size)? as u64))
            }
        };
        let size = |i| num(i, What::Size).map(|v| v as u64);
        let root = |i: usize| -> Result<Option<u32>, Bad> {
            if line.count() > i {
                rank(i).map(Some)
            } else {
                Ok(Some(0))
            }
        };
        let coll_v = |op: Coll, bytes: u64, root: Option<u32>, counts: Option<Box<VCounts>>| {
            Parsed::Call(OpKind::Coll {
                op,
                comm: pnmpi_trace::fields::COMM_WORLD,
                bytes,
                root,
                req: None,
                counts,
            })
        };
        let coll = |op, bytes, root| coll_v(op, bytes, root, None);
        // `n` counts from word `at`, one per rank of the world (SimGrid's
        // `v` actions, in units of its default datatype, MPI_BYTE).
        let n = world as usize;
        let counts = |at: usize| line.sizes(at, n);
        let vcounts = |send: Vec<u64>, recv: Vec<u64>| Some(Box::new(VCounts { send, recv }));
        Ok(match action {
            Action::Compute => Parsed::Burst(num(2, What::FlopCount)? / flops_per_ns),
            Action::Sleep => Parsed::Burst(num(2, What::Duration)? * 1e9),
            Action::Init => Parsed::Call(OpKind::Init),
            Action::Finalize => Parsed::Call(OpKind::Finalize),
            Action::Send | Action::Isend => {
                let (to, tag, bytes) = p2p()?;
                let req = (action == Action::Isend).then(|| self.issue((me, to, tag)));
                Parsed::Call(OpKind::Send {
                    to,
                    tag,
                    comm: 0,
                    bytes,
                    req,
                })
            }
            Action::Recv | Action::Irecv => {
                let (from, tag, bytes) = p2p()?;
                let req = (action == Action::Irecv).then(|| self.issue((from, me, tag)));
                Parsed::Call(OpKind::Recv {
                    from: Some(from),
                    tag,
                    comm: 0,
                    bytes,
                    req,
                })
            }
            Action::Wait => {
                let pos = if words.len() >= 5 {
                    let key = (rank(2)?, rank(3)?, num(4, What::Tag)? as i64);
                    self.outstanding.iter().position(|(k, _)| *k == key)
                } else if self.outstanding.is_empty() {
                    None
                } else {
                    Some(0)
                };
                let (_, req) = self.outstanding.remove(pos.ok_or(Bad::NoRequest)?);
                completions.push(Completion::new(req, None));
                Parsed::Call(OpKind::Wait(std::mem::take(completions)))
            }
            Action::Waitall => {
                completions.extend(
                    self.outstanding
                        .drain(..)
                        .map(|(_, req)| Completion::new(req, None)),
                );
                Parsed::Call(OpKind::Wait(std::mem::take(completions)))
            }
            Action::Barrier => coll(Coll::Barrier, 0, None),
            Action::Bcast => coll(Coll::Bcast, size(2)?, root(3)?),
            Action::Reduce => coll(Coll::Reduce, size(2)?, root(4)?),
            Action::Allreduce => coll(Coll::Allreduce, size(2)?, None),
            Action::Alltoall => coll(Coll::Alltoall, size(2)?, None),
            Action::Allgather => coll(Coll::Allgather, size(2)?, None),
            Action::Gather => coll(Coll::Gather, size(2)?, root(4)?),
            Action::Scatter => coll(Coll::Scatter, size(3)?, root(4)?),
            // `alltoallv <send buffer> <P send counts> <receive buffer> <P receive counts>`
            Action::Alltoallv => {
                let (send, recv) = (counts(3)?, counts(4 + n)?);
                let (sent, got) = (send.iter().sum(), recv.iter().sum());
                let mean = member_bytes(Coll::Alltoall, true, sent, got, u64::from(world));
                coll_v(Coll::Alltoall, mean, None, vcounts(send, recv))
            }
            // `allgatherv <send count> <P receive counts>`
            Action::Allgatherv => coll_v(Coll::Allgather, size(2)?, None, vcounts(Vec::new(), counts(3)?)),
            // `gatherv <send count> <P receive counts> [root]`
            Action::Gatherv => coll_v(
                Coll::Gather,
                size(2)?,
                root(3 + n)?,
                vcounts(Vec::new(), counts(3)?),
            ),
            // `scatterv <P send counts> <receive count> [root]`
            Action::Scatterv => coll_v(
                Coll::Scatter,
                size(2 + n)?,
                root(3 + n)?,
                vcounts(counts(2)?, Vec::new()),
            ),
            // `reducescatter <P receive counts> <flops>`: the whole vector.
            Action::Reducescatter => {
                let shares = counts(2)?;
                coll_v(
                    Coll::ReduceScatter,
                    shares.iter().sum(),
                    None,
                    vcounts(Vec::new(), shares),
                )
            }
            Action::Local => Parsed::Call(OpKind::Local),
        })
    }
}

struct RankFile {
    path: String,
    lines: Lines,
    line: usize,
    gap: f64,
    reqs: Requests,
    ended: bool,
}

/// Ops from a SimGrid time-independent trace.
pub struct SimgridOps {
    files: Vec<RankFile>,
    actors: Vec<Actor>,
    routines: Vec<String>,
    flops_per_ns: f64,
    world: Vec<u32>,
}

impl SimgridOps {
    /// Opens the trace whose index is `index`.
    pub fn open(index: &Path, flops_per_ns: f64) -> Result<SimgridOps, SimError> {
        let name = index.display().to_string();
        let text = std::fs::read_to_string(index).map_err(|e| SimError::Input {
            file: name.clone(),
            line: 0,
            what: format!("cannot read it: {e}"),
        })?;
        let dir = index.parent().unwrap_or(Path::new("."));
        let mut files = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let p = PathBuf::from(l);
            let p = if p.is_absolute() { p } else { dir.join(p) };
            let f = File::open(&p).map_err(|e| SimError::Input {
                file: name.clone(),
                line: i + 1,
                what: format!("cannot open the rank trace {}: {e}", p.display()),
            })?;
            files.push(RankFile {
                path: p.display().to_string(),
                lines: Lines::new(f),
                line: 0,
                gap: 0.0,
                reqs: Requests {
                    actor: files.len() as u32,
                    next: 0,
                    outstanding: Vec::new(),
                },
                ended: false,
            });
        }
        if files.is_empty() {
            return Err(SimError::Input {
                file: name,
                line: 0,
                what: "lists no rank trace files".into(),
            });
        }
        let n = files.len() as u32;
        Ok(SimgridOps {
            files,
            actors: (0..n).map(|rank| Actor { rank, thread: 0 }).collect(),
            routines: ROUTINES.iter().map(|s| s.to_string()).collect(),
            flops_per_ns,
            world: (0..n).collect(),
        })
    }
}

impl OpSource for SimgridOps {
    fn actors(&self) -> &[Actor] {
        &self.actors
    }

    fn world_size(&self) -> u32 {
        self.files.len() as u32
    }

    fn routines(&self) -> &[String] {
        &self.routines
    }

    fn next(&mut self, actor: usize, op: &mut Op) -> Result<bool, SimError> {
        let world = self.files.len() as u32;
        let flops_per_ns = self.flops_per_ns;
        let f = &mut self.files[actor];
        if f.ended {
            return Ok(false);
        }
        // The previous op's completion list, reused for a wait.
        let mut completions = match std::mem::take(&mut op.kind) {
            OpKind::Wait(mut v) => {
                v.clear();
                v
            }
            _ => Vec::new(),
        };
        loop {
            let read = f.lines.next();
            f.line += 1;
            let err = |what: String| SimError::Input {
                file: f.path.clone(),
                line: f.line,
                what,
            };
            // The words, as bytes (actions and numbers are ASCII); text
            // only for messages.
            let line = match read {
                Ok(Some(line)) => line,
                Ok(None) => {
                    f.ended = true;
                    return Ok(false);
                }
                Err(e) => return Err(err(format!("cannot read: {e}"))),
            };
            let words = line.words();
            if words.is_empty() || words[0].starts_with(b"#") {
                continue;
            }
            if words.len() < 2 {
                return Err(err(format!(
                    "`{}`: expected `<rank> <action> ...`",
                    String::from_utf8_lossy(line.text).trim_end()
                )));
            }
            let Some(action) = Action::parse(words[1]) else {
                return Err(err(format!(
                    "unknown action `{}`",
                    String::from_utf8_lossy(words[1])
                )));
            };
            match f.reqs.parse(action, &line, world, flops_per_ns, &mut completions) {
                Ok(Parsed::Burst(t)) => f.gap += t,
                Ok(Parsed::Call(kind)) => {
                    *op = Op {
                        gap: std::mem::take(&mut f.gap),
                        dur: 0.0,
                        routine: action.routine(),
                        site: NO_SITE,
                        folded: 0,
                        kind,
                    };
                    return Ok(true);
                }
                Err(bad) => return Err(err(bad.describe(&line, world))),
            }
        }
    }

    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        match comm {
            pnmpi_trace::fields::COMM_WORLD => Some(self.world.clone()),
            pnmpi_trace::fields::COMM_SELF => Some(vec![rank]),
            _ => None,
        }
    }

    fn measured(&self) -> Option<Measured> {
        None
    }

    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::lines::BLOCK;
    use super::*;

    /// Replays the one-rank trace `text` up to its first error.
    fn first_error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.txt"), "rank-0.txt\n").unwrap();
        std::fs::write(dir.path().join("rank-0.txt"), text).unwrap();
        let mut ops = SimgridOps::open(&dir.path().join("index.txt"), 1.0).unwrap();
        let mut op = Op::default();
        loop {
            match ops.next(0, &mut op) {
                Ok(true) => {}
                Ok(false) => panic!("no error in {text:?}"),
                Err(e) => return e.to_string(),
            }
        }
    }

    #[test]
    fn lines_parse_to_ops_and_bad_lines_name_their_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.txt"), "rank-0.txt\n").unwrap();
        std::fs::write(
            dir.path().join("rank-0.txt"),
            "0 init\n# a comment\n\n0 compute 1500.5\n0 send 0 7 64\n0 isend 0 3 1e3\n0 wait 0 0 3\n0 finalize\n",
        )
        .unwrap();
        let mut ops = SimgridOps::open(&dir.path().join("index.txt"), 2.0).unwrap();
        let mut op = Op::default();
        assert!(ops.next(0, &mut op).unwrap());
        assert_eq!(op.kind, OpKind::Init);
        assert!(ops.next(0, &mut op).unwrap());
        assert_eq!(op.gap, 750.25);
        assert!(
            matches!(
                op.kind,
                OpKind::Send {
                    to: 0,
                    tag: 7,
                    bytes: 64,
                    req: None,
                    ..
                }
            ),
            "{op:?}"
        );
        assert!(ops.next(0, &mut op).unwrap());
        assert!(
            matches!(
                op.kind,
                OpKind::Send {
                    tag: 3,
                    bytes: 1000,
                    req: Some(_),
                    ..
                }
            ),
            "{op:?}"
        );
        assert!(ops.next(0, &mut op).unwrap());
        assert!(matches!(&op.kind, OpKind::Wait(c) if c.len() == 1), "{op:?}");
        assert!(ops.next(0, &mut op).unwrap());
        assert_eq!(op.kind, OpKind::Finalize);
        assert!(!ops.next(0, &mut op).unwrap());

        let e = first_error("0 init\n0 jump 3\n");
        assert!(
            e.contains("rank-0.txt:2:") && e.contains("unknown action `jump`"),
            "{e}"
        );
        let e = first_error("0 send 0 7 -4\n");
        assert!(
            e.contains("rank-0.txt:1:") && e.contains("`-4` is not a valid size"),
            "{e}"
        );
        let e = first_error("0 init\n0 compute\n");
        assert!(
            e.contains("rank-0.txt:2:") && e.contains("`compute` needs flop count"),
            "{e}"
        );
        let e = first_error("0 recv 5 1 8\n");
        assert!(e.contains("rank 5 is outside 0..1"), "{e}");
        let e = first_error("0 wait\n");
        assert!(e.contains("no outstanding request"), "{e}");
    }

    #[test]
    fn long_lines_crlf_and_a_last_line_without_newline() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.txt"), "rank-0.txt\n").unwrap();
        let long = format!("# {}\n", "x".repeat(3 * BLOCK));
        let text = format!(
            "0 init\r\n{long}0 compute 5\r\n  \t\n0 compute {}\n0 finalize",
            "0".repeat(2 * BLOCK) + "7"
        );
        std::fs::write(dir.path().join("rank-0.txt"), &text).unwrap();
        let mut ops = SimgridOps::open(&dir.path().join("index.txt"), 1.0).unwrap();
        let mut op = Op::default();
        assert!(ops.next(0, &mut op).unwrap());
        assert_eq!(op.kind, OpKind::Init);
        assert!(ops.next(0, &mut op).unwrap());
        assert_eq!(op.kind, OpKind::Finalize);
        assert_eq!(op.gap, 12.0, "{op:?}");
        assert!(!ops.next(0, &mut op).unwrap());

        let e = first_error(&format!("0 init\n{long}0 compute 5\n0 jump"));
        assert!(
            e.contains("rank-0.txt:4:") && e.contains("unknown action `jump`"),
            "{e}"
        );
    }

    #[test]
    fn each_action_carries_its_routine_name() {
        for (i, name) in ROUTINES.iter().enumerate() {
            if let Some(a) = Action::parse(name.as_bytes()) {
                assert_eq!(a.routine() as usize, i, "{name}");
            }
        }
        for other in ["init", "finalize", "comm_size", "comm_split", "comm_dup"] {
            let a = Action::parse(other.as_bytes()).unwrap();
            assert_eq!(ROUTINES[a.routine() as usize], "other", "{other}");
        }
    }
}
