//! SimGrid's time-independent traces (`smpirun -replay`): an index file
//! listing one action file per rank, each line `<rank> <action> args`.
//! Read line by line, per rank, so a trace of any length streams.
//!
//! `compute <flops>` becomes a CPU burst of `flops / flops_per_ns` ns
//! (1 by default: `pnmpi trace export --format simgrid` writes 1 flop per
//! traced ns). Requests of `isend`/`irecv` are awaited by `wait [src dst
//! tag]` (the oldest outstanding one of that key, or the oldest of all)
//! or `waitall`.

use super::{Actor, Completion, Measured, Op, OpKind, OpSource, ReqId};
use crate::SimError;
use pnmpi_trace::routine::Coll;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};

/// Words of a line kept for parsing; actions have at most 7.
const MAX_WORDS: usize = 8;
use std::path::{Path, PathBuf};

/// The routine names ops from a SimGrid trace carry, by action.
const ACTIONS: &[&str] = &[
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
    "scan",
    "sleep",
    "other",
];

struct RankFile {
    path: String,
    reader: BufReader<File>,
    /// The current line's bytes, reused from line to line.
    buf: Vec<u8>,
    line: usize,
    gap: f64,
    next_req: u32,
    /// Outstanding requests: (src, dst, tag) key and id.
    outstanding: VecDeque<((u32, u32, i64), ReqId)>,
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

/// A number of a trace line: digits alone (sizes, ranks, tags; most
/// numbers) in one pass without the float parser, else any float.
fn number(word: &[u8]) -> Option<f64> {
    if !word.is_empty() && word.len() <= 15 {
        let mut v = 0u64;
        let digits = word.iter().all(|&b| {
            let d = b.wrapping_sub(b'0');
            v = v * 10 + u64::from(d);
            d <= 9
        });
        if digits {
            return Some(v as f64);
        }
    }
    std::str::from_utf8(word).ok()?.parse().ok()
}

fn routine(name: &[u8]) -> u32 {
    ACTIONS
        .iter()
        .position(|a| a.as_bytes() == name)
        .unwrap_or(ACTIONS.len() - 1) as u32
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
                reader: BufReader::with_capacity(1 << 16, f),
                buf: Vec::with_capacity(128),
                line: 0,
                gap: 0.0,
                next_req: 0,
                outstanding: VecDeque::new(),
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
            routines: ACTIONS.iter().map(|s| s.to_string()).collect(),
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
        loop {
            f.buf.clear();
            let read = f.reader.read_until(b'\n', &mut f.buf);
            f.line += 1;
            let err = |what: String| SimError::Input {
                file: f.path.clone(),
                line: f.line,
                what,
            };
            match read {
                Ok(0) => {
                    f.ended = true;
                    return Ok(false);
                }
                Ok(_) => {}
                Err(e) => return Err(err(format!("cannot read: {e}"))),
            }
            // The words, as bytes (actions and numbers are ASCII), without
            // a per-line allocation or UTF-8 pass; text only for messages.
            let mut words: [&[u8]; MAX_WORDS] = [&[]; MAX_WORDS];
            let mut count = 0;
            for w in f.buf.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()) {
                if count < MAX_WORDS {
                    words[count] = w;
                }
                count += 1;
            }
            let words = &words[..count.min(MAX_WORDS)];
            let buf = &f.buf;
            let line = || String::from_utf8_lossy(buf).trim_end().to_string();
            let text = |w: &[u8]| String::from_utf8_lossy(w).into_owned();
            if words.is_empty() || words[0].starts_with(b"#") {
                continue;
            }
            if words.len() < 2 {
                return Err(err(format!("`{}`: expected `<rank> <action> ...`", line())));
            }
            let num = |i: usize, what: &str| -> Result<f64, SimError> {
                let w = words
                    .get(i)
                    .ok_or_else(|| err(format!("`{}` needs {what}", text(words[1]))))?;
                number(w)
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| err(format!("`{}` is not a valid {what}", text(w))))
            };
            let rank_arg = |i: usize| -> Result<u32, SimError> {
                let r = num(i, "rank")?;
                if r.fract() != 0.0 || r >= f64::from(world) {
                    return Err(err(format!("rank {r} is outside 0..{world}")));
                }
                Ok(r as u32)
            };
            let me = actor as u32;
            let action = words[1];
            // send/recv: `<peer> <tag> <size> [datatype]`, or the older `<peer> <size>`.
            let p2p = |words: &[&[u8]]| -> Result<(u32, i64, u64), SimError> {
                let peer = rank_arg(2)?;
                if words.len() >= 5 {
                    Ok((peer, num(3, "tag")? as i64, num(4, "size")? as u64))
                } else {
                    Ok((peer, 0, num(3, "size")? as u64))
                }
            };
            let gap = std::mem::take(&mut f.gap);
            // Captures only the request fields, not the line being read.
            let (next_req, outstanding) = (&mut f.next_req, &mut f.outstanding);
            let mut new_req = |key| {
                let id = ((actor as u64) << 32) | u64::from(*next_req);
                *next_req += 1;
                outstanding.push_back((key, id));
                id
            };
            let coll = |op: Coll, bytes: u64, root: Option<u32>| OpKind::Coll {
                op,
                comm: pnmpi_trace::fields::COMM_WORLD,
                bytes,
                root,
                req: None,
            };
            let opt_root = |i: usize| -> Result<Option<u32>, SimError> {
                if words.len() > i {
                    rank_arg(i).map(Some)
                } else {
                    Ok(Some(0))
                }
            };
            let kind = match action {
                b"init" => OpKind::Init,
                b"finalize" => OpKind::Finalize,
                b"compute" => {
                    f.gap = gap + num(2, "flop count")? / flops_per_ns;
                    continue;
                }
                b"sleep" => {
                    f.gap = gap + num(2, "duration")? * 1e9;
                    continue;
                }
                b"send" | b"isend" => {
                    let (to, tag, bytes) = p2p(words)?;
                    let req = (action == b"isend").then(|| new_req((me, to, tag)));
                    OpKind::Send {
                        to,
                        tag,
                        comm: 0,
                        bytes,
                        req,
                    }
                }
                b"recv" | b"irecv" => {
                    let (from, tag, bytes) = p2p(words)?;
                    let req = (action == b"irecv").then(|| new_req((from, me, tag)));
                    OpKind::Recv {
                        from: Some(from),
                        tag,
                        comm: 0,
                        bytes,
                        req,
                    }
                }
                b"wait" => {
                    let pos = if words.len() >= 5 {
                        let key = (rank_arg(2)?, rank_arg(3)?, num(4, "tag")? as i64);
                        f.outstanding.iter().position(|(k, _)| *k == key)
                    } else if f.outstanding.is_empty() {
                        None
                    } else {
                        Some(0)
                    };
                    let pos =
                        pos.ok_or_else(|| err(format!("`{}`: no outstanding request to wait for", line())))?;
                    let (_, req) = f.outstanding.remove(pos).expect("found");
                    OpKind::Wait(vec![Completion { req, status: None }])
                }
                b"waitall" => OpKind::Wait(
                    f.outstanding
                        .drain(..)
                        .map(|(_, req)| Completion { req, status: None })
                        .collect(),
                ),
                b"barrier" => coll(Coll::Barrier, 0, None),
                b"bcast" => coll(Coll::Bcast, num(2, "size")? as u64, opt_root(3)?),
                b"reduce" => coll(Coll::Reduce, num(2, "size")? as u64, opt_root(4)?),
                b"allreduce" => coll(Coll::Allreduce, num(2, "size")? as u64, None),
                b"alltoall" => coll(Coll::Alltoall, num(2, "size")? as u64, None),
                b"allgather" => coll(Coll::Allgather, num(2, "size")? as u64, None),
                b"gather" => coll(Coll::Gather, num(2, "size")? as u64, opt_root(4)?),
                b"scatter" => coll(Coll::Scatter, num(3, "size")? as u64, opt_root(4)?),
                b"comm_size" | b"comm_split" | b"comm_dup" => OpKind::Local,
                other => return Err(err(format!("unknown action `{}`", text(other)))),
            };
            *op = Op {
                gap,
                dur: 0.0,
                routine: routine(action),
                kind,
            };
            return Ok(true);
        }
    }

    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        match comm {
            pnmpi_trace::fields::COMM_WORLD => Some(self.world.clone()),
            pnmpi_trace::fields::COMM_SELF => Some(vec![rank]),
            _ => None,
        }
    }

    fn measured(&self) -> Option<&Measured> {
        None
    }

    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
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
}
