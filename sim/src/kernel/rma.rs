//! The one-sided (RMA) rule: when a put, get or accumulate frees the
//! origin's CPU, and when the origin can know it complete, which is when
//! the call that closes its epoch (a fence, `MPI_Win_complete`, an unlock
//! or a flush) may return. The target's CPU takes no part: the data moves
//! as the network moves a message, and the target learns nothing until
//! its own synchronization.
//!
//! ```text
//! free = overhead(origin -> target, at)
//! done = transfer(target -> origin, back, transfer(origin -> target, there, free).end).end
//!
//!                        there            back
//! put, accumulate        origin buffer    0 (the completion's acknowledgement)
//! get                    0 (a request)    origin buffer
//! get_accumulate,        origin buffer    result buffer (the old value)
//! fetch_and_op, CAS      (CAS: origin and compare values)
//! ```
//!
//! A request form's request reports local completion: a put's or
//! accumulate's data all at the target (before the acknowledgement), a
//! fetching operation's `done`. The target's reduction of an accumulate costs no time: no model gives
//! a rate for it. How the epochs use `done` is the engine's part
//! (docs/sim.md, "One-sided communication"): a fence is a barrier of the
//! window's group that each member enters once its own operations are
//! done; `MPI_Win_complete`, an unlock and a flush wait for the done
//! times of the operations they close; a post and a start, a complete and
//! a wait exchange empty messages between the ranks their groups name.
//!
//! A lock passes from holder to holder ([`handoff`]): the target grants
//! it once the holders before it have released it (an exclusive lock
//! after every holder since the last exclusive one, a shared lock after
//! the last exclusive one), by an empty message from the target that the
//! new holder receives as any message; the holders' order is the run's.

use super::p2p::{self, Carried};
use crate::model::{Model, Msg};
use crate::units::Ns;
use pnmpi_trace::rma::DataOp;
use rustc_hash::FxHashMap;

/// The bytes operation `op` sends to the target and brings back, from
/// the origin's buffer (`bytes`) and its result buffer (`rbytes`, for
/// the fetching ones): `(there, back)`. Nothing back is an empty
/// acknowledgement; a get sends an empty request.
pub fn sizes(op: DataOp, bytes: u64, rbytes: u64) -> (u64, u64) {
    match op {
        DataOp::Put | DataOp::Accumulate => (bytes, 0),
        DataOp::Get => (0, bytes),
        DataOp::GetAccumulate | DataOp::FetchAndOp | DataOp::CompareAndSwap => (bytes, rbytes),
    }
}

/// When an issued operation leaves the origin's CPU free, and when the
/// origin may know it complete.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Issued {
    /// The origin's CPU is free again (the call returns).
    pub free: Ns,
    /// The operation is complete at the origin: its data in the target's
    /// window (and acknowledged) or in the origin's buffer.
    pub done: Ns,
    /// The origin's buffers may be reused (local completion, which a
    /// request form's request reports): a put's or accumulate's data has
    /// all reached the target; a fetching operation's result is there
    /// (`done`).
    pub local: Ns,
}

/// Times an operation issued at `at` that sends `there` (its size that
/// of [`sizes`], its nodes set) to the target and brings `back` bytes
/// from it; the origin's overhead runs on `cpu` (as
/// [`super::p2p::post`]'s).
pub fn issue(
    model: &mut dyn Model,
    there: &Msg,
    back: u64,
    at: Ns,
    cpu: &mut dyn FnMut(Ns, Ns) -> Ns,
) -> Issued {
    let free = p2p::freed(model, there, at, cpu);
    let arrived = model.transfer(there, free).end;
    let done = model.transfer(&reply(there, back), arrived).end;
    let local = if back == 0 { arrived } else { done };
    Issued { free, done, local }
}

/// What comes back to the origin of `there`: `back` bytes (none: the
/// acknowledgement).
fn reply(there: &Msg, back: u64) -> Msg {
    Msg {
        src: there.dst,
        dst: there.src,
        src_node: there.dst_node,
        dst_node: there.src_node,
        bytes: back,
    }
}

/// [`issue`] on a model whose data may move as flows over shared links
/// ([`p2p::carry`]): when the origin's CPU is free, and how `there` moves
/// to the target. Once it arrived, [`returned`] moves what comes back; the
/// operation is done when that has arrived, locally complete at the
/// first arrival for a put or an accumulate and at the second for a
/// fetching operation, as [`issue`] times them.
pub fn started(
    model: &mut dyn Model,
    there: &Msg,
    at: Ns,
    cpu: &mut dyn FnMut(Ns, Ns) -> Ns,
) -> (Ns, Carried) {
    let free = p2p::freed(model, there, at, cpu);
    (free, p2p::carry(model, there, free))
}

/// How the `back` bytes of operation `there` move to the origin once its
/// data arrived at `arrived` (see [`started`]).
pub fn returned(model: &mut dyn Model, there: &Msg, back: u64, arrived: Ns) -> Carried {
    p2p::carry(model, &reply(there, back), arrived)
}

/// When the lock's grant, `grant` (an empty message from the target to
/// the next holder), arrives, the holder before having released it at
/// `released` (its unlock returned): the next holder receives it as a
/// message arriving then, and its `MPI_Win_lock` returns when received.
/// The target's CPU takes no part, nor the releasing holder's.
pub fn handoff(model: &mut dyn Model, grant: &Msg, released: Ns) -> Ns {
    model.transfer(grant, released).end
}

/// An origin's operations on one window that no call has completed yet:
/// per target, when the last is done. The calls that close an epoch
/// settle them.
#[derive(Debug, Default)]
pub struct Pending {
    done: FxHashMap<u32, Ns>,
}

impl Pending {
    /// An operation to `target` done at `done`.
    pub fn add(&mut self, target: u32, done: Ns) {
        let d = self.done.entry(target).or_insert(f64::NEG_INFINITY);
        *d = d.max(done);
    }

    /// When the operations to `target` (`None`: to every target) are
    /// done, forgetting them: the closing call completes them. Nothing
    /// pending is `-inf`.
    pub fn settle(&mut self, target: Option<u32>) -> Ns {
        match target {
            Some(t) => self.done.remove(&t).unwrap_or(f64::NEG_INFINITY),
            None => self
                .done
                .drain()
                .map(|(_, t)| t)
                .fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;

    fn model() -> Box<dyn Model> {
        let m = Machine::parse(
            "m.toml",
            "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n",
        )
        .expect("a machine");
        crate::model::build("simple", &m).expect("the simple model")
    }

    fn msg(bytes: u64) -> Msg {
        Msg {
            src: 0,
            dst: 1,
            src_node: 0,
            dst_node: 1,
            bytes,
        }
    }

    fn unstretched(start: Ns, work: Ns) -> Ns {
        start + work
    }

    /// `op` of `bytes` (and `rbytes` back) issued at `at`.
    fn op(m: &mut dyn Model, op: DataOp, bytes: u64, rbytes: u64, at: Ns) -> Issued {
        let (there, back) = sizes(op, bytes, rbytes);
        issue(m, &msg(there), back, at, &mut unstretched)
    }

    #[test]
    fn a_put_is_its_data_there_and_an_acknowledgement_back() {
        let mut m = model();
        let i = op(&mut *m, DataOp::Put, 1000, 0, 10.0);
        // The simple model: no overhead; 1 us + 1000 B at 1 GB/s there,
        // 1 us back.
        assert_eq!(i.free, 10.0);
        assert_eq!(i.done, 10.0 + 1000.0 + 1000.0 + 1000.0);
        assert_eq!(i.local, 10.0 + 2000.0, "its data there, not yet acknowledged");
        assert_eq!(op(&mut *m, DataOp::Accumulate, 1000, 0, 10.0), i);
    }

    #[test]
    fn a_get_is_a_request_there_and_its_data_back() {
        let mut m = model();
        let get = op(&mut *m, DataOp::Get, 1000, 0, 0.0);
        let put = op(&mut *m, DataOp::Put, 1000, 0, 0.0);
        // The same two latencies and one payload, the other way round.
        assert_eq!(get.done, put.done);
        assert_eq!(get.local, get.done, "its data is the result");
    }

    #[test]
    fn a_fetching_operation_brings_its_result_back() {
        let mut m = model();
        // compare_and_swap of 8-byte values: origin and compare there, one back.
        let cas = op(&mut *m, DataOp::CompareAndSwap, 16, 8, 0.0);
        assert_eq!(cas.done, 1016.0 + 1008.0);
        let both = op(&mut *m, DataOp::GetAccumulate, 1000, 1000, 0.0);
        assert_eq!(both.done, 4000.0, "the payload both ways");
    }

    #[test]
    fn an_operation_in_two_legs_is_timed_as_issued_at_once_on_private_links() {
        for (kind, bytes, rbytes) in [
            (DataOp::Put, 4000, 0),
            (DataOp::Get, 4000, 0),
            (DataOp::FetchAndOp, 8, 8),
        ] {
            let mut m = model();
            let (there, back) = sizes(kind, bytes, rbytes);
            let whole = issue(&mut *m, &msg(there), back, 5.0, &mut unstretched);
            let (free, first) = started(&mut *m, &msg(there), 5.0, &mut unstretched);
            let arrived = first.known().expect("a closed form").end;
            let done = returned(&mut *m, &msg(there), back, arrived)
                .known()
                .expect("a closed form")
                .end;
            assert_eq!((free, done), (whole.free, whole.done), "{kind:?}");
        }
    }

    #[test]
    fn pending_operations_settle_per_target_or_all() {
        let mut p = Pending::default();
        p.add(1, 5.0);
        p.add(1, 3.0);
        p.add(2, 9.0);
        assert_eq!(p.settle(Some(1)), 5.0, "the latest to the target");
        assert_eq!(p.settle(Some(1)), f64::NEG_INFINITY, "forgotten once settled");
        p.add(3, 4.0);
        assert_eq!(p.settle(None), 9.0);
        assert_eq!(p.settle(None), f64::NEG_INFINITY);
    }

    #[test]
    fn a_lock_is_handed_over_by_an_empty_message_from_the_target() {
        let mut m = model();
        // The simple model: 1 us for an empty message.
        assert_eq!(handoff(&mut *m, &msg(0), 7.0), 1007.0);
    }
}
