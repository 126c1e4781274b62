//! Parallel replay: the ranks are spread over the processes of an MPI job
//! in blocks, each process replays its own, and what one process's ranks
//! do to another's travels as records exchanged between time windows.
//!
//! The protocol is conservative, with windows bounded by the model's
//! lookahead (a lower bound of every message's and collective's time,
//! [`crate::model::Model::lookahead`]): a window runs every local event
//! earlier than `T + L`, where `T` is the earliest pending event of any
//! process; anything one of them causes elsewhere happens at `T + L` or
//! later, so no process ever receives a record from its past. Between
//! windows the processes exchange records until none is left (a matched
//! rendezvous answers its sender; a collective's last arrival answers its
//! members), then agree on the next `T`.
//!
//! The results are the serial replay's, bit for bit, for models whose
//! answers do not depend on the order of calls across ranks (their state,
//! if any, is per sending rank): matching is by posting order per
//! (source, destination, tag, communicator) on both sides, every time is
//! computed from the two posts alone, per-rank figures accumulate in each
//! rank's own order, and the engine's totals are exact sums.

use super::stats::{ActorStats, Stats};
use crate::kernel::window::{Agreement, Ballot, Offer};
use crate::units::Ns;
use pnmpi_trace::routine::Coll;

/// How the processes reach each other (MPI, or anything with the same
/// collective semantics).
pub trait Exchange {
    /// This process's index.
    fn me(&self) -> u32;
    /// The number of processes.
    fn procs(&self) -> u32;
    /// Sends `out[p]` to each process `p`; returns what every process
    /// sent here, concatenated in process order.
    fn alltoallv(&mut self, out: &[Vec<u8>]) -> Vec<u8>;
    /// The element-wise minimum of `v` over the processes (signed
    /// integers of 0 and more: [`crate::kernel::window`]'s words).
    fn min_words(&mut self, v: Ballot) -> Ballot;
    /// The agreement between two windows: every process's `offer`
    /// reduced by one [`Exchange::min_words`].
    fn agree(&mut self, offer: Offer) -> Agreement {
        Agreement::from_words(self.min_words(offer.words()))
    }
    /// Every process's `bytes`, in process order, at process 0 (`None`
    /// elsewhere).
    fn gather(&mut self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
}

/// The process of world rank `rank` among `procs` for a world of `world`:
/// blocks of consecutive ranks.
pub fn owner(rank: u32, world: u32, procs: u32) -> u32 {
    ((u64::from(rank) * u64::from(procs)) / u64::from(world.max(1))) as u32
}

/// What crosses between processes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Record {
    /// A send posted to a rank of the receiving process.
    Send {
        /// World source, destination, tag, communicator.
        key: (u32, u32, i64, i64),
        /// The sender's request.
        req: u64,
        /// Payload bytes.
        bytes: u64,
        /// When it was posted, and when the sender's overhead ended.
        post: Ns,
        /// See `post`.
        free: Ns,
        /// An eager message's arrival and its wait for resources.
        arrival: Option<(Ns, Ns)>,
        /// A synchronous send (`MPI_Ssend`): complete once matched.
        synchronous: bool,
    },
    /// A request of the receiving process completes.
    Done {
        /// The request.
        req: u64,
        /// When.
        t: Ns,
        /// Its partner's post.
        partner: Ns,
    },
    /// A member entered an analytic collective led by the receiving process.
    Arrive {
        /// The communicator and the call's sequence number on it.
        comm: i64,
        /// See `comm`.
        seq: u64,
        /// The member's clock.
        clock: Ns,
        /// Its request.
        req: u64,
        /// The collective.
        coll: Coll,
        /// Its root's index in the communicator.
        root: u32,
        /// The bytes this member brings.
        bytes: u64,
    },
}

fn put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

impl Record {
    /// Appends the record's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            Record::Send {
                key,
                req,
                bytes,
                post,
                free,
                arrival,
                synchronous,
            } => {
                out.push(match (arrival.is_some(), synchronous) {
                    (true, _) => 1,
                    (false, true) => 4,
                    (false, false) => 0,
                });
                put(out, u64::from(key.0) | (u64::from(key.1) << 32));
                put(out, key.2 as u64);
                put(out, key.3 as u64);
                put(out, req);
                put(out, bytes);
                put(out, post.to_bits());
                put(out, free.to_bits());
                if let Some((a, w)) = arrival {
                    put(out, a.to_bits());
                    put(out, w.to_bits());
                }
            }
            Record::Done { req, t, partner } => {
                out.push(2);
                put(out, req);
                put(out, t.to_bits());
                put(out, partner.to_bits());
            }
            Record::Arrive {
                comm,
                seq,
                clock,
                req,
                coll,
                root,
                bytes,
            } => {
                out.push(3);
                put(out, comm as u64);
                put(out, seq);
                put(out, clock.to_bits());
                put(out, req);
                let c = Coll::ALL.iter().position(|&x| x == coll).unwrap_or(0) as u64;
                put(out, c | (u64::from(root) << 32));
                put(out, bytes);
            }
        }
    }

    /// Decodes the records of `data`, in order; `None` if they are cut
    /// short or of an unknown kind (a bug, never user input).
    pub fn decode_all(data: &[u8]) -> Option<Vec<Record>> {
        let mut out = Vec::new();
        let mut at = 0;
        let word = |at: &mut usize| -> Option<u64> {
            let w = data.get(*at..*at + 8)?;
            *at += 8;
            Some(u64::from_le_bytes(w.try_into().ok()?))
        };
        while at < data.len() {
            let kind = data[at];
            at += 1;
            out.push(match kind {
                0 | 1 | 4 => {
                    let ends = word(&mut at)?;
                    let key = (
                        ends as u32,
                        (ends >> 32) as u32,
                        word(&mut at)? as i64,
                        word(&mut at)? as i64,
                    );
                    let req = word(&mut at)?;
                    let bytes = word(&mut at)?;
                    let post = f64::from_bits(word(&mut at)?);
                    let free = f64::from_bits(word(&mut at)?);
                    let arrival = if kind == 1 {
                        Some((f64::from_bits(word(&mut at)?), f64::from_bits(word(&mut at)?)))
                    } else {
                        None
                    };
                    Record::Send {
                        key,
                        req,
                        bytes,
                        post,
                        free,
                        arrival,
                        synchronous: kind == 4,
                    }
                }
                2 => Record::Done {
                    req: word(&mut at)?,
                    t: f64::from_bits(word(&mut at)?),
                    partner: f64::from_bits(word(&mut at)?),
                },
                3 => {
                    let comm = word(&mut at)? as i64;
                    let seq = word(&mut at)?;
                    let clock = f64::from_bits(word(&mut at)?);
                    let req = word(&mut at)?;
                    let cr = word(&mut at)?;
                    Record::Arrive {
                        comm,
                        seq,
                        clock,
                        req,
                        coll: *Coll::ALL.get((cr & 0xffff_ffff) as usize)?,
                        root: (cr >> 32) as u32,
                        bytes: word(&mut at)?,
                    }
                }
                _ => return None,
            });
        }
        Some(out)
    }
}

/// This process's part of a parallel replay.
pub struct Part<'x> {
    /// The processes.
    pub x: &'x mut dyn Exchange,
    /// Per process, the records owed to it.
    pub outbox: Vec<Vec<u8>>,
    /// Per process, the source's index of its first actor, and after
    /// them the number of actors: a request id names its actor by that
    /// index, and a completion goes to the process that holds it.
    pub actor_starts: Vec<usize>,
    /// Events earlier than this run in the current window.
    pub window_end: Ns,
    /// The lookahead, ns.
    pub lookahead: Ns,
    /// Size of `MPI_COMM_WORLD`.
    pub world: u32,
    /// Whether communicator ids other than world's and self's are this
    /// process's own (a tracer folder numbers communicators as it meets
    /// them): such a communicator cannot cross processes.
    pub local_comm_ids: bool,
    /// A communicator of this process's own numbering that had to cross
    /// to another process.
    pub unshared: Option<i64>,
    /// What the protocol cost this process.
    pub cost: ProtocolCost,
}

/// What a parallel replay's protocol cost one process: the figures that
/// predict its speed-up on more nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ProtocolCost {
    /// Time windows.
    pub windows: u64,
    /// Exchanges (one or more per window).
    pub exchanges: u64,
    /// Records sent to other processes.
    pub records: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Wall time in the exchanges and agreements, s: their own cost,
    /// and the wait for the slowest process of each window (imbalance).
    pub exchange_s: f64,
    /// Wall time from the start to the first window (the engine's state
    /// made, the trace reader narrowed to the process's ranks), s.
    pub setup_s: f64,
    /// Wall time running the process's events in windows, s.
    pub replay_s: f64,
    /// The least and the largest `replay_s` of any process (at process
    /// 0): their gap is the imbalance of the blocks, which the others
    /// wait out in the exchanges.
    pub replay_min_s: f64,
    /// See `replay_min_s`.
    pub replay_max_s: f64,
    /// Wall time gathering and adding up every process's figures, s.
    pub finish_s: f64,
}

impl Part<'_> {
    /// The process of world rank `rank`.
    pub fn owner(&self, rank: u32) -> u32 {
        owner(rank, self.world, self.x.procs())
    }

    /// Whether world rank `rank` is replayed here.
    pub fn local(&self, rank: u32) -> bool {
        self.owner(rank) == self.x.me()
    }

    /// Whether `comm` means the same communicator on every process.
    pub fn shared_comm(&self, comm: i64) -> bool {
        !self.local_comm_ids
            || comm == pnmpi_trace::fields::COMM_WORLD
            || comm == pnmpi_trace::fields::COMM_SELF
    }

    /// Owes `r` to the process of world rank `rank`.
    pub fn send(&mut self, rank: u32, r: Record) {
        let p = self.owner(rank) as usize;
        self.send_to(p, r);
    }

    /// Owes `r` to the process that replays the source's actor `actor`;
    /// nothing if no other process does (an id beyond the source's
    /// actors, which no process would take).
    pub fn send_to_actor(&mut self, actor: usize, r: Record) {
        let p = self
            .actor_starts
            .partition_point(|&s| s <= actor)
            .saturating_sub(1);
        if p < self.outbox.len() && p != self.x.me() as usize {
            self.send_to(p, r);
        }
    }

    fn send_to(&mut self, p: usize, r: Record) {
        self.cost.records += 1;
        r.encode(&mut self.outbox[p]);
    }
}

/// One process's figures at the end of a parallel replay, but for its
/// actors' own, which travel after them in actor order (see
/// [`Partial::encode`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Partial {
    /// Per routine: calls, time and wait in picoseconds.
    pub routines: Vec<(u64, i128, i128)>,
    /// Message-size histogram counts.
    pub sizes: Vec<u64>,
    /// Bandwidth histogram counts.
    pub bandwidths: Vec<u64>,
    /// Messages.
    pub messages: u64,
    /// Wait for resources, ps.
    pub resource_wait_ps: i128,
    /// Ops replayed.
    pub events: u64,
    /// Its peak of unmatched messages.
    pub peak_in_flight: u64,
    /// Its deadlock report (empty: none).
    pub stuck: String,
    /// Its wall time running events ([`ProtocolCost::replay_s`]).
    pub replay_s: f64,
}

/// Little-endian words, for [`Partial`]'s encoding.
struct Words<'a>(&'a [u8]);

impl Words<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (w, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*w))
    }
    fn i128(&mut self) -> Option<i128> {
        let lo = self.u64()?;
        let hi = self.u64()?;
        Some(((u128::from(hi) << 64) | u128::from(lo)) as i128)
    }
    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }
    fn list(&mut self) -> Option<Vec<u64>> {
        let n = self.u64()? as usize;
        (0..n).map(|_| self.u64()).collect()
    }
}

fn put_i128(out: &mut Vec<u8>, v: i128) {
    put(out, v as u64);
    put(out, ((v as u128) >> 64) as u64);
}

fn put_list(out: &mut Vec<u8>, v: &[u64]) {
    put(out, v.len() as u64);
    for &x in v {
        put(out, x);
    }
}

impl Partial {
    /// Its bytes (floats by their bits: exact), then the figures of the
    /// actors `mine` (indices into `actors`, in increasing order): only
    /// what the process that decodes them does not know already (rank,
    /// thread and node it has; the index follows from the order), 40
    /// bytes an actor.
    pub fn encode(&self, actors: &[ActorStats], mine: &[usize]) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + 40 * mine.len());
        put(&mut out, self.routines.len() as u64);
        for &(n, t, w) in &self.routines {
            put(&mut out, n);
            put_i128(&mut out, t);
            put_i128(&mut out, w);
        }
        put_list(&mut out, &self.sizes);
        put_list(&mut out, &self.bandwidths);
        put(&mut out, self.messages);
        put_i128(&mut out, self.resource_wait_ps);
        put(&mut out, self.events);
        put(&mut out, self.peak_in_flight);
        put_list(&mut out, &self.stuck.bytes().map(u64::from).collect::<Vec<_>>());
        put(&mut out, self.replay_s.to_bits());
        put(&mut out, mine.len() as u64);
        for &i in mine {
            let a = &actors[i];
            for v in [a.compute, a.comm, a.wait, a.end] {
                put(&mut out, v.to_bits());
            }
            put(&mut out, a.calls);
        }
        out
    }

    /// Decodes every process's [`Partial::encode`] bytes (`all`, in
    /// process order, as gathered at process 0). The figures of every
    /// actor whose world rank `owner` gives to another process than 0 go
    /// into `actors` (which lists every actor, with process 0's own
    /// figures in place), read in actor order from their owner's bytes.
    /// `None` if any part is damaged or holds more or fewer actors than
    /// its process owns.
    pub fn decode_all(
        all: &[Vec<u8>],
        actors: &mut [ActorStats],
        owner: impl Fn(u32) -> u32,
    ) -> Option<Vec<Partial>> {
        let mut parts = Vec::with_capacity(all.len());
        let mut figures = Vec::with_capacity(all.len());
        for bytes in all {
            let mut w = Words(bytes);
            parts.push(Partial::decode_head(&mut w)?);
            let n = w.u64()?;
            figures.push((w, n));
        }
        for a in actors.iter_mut() {
            let p = owner(a.rank) as usize;
            if p == 0 {
                continue;
            }
            let (w, left) = figures.get_mut(p)?;
            *left = left.checked_sub(1)?;
            a.compute = w.f64()?;
            a.comm = w.f64()?;
            a.wait = w.f64()?;
            a.end = w.f64()?;
            a.calls = w.u64()?;
        }
        let all_read = figures
            .iter()
            .enumerate()
            .all(|(p, (w, left))| w.0.is_empty() && (p == 0 || *left == 0));
        all_read.then_some(parts)
    }

    /// The part before the actors' figures.
    fn decode_head(w: &mut Words) -> Option<Partial> {
        let n = w.u64()? as usize;
        let mut routines = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            routines.push((w.u64()?, w.i128()?, w.i128()?));
        }
        let sizes = w.list()?;
        let bandwidths = w.list()?;
        let messages = w.u64()?;
        let resource_wait_ps = w.i128()?;
        let events = w.u64()?;
        let peak_in_flight = w.u64()?;
        let stuck: Vec<u8> = w.list()?.into_iter().map(|b| b as u8).collect();
        let replay_s = w.f64()?;
        Some(Partial {
            routines,
            sizes,
            bandwidths,
            messages,
            resource_wait_ps,
            events,
            peak_in_flight,
            stuck: String::from_utf8(stuck).ok()?,
            replay_s,
        })
    }

    /// Adds every process's figures into `stats` (its actors' figures are
    /// in place already: [`Partial::decode_all`]); returns the exact
    /// routine sums and resource wait.
    pub fn merge(parts: Vec<Partial>, stats: &mut Stats) -> (Vec<(i128, i128)>, i128) {
        let mut routines = vec![(0i128, 0i128); stats.routines.len()];
        let mut resource_wait = 0;
        let add = |h: &mut Vec<u64>, counts: &[u64]| {
            if h.len() < counts.len() {
                h.resize(counts.len(), 0);
            }
            for (a, b) in h.iter_mut().zip(counts) {
                *a += b;
            }
        };
        for (k, r) in stats.routines.iter_mut().enumerate() {
            r.count = 0;
            routines[k] = (0, 0);
        }
        stats.sizes.counts.clear();
        stats.bandwidths.counts.clear();
        stats.messages = 0;
        stats.events = 0;
        stats.peak_in_flight = 0;
        for p in parts {
            for (k, (n, t, w)) in p.routines.into_iter().enumerate() {
                if let (Some(r), Some(e)) = (stats.routines.get_mut(k), routines.get_mut(k)) {
                    r.count += n;
                    e.0 += t;
                    e.1 += w;
                }
            }
            add(&mut stats.sizes.counts, &p.sizes);
            add(&mut stats.bandwidths.counts, &p.bandwidths);
            stats.messages += p.messages;
            resource_wait += p.resource_wait_ps;
            stats.events += p.events;
            stats.peak_in_flight += p.peak_in_flight as usize;
        }
        (routines, resource_wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let records = [
            Record::Send {
                key: (3, 70000, -1000, 5),
                req: (7 << 32) | 9,
                bytes: 1 << 40,
                post: 12.5,
                free: 13.25,
                arrival: Some((99.0, 0.0)),
                synchronous: false,
            },
            Record::Send {
                key: (0, 1, 2, 0),
                req: 1,
                bytes: 0,
                post: 0.0,
                free: 1e-300,
                arrival: None,
                synchronous: false,
            },
            Record::Send {
                key: (1, 0, 2, 0),
                req: 2,
                bytes: 8,
                post: 0.0,
                free: 1.0,
                arrival: None,
                synchronous: true,
            },
            Record::Done {
                req: u64::MAX,
                t: 1e12,
                partner: f64::NEG_INFINITY,
            },
            Record::Arrive {
                comm: 2,
                seq: 41,
                clock: 3.0,
                req: 5,
                coll: Coll::Alltoall,
                root: 17,
                bytes: 8,
            },
        ];
        let mut data = Vec::new();
        for r in &records {
            r.encode(&mut data);
        }
        assert_eq!(Record::decode_all(&data).unwrap(), records);
        assert_eq!(Record::decode_all(&data[..data.len() - 1]), None);
    }

    /// Every process's figures land on its own actors at process 0 (two
    /// threads a rank, blocks over 3 processes), and a part with an actor
    /// too many or too few, or cut short, is refused.
    #[test]
    fn partials_put_each_actor_figures_in_place() {
        let (world, procs) = (7u32, 3u32);
        let actor = |i: usize| ActorStats {
            rank: i as u32 / 2,
            thread: i as u32 % 2,
            node: i as u32 / 4,
            compute: i as f64 + 0.5,
            comm: -(i as f64),
            wait: 1e-300 * i as f64,
            end: 1e9 + i as f64,
            calls: 3 * i as u64,
        };
        let truth: Vec<ActorStats> = (0..2 * world as usize).map(actor).collect();
        let part = |p: u32, extra: isize| {
            let mut mine: Vec<usize> = (0..truth.len())
                .filter(|&a| p != 0 && owner(truth[a].rank, world, procs) == p)
                .collect();
            match extra {
                1 => mine.push(0),
                -1 => {
                    mine.pop();
                }
                _ => {}
            }
            let head = Partial {
                events: u64::from(p) + 1,
                stuck: if p == 2 { "rank 6".into() } else { String::new() },
                ..Partial::default()
            };
            head.encode(&truth, &mine)
        };
        // Process 0 starts from its own figures, and nothing for the rest.
        let blank = |v: &ActorStats| ActorStats {
            rank: v.rank,
            thread: v.thread,
            node: v.node,
            ..ActorStats::default()
        };
        let mut at0: Vec<ActorStats> = truth
            .iter()
            .map(|v| {
                if owner(v.rank, world, procs) == 0 {
                    v.clone()
                } else {
                    blank(v)
                }
            })
            .collect();
        let all: Vec<Vec<u8>> = (0..procs).map(|p| part(p, 0)).collect();
        let by = |r| owner(r, world, procs);
        let parts = Partial::decode_all(&all, &mut at0, by).unwrap();
        assert_eq!(at0, truth);
        assert_eq!(parts.iter().map(|p| p.events).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(parts[2].stuck, "rank 6");
        for (p, extra) in [(1, 1), (2, -1)] {
            let mut all = all.clone();
            all[p] = part(p as u32, extra);
            assert_eq!(Partial::decode_all(&all, &mut at0.clone(), by), None);
        }
        let mut cut = all.clone();
        cut[1].pop();
        assert_eq!(Partial::decode_all(&cut, &mut at0.clone(), by), None);
    }

    /// Only what `Part` asks of its processes' exchange.
    struct Alone(u32, u32);

    impl Exchange for Alone {
        fn me(&self) -> u32 {
            self.0
        }
        fn procs(&self) -> u32 {
            self.1
        }
        fn alltoallv(&mut self, _: &[Vec<u8>]) -> Vec<u8> {
            Vec::new()
        }
        fn min_words(&mut self, v: Ballot) -> Ballot {
            v
        }
        fn gather(&mut self, _: &[u8]) -> Option<Vec<Vec<u8>>> {
            None
        }
    }

    /// A completion goes to the process whose block holds its actor
    /// (blocks may be empty), never back to the process that owes it,
    /// and nowhere for an actor beyond every block.
    #[test]
    fn completions_go_to_the_process_of_their_actor() {
        let mut x = Alone(1, 4);
        let mut part = Part {
            x: &mut x,
            outbox: vec![Vec::new(); 4],
            actor_starts: vec![0, 3, 7, 7, 10],
            window_end: 0.0,
            lookahead: 1.0,
            world: 10,
            local_comm_ids: false,
            unshared: None,
            cost: ProtocolCost::default(),
        };
        let done = |a: u64| Record::Done {
            req: a << 32,
            t: 1.0,
            partner: 0.0,
        };
        for a in [0, 2, 4, 7, 9, 10, 1 << 20] {
            part.send_to_actor(a as usize, done(a));
        }
        let got: Vec<Vec<u64>> = part
            .outbox
            .iter()
            .map(|o| {
                let records = Record::decode_all(o).unwrap();
                records
                    .iter()
                    .map(|r| match r {
                        Record::Done { req, .. } => req >> 32,
                        _ => unreachable!("only completions were sent"),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(got, vec![vec![0, 2], vec![], vec![], vec![7, 9]]);
        assert_eq!(part.cost.records, 4);
    }

    #[test]
    fn blocks_cover_the_ranks_in_order() {
        for (world, procs) in [(10u32, 3u32), (4, 4), (1_048_576, 7), (5, 1)] {
            let owners: Vec<u32> = (0..world).map(|r| owner(r, world, procs)).collect();
            assert!(owners.windows(2).all(|w| w[0] <= w[1] && w[1] - w[0] <= 1));
            assert_eq!(owners[0], 0);
            assert_eq!(*owners.last().unwrap(), procs - 1);
        }
    }
}
