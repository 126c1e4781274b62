//! The `v` collectives with their per-peer bytes, as SimGrid 3.32 runs
//! them by default: `alltoallv`, `allgatherv`, `gatherv` and `scatterv`
//! are its linear nonblocking forms (`ialltoallv` ... in
//! `src/smpi/colls/smpi_nbc_impl.cpp`) followed by one wait;
//! `reduce_scatter` with equal shares is `reduce_scatter:default`. With
//! unequal shares SimGrid switches to MPICH's algorithm, which is not
//! modelled: the replay then reduces to task 0 and scatters each share.

use crate::algorithms::linear::{reduce_linear, reduce_scatter_linear};
use crate::algorithms::{fan_out, Linear, Shape, Step};
use crate::input::VCounts;
use pnmpi_trace::routine::Coll;

/// Bytes of `side` for task `j`, or `fallback` when the side was not
/// recorded for every task.
fn at(side: &[u64], j: u32, size: u32, fallback: u64) -> u64 {
    if side.len() == size as usize {
        side[j as usize]
    } else {
        fallback
    }
}

/// Appends task `s.me`'s steps of `v` collective `s.coll` with per-peer
/// bytes `c` (`s.bytes`: the task's single count, its send count for
/// `allgatherv` and `gatherv`, its receive count for `scatterv`, the
/// whole vector for `reduce_scatter`).
pub fn expand_v(s: &Shape, c: &VCounts, out: &mut Vec<Step>) {
    let others = (0..s.size).filter(|&j| j != s.me);
    let recv_of = |j| at(&c.recv, j, s.size, s.bytes);
    let send_of = |j| at(&c.send, j, s.size, s.bytes);
    match s.coll {
        Coll::Alltoall => {
            out.extend(others.clone().map(|from| Step::Irecv {
                from,
                bytes: recv_of(from),
            }));
            out.extend(others.map(|to| Step::Isend {
                to,
                bytes: send_of(to),
            }));
            out.push(Step::WaitAll);
        }
        Coll::Allgather => {
            for j in others {
                out.push(Step::Isend {
                    to: j,
                    bytes: s.bytes,
                });
                out.push(Step::Irecv {
                    from: j,
                    bytes: recv_of(j),
                });
            }
            out.push(Step::WaitAll);
        }
        Coll::Gather if s.me == s.root => {
            out.extend(others.map(|from| Step::Irecv {
                from,
                bytes: recv_of(from),
            }));
            out.push(Step::WaitAll);
        }
        Coll::Gather => {
            out.push(Step::Isend {
                to: s.root,
                bytes: s.bytes,
            });
            out.push(Step::WaitAll);
        }
        Coll::Scatter => fan_out(s, send_of, Linear::Posted, out),
        Coll::ReduceScatter => {
            let share = |j| at(&c.recv, j, s.size, s.bytes / u64::from(s.size.max(1)));
            let whole: u64 = (0..s.size).map(share).sum();
            let equal = (0..s.size).all(|j| share(j) == share(0));
            let s0 = Shape {
                root: 0,
                bytes: whole,
                ..*s
            };
            if equal {
                reduce_scatter_linear(&s0, out);
            } else {
                reduce_linear(&s0, out);
                fan_out(&s0, share, Linear::Posted, out);
            }
        }
        _ => {}
    }
}
