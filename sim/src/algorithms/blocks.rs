//! The building blocks of the named algorithms: blocking sends and
//! receives as SimGrid's collectives call them, and a root's linear fan
//! in and out. Every algorithm file builds on these, and on nothing of
//! each other's but whole algorithms.

use super::shape::{Shape, Step};

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
pub(super) fn others(s: &Shape) -> impl Iterator<Item = u32> {
    let me = s.me;
    (0..s.size).filter(move |&i| i != me)
}

/// How a linear root handles its peers: all operations posted then one
/// wait (SimGrid's nonblocking `default` forms), or one blocking call per
/// peer (Open MPI's `basic_linear`, copied into SimGrid).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Linear {
    Posted,
    Blocking,
}

/// Every task sends `bytes` to the root, which receives from the others
/// in the order `from` gives.
pub(super) fn fan_in(
    s: &Shape,
    bytes: u64,
    how: Linear,
    from: impl Iterator<Item = u32>,
    out: &mut Vec<Step>,
) {
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
pub(crate) fn fan_out(s: &Shape, bytes_of: impl Fn(u32) -> u64, how: Linear, out: &mut Vec<Step>) {
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
