//! Messages whose data moves as flows over shared links (a model with
//! [`Model::flows`](crate::model::Model::flows)): the engine cannot know
//! when such data lands when it starts, since flows that start later slow
//! it down, nor when a one-sided operation moving so is done. Each flow
//! is a transit, which knows what its end completes (`landing.rs` steps
//! the flows and lands them).

use super::matching::{PendingRecv, PendingSend};
use crate::input::ReqId;
use crate::kernel::p2p;
use crate::model::Msg;
use crate::network::flows::FlowId;
use crate::units::Ns;
use rustc_hash::FxHashMap;

/// What a flow's end completes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Transit {
    /// An eager message's data: its receive once matched, or the time it
    /// landed once it has and no receive has matched it yet.
    Eager {
        send: PendingSend,
        recv: Option<PendingRecv>,
        landed: Option<Ns>,
    },
    /// A matched rendezvous's data, ready at `ready`; a synchronous send
    /// completed when it was matched.
    Rendezvous {
        send: PendingSend,
        recv: PendingRecv,
        mode: p2p::Mode,
        ready: Ns,
    },
    /// A one-sided operation's leg.
    Rma(RmaTransit),
}

/// A one-sided operation moving as a flow, issued by actor `origin` on
/// window `win` to world rank `target`: its data there (`back` bytes to
/// come back once it arrived), or what comes back. Its end completes
/// `done` (once a leg moves as a flow; before, the epoch learns the done
/// time) and, for a request form, `local` at its local completion.
#[derive(Clone, Copy, Debug)]
pub(super) struct RmaTransit {
    pub(super) origin: usize,
    pub(super) win: u32,
    pub(super) there: Msg,
    pub(super) back: u64,
    pub(super) done: Option<ReqId>,
    pub(super) local: Option<ReqId>,
    /// Whether this flow is what comes back (else the data there).
    pub(super) returning: bool,
}

/// "No transit" in [`Transits`]' table by flow.
const NO_TRANSIT: u64 = u64::MAX;

/// The transits in flight, by flow and by number.
#[derive(Default)]
pub(super) struct Transits {
    /// The transit of each flow in flight, by flow ([`NO_TRANSIT`]: none):
    /// flow numbers are dense, reused once a flow ends.
    of_flow: Vec<u64>,
    /// The transits by number.
    pub(super) open: FxHashMap<u64, Transit>,
    next: u64,
    /// Flows a step ended.
    pub(super) ended: Vec<FlowId>,
}

impl Transits {
    /// Flow `flow` carries `t`: its number.
    pub(super) fn start(&mut self, flow: FlowId, t: Transit) -> u64 {
        let n = self.next;
        self.next += 1;
        let f = flow as usize;
        if self.of_flow.len() <= f {
            self.of_flow.resize(f + 1, NO_TRANSIT);
        }
        self.of_flow[f] = n;
        self.open.insert(n, t);
        n
    }

    /// The transit flow `flow` carried, which has ended.
    pub(super) fn ended(&mut self, flow: FlowId) -> Option<u64> {
        let n = std::mem::replace(self.of_flow.get_mut(flow as usize)?, NO_TRANSIT);
        (n != NO_TRANSIT).then_some(n)
    }
}
