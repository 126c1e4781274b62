//! The linear and flat algorithms: a root that sends to or receives
//! from every other task, SimGrid's `default` replays of most
//! collectives, and `allreduce:redbcast` built of them.

use super::blocks::{fan_in, fan_out, others, recv, send, share, Linear};
use super::shape::{Shape, Step};
use super::tree;

/// SimGrid's `barrier:ompi_basic_linear` (its default): every task sends
/// an empty message to task 0 and waits for one back; task 0 receives
/// all, then sends all.
pub(super) fn barrier_linear(s: &Shape, out: &mut Vec<Step>) {
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
pub(super) fn bcast_flat(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, |_| s.bytes, Linear::Posted, out);
}

/// SimGrid's `reduce:default` as the replay runs it (no operator, so the
/// nonblocking linear `ireduce`): all send to the root, which posts the
/// receives in rank order.
pub(crate) fn reduce_linear(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Posted, 0..s.size, out);
}

/// SimGrid's `reduce:flat_tree`: the root receives one at a time from
/// the highest rank down to 0.
pub(super) fn reduce_flat_tree(s: &Shape, out: &mut Vec<Step>) {
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
pub(crate) fn reduce_scatter_linear(s: &Shape, out: &mut Vec<Step>) {
    let s0 = Shape { root: 0, ..*s };
    reduce_linear(&s0, out);
    fan_out(&s0, |i| share(s.bytes, s.size, i), Linear::Posted, out);
}

/// SimGrid's `MPI_Scan` (not selectable, and not in its replay): each
/// task posts receives from every lower rank and sends to every higher
/// one, then waits.
pub(super) fn scan_linear(s: &Shape, out: &mut Vec<Step>) {
    let bytes = s.bytes;
    out.extend((0..s.me).map(|from| Step::Irecv { from, bytes }));
    out.extend((s.me + 1..s.size).map(|to| Step::Isend { to, bytes }));
    out.push(Step::WaitAll);
}

/// SimGrid's `gather:default` (nonblocking linear `igather`).
pub(super) fn gather_linear(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Posted, 0..s.size, out);
}

/// SimGrid's `gather:ompi_basic_linear`: the root receives one at a time
/// in rank order.
pub(super) fn gather_blocking(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, Linear::Blocking, 0..s.size, out);
}

/// SimGrid's `scatter:default` (nonblocking linear `iscatter`).
pub(super) fn scatter_linear(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, |_| s.bytes, Linear::Posted, out);
}

/// SimGrid's `scatter:ompi_basic_linear`: the root sends one at a time
/// in rank order.
pub(super) fn scatter_blocking(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, |_| s.bytes, Linear::Blocking, out);
}

/// SimGrid's `allgather:default` (nonblocking `iallgather`): a send and
/// a receive posted per other task in rank order, then one wait.
pub(super) fn allgather_linear(s: &Shape, out: &mut Vec<Step>) {
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
