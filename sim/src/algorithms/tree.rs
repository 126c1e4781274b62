//! Binomial-tree algorithms. SimGrid's MPICH-derived `binomial_tree`
//! bcast and `binomial` reduce and Open MPI's in-order binomial tree
//! (`ompi_binomial` gather and scatter) all use the same tree over
//! ranks relative to the root: the parent of relative rank `v` is `v`
//! with its lowest set bit cleared, its children are `v + m` for the
//! powers of two `m` below that bit. They differ only in the order they
//! visit the children and in what they send, so one walk serves all four.

use super::blocks::{recv, send};
use super::shape::{Shape, Step};

/// Task `shape.me`'s place in the binomial tree rooted at `shape.root`.
struct Binomial {
    p: u32,
    root: u32,
    rel: u32,
}

impl Binomial {
    fn of(s: &Shape) -> Self {
        Binomial {
            p: s.size,
            root: s.root,
            rel: (s.me + s.size - s.root) % s.size,
        }
    }

    /// Communicator index of relative rank `rel`.
    fn real(&self, rel: u32) -> u32 {
        (rel + self.root) % self.p
    }

    /// The parent (none at the root).
    fn parent(&self) -> Option<u32> {
        (self.rel != 0).then(|| self.real(self.rel & (self.rel - 1)))
    }

    /// The children as (communicator index, tasks in its subtree), the
    /// nearest first.
    fn children(&self) -> impl DoubleEndedIterator<Item = (u32, u32)> + '_ {
        let low = if self.rel == 0 {
            u32::MAX
        } else {
            self.rel & self.rel.wrapping_neg()
        };
        (0..32)
            .map(|k| 1u32 << k)
            .take_while(move |&m| m < low && m < self.p)
            .filter(move |&m| self.rel + m < self.p)
            .map(move |m| {
                let kid = self.rel + m;
                (self.real(kid), m.min(self.p - kid))
            })
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// Tasks in this task's subtree, itself included.
    fn subtree(&self) -> u32 {
        1 + self.children().map(|(_, n)| n).sum::<u32>()
    }
}

/// SimGrid's `bcast:binomial_tree` (also its default bcast): receive
/// from the parent, then send to the children, farthest first, each a
/// blocking send.
pub(super) fn bcast_binomial(s: &Shape, out: &mut Vec<Step>) {
    let t = Binomial::of(s);
    if let Some(parent) = t.parent() {
        recv(out, parent, s.bytes);
    }
    for (kid, _) in t.children().rev() {
        send(out, kid, s.bytes);
    }
}

/// SimGrid's `reduce:binomial` (the replay's reduction has no operator,
/// so it counts as commutative and the tree is rooted at the root):
/// receive the children's partial results nearest first, then send to
/// the parent.
pub(super) fn reduce_binomial(s: &Shape, out: &mut Vec<Step>) {
    let t = Binomial::of(s);
    for (kid, _) in t.children() {
        recv(out, kid, s.bytes);
    }
    if let Some(parent) = t.parent() {
        send(out, parent, s.bytes);
    }
}

/// SimGrid's `gather:ompi_binomial`: receive each child's subtree of
/// contributions nearest first, then send the own subtree to the parent.
pub(super) fn gather_binomial(s: &Shape, out: &mut Vec<Step>) {
    let t = Binomial::of(s);
    for (kid, n) in t.children() {
        recv(out, kid, u64::from(n) * s.bytes);
    }
    if let Some(parent) = t.parent() {
        send(out, parent, u64::from(t.subtree()) * s.bytes);
    }
}

/// SimGrid's `scatter:ompi_binomial`: receive the own subtree's blocks
/// from the parent, then send each child its subtree's, nearest first.
pub(super) fn scatter_binomial(s: &Shape, out: &mut Vec<Step>) {
    let t = Binomial::of(s);
    if let Some(parent) = t.parent() {
        recv(out, parent, u64::from(t.subtree()) * s.bytes);
    }
    for (kid, n) in t.children() {
        send(out, kid, u64::from(n) * s.bytes);
    }
}
