//! A motif as a tracer folder: one rank file per rank (`rank-NNNNN.pnr`),
//! as the `tracer` module writes them, with a monotonic clock that all
//! ranks share (their clock alignment says offset 0). Each file is
//! written to `.part` and renamed once complete.

use super::{Call, Params, CALL_NS, ROUTINES};
use pnmpi_trace::rank::{Clock, ClockPair, MpiValues, RankHeader, RawDone, RawEvent};
use pnmpi_trace::rank_writer::{part_path, rank_path, RankWriter};
use std::io::Write;
use std::path::Path;

/// The handles the synthetic ranks use (any distinct values do).
const VALUES: MpiValues = MpiValues {
    comm_world: 0x1000,
    comm_self: 0x2000,
    comm_null: 0x3000,
    request_null: 0,
    any_source: -1,
    proc_null: -2,
    any_tag: -1,
    root: -4,
};

/// Bytes of encoded events per `EVENTS` chunk.
const CHUNK: usize = 1 << 16;

/// Writes rank `r`'s file into `dir`.
fn write_rank(p: &Params, r: u32, dir: &Path) -> std::io::Result<()> {
    let header = RankHeader {
        rank: r,
        world_size: p.ranks,
        run_id: p.seed ^ 0x5eed,
        clock: Clock::Monotonic,
        start: ClockPair::default(),
        pid: r,
        host: format!("synth-{}", r / 16),
        mpi: "synthetic".into(),
        values: VALUES,
        routines: ROUTINES.iter().map(|s| s.to_string()).collect(),
    };
    let path = rank_path(dir, r);
    let part = part_path(&path);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&part)?);
    let mut w = RankWriter::new(CHUNK);
    w.start(&header, 0);
    let mut t = 0u64;
    let mut call = |routine: u32, gap: u64| {
        let start = t + gap;
        t = start + CALL_NS;
        RawEvent::plain(routine, start, t)
    };
    w.event(&call(0, 0), &mut out)?;
    let mut calls = Vec::new();
    let mut timed = Vec::new();
    let mut open: Vec<u64> = Vec::new();
    let mut done: Vec<RawDone> = Vec::new();
    let mut next_handle = 0x10_0000u64;
    let world = Some(VALUES.comm_world);
    for it in 0..p.iterations {
        p.timed_iteration(r, it, &mut calls, &mut timed);
        for (c, routine, gap) in &timed {
            let base = call(*routine, *gap);
            let handle = [next_handle];
            let p2p = |peer: u32, tag: i64, bytes: u64| RawEvent {
                peer: Some(i64::from(peer)),
                tag: Some(tag),
                comm: world,
                bytes: Some(bytes as i64),
                ..base
            };
            let ev = match *c {
                Call::Irecv { from, tag, bytes } => RawEvent {
                    reqs: &handle,
                    ..p2p(from, tag, bytes)
                },
                Call::Isend { to, tag, bytes } => RawEvent {
                    reqs: &handle,
                    ..p2p(to, tag, bytes)
                },
                Call::Recv { from, tag, bytes } => RawEvent {
                    status: Some((i64::from(from), tag)),
                    ..p2p(from, tag, bytes)
                },
                Call::Send { to, tag, bytes } => p2p(to, tag, bytes),
                Call::Allreduce(bytes) => RawEvent {
                    comm: world,
                    bytes: Some(bytes as i64),
                    ..base
                },
                Call::Alltoall(bytes) => RawEvent {
                    comm: world,
                    bytes: Some(bytes as i64),
                    rbytes: Some(bytes as i64),
                    ..base
                },
                Call::Bcast { bytes, root } => RawEvent {
                    comm: world,
                    bytes: Some(bytes as i64),
                    root: Some(i64::from(root)),
                    ..base
                },
                Call::Waitall => {
                    done.clear();
                    done.extend(open.drain(..).map(|handle| RawDone { handle, status: None }));
                    RawEvent { done: &done, ..base }
                }
                Call::Compute(_) => base,
            };
            if matches!(c, Call::Irecv { .. } | Call::Isend { .. }) {
                open.push(next_handle);
                next_handle += 1;
            }
            w.event(&ev, &mut out)?;
        }
    }
    let fin = call(1, 0);
    w.event(&fin, &mut out)?;
    w.finish(t, &mut out)?;
    out.flush()?;
    drop(out);
    std::fs::rename(&part, &path)
}

/// Writes the motif into `dir` (created if missing) as a tracer folder;
/// `progress` is told of the ranks written.
pub fn write(p: &Params, dir: &Path, progress: &dyn Fn(u32)) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for r in 0..p.ranks {
        write_rank(p, r, dir)?;
        progress(r + 1);
    }
    Ok(())
}
