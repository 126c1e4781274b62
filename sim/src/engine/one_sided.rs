//! One-sided calls in the engine: each operation timed by the kernel's
//! rule ([`kernel::rma`]) when issued, and its completion awaited by the
//! call that closes its epoch.
//!
//! - A put, get or accumulate frees the origin after its overhead; its
//!   done time joins the origin's epoch on the window (per target).
//! - `MPI_Win_fence`: the member waits for its own operations, then
//!   meets the window's group at a barrier (on the window's own
//!   communicator id, [`fence_comm`]), timed as any barrier.
//! - `MPI_Win_unlock`, `_flush` (`_local`), and their `_all` forms: wait
//!   for the operations to the target (or to all).
//! - `MPI_Win_post` sends an empty message to each origin of its group;
//!   `MPI_Win_start` receives one from each target of its group;
//!   `MPI_Win_complete` waits for its operations, then sends an empty
//!   message to each target; `MPI_Win_wait` receives one from each origin
//!   of the post. These go through the model as messages do
//!   ([`pscw_comm`]).
//!
//! - A lock that holders before it hand over (the trace's order,
//!   [`crate::input::locks`]) receives each's grant: an empty message
//!   from the target ([`rma::handoff`]) that the releasing holder's
//!   `MPI_Win_unlock` sends, once its operations are done, without CPU
//!   time of its own.
//!
//! Under a model whose links messages share (`cm02`), an operation's
//! data and what comes back move as flows, as messages do: its done time
//! is known when they end, and a closing call waits for them (it blocks,
//! then does the rest: a fence's barrier, a complete's notifications, an
//! unlock's grants).
//!
//! What is not timed: a lock no holder hands over costs nothing (it is
//! taken with its operations), and a target's reduction costs nothing
//! (docs/sim.md, "One-sided communication").

use super::epochs::{Epoch, Rest};
use super::transit::{RmaTransit, Transit};
use super::*;
use crate::input::{fence_comm, pscw_comm, RmaAct};
use crate::kernel::p2p::Carried;
use crate::kernel::rma;

/// Tag of `MPI_Win_post`'s messages, on the window's [`pscw_comm`].
const POST_TAG: i64 = -1001;
/// Tag of `MPI_Win_complete`'s messages.
const DONE_TAG: i64 = -1002;
/// Tag of a lock's grants, from its target.
const GRANT_TAG: i64 = -1003;

impl Engine<'_, '_> {
    /// Actor `a`'s epoch on window `win`.
    fn epoch(&mut self, a: usize, win: u32) -> &mut Epoch {
        self.actors[a]
            .rma
            .get_or_insert_with(Default::default)
            .window(win)
    }

    /// Moves actor `a`'s clock to `t` if later: its call waits for the
    /// network to complete what it closes.
    fn until(&mut self, a: usize, t: Ns) {
        let st = &mut self.actors[a];
        st.clock = st.clock.max(t);
    }

    /// One-sided call `act` of actor `a` on window `win`.
    pub(super) fn one_sided(&mut self, a: usize, win: u32, act: &RmaAct, src: &dyn OpSource) {
        let rank = self.stats.actors[a].rank;
        match act {
            &RmaAct::Data {
                target,
                bytes,
                rbytes,
                op,
                req,
            } => {
                let (there, back) = rma::sizes(op, bytes, rbytes);
                let m = self.msg(rank, target, there);
                let at = self.actors[a].clock;
                let noise = &mut self.noise;
                let (free, carried) = rma::started(&mut *self.model, &m, at, &mut |start, work| {
                    stretch(noise, a, start, work)
                });
                self.actors[a].clock = free;
                if let Some(r) = req {
                    self.open_req(r, None);
                }
                let mut op = RmaTransit {
                    origin: a,
                    win,
                    there: m,
                    back,
                    done: None,
                    local: req,
                    returning: false,
                };
                match carried {
                    Carried::Known(x) => self.rma_arrived(op, x.end),
                    Carried::Flow(flow, _) => {
                        op.done = Some(self.flowing(a, win, target));
                        self.transits.start(flow, Transit::Rma(op));
                    }
                }
            }
            RmaAct::Flush(target) => {
                self.settle_epoch(a, win, *target);
            }
            RmaAct::Lock(waits) => {
                self.notified(a, waits.iter().map(|h| h.target), win, GRANT_TAG);
            }
            RmaAct::Unlock { target, grants } => {
                self.settle_epoch(a, win, *target);
                self.then(a, win, Rest::Grants(grants.clone()), src);
            }
            RmaAct::Fence => {
                self.settle_epoch(a, win, None);
                self.then(a, win, Rest::Barrier, src);
            }
            RmaAct::Post(origins) => {
                self.epoch(a, win).posted = origins.clone();
                for &o in origins.iter() {
                    self.notify(a, o, win, POST_TAG);
                }
            }
            RmaAct::Start(targets) => {
                self.epoch(a, win).started = targets.clone();
                self.notified(a, targets.iter().copied(), win, POST_TAG);
            }
            RmaAct::Complete => {
                let targets = std::mem::take(&mut self.epoch(a, win).started);
                for &t in targets.iter() {
                    self.settle_epoch(a, win, Some(t));
                }
                self.then(a, win, Rest::Notify(targets), src);
            }
            RmaAct::Wait => {
                let origins = std::mem::take(&mut self.epoch(a, win).posted);
                self.notified(a, origins.iter().copied(), win, DONE_TAG);
            }
        }
    }

    /// Operation `op`'s data arrived at its target at `arrived`: what
    /// comes back moves (an empty acknowledgement, or the fetched data),
    /// and its end is the operation's done time, known now (a closed
    /// form: the epoch learns it) or when its flow ends. A put's or an
    /// accumulate's request completes now, a fetching operation's when
    /// its data is back.
    pub(super) fn rma_arrived(&mut self, op: RmaTransit, arrived: Ns) {
        let target = op.there.dst;
        let back = rma::returned(&mut *self.model, &op.there, op.back, arrived);
        let mut local = op.local;
        if op.back == 0 {
            if let Some(r) = local.take() {
                self.complete(r, arrived, f64::NEG_INFINITY);
            }
        }
        match back {
            Carried::Known(x) => {
                if let Some(r) = local {
                    self.complete(r, x.end, f64::NEG_INFINITY);
                }
                match op.done {
                    Some(d) => self.complete(d, x.end, f64::NEG_INFINITY),
                    None => self.epoch(op.origin, op.win).pending.add(target, x.end),
                }
            }
            Carried::Flow(flow, _) => {
                let done = op.done.unwrap_or_else(|| self.flowing(op.origin, op.win, target));
                let leg = RmaTransit {
                    done: Some(done),
                    local,
                    returning: true,
                    ..op
                };
                self.transits.start(flow, Transit::Rma(leg));
            }
        }
    }

    /// A request of actor `a` that an operation to `target` on window
    /// `win` moving as a flow completes when it is done: its epoch waits
    /// for it.
    fn flowing(&mut self, a: usize, win: u32, target: u32) -> ReqId {
        let r = self.temp_req(a);
        self.open_req(r, None);
        self.epoch(a, win).flowing.push((target, r));
        r
    }

    /// Actor `a`'s call waits for its operations on window `win` to
    /// `target` (`None`: to every target): until the latest known done
    /// time, and for those moving as flows until they end (the call
    /// blocks).
    fn settle_epoch(&mut self, a: usize, win: u32, target: Option<u32>) {
        let e = self.epoch(a, win);
        let t = e.pending.settle(target);
        let moving: Vec<ReqId> = if e.flowing.is_empty() {
            Vec::new()
        } else {
            let (now, later) = std::mem::take(&mut e.flowing)
                .into_iter()
                .partition(|&(t, _)| target.is_none_or(|x| x == t));
            e.flowing = later;
            now.into_iter().map(|(_, r)| r).collect()
        };
        self.until(a, t);
        for r in moving {
            self.wait_for(a, r);
        }
    }

    /// What actor `a`'s closing call on window `win` does once its
    /// operations are done: now, or once the flows it waits for end
    /// (the call resumes then, [`Engine::advance`]).
    fn then(&mut self, a: usize, win: u32, rest: Rest, src: &dyn OpSource) {
        if self.actors[a].blocked > 0 {
            self.actors[a].then = Some(Box::new((win, rest)));
            return;
        }
        self.rest(a, win, rest, src);
    }

    /// The rest of a closing call on window `win`: a fence's barrier,
    /// a complete's notifications, an unlock's grants.
    pub(super) fn rest(&mut self, a: usize, win: u32, rest: Rest, src: &dyn OpSource) {
        match rest {
            Rest::Barrier => {
                self.collective(a, src, (Coll::Barrier, fence_comm(win), 0, None), None, None);
            }
            Rest::Notify(targets) => {
                for &t in targets.iter() {
                    self.notify(a, t, win, DONE_TAG);
                }
            }
            Rest::Grants(grants) => {
                for h in grants.iter() {
                    self.grant(a, h.peer, h.target, win);
                }
            }
        }
    }

    /// Actor `a` sends the empty notification `tag` of window `win` to
    /// world rank `to`, and waits for its send.
    fn notify(&mut self, a: usize, to: u32, win: u32, tag: i64) {
        let rank = self.stats.actors[a].rank;
        let r = self.temp_req(a);
        self.post_send(
            a,
            r,
            self.msg(rank, to, 0),
            tag,
            pscw_comm(win),
            p2p::Mode::Standard,
        );
        self.wait_for(a, r);
    }

    /// Actor `a` receives the notification `tag` of window `win` from
    /// each world rank of `from`: every receive posted when the call
    /// starts (as vtime posts them), then all waited for.
    fn notified(&mut self, a: usize, from: impl Iterator<Item = u32>, win: u32, tag: i64) {
        let clock = self.actors[a].clock;
        let reqs: Vec<ReqId> = from
            .map(|f| {
                let r = self.temp_req(a);
                self.post_recv(a, r, f, tag, pscw_comm(win), clock);
                r
            })
            .collect();
        for r in reqs {
            self.wait_for(a, r);
        }
    }

    /// Actor `a`, releasing `target`'s lock of window `win` now, hands it
    /// to world rank `to`: the target's grant, an empty message of the
    /// target's, arrives at `to` by the kernel's rule. Nobody's CPU sends
    /// it.
    fn grant(&mut self, a: usize, to: u32, target: u32, win: u32) {
        let at = self.actors[a].clock;
        let msg = self.msg(target, to, 0);
        let arrival = rma::handoff(&mut *self.model, &msg, at);
        let s = PendingSend {
            req: self.temp_req(a),
            msg,
            post: at,
            free: at,
            data: Data::Arrived(arrival, 0.0),
        };
        self.route((target, to, GRANT_TAG, pscw_comm(win)), s, false);
    }
}
