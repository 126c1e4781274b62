//! The serial replay's side of messages moving as flows
//! ([`transit`](super::transit)): it steps the model's flows in time order
//! with the actors ([`Engine::next_flow_event`], [`Engine::step_flows`]),
//! so that rates change only when a flow starts, pays its latency or ends,
//! and completes what each flow's end unblocks.

use super::transit::Transit;
use super::*;

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
        // Every ended flow's transit first: landing one may start a flow
        // (a one-sided operation's way back) that takes the id of another
        // that ended in this step.
        let landed: Vec<u64> = ended.iter().filter_map(|&f| self.transits.ended(f)).collect();
        for n in landed {
            self.land(n, t);
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
            Transit::Rma(op) => {
                self.transits.open.remove(&n);
                if op.returning {
                    if let Some(d) = op.done {
                        self.complete(d, t, f64::NEG_INFINITY);
                    }
                    if let Some(r) = op.local {
                        self.complete(r, t, f64::NEG_INFINITY);
                    }
                } else {
                    self.rma_arrived(op, t);
                }
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
