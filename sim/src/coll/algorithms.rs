//! Named collective algorithms, each a function from a [`Shape`] to one
//! task's [`Step`]s. The names follow SimGrid's `smpi/<coll>` option
//! values where SimGrid has the same algorithm, so that a replay under
//! `--cfg=smpi/bcast:binomial_tree` and one here send the same messages.

use super::{Shape, Step};
use pnmpi_trace::routine::Coll;

/// An algorithm: appends the task's steps.
type Expand = fn(&Shape, &mut Vec<Step>);

/// Every algorithm: (collective, name, expansion). The first of each
/// collective is its default.
const TABLE: &[(Coll, &str, Expand)] = &[
    (Coll::Barrier, "flat", barrier_flat),
    (Coll::Bcast, "flattree", bcast_flat),
    (Coll::Reduce, "flat_tree", reduce_flat),
    (Coll::Allreduce, "redbcast", allreduce_redbcast),
    (Coll::ReduceScatter, "redbcast", allreduce_redbcast),
    (Coll::Scan, "linear", scan_linear),
    (Coll::Gather, "flat", gather_flat),
    (Coll::Scatter, "flat", scatter_flat),
    (Coll::Allgather, "flat", allgather_flat),
    (Coll::Alltoall, "basic_linear", alltoall_linear),
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

/// Every task sends `bytes` to the root, which receives from all.
fn fan_in(s: &Shape, bytes: u64, out: &mut Vec<Step>) {
    if s.me == s.root {
        out.extend(
            (0..s.size)
                .filter(|&i| i != s.root)
                .map(|from| Step::Irecv { from, bytes }),
        );
    } else {
        out.push(Step::Isend { to: s.root, bytes });
    }
    out.push(Step::WaitAll);
}

/// The root sends `bytes` to every task.
fn fan_out(s: &Shape, bytes: u64, out: &mut Vec<Step>) {
    if s.me == s.root {
        out.extend(
            (0..s.size)
                .filter(|&i| i != s.root)
                .map(|to| Step::Isend { to, bytes }),
        );
    } else {
        out.push(Step::Irecv { from: s.root, bytes });
    }
    out.push(Step::WaitAll);
}

fn barrier_flat(s: &Shape, out: &mut Vec<Step>) {
    let s0 = Shape { root: 0, ..*s };
    fan_in(&s0, 0, out);
    fan_out(&s0, 0, out);
}

fn bcast_flat(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, s.bytes, out);
}

fn reduce_flat(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, out);
}

fn allreduce_redbcast(s: &Shape, out: &mut Vec<Step>) {
    let s0 = Shape { root: 0, ..*s };
    fan_in(&s0, s.bytes, out);
    fan_out(&s0, s.bytes, out);
}

fn scan_linear(s: &Shape, out: &mut Vec<Step>) {
    if s.me > 0 {
        out.push(Step::Irecv {
            from: s.me - 1,
            bytes: s.bytes,
        });
        out.push(Step::WaitAll);
    }
    if s.me + 1 < s.size {
        out.push(Step::Isend {
            to: s.me + 1,
            bytes: s.bytes,
        });
        out.push(Step::WaitAll);
    }
}

fn gather_flat(s: &Shape, out: &mut Vec<Step>) {
    fan_in(s, s.bytes, out);
}

fn scatter_flat(s: &Shape, out: &mut Vec<Step>) {
    fan_out(s, s.bytes, out);
}

fn allgather_flat(s: &Shape, out: &mut Vec<Step>) {
    for i in (0..s.size).filter(|&i| i != s.me) {
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

fn alltoall_linear(s: &Shape, out: &mut Vec<Step>) {
    allgather_flat(s, out);
}
