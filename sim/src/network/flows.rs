//! Messages in flight as flows over their routes, moved as SimGrid's CM02
//! model moves them (`NetworkCm02Model::communicate`, 3.32, with its
//! defaults: factors 1, `weight-S` 0, no cross-traffic):
//!
//! ```text
//! route    = the graph's links from the sender's host to the receiver's
//! latency  = the sum of their latencies: paid first, the flow taking no
//!            bandwidth meanwhile
//! penalty  = latency, s (1 for a route of no latency): a link's share
//!            goes as 1 / penalty, so longer routes get less (TCP's RTT
//!            unfairness)
//! bound    = min(least bandwidth of the route, TCP_GAMMA / (2 latency))
//! then     : the bytes move at the flow's max-min rate ([`MaxMin`]),
//!            recomputed whenever a flow of its component starts or ends
//! ```
//!
//! The simulator asks for the next event (a latency paid or a flow
//! done), steps to it, and learns which flows ended; between events every
//! rate is constant, so a flow's end is known from its rate until another
//! flow it interacts with changes.

use super::graph::{Graph, LinkId};
use super::load::{LinkLoad, Loads};
use super::maxmin::{MaxMin, VarId, NO_LINK};
use crate::units::Ns;
use dary_heap::QuaternaryHeap;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::sync::Arc;

/// A flow's number, reused once it has ended.
pub type FlowId = u32;

/// SimGrid's `network/TCP-gamma`: the largest TCP window, bytes; a flow
/// moves at most a window per round trip.
pub const TCP_GAMMA: f64 = 4_194_304.0;

/// Nanoseconds per second.
const NS: f64 = 1e9;

/// SimGrid's timing precision (`surf/precision`, 1e-9 s), ns: events
/// closer than this to the next one happen with it.
const SAME_TIME: Ns = 1.0;

/// End-queue entries per flow in flight past which the stale ones go.
const STALE_PER_FLOW: usize = 4;

/// A flow in flight, in one cache line: a large solve updates every flow
/// it reaches, each at a cache miss. Its penalty and bound are the
/// solver's ([`MaxMin::create`]).
#[repr(align(64))]
struct Flow {
    /// Bytes left as of `updated`.
    remaining: f64,
    /// Bytes per second from `updated` on (0 while its latency is paid).
    rate: f64,
    updated: Ns,
    /// Its solver variable, created with the flow.
    var: VarId,
    /// Its latency is paid: it shares its links.
    active: bool,
    /// Its end's stamp, new whenever its end moves: older entries of the
    /// end queue are stale. Stamps are unique across flows, so that a
    /// stale entry of an ended flow never passes for one of the flow that
    /// reuses its number.
    version: u64,
    /// The key of its live end-queue entry ([`NO_END`]: none).
    end: u64,
    /// The link that set its rate (the solver's bottleneck).
    bottleneck: LinkId,
}

const _: () = assert!(
    std::mem::size_of::<Option<Flow>>() == 64,
    "a flow is one cache line"
);

impl Flow {
    /// Charges the link that held it back with what it lost from its
    /// last update to `t`, at its rate then, against its bound.
    fn account(&self, load: Option<&mut Loads>, t: Ns, solver: &MaxMin) {
        if let (true, Some(load)) = (self.active, load) {
            let bound = solver.bound(self.var);
            load.slow(self.bottleneck, t - self.updated, self.rate, bound);
        }
    }
}

/// The routes of the pairs of hosts met so far, by pair, with their
/// latency and least bandwidth: most programs send between few pairs
/// again and again (a stencil's neighbours), and a route walked through
/// a fat tree, then its links read one by one, costs more than a lookup.
/// Pairs past [`ROUTE_PAIRS`] are walked each time, so that an all-to-all
/// among a million hosts does not keep every route.
#[derive(Default)]
struct RouteCache {
    /// By (source, destination).
    at: FxHashMap<(u32, u32), Known>,
}

/// A route kept: its latency (ns), its least bandwidth and its links,
/// inline up to a 3-level fat tree's 6, so that a lookup reads one entry.
struct Known {
    latency: Ns,
    least: f64,
    links: SmallVec<[LinkId; 6]>,
}

/// The most pairs whose routes are kept (about 250 MiB at the most).
const ROUTE_PAIRS: usize = 1 << 22;

impl RouteCache {
    /// The route from `src` to `dst` on `graph`, into `out`, and its
    /// latency and least bandwidth.
    fn route(&mut self, graph: &dyn Graph, src: u32, dst: u32, out: &mut Vec<LinkId>) -> (Ns, f64) {
        out.clear();
        if let Some(k) = self.at.get(&(src, dst)) {
            out.extend_from_slice(&k.links);
            return (k.latency, k.least);
        }
        graph.route(src, dst, out);
        let links = graph.links();
        let latency: Ns = out.iter().map(|&l| links[l as usize].latency).sum();
        let least = out
            .iter()
            .map(|&l| links[l as usize].bandwidth)
            .fold(f64::INFINITY, f64::min);
        if self.at.len() < ROUTE_PAIRS {
            let links = SmallVec::from_slice(out);
            self.at.insert(
                (src, dst),
                Known {
                    latency,
                    least,
                    links,
                },
            );
        }
        (latency, least)
    }
}

/// A flow's `end` while it has no live entry (at no rate yet).
const NO_END: u64 = u64::MAX;

/// Simulated times are non-negative, so their bits order like the values.
fn key(t: Ns) -> u64 {
    t.max(0.0).to_bits()
}

/// The flows in flight on one network.
pub struct Flows {
    graph: Arc<dyn Graph>,
    solver: MaxMin,
    flows: Vec<Option<Flow>>,
    free: Vec<FlowId>,
    /// The flow of each solver variable.
    of_var: Vec<FlowId>,
    /// When each flow's latency is paid.
    entering: QuaternaryHeap<Reverse<(u64, FlowId)>>,
    /// Each flow's end at its current rate, with its version.
    ending: QuaternaryHeap<Reverse<(u64, FlowId, u64)>>,
    /// The last stamp given.
    stamp: u64,
    /// The time of the last step.
    now: Ns,
    /// A route being looked up.
    route: Vec<LinkId>,
    /// Routes looked up before.
    routes: RouteCache,
    /// The variables a solve recomputed.
    solved: Vec<VarId>,
    /// What each link carried so far, once asked to count it
    /// ([`count_loads`](Self::count_loads)): a replay without a links
    /// report pays nothing for it.
    load: Option<Loads>,
}

impl Flows {
    /// No flow yet on `graph`.
    pub fn new(graph: Arc<dyn Graph>) -> Flows {
        let solver = MaxMin::new(graph.links());
        Flows {
            load: None,
            graph,
            solver,
            flows: Vec::new(),
            free: Vec::new(),
            of_var: Vec::new(),
            entering: QuaternaryHeap::new(),
            ending: QuaternaryHeap::new(),
            stamp: 0,
            now: 0.0,
            route: Vec::new(),
            routes: RouteCache::default(),
            solved: Vec::new(),
        }
    }

    /// A flow of `bytes` from host `src` to host `dst`, starting at `at`
    /// (the present if earlier); `None` when the route crosses no link
    /// (a host to itself: the caller charges the copy). Flows start in
    /// time order, none before the next event ([`next_event`](Self::next_event)):
    /// the rates the flows in flight had are solved up to `at`, which is
    /// the present from then on.
    pub fn start(&mut self, src: u32, dst: u32, bytes: f64, at: Ns) -> Option<FlowId> {
        let (latency, least) = self.routes.route(&*self.graph, src, dst, &mut self.route);
        if self.route.is_empty() {
            return None;
        }
        if at > self.now {
            self.rates();
            self.now = at;
        }
        let seconds = latency / NS;
        let (penalty, bound) = if seconds > 0.0 {
            (seconds, least.min(TCP_GAMMA / (2.0 * seconds)))
        } else {
            (1.0, least)
        };
        let at = at.max(self.now);
        if let Some(load) = &mut self.load {
            load.carry(&self.route, bytes);
        }
        let var = self.solver.create(&self.route, penalty, bound);
        let v = var as usize;
        if self.of_var.len() <= v {
            self.of_var.resize(v + 1, 0);
        }
        let flow = Flow {
            remaining: bytes,
            rate: 0.0,
            updated: at,
            var,
            active: false,
            version: 0,
            end: NO_END,
            bottleneck: NO_LINK,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.flows[id as usize] = Some(flow);
                id
            }
            None => {
                self.flows.push(Some(flow));
                (self.flows.len() - 1) as FlowId
            }
        };
        self.of_var[v] = id;
        self.entering.push(Reverse((key(at + latency), id)));
        Some(id)
    }

    /// Every link's figures so far (what the flows ended and in flight
    /// carried): [`super::load`].
    /// `None` unless counted from the start.
    pub fn loads(&self) -> Option<Vec<LinkLoad>> {
        let load = self.load.as_ref()?;
        Some(load.figures(self.graph.as_ref(), self.now))
    }

    /// Counts what each link carries from now on (before the first flow,
    /// for a whole run's figures).
    pub fn count_loads(&mut self) {
        if self.load.is_none() {
            self.load = Some(Loads::new(self.graph.links().len()));
        }
    }

    /// Flows started and not ended.
    pub fn in_flight(&self) -> usize {
        self.flows.len() - self.free.len()
    }

    /// When the next flow pays its latency or ends, if any is in flight.
    pub fn next_event(&mut self) -> Option<Ns> {
        self.rates();
        while let Some(&Reverse((_, id, version))) = self.ending.peek() {
            match &self.flows[id as usize] {
                Some(f) if f.version == version && f.active => break,
                _ => {
                    self.ending.pop();
                }
            }
        }
        let enter = self.entering.peek().map(|r| r.0 .0);
        let end = self.ending.peek().map(|r| r.0 .0);
        match (enter, end) {
            (Some(a), Some(b)) => Some(f64::from_bits(a.min(b))),
            (a, b) => a.or(b).map(f64::from_bits),
        }
    }

    /// Steps to the next event: the flows whose latency is paid then
    /// start sharing their links, and those done leave; appends the ended
    /// flows to `ended`. Returns the event's time, `None` with no flow in
    /// flight.
    pub fn step(&mut self, ended: &mut Vec<FlowId>) -> Option<Ns> {
        let t = self.next_event()?;
        // SimGrid takes every event within its timing precision of the
        // first as happening then.
        let horizon = key(t + SAME_TIME);
        self.now = t;
        while let Some(&Reverse((at, id))) = self.entering.peek() {
            if at >= horizon {
                break;
            }
            self.entering.pop();
            let Some(f) = self.flows[id as usize].as_mut() else {
                continue;
            };
            self.solver.enable(f.var);
            if let Some(load) = &mut self.load {
                load.enter(self.solver.route(f.var), t);
            }
            f.active = true;
            f.updated = t;
        }
        while let Some(&Reverse((at, id, version))) = self.ending.peek() {
            if at >= horizon {
                break;
            }
            self.ending.pop();
            let live = matches!(&self.flows[id as usize], Some(f) if f.version == version);
            if !live {
                continue;
            }
            if let Some(f) = self.flows[id as usize].take() {
                f.account(self.load.as_mut(), t, &self.solver);
                if let Some(load) = &mut self.load {
                    load.leave(self.solver.route(f.var), t);
                }
                self.solver.remove(f.var);
            }
            self.free.push(id);
            ended.push(id);
        }
        Some(t)
    }

    /// New rates for the flows the last changes touched, and their ends.
    fn rates(&mut self) {
        let now = self.now;
        let mut solved = std::mem::take(&mut self.solved);
        solved.clear();
        solved.extend_from_slice(self.solver.solve());
        for &var in &solved {
            let id = self.of_var[var as usize];
            let Some(f) = self.flows[id as usize].as_mut() else {
                continue;
            };
            f.account(self.load.as_mut(), now, &self.solver);
            f.remaining = (f.remaining - f.rate * (now - f.updated) / NS).max(0.0);
            f.updated = now;
            f.rate = self.solver.rate(var);
            f.bottleneck = self.solver.bottleneck(var);
            let end = if f.rate > 0.0 {
                key(now + f.remaining / f.rate * NS)
            } else {
                NO_END
            };
            // An end that did not move keeps its entry (most flows of a
            // large solve keep their rate).
            if end == f.end {
                continue;
            }
            f.end = end;
            self.stamp += 1;
            f.version = self.stamp;
            if end != NO_END {
                self.ending.push(Reverse((end, id, f.version)));
            }
        }
        self.solved = solved;
        // A solve that touches most flows at every event leaves as many
        // stale ends each time: past a few per flow in flight, they are
        // dropped at once (what pops next is unchanged), so the queue
        // stays the size of the flows, not of the events.
        if self.ending.len() > STALE_PER_FLOW * self.in_flight() + 1024 {
            let flows = &self.flows;
            self.ending.retain(|&Reverse((_, id, version))| {
                matches!(&flows[id as usize], Some(f) if f.version == version && f.rate > 0.0)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{Link, Sharing};

    /// Hosts 0..n on a star: host i's private link is link i (10 GB/s,
    /// 2.5 us), shared; every route crosses both ends' links.
    struct Star(Vec<Link>);

    impl Graph for Star {
        fn links(&self) -> &[Link] {
            &self.0
        }
        fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
            if src != dst {
                out.extend([src, dst]);
            }
        }
    }

    fn star(n: usize) -> Flows {
        let link = Link {
            bandwidth: 1e10,
            latency: 2500.0,
            sharing: Sharing::Shared,
        };
        Flows::new(Arc::new(Star(vec![link; n])))
    }

    /// Steps until no flow is left: each flow's end.
    fn ends(f: &mut Flows) -> Vec<(FlowId, Ns)> {
        let mut out = Vec::new();
        let mut ended = Vec::new();
        while let Some(t) = f.step(&mut ended) {
            out.extend(ended.drain(..).map(|id| (id, t)));
        }
        out
    }

    #[test]
    fn a_flow_alone_pays_its_latency_then_moves_at_its_least_bandwidth() {
        let mut f = star(2);
        let id = f.start(0, 1, 1e6, 100.0).expect("a route");
        assert_eq!(f.in_flight(), 1);
        // 5 us of latency, then 1 MB at 10 GB/s: 100 us.
        let got = ends(&mut f);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, id);
        assert!((got[0].1 - (100.0 + 5000.0 + 100_000.0)).abs() < 1e-6, "{got:?}");
        assert_eq!(f.in_flight(), 0);
        assert!(
            f.start(1, 1, 8.0, 0.0).is_none(),
            "a host to itself crosses no link"
        );
    }

    #[test]
    fn two_flows_into_one_host_share_its_link_until_the_first_ends() {
        // 0 -> 2 and 1 -> 2 from 0: both pay 5 us, then share link 2 at
        // 5 GB/s each; the 1 MB one ends at 5 + 200 us, the 2 MB one then
        // has 1 MB left at 10 GB/s: 305 us.
        let mut f = star(3);
        let a = f.start(0, 2, 1e6, 0.0).unwrap();
        let b = f.start(1, 2, 2e6, 0.0).unwrap();
        let got = ends(&mut f);
        assert_eq!(got[0].0, a);
        assert!((got[0].1 - 205_000.0).abs() < 1e-6, "{got:?}");
        assert_eq!(got[1].0, b);
        assert!((got[1].1 - 305_000.0).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn a_flow_alone_loads_its_links_for_its_transfer_and_loses_nothing() {
        let mut f = star(3);
        assert!(f.loads().is_none(), "not counted unless asked");
        f.count_loads();
        f.start(0, 1, 1e6, 100.0).unwrap();
        ends(&mut f);
        let l = f.loads().expect("counted");
        // Moving from 5.1 us to 105.1 us on links 0 and 1; link 2 idle.
        for i in [0, 1] {
            assert_eq!(l[i].bytes, 1e6);
            assert!((l[i].busy - 100_000.0).abs() < 1e-6, "{l:?}");
            assert_eq!(l[i].slowed, 0.0);
        }
        assert_eq!((l[2].bytes, l[2].busy, l[2].slowed), (0.0, 0.0, 0.0));
        assert_eq!((l[0].name.as_str(), l[0].bandwidth), ("link-0", 1e10));
    }

    #[test]
    fn two_flows_sharing_a_link_charge_it_with_the_time_they_lost() {
        // As above: a (1 MB) and b (2 MB) into host 2 share link 2 at
        // 5 GB/s from 5 us to 205 us, each at half its rate alone: each
        // loses 100 us there; b then moves alone until 305 us.
        let mut f = star(3);
        f.count_loads();
        f.start(0, 2, 1e6, 0.0).unwrap();
        f.start(1, 2, 2e6, 0.0).unwrap();
        ends(&mut f);
        let l = f.loads().expect("counted");
        let close = |a: f64, b: f64| (a - b).abs() < 1e-3;
        assert_eq!((l[0].bytes, l[1].bytes, l[2].bytes), (1e6, 2e6, 3e6));
        assert!(close(l[2].busy, 300_000.0), "{l:?}");
        assert!(close(l[2].slowed, 200_000.0), "{l:?}");
        // The senders' links were never the bottleneck.
        assert!(
            close(l[0].busy, 200_000.0) && close(l[1].busy, 300_000.0),
            "{l:?}"
        );
        assert_eq!((l[0].slowed, l[1].slowed), (0.0, 0.0));
    }

    #[test]
    fn a_flow_still_paying_its_latency_takes_no_bandwidth() {
        // b starts 50 us after a: a moves alone until b's latency is paid
        // at 55 us (500 KB done), then both at 5 GB/s: a's 500 KB left
        // end at 155 us.
        let mut f = star(3);
        let a = f.start(0, 2, 1e6, 0.0).unwrap();
        let b = f.start(1, 2, 1e6, 50_000.0).unwrap();
        let got = ends(&mut f);
        assert_eq!(got[0].0, a);
        assert!((got[0].1 - 155_000.0).abs() < 1e-6, "{got:?}");
        // b: 500 KB by 155 us, then alone: 205 us.
        assert_eq!(got[1].0, b);
        assert!((got[1].1 - 205_000.0).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn a_flow_reusing_an_ended_flows_number_ends_at_its_own_end() {
        // a (0 -> 2, 2 MB) is slowed by c (1 -> 2, 200 KB, from 10 us)
        // and sped up again when c ends at 55 us: a ends at 225 us, its
        // end at the slow rate (395 us) left stale in the queue.
        let mut f = star(5);
        let a = f.start(0, 2, 2e6, 0.0).unwrap();
        let e = f.start(3, 4, 2.95e6, 0.0).unwrap();
        let c = f.start(1, 2, 2e5, 10_000.0).unwrap();
        let mut ended = Vec::new();
        let mut got = Vec::new();
        while got.len() < 2 {
            let t = f.step(&mut ended).unwrap();
            got.extend(ended.drain(..).map(|id| (id, t)));
        }
        assert_eq!(got[0].0, c);
        assert!((got[0].1 - 55_000.0).abs() < 1e-6, "{got:?}");
        assert_eq!(got[1].0, a);
        assert!((got[1].1 - 225_000.0).abs() < 1e-6, "{got:?}");
        // b takes a's number and d shares b's link 1 from 245 us: both
        // move 10 MB, b first, at 5 GB/s, past the stale 395 us; e, on
        // links of its own from 0, ends at 300 us and keeps the stale
        // entry from the queue's top until then.
        let b = f.start(0, 1, 1e7, 230_000.0).unwrap();
        assert_eq!(b, a, "the number is reused");
        let d = f.start(2, 1, 1e7, 240_000.0).unwrap();
        let got = ends(&mut f);
        let at = |id| got.iter().find(|&&(x, _)| x == id).map(|&(_, t)| t).unwrap();
        assert!((at(e) - 300_000.0).abs() < 1e-3, "{got:?}");
        assert!((at(b) - 2_225_000.0).abs() < 1e-3, "{got:?}");
        assert!((at(d) - 2_235_000.0).abs() < 1e-3, "{got:?}");
    }

    #[test]
    fn a_long_route_is_bounded_by_tcps_window_over_its_round_trip() {
        // 1 ms of latency each side: 2 ms route, bound 4 MiB / 4 ms.
        let link = Link {
            bandwidth: 1e10,
            latency: 1e6,
            sharing: Sharing::Shared,
        };
        let mut f = Flows::new(Arc::new(Star(vec![link; 2])));
        f.start(0, 1, TCP_GAMMA, 0.0).unwrap();
        let got = ends(&mut f);
        assert!((got[0].1 - (2e6 + 4e6)).abs() < 1e-3, "{got:?}");
    }
}
