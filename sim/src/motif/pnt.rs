//! A motif as a merged trace (`.pnt`), streamed rank by rank.

use super::{Call, Params, CALL_NS, ROUTINES};
use pnmpi_trace::fields::{COMM_WORLD, V};
use pnmpi_trace::trace::{Done, Event, MergedWriter, ReqRef};
use std::io::Write;

/// Rank `r`'s events, made one iteration at a time.
pub fn events(p: &Params, r: u32) -> impl Iterator<Item = Event> + '_ {
    let mut t = 0u64;
    let mut next_req = 0u32;
    let mut open_from = 0u32;
    let mut iteration = 0u64;
    let mut calls = Vec::new();
    let mut timed = Vec::new();
    let mut batch: Vec<Event> = vec![plain(0, &mut t, 0)];
    std::iter::from_fn(move || loop {
        if let Some(e) = batch.pop() {
            return Some(e);
        }
        if iteration > p.iterations {
            return None;
        }
        if iteration == p.iterations {
            iteration += 1;
            batch.push(plain(1, &mut t, 0));
            continue;
        }
        p.timed_iteration(r, iteration, &mut calls, &mut timed);
        iteration += 1;
        for (c, routine, gap) in &timed {
            let mut e = plain(*routine, &mut t, *gap);
            let p2p = |e: &mut Event, peer: u32, tag: i64, bytes: u64| {
                e.set(V::Peer, Some(i64::from(peer)));
                e.set(V::Tag, Some(tag));
                e.set(V::Comm, Some(COMM_WORLD));
                e.set(V::Bytes, Some(bytes as i64));
            };
            match *c {
                Call::Irecv { from, tag, bytes } | Call::Recv { from, tag, bytes } => {
                    p2p(&mut e, from, tag, bytes)
                }
                Call::Isend { to, tag, bytes } | Call::Send { to, tag, bytes } => p2p(&mut e, to, tag, bytes),
                Call::Allreduce(bytes) => {
                    e.set(V::Comm, Some(COMM_WORLD));
                    e.set(V::Bytes, Some(bytes as i64));
                }
                Call::Alltoall(bytes) => {
                    e.set(V::Comm, Some(COMM_WORLD));
                    e.set(V::Bytes, Some(bytes as i64));
                    e.set(V::Rbytes, Some(bytes as i64));
                }
                Call::Bcast { bytes, root } => {
                    e.set(V::Comm, Some(COMM_WORLD));
                    e.set(V::Bytes, Some(bytes as i64));
                    e.set(V::Root, Some(i64::from(root)));
                }
                Call::Waitall => {
                    e.done = (open_from..next_req)
                        .map(|index| Done {
                            req: Some(ReqRef { stream: r, index }),
                            status: None,
                        })
                        .collect();
                    open_from = next_req;
                }
                Call::Compute(_) => {}
            }
            if matches!(c, Call::Irecv { .. } | Call::Isend { .. }) {
                e.set(V::Req, Some(1));
                e.first_req = next_req;
                next_req += 1;
            } else {
                e.first_req = next_req;
            }
            batch.push(e);
        }
        batch.reverse();
    })
}

/// A call of `routine` after `gap` ns of compute, lasting [`CALL_NS`].
fn plain(routine: u32, t: &mut u64, gap: u64) -> Event {
    let start = *t + gap;
    *t = start + CALL_NS;
    Event {
        routine,
        start,
        end: *t,
        ..Event::default()
    }
}

/// Writes the motif to `out` as a `.pnt`; `progress` is told of the ranks
/// written. Returns the bytes written.
pub fn write(p: &Params, out: &mut impl Write, progress: &dyn Fn(u32)) -> std::io::Result<u64> {
    let routines: Vec<String> = ROUTINES.iter().map(|r| r.to_string()).collect();
    let mut w = MergedWriter::new(out, p.ranks, "synthetic", &routines, &[], &[], &[], &[])?;
    for r in 0..p.ranks {
        w.stream(r, r, 0, events(p, r), &|_| {})?;
        progress(r + 1);
    }
    w.finish()
}
