//! What a model is to the engine: the message and collective it is asked
//! about, the transfer it answers, and the [`Model`] trait. Every model
//! and the engine build on this; the registry ([`super::MODELS`]) builds
//! on the models.

use crate::algorithms::Shape;
use crate::network::flows::{FlowId, Flows};
use crate::network::load::LinkLoad;
use crate::units::Ns;

/// A message between two tasks, as a model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Msg {
    /// World rank of the sender.
    pub src: u32,
    /// World rank of the receiver.
    pub dst: u32,
    /// Node of the sender.
    pub src_node: u32,
    /// Node of the receiver.
    pub dst_node: u32,
    /// Payload size.
    pub bytes: u64,
}

impl Msg {
    /// `bytes` from world rank `src` to `dst`, their nodes given by
    /// `node` (the replay's mapping, or vtime's).
    pub fn between(src: u32, dst: u32, bytes: u64, node: impl Fn(u32) -> u32) -> Msg {
        Msg {
            src,
            dst,
            src_node: node(src),
            dst_node: node(dst),
            bytes,
        }
    }
}

/// When a message's transfer held the network.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    /// Resources granted: the wait for resources is `start - ready`.
    pub start: Ns,
    /// The last byte arrived at the receiver.
    pub end: Ns,
}

/// A collective call, once every member has entered it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollCall<'a> {
    /// The collective and its sizes (`me` and `root` are unused here).
    pub shape: Shape,
    /// Nodes of the members, in communicator order.
    pub nodes: &'a [u32],
}

/// A communication model. `Send`, so that a process-wide model (the
/// `vtime` module's, behind a lock) may be used from whichever thread
/// calls MPI.
pub trait Model: Send {
    /// The name users give with `--model`.
    fn name(&self) -> &'static str;

    /// Whether `m` is sent eagerly (the sender does not wait for the
    /// receive), or with a rendezvous.
    fn eager(&self, m: &Msg) -> bool;

    /// The sender posts `m` at `at`; returns when its CPU is free again
    /// (after the send overhead). An eager message is ready to move then.
    fn send_overhead(&mut self, _m: &Msg, at: Ns) -> Ns {
        at
    }

    /// A rendezvous whose send was posted (overhead done) at `send` and
    /// whose receive was posted at `recv`: when the data may start moving.
    fn rendezvous_ready(&mut self, _m: &Msg, send: Ns, recv: Ns) -> Ns {
        send.max(recv)
    }

    /// Moves `m`, ready at `ready`.
    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer;

    /// For a model whose messages share links: starts `m`'s data moving
    /// at `ready` as a flow over its route, whose end depends on the
    /// flows that start and end after it, so the engine learns it by
    /// stepping [`flows`](Self::flows). `None`, the default: `m` takes its
    /// closed-form [`transfer`](Self::transfer) (every other model, and a
    /// message that crosses no link).
    fn flow(&mut self, _m: &Msg, _ready: Ns) -> Option<FlowId> {
        None
    }

    /// The flows in flight of a model whose messages share links, for the
    /// engine to step to their ends; `None` for every other model. A
    /// simulator that cannot step them (one process per rank sees only its
    /// own messages) refuses such a model.
    fn flows(&mut self) -> Option<&mut Flows> {
        None
    }

    /// For a model whose messages share links: counts what each link
    /// carries from now on (asked before a replay, for a report of where
    /// the network hurts; a replay without one pays nothing). `false`,
    /// the default: the model has no links.
    fn count_link_loads(&mut self) -> bool {
        false
    }

    /// What each link carried since [`count_link_loads`](Self::count_link_loads)
    /// (bytes, busy time, time lost to sharing), indexed by link; `None`
    /// without links or counting.
    fn link_loads(&self) -> Option<Vec<LinkLoad>> {
        None
    }

    /// When the receive completes, its data having arrived at `arrived`
    /// and the receive having been posted at `posted`.
    fn recv_done(&mut self, _m: &Msg, arrived: Ns, posted: Ns) -> Ns {
        arrived.max(posted)
    }

    /// The closed-form time of a collective whose last member entered at
    /// `ready`: when it completes on every member.
    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns;

    /// When a call that completed at `t` returns to the application (a
    /// globally strobed runtime returns at the next strobe).
    fn resume(&self, t: Ns) -> Ns {
        t
    }

    /// Whether [`resume`](Self::resume) returns its argument: a wait then
    /// ends at the same time whether it blocks before its requests
    /// complete or finds them complete, so the engine may run it before
    /// earlier events of other ranks (a parallel replay saves a window).
    fn resumes_at_once(&self) -> bool {
        true
    }

    /// For a parallel replay: a lower bound, ns, of every message's
    /// transfer (`end - ready`) and of every collective of two or more
    /// members (`collective(..) - ready`), offered only by models whose
    /// answers do not depend on the order of calls across ranks (no
    /// state, or state per sending rank). 0, the default, means the model
    /// cannot replay in parallel and give the serial answer.
    fn lookahead(&self) -> Ns {
        0.0
    }
}
