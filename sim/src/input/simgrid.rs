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
    lines: std::io::Lines<BufReader<File>>,
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

fn routine(name: &str) -> u32 {
    ACTIONS
        .iter()
        .position(|a| *a == name)
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
                lines: BufReader::new(f).lines(),
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
            let Some(line) = f.lines.next() else {
                f.ended = true;
                return Ok(false);
            };
            f.line += 1;
            let err = |what: String| SimError::Input {
                file: f.path.clone(),
                line: f.line,
                what,
            };
            let line = line.map_err(|e| err(format!("cannot read: {e}")))?;
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.is_empty() || words[0].starts_with('#') {
                continue;
            }
            if words.len() < 2 {
                return Err(err(format!("`{line}`: expected `<rank> <action> ...`")));
            }
            let num = |i: usize, what: &str| -> Result<f64, SimError> {
                let w = words
                    .get(i)
                    .ok_or_else(|| err(format!("`{}` needs {what}", words[1])))?;
                w.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| err(format!("`{w}` is not a valid {what}")))
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
            let p2p = |words: &[&str]| -> Result<(u32, i64, u64), SimError> {
                let peer = rank_arg(2)?;
                if words.len() >= 5 {
                    Ok((peer, num(3, "tag")? as i64, num(4, "size")? as u64))
                } else {
                    Ok((peer, 0, num(3, "size")? as u64))
                }
            };
            let gap = std::mem::take(&mut f.gap);
            let new_req = |f: &mut RankFile, key| {
                let id = ((actor as u64) << 32) | u64::from(f.next_req);
                f.next_req += 1;
                f.outstanding.push_back((key, id));
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
                "init" => OpKind::Init,
                "finalize" => OpKind::Finalize,
                "compute" => {
                    f.gap = gap + num(2, "flop count")? / flops_per_ns;
                    continue;
                }
                "sleep" => {
                    f.gap = gap + num(2, "duration")? * 1e9;
                    continue;
                }
                "send" | "isend" => {
                    let (to, tag, bytes) = p2p(&words)?;
                    let req = (action == "isend").then(|| new_req(f, (me, to, tag)));
                    OpKind::Send {
                        to,
                        tag,
                        comm: 0,
                        bytes,
                        req,
                    }
                }
                "recv" | "irecv" => {
                    let (from, tag, bytes) = p2p(&words)?;
                    let req = (action == "irecv").then(|| new_req(f, (from, me, tag)));
                    OpKind::Recv {
                        from: Some(from),
                        tag,
                        comm: 0,
                        bytes,
                        req,
                    }
                }
                "wait" => {
                    let pos = if words.len() >= 5 {
                        let key = (rank_arg(2)?, rank_arg(3)?, num(4, "tag")? as i64);
                        f.outstanding.iter().position(|(k, _)| *k == key)
                    } else if f.outstanding.is_empty() {
                        None
                    } else {
                        Some(0)
                    };
                    let pos =
                        pos.ok_or_else(|| err(format!("`{line}`: no outstanding request to wait for")))?;
                    let (_, req) = f.outstanding.remove(pos).expect("found");
                    OpKind::Wait(vec![Completion { req, status: None }])
                }
                "waitall" => OpKind::Wait(
                    f.outstanding
                        .drain(..)
                        .map(|(_, req)| Completion { req, status: None })
                        .collect(),
                ),
                "barrier" => coll(Coll::Barrier, 0, None),
                "bcast" => coll(Coll::Bcast, num(2, "size")? as u64, opt_root(3)?),
                "reduce" => coll(Coll::Reduce, num(2, "size")? as u64, opt_root(4)?),
                "allreduce" => coll(Coll::Allreduce, num(2, "size")? as u64, None),
                "alltoall" => coll(Coll::Alltoall, num(2, "size")? as u64, None),
                "allgather" => coll(Coll::Allgather, num(2, "size")? as u64, None),
                "gather" => coll(Coll::Gather, num(2, "size")? as u64, opt_root(4)?),
                "scatter" => coll(Coll::Scatter, num(3, "size")? as u64, opt_root(4)?),
                "comm_size" | "comm_split" | "comm_dup" => OpKind::Local,
                other => return Err(err(format!("unknown action `{other}`"))),
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
