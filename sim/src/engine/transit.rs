//! Messages whose data moves as flows over shared links (a model with
//! [`Model::flows`](crate::model::Model::flows)): the engine cannot know
//! when such data lands when it starts, since flows that start later slow
//! it down. Each flow is a transit, which knows what its end completes;
//! the serial replay steps the model's flows in time order with the
//! actors ([`Engine::next_flow_event`], [`Engine::step_flows`]), so that
//! rates change only when a flow starts or ends.

use super::*;
use crate::network::flows::FlowId;

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
}

/// The transits in flight, by flow and by number.
#[derive(Default)]
pub(super) struct Transits {
    /// The transit of each flow in flight.
    of_flow: FxHashMap<FlowId, u64>,
    open: FxHashMap<u64, Transit>,
    next: u64,
    /// Flows a step ended.
    ended: Vec<FlowId>,
}

impl Transits {
    /// Flow `flow` carries `t`: its number.
    pub(super) fn start(&mut self, flow: FlowId, t: Transit) -> u64 {
        let n = self.next;
        self.next += 1;
        self.of_flow.insert(flow, n);
        self.open.insert(n, t);
        n
    }
}

impl Engine<'_, '_> {
    /// When the model's next flow pays its latency or ends, if any flow is
    /// in flight.
    pub(super) fn next_flow_event(&mut self) -> Option<Ns> {
        self.model.flows().and_then(|f| f.next_event())
    }

    /// Steps the model's flows to their next event, and lands the
    /// messages whose data arrived then.
    pub(super) fn step_flows(&mut self) {
        let mut ended = std::mem::take(&mut self.transits.ended);
        ended.clear();
        let Some(t) = self.model.flows().and_then(|f| f.step(&mut ended)) else {
            self.transits.ended = ended;
            return;
        };
        for &flow in &ended {
            if let Some(n) = self.transits.of_flow.remove(&flow) {
                self.land(n, t);
            }
        }
        self.transits.ended = ended;
    }

    /// Transit `n`'s data arrived at `t`.
    fn land(&mut self, n: u64, t: Ns) {
        let Some(&transit) = self.transits.open.get(&n) else {
            return;
        };
        match transit {
            Transit::Eager { send, recv, .. } => {
                self.count_message(&send.msg, send.free, send.free, t);
                match recv {
                    Some(r) => {
                        self.transits.open.remove(&n);
                        self.eager_received(&send, t, 0.0, &r);
                    }
                    None => {
                        if let Some(Transit::Eager { landed, .. }) = self.transits.open.get_mut(&n) {
                            *landed = Some(t);
                        }
                    }
                }
            }
            Transit::Rendezvous {
                send,
                recv,
                mode,
                ready,
            } => {
                self.transits.open.remove(&n);
                let x = Transfer { start: ready, end: t };
                let send_open = mode != p2p::Mode::Synchronous;
                self.rendezvous_landed(&send, &recv, mode, ready, x, send_open);
            }
        }
    }

    /// Receive `r` matched eager send `s` whose data moves in transit `n`:
    /// complete now if it landed, else when it does.
    pub(super) fn eager_matched(&mut self, n: u64, s: &PendingSend, r: &PendingRecv) {
        let Some(Transit::Eager { recv, landed, .. }) = self.transits.open.get_mut(&n) else {
            return;
        };
        match *landed {
            Some(t) => {
                self.transits.open.remove(&n);
                self.eager_received(s, t, 0.0, r);
            }
            None => *recv = Some(*r),
        }
    }
}
