//! Collective algorithms as point-to-point steps: one collective call as a
//! member sees it ([`Shape`]), and the named algorithms, each a function
//! from a [`Shape`] to one task's [`Step`]s. Pure: it knows no machine and
//! no model, so that the machine file's loader checks the names it
//! gives and the models' closed forms read the same [`Shape`] as the
//! kernel that picks between the two ([`crate::kernel::coll`]). The names are SimGrid's `smpi/<coll>` option values
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

mod blocks;
pub(crate) mod exchange;
pub(crate) mod linear;
mod shape;
mod tree;

pub(crate) use blocks::{fan_out, Linear};
use linear::{
    allgather_linear, allreduce_redbcast, barrier_linear, bcast_flat, gather_blocking, gather_linear,
    reduce_flat_tree, reduce_linear, reduce_scatter_linear, scan_linear, scatter_blocking, scatter_linear,
};
use pnmpi_trace::routine::Coll;
pub use shape::{log2_ceil, member_bytes, Shape, Step};

/// An algorithm: appends the task's steps.
type Expand = fn(&Shape, &mut Vec<Step>);

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
