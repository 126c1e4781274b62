//! Messages whose data moves as flows over shared links (a model with
//! [`Model::flows`](pnmpi_sim::model::Model::flows), as `cm02` on a
//! `[network.topology]`): when such data lands is not known when it
//! starts, since flows that start later slow it down. The engine steps
//! the model's flows in virtual-time order with the ranks' events (an
//! [`Event::Flows`](crate::sched::Event::Flows) at the flows' next event, before every other event at
//! its time), as the replay of the trace steps them, and each flow's end
//! completes what it carried: an eager message's receive once matched, a
//! rendezvous's send and receive. The times are the kernel's rules
//! ([`rule::received`], [`rule::send_done`]) at the flow's end, as in the
//! replay.
//!
//! Such a model has no lookahead (a flow started anywhere changes the
//! rates of flows everywhere at once), so one engine runs every rank
//! (`start.rs`).

use super::transits::Transit;
use super::*;
use pnmpi_sim::kernel::p2p::Carried;
use pnmpi_sim::kernel::rma;
use pnmpi_sim::model::Msg;
use pnmpi_sim::network::flows::FlowId;

impl P2p {
    /// Says, once, that the running rank posts a message at `clock`
    /// after the network has moved on to the engine's present: it waited
    /// in a communicator constructor, which needs every member while its
    /// clock stays where it entered, and the replay of the trace does not
    /// wait there. Flows cannot start in the past, so its data moves from
    /// the present, and the run may end later than the replay of its
    /// trace.
    pub(super) fn behind_the_network(&mut self, s: &Sched, clock: Ns) {
        if self.flowing.late || clock >= s.now() {
            return;
        }
        self.flowing.late = true;
        pnmpi_sdk::say::unranked(
            "vranks",
            pnmpi_sdk::say::Level::Warning,
            format_args!(
                "rank {} posts a message at {:.3} us, after the shared links' flows moved on to {:.3} us (it waited in a communicator constructor for the other members, which the replay of its trace does not): its data moves from then, so this run may end later than the replay of its trace",
                s.current(),
                clock / 1e3,
                s.now() / 1e3
            ),
        );
    }

    /// An eager message's data started moving as `flow`: its number, for
    /// the receive that matches it.
    pub(super) fn eager_flow(&mut self, s: &mut Sched, t: &mut Timing, flow: FlowId) -> u64 {
        self.start_flow(s, t, flow, Transit::Eager(None))
    }

    /// Receive `req`, posted at `posted`, matched the eager message `msg`
    /// whose data moves as flow number `n`: it completes when the data
    /// has landed.
    pub(super) fn eager_flow_matched(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        n: u64,
        msg: Msg,
        req: usize,
        posted: Ns,
    ) {
        match self.flowing.landed.remove(&n) {
            Some(at) => {
                let done = rule::received(t.model(), &msg, at, posted, &mut unstretched);
                self.complete(s, req, done);
            }
            None => {
                if let Some(Transit::Eager(recv)) = self.flowing.open.get_mut(&n) {
                    *recv = Some((req, msg, posted));
                }
            }
        }
    }

    /// A rendezvous of `msg` in `mode`, its sender free at `free` and its
    /// send request `send`, is matched with receive `req` posted at
    /// `posted`, under a model whose messages share links: its data moves
    /// from when both are ready, as a flow if it crosses a link.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rendezvous_flow(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        msg: Msg,
        mode: Mode,
        free: Ns,
        send: Option<usize>,
        req: usize,
        posted: Ns,
    ) {
        // The replay matches a rendezvous when the later side posts, at
        // `ready`; a wildcard receive here matches at the envelope's
        // arrival, which may come later.
        let ready = t.model().rendezvous_ready(&msg, free, posted);
        match rule::carry(t.model(), &msg, ready.max(s.now())) {
            Carried::Known(x) => {
                if let Some(q) = send {
                    self.complete(s, q, rule::send_done(mode, false, ready, x.end));
                }
                let done = rule::received(t.model(), &msg, x.end, posted, &mut unstretched);
                self.complete(s, req, done);
            }
            Carried::Flow(flow, _) => {
                let send = match (send, mode) {
                    (Some(q), Mode::Synchronous) => {
                        self.complete(s, q, rule::send_done(mode, false, ready, ready));
                        None
                    }
                    (send, _) => send,
                };
                let transit = Transit::Rendezvous {
                    send,
                    recv: req,
                    msg,
                    mode,
                    ready,
                    recv_posted: posted,
                };
                self.start_flow(s, t, flow, transit);
            }
        }
    }

    /// The [`Event::Flows`](crate::sched::Event::Flows) at the current time: steps the model's flows
    /// through their events up to now, completing what the flows that
    /// ended carried, then queues the next.
    pub fn step_flows(&mut self, s: &mut Sched, t: &mut Timing) {
        let now = s.now();
        // The queued event is this one (queued at its time, or at the
        // present if its time had passed).
        if self.flowing.queued.is_some_and(|q| q <= now) {
            self.flowing.queued = None;
        }
        let mut ended = std::mem::take(&mut self.flowing.ended);
        while let Some(flows) = t.model().flows() {
            if flows.next_event().is_none_or(|f| f > now) {
                break;
            }
            ended.clear();
            let Some(at) = flows.step(&mut ended) else {
                break;
            };
            // Every ended flow's transit first: landing one may start a
            // flow that takes the id of another that ended in this step.
            let landed: Vec<u64> = ended
                .iter()
                .filter_map(|f| self.flowing.of_flow.remove(f))
                .collect();
            for n in landed {
                self.land(s, t, n, at);
            }
        }
        self.flowing.ended = ended;
        self.queue_flows(s, t);
    }

    /// Flow number `n`'s data landed at `at`.
    fn land(&mut self, s: &mut Sched, t: &mut Timing, n: u64, at: Ns) {
        match self.flowing.open.remove(&n) {
            Some(Transit::Eager(Some((req, msg, posted)))) => {
                let done = rule::received(t.model(), &msg, at, posted, &mut unstretched);
                self.complete(s, req, done);
            }
            Some(Transit::Eager(None)) => {
                self.flowing.landed.insert(n, at);
            }
            Some(Transit::Rendezvous {
                send,
                recv,
                msg,
                mode,
                ready,
                recv_posted,
            }) => {
                if let Some(q) = send {
                    self.complete(s, q, rule::send_done(mode, false, ready, at));
                }
                let done = rule::received(t.model(), &msg, at, recv_posted, &mut unstretched);
                self.complete(s, recv, done);
            }
            Some(Transit::Rma {
                there,
                back,
                done,
                local,
                returning,
            }) => {
                if returning {
                    self.rma_done(s, done, local, at);
                } else {
                    if back == 0 {
                        if let Some(q) = local {
                            self.complete(s, q, at);
                        }
                    }
                    self.rma_back(s, t, there, back, (done, local), at);
                }
            }
            None => {}
        }
    }

    /// The running rank issues a one-sided operation `there` bringing
    /// `back` bytes back, under a model whose messages share links: the
    /// kernel's legs ([`rma::started`], [`rma::returned`]) as flows or
    /// closed forms. Its clock moves to when its CPU is free. Returns the
    /// request the operation's end completes and, with `local`, that of
    /// its local completion.
    pub(crate) fn rma_flows(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        there: Msg,
        back: u64,
        local: bool,
    ) -> (usize, Option<usize>) {
        let done = self.request(s, Work::Send, false);
        let local = local.then(|| self.request(s, Work::Send, false));
        let origin = s.current();
        let at = s.rank(origin).clock;
        let (free, first) = rma::started(t.model(), &there, at, &mut unstretched);
        s.rank_mut(origin).clock = free;
        match first {
            Carried::Known(x) => {
                if let (Some(q), 0) = (local, back) {
                    self.complete(s, q, x.end);
                }
                self.rma_back(s, t, there, back, (done, local), x.end);
            }
            Carried::Flow(flow, _) => {
                self.start_flow(s, t, flow, Transit::rma(there, back, (done, local), false));
            }
        }
        (done, local)
    }

    /// Operation `there`'s data arrived at `arrived`: its `back` bytes
    /// come back, by flow or closed form, to complete `done` (and a
    /// fetching operation's `local`).
    fn rma_back(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        there: Msg,
        back: u64,
        reqs: (usize, Option<usize>),
        arrived: Ns,
    ) {
        let (done, local) = reqs;
        let local = local.filter(|_| back > 0);
        match rma::returned(t.model(), &there, back, arrived) {
            Carried::Known(x) => self.rma_done(s, done, local, x.end),
            Carried::Flow(flow, _) => {
                self.start_flow(s, t, flow, Transit::rma(there, back, (done, local), true));
            }
        }
    }

    /// A one-sided operation is done at `at`.
    fn rma_done(&mut self, s: &mut Sched, done: usize, local: Option<usize>, at: Ns) {
        self.complete(s, done, at);
        if let Some(q) = local {
            self.complete(s, q, at);
        }
    }

    /// `flow` carries `transit`: its number; the flows' next event is
    /// queued.
    fn start_flow(&mut self, s: &mut Sched, t: &mut Timing, flow: FlowId, transit: Transit) -> u64 {
        let n = self.flowing.start(flow, transit);
        self.queue_flows(s, t);
        n
    }

    /// Queues an [`Event::Flows`](crate::sched::Event::Flows) at the flows' next event, unless one is
    /// queued no later.
    fn queue_flows(&mut self, s: &mut Sched, t: &mut Timing) {
        let Some(next) = t.model().flows().and_then(|f| f.next_event()) else {
            return;
        };
        let next = next.max(s.now());
        if self.flowing.queued.is_none_or(|q| next < q) {
            s.push_flows(next);
            self.flowing.queued = Some(next);
        }
    }
}
