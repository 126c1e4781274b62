//! Named collective algorithms, each a function from a [`Shape`] to one
//! task's [`Step`]s. The names are SimGrid's `smpi/<coll>` option values
//! (SimGrid 3.32), so that a replay under `--cfg=smpi/bcast:binomial_tree`
//! and one here send the same messages: same peers, same sizes, same
//! order, and the same blocking structure (a blocking `send`/`recv`
//! becomes one operation followed by `WaitAll`, a `sendrecv` both
//! operations then `WaitAll`). Local copies (SimGrid's send-to-self) are
//! not messages and are left out.
//!
//! The first entry of each collective is what `smpirun -replay` runs when
//! no `smpi/<coll>` option is given: SimGrid's `smpi/coll-selector`
//! defaults to `default` (`src/smpi/internals/smpi_config.cpp`), whose
//! choices are in `src/smpi/colls/smpi_default_selector.cpp`; see
//! `docs/sim-collectives.md`.

use super::{exchange, tree, Shape, Step};
use pnmpi_trace::routine::Coll;

/// An algorithm: appends the task's steps.
pub(super) type Expand = fn(&Shape, &mut Vec<Step>);

/// Every algorithm: (collective, name, expansion). The first of each
/// collective is its default, SimGrid's replay default; `default` is
/// also accepted for each, as `--cfg=smpi/<coll>:default` is in SimGrid.
const TABLE: &[(Coll, &str, Expand)] = &[
    (Coll::Barrier, "ompi_basic_linear", barrier_linear),
    (Coll::Barrier, "default", barrier_linear),
    (
        Coll::Barrier,
        "ompi_recursivedoubling",
        exchange::barrier_recursive_doubling,
    ),
    (Coll::Barrier, "ompi_bruck", exchange::barrier_bruck),
    (Coll::Bcast, "binomial_tree", tree::bcast_binomial),
    (Coll::Bcast, "default", tree::bcast_binomial),
    (Coll::Bcast, "flattree", bcast_flat),
    (Coll::Reduce, "default", reduce_linear),
    (Coll::Reduce, "binomial", tree::reduce_binomial),
    (Coll::Reduce, "flat_tree", reduce_flat_tree),
    (Coll::Allreduce, "redbcast", allreduce_redbcast),
    (Coll::Allreduce, "default", allreduce_redbcast),
    (Coll::Allreduce, "rdb", exchange::allreduce_rdb),
    (Coll::Allreduce, "lr", exchange::allreduce_lr),
    (Coll::ReduceScatter, "default", reduce_scatter_linear),
    (Coll::Scan, "default", scan_linear),
    (Coll::Gather, "default", gather_linear),
    (Coll::Gather, "ompi_basic_linear", gather_blocking),
    (Coll::Gather, "ompi_binomial", tree::gather_binomial),
    (Coll::Scatter, "default", scatter_linear),
    (Coll::Scatter, "ompi_basic_linear", scatter_blocking),
    (Coll::Scatter, "ompi_binomial", tree::scatter_binomial),
    (Coll::Allgather, "default", allgather_linear),
    (Coll::Allgather, "ring", exchange::allgather_ring),
    (Coll::Allgather, "rdb", exchange::allgather_rdb),
    (Coll::Allgather, "bruck", exchange::allgather_bruck),
    (Coll::Alltoall, "ompi", exchange::alltoall_ompi),
    (Coll::Alltoall, "default", exchange::alltoall_ompi),
    (Coll::Alltoall, "basic_linear", exchange::alltoall_basic_linear),
    (Coll::Alltoall, "pair", exchange::alltoall_pair),
    (Coll::Alltoall, "ring", exchange::alltoall_ring),
    (Coll::Alltoall, "bruck", exchange::alltoall_bruck),
];

/// The algorithm used when the machine file names none.
pub fn default_algorithm(c: Coll) -> &'static str {
    TABLE.iter().find(|(k, _, _)| *k == c).map_or("", |e| e.1)
}

/// The algorithm names known for `c`.
pub fn algorithms_of(c: Coll) -> Vec<&'static str> {
    TABLE.iter().filter(|(k, _, _)| *k == c).map(|e| e.1).collect()
}

/// `Ok` if `name` is an algorithm of `c`, else what the choices are.
pub fn check_algorithm(c: Coll, name: &str) -> Result<(), String> {
    if TABLE.iter().any(|(k, n, _)| *k == c && *n == name) {
        Ok(())
    } else {
        Err(format!(
            "unknown algorithm `{name}`; use one of {}",
            algorithms_of(c).join(", ")
        ))
    }
}

/// Appends task `shape.me`'s steps of algorithm `name` (checked at load).
pub fn expand(name: &str, shape: &Shape, out: &mut Vec<Step>) {
    if let Some((_, _, f)) = TABLE.iter().find(|(k, n, _)| *k == shape.coll && *n == name) {
        f(shape, out);
    }
}

// ---- shared building blocks ------------------------------------------

/// A blocking `MPI_Send`: post, then wait.
pub(super) fn send(out: &mut Vec<Step>, to: u32, bytes: u64) {
    out.push(Step::Isend { to, bytes });
    out.push(Step::WaitAll);
}

/// A blocking `MPI_Recv`: post, then wait.
pub(super) fn recv(out: &mut Vec<Step>, from: u32, bytes: u64) {
    out.push(Step::Irecv { from, bytes });
    out.push(Step::WaitAll);
}

/// A blocking `MPI_Sendrecv`: both posted, then one wait, so that two
/// tasks exchanging with each other never deadlock.
pub(super) fn sendrecv(out: &mut Vec<Step>, to: u32, sbytes: u64, from: u32, rbytes: u64) {
    out.push(Step::Isend { to, bytes: sbytes });
    out.push(Step::Irecv { from, bytes: rbytes });
    out.push(Step::WaitAll);
}

/// The other tasks in rank order (what SimGrid's linear loops visit).
fn others(s: &Shape) -> impl Iterator<Item = u32> {
    let me = s.me;
    (0..s.size).filter(move |&i| i != me)
}

/// How a linear root handles its peers: all operations posted then one
/// wait (SimGrid's nonblocking `default` forms), or one blocking call per
/// peer (Open MPI's `basic_linear`, copied into SimGrid).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Linear {
    Posted,
    Blocking,
}

/// Every task sends `bytes` to the root, which receives from the others
/// in the order `from` gives.
fn fan_in(s: &Shape, bytes: u64, how: Linear, from: impl Iterator<Item = u32>, out: &mut Vec<Step>) {
    if s.me != s.root {
        out.push(Step::Isend { to: s.root, bytes });
    } else {
        for from in from.filter(|&i| i != s.root) {
            out.push(Step::Irecv { from, bytes });
            if how == Linear::Blocking {
                out.push(Step::WaitAll);
            }
        }
    }
    if how == Linear::Posted || s.me != s.root {
        out.push(Step::WaitAll);
    }
}

/// The root sends `bytes_of(i)` to every task `i` in rank order; each
/// task receives its part.
pub(super) fn fan_out(s: &Shape, bytes_of: impl Fn(u32) -> u64, how: Linear, out: &mut Vec<Step>) {
    if s.me != s.root {
        out.push(Step::Irecv {
            from: s.root,
            bytes: bytes_of(s.me),
        });
    } else {
        for to in others(s) {
            out.push(Step::Isend {
                to,
                bytes: bytes_of(to),
            });
            if how == Linear::Blocking {
                out.push(Step::WaitAll);
            }
        }
    }
    if how == Linear::Posted || s.me != s.root {
        out.push(Step::WaitAll);
    }
}

/// Part `i` of `bytes` split over `p` tasks as evenly as bytes allow.
pub(super) fn share(bytes: u64, p: u32, i: u32) -> u64 {
    let (p, i) = (u64::from(p), u64::from(i));
    bytes / p + u64::from(i < bytes % p)
}

// ---- linear and flat algorithms --------------------------------------

/// SimGrid's `barrier:ompi_basic_linear` (its default): every task sends
/// an empty message to task 0 and waits for one back; task 0 receives
/// all, then sends all.
fn barrier_linear(s: &Shape, out: &mut Vec<Step>) {
    if s.me == 0 {
        let s0 = Shape { root: 0, ..*s };
        fan_in(&s0, 0, Linear::Posted, 0..s.size, out);
        fan_out(&s0, |_| 0, Linear::Posted, out);
    } else {
        send(out, 0, 0);
        recv(out, 0, 0);
    }
}

/// SimGrid's `bcast:flattree`: the root posts a send to every task.
fn bcast_flat(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, |_| s.bytes, Linear::Posted, out);
}

/// SimGrid's `reduce:default` as the replay runs it (no operator, so the
/// nonblocking linear `ireduce`): all send to the root, which posts the
/// receives in rank order.
pub(super) fn reduce_linear(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Posted, 0..s.size, out);
}

/// SimGrid's `reduce:flat_tree`: the root receives one at a time from
/// the highest rank down to 0.
fn reduce_flat_tree(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Blocking, (0..s.size).rev(), out);
}

/// SimGrid's `allreduce:redbcast` and `allreduce:default`: `reduce` to
/// task 0 then `bcast` from it, with the default reduce and bcast.
pub(super) fn allreduce_redbcast(s: &Shape, out: &mut Vec<Step>) {
    let s0 = Shape { root: 0, ..*s };
    reduce_linear(&s0, out);
    tree::bcast_binomial(&s0, out);
}

/// SimGrid's `reduce_scatter:default`: reduce the whole vector to task 0
/// (default reduce), then the default `scatterv` of one share to each.
pub(super) fn reduce_scatter_linear(s: &Shape, out: &mut Vec<Step>) {
    let s0 = Shape { root: 0, ..*s };
    reduce_linear(&s0, out);
    fan_out(&s0, |i| share(s.bytes, s.size, i), Linear::Posted, out);
}

/// SimGrid's `MPI_Scan` (not selectable, and not in its replay): each
/// task posts receives from every lower rank and sends to every higher
/// one, then waits.
fn scan_linear(s: &Shape, out: &mut Vec<Step>) {
    let bytes = s.bytes;
    out.extend((0..s.me).map(|from| Step::Irecv { from, bytes }));
    out.extend((s.me + 1..s.size).map(|to| Step::Isend { to, bytes }));
    out.push(Step::WaitAll);
}

/// SimGrid's `gather:default` (nonblocking linear `igather`).
fn gather_linear(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Posted, 0..s.size, out);
}

/// SimGrid's `gather:ompi_basic_linear`: the root receives one at a time
/// in rank order.
fn gather_blocking(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Blocking, 0..s.size, out);
}

/// SimGrid's `scatter:default` (nonblocking linear `iscatter`).
fn scatter_linear(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, |_| s.bytes, Linear::Posted, out);
}

/// SimGrid's `scatter:ompi_basic_linear`: the root sends one at a time
/// in rank order.
fn scatter_blocking(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, |_| s.bytes, Linear::Blocking, out);
}

/// SimGrid's `allgather:default` (nonblocking `iallgather`): a send and
/// a receive posted per other task in rank order, then one wait.
fn allgather_linear(s: &Shape, out: &mut Vec<Step>) {
    for i in others(s) {
        out.push(Step::Isend {
            to: i,
            bytes: s.bytes,
        });
        out.push(Step::Irecv {
            from: i,
            bytes: s.bytes,
        });
    }
    out.push(Step::WaitAll);
}
