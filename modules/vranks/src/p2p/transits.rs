//! What each flow over shared links carries, for the point-to-point
//! layer's flows (`flows.rs`, which steps them): the leaf state, which
//! names nothing of the layer above.

use pnmpi_sim::kernel::p2p::Mode;
use pnmpi_sim::model::Msg;
use pnmpi_sim::network::flows::FlowId;
use pnmpi_sim::units::Ns;
use std::collections::HashMap;

/// What a flow's end completes.
pub(super) enum Transit {
    /// An eager message's data: its receive (request, message, when it
    /// was posted) once matched.
    Eager(Option<(usize, Msg, Ns)>),
    /// A matched rendezvous's data, ready at `ready`: its send (`None`
    /// for a synchronous send, done when matched) and its receive.
    Rendezvous {
        send: Option<usize>,
        recv: usize,
        msg: Msg,
        mode: Mode,
        ready: Ns,
        recv_posted: Ns,
    },
    /// A one-sided operation's data there (`back` bytes to come back once
    /// it arrived), or what comes back: its end completes `done` and, a
    /// request form's, `local` (a put's or accumulate's once its data is
    /// there, a fetching one's once its result is back).
    Rma {
        there: Msg,
        back: u64,
        done: usize,
        local: Option<usize>,
        returning: bool,
    },
}

impl Transit {
    /// A one-sided operation's leg (`returning`: what comes back).
    pub(super) fn rma(
        there: Msg,
        back: u64,
        (done, local): (usize, Option<usize>),
        returning: bool,
    ) -> Transit {
        Transit::Rma {
            there,
            back,
            done,
            local,
            returning,
        }
    }
}

/// The flows in flight and what each carries.
#[derive(Default)]
pub(super) struct Flowing {
    pub(super) of_flow: HashMap<FlowId, u64>,
    pub(super) open: HashMap<u64, Transit>,
    /// Eager data that landed before its receive matched it.
    pub(super) landed: HashMap<u64, Ns>,
    pub(super) next: u64,
    /// The time of the earliest [`Event::Flows`](crate::sched::Event::Flows) queued.
    pub(super) queued: Option<Ns>,
    /// Whether a message was posted behind the network's present (said
    /// once: [`P2p::behind_the_network`](crate::p2p::P2p::behind_the_network)).
    pub(super) late: bool,
    pub(super) ended: Vec<FlowId>,
}

impl Flowing {
    pub(super) fn start(&mut self, flow: FlowId, t: Transit) -> u64 {
        let n = self.next;
        self.next += 1;
        self.of_flow.insert(flow, n);
        self.open.insert(n, t);
        n
    }
}
