//! The point-to-point rule: given a send's post, its receive's post, the
//! message and the model, when the sender's CPU is free, when the data
//! arrives, and when each side completes.
//!
//! ```text
//! free     = cpu(post, send_overhead(post) - post)
//! eager    : the data moves at free; arrival = transfer(free).end;
//!            the send completes at free (MPI buffers it)
//! rendezvous (a standard send above the model's eager threshold, every
//! synchronous send): the data moves once the receive is posted too;
//!            ready = rendezvous_ready(free, recv_post);
//!            arrival = transfer(ready).end; the send completes at arrival,
//!            a synchronous one at ready (MPI: once matched)
//! receive  : base = max(arrival, recv_post);
//!            done = cpu(base, recv_done(arrival, recv_post) - base)
//! ```
//!
//! `cpu(start, work)` is where a side's CPU overhead runs: the replay
//! stretches it by its noise, vtime and virtual ranks run it as is
//! ([`unstretched`]); all three do the same float operations, so their
//! times agree to the bit. The rule is the replay engine's, which SimGrid
//! agrees with (tests/sim_simgrid.rs).
//!
//! An eager message's transfer is asked of the model at the post, a
//! rendezvous's at the match: models with state (contention) see
//! messages when they take the network.
//!
//! Under a model whose messages share links ([`Model::flow`]) the data
//! moves as a flow ([`Carried::Flow`]) whose end the caller learns by
//! stepping the model's flows; once it is known, [`send_done`] and
//! [`received`] give both sides, as [`matched`] does for a closed-form
//! transfer. A flow's
//! envelope goes ahead of its data, as a rendezvous's: SimGrid's
//! mailbox matches its messages in the order they were sent, and each
//! completes at its own data's end.
//!
//! Channel order ([`Channels`]): the messages of one channel (sender,
//! receiver, communicator) reach the receiver's matching in the order
//! they were sent, as MPI's non-overtaking rule needs (a later message
//! must not take a receive an earlier one fits) and as MPI libraries do
//! (they number each channel's messages and hold one that lands out of
//! sequence until those before it are in). What reaches the matching is
//! the envelope: an eager message's comes with its data
//! (`transfer(free).end`), a rendezvous's one lookahead after `free`
//! (the model's least latency), ahead of its data, which waits for the
//! receive. So the data of a rendezvous never holds later messages back:
//! small messages sent after a large one complete first, while the large
//! one's data still moves; an eager message lands no earlier than the
//! envelopes before it on its channel.

use crate::model::{Model, Msg, Transfer};
use crate::network::flows::FlowId;
use crate::units::Ns;
use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Why a program whose ranks wait in standard sends above the eager
/// threshold for receives never posted deadlocks: every mode's report of
/// such a deadlock ends with it, in the same words.
pub const DEPENDS_ON_BUFFERING: &str = "the program depends on MPI buffering sends above the eager threshold, and a rendezvous holds them until their receive is posted, as MPI libraries do";

/// How a send's data moves, from its MPI send mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `MPI_Send`, `MPI_Rsend`: eager up to the model's threshold,
    /// rendezvous above it (a trace replays every send this way).
    Standard,
    /// `MPI_Bsend`: the user's buffer holds the data, so it is eager at
    /// any size.
    Buffered,
    /// `MPI_Ssend`: a rendezvous at any size, complete once matched
    /// (at `ready`, before its data has arrived).
    Synchronous,
}

impl Mode {
    /// The send mode of MPI routine `name` (`MPI_Bsend`, `MPI_Issend_c`
    /// ...): what vtime's wrappers and the replay of a trace's sends
    /// (named by their routine) take alike.
    pub fn of(name: &str) -> Mode {
        let name = name.trim_start_matches("MPI_").to_ascii_lowercase();
        if name.contains("bsend") {
            Mode::Buffered
        } else if name.contains("ssend") {
            Mode::Synchronous
        } else {
            Mode::Standard
        }
    }
}

/// How a message's data moves once it may.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Carried {
    /// Its closed-form transfer.
    Known(Transfer),
    /// A flow over shared links, started at the time given; its end comes
    /// from the model's flows.
    Flow(FlowId, Ns),
}

impl Carried {
    /// The closed-form transfer, if it is one.
    pub fn known(&self) -> Option<Transfer> {
        match *self {
            Carried::Known(x) => Some(x),
            Carried::Flow(..) => None,
        }
    }
}

/// Moves `m`, ready at `ready`: as a flow if the model shares links and
/// `m` crosses one, else by its closed form.
pub fn carry(model: &mut dyn Model, m: &Msg, ready: Ns) -> Carried {
    match model.flow(m, ready) {
        Some(id) => Carried::Flow(id, ready),
        None => Carried::Known(model.transfer(m, ready)),
    }
}

/// A posted send, as its sender knows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Posted {
    /// When it was posted.
    pub post: Ns,
    /// When the sender's CPU is free again (the send overhead done).
    pub free: Ns,
    /// How an eager message's data moves (the send then completes at
    /// `free`); `None`: a rendezvous, whose data waits for the receive.
    pub eager: Option<Carried>,
}

/// Both sides of a matched message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matched {
    /// When the data could start moving (`free` for an eager message).
    pub ready: Ns,
    /// Its transfer: `end` is its arrival at the receiver.
    pub transfer: Transfer,
    /// When the send completes.
    pub send_done: Ns,
    /// When the receive completes.
    pub recv_done: Ns,
}

/// The latest envelope of each channel, kept by the senders: every mode
/// asks it when a message is sent, so that all three order a channel's
/// messages alike (the module doc's channel order).
pub struct Channels<K> {
    last: FxHashMap<K, Ns>,
}

impl<K> Default for Channels<K> {
    fn default() -> Channels<K> {
        Channels {
            last: FxHashMap::default(),
        }
    }
}

/// When a sent message reaches its receiver's matching, and its data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Envelope {
    /// When the receiver can match it.
    pub at: Ns,
    /// When an eager message's data is there (`at`); `None` for a
    /// rendezvous, whose data moves once matched.
    pub arrival: Option<Ns>,
}

impl<K: Hash + Eq> Channels<K> {
    /// The envelope of `posted`, sent on `channel` after every message
    /// this asked of before on it; `lookahead` is the model's least
    /// latency (a rendezvous's envelope travels that long).
    pub fn send(&mut self, channel: K, posted: &Posted, lookahead: Ns) -> Envelope {
        let data = posted.eager.and_then(|c| c.known());
        let own = data.map_or(posted.free + lookahead, |x| x.end);
        let last = self.last.entry(channel).or_insert(Ns::NEG_INFINITY);
        *last = last.max(own);
        let at = *last;
        Envelope {
            at,
            arrival: data.map(|_| at),
        }
    }
}

/// CPU work run as is: `start + work` (vtime, virtual ranks, a replay
/// without noise).
pub fn unstretched(start: Ns, work: Ns) -> Ns {
    start + work
}

/// Whether `m`, sent in `mode`, is eager.
pub fn eager(model: &dyn Model, m: &Msg, mode: Mode) -> bool {
    match mode {
        Mode::Standard => model.eager(m),
        Mode::Buffered => true,
        Mode::Synchronous => false,
    }
}

/// The sender posts `m` in `mode` at `post`; its CPU overhead runs on
/// `cpu`. An eager message's transfer is made now.
pub fn post(
    model: &mut dyn Model,
    m: &Msg,
    mode: Mode,
    post: Ns,
    cpu: &mut dyn FnMut(Ns, Ns) -> Ns,
) -> Posted {
    let free = freed(model, m, post, cpu);
    let eager = eager(model, m, mode).then(|| carry(model, m, free));
    Posted { post, free, eager }
}

/// When the sender of `m`, posting it at `post`, is free again: the
/// model's send overhead, run on `cpu` (a message's, and a one-sided
/// operation's, [`super::rma`]).
pub fn freed(model: &mut dyn Model, m: &Msg, post: Ns, cpu: &mut dyn FnMut(Ns, Ns) -> Ns) -> Ns {
    let free = model.send_overhead(m, post);
    cpu(post, free - post)
}

/// Send `m` in `mode`, whose sender was free at `free` (and whose eager
/// data, if eager, arrived at `arrival`), is matched with a receive posted
/// at `recv_post`; the receiver's overhead runs on `cpu`. A rendezvous's
/// transfer is made now, in closed form.
pub fn matched(
    model: &mut dyn Model,
    m: &Msg,
    mode: Mode,
    free: Ns,
    arrival: Option<Ns>,
    recv_post: Ns,
    cpu: &mut dyn FnMut(Ns, Ns) -> Ns,
) -> Matched {
    let (ready, transfer) = match arrival {
        Some(end) => (free, Transfer { start: free, end }),
        None => {
            let ready = model.rendezvous_ready(m, free, recv_post);
            (ready, model.transfer(m, ready))
        }
    };
    Matched {
        ready,
        transfer,
        send_done: send_done(mode, arrival.is_some(), ready, transfer.end),
        recv_done: received(model, m, transfer.end, recv_post, cpu),
    }
}

/// When a send in `mode` completes, sent `eager`ly or by a rendezvous
/// whose data was ready at `ready` and arrived at `arrival`: an eager one
/// once its data left, a synchronous one once matched (ready), any other
/// rendezvous at the arrival.
pub fn send_done(mode: Mode, eager: bool, ready: Ns, arrival: Ns) -> Ns {
    if eager || mode == Mode::Synchronous {
        ready
    } else {
        arrival
    }
}

/// When the receive of `m`, posted at `recv_post`, completes, its data
/// having arrived at `arrival`; the receiver's overhead runs on `cpu`.
pub fn received(
    model: &mut dyn Model,
    m: &Msg,
    arrival: Ns,
    recv_post: Ns,
    cpu: &mut dyn FnMut(Ns, Ns) -> Ns,
) -> Ns {
    let done = model.recv_done(m, arrival, recv_post);
    let base = arrival.max(recv_post);
    cpu(base, done - base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::units::{Bandwidth, Bytes, Time};

    /// 3 nodes at 10 us and 1 GB/s, eager up to 64 KiB.
    fn simple() -> Box<dyn Model> {
        let machine = Machine::uniform_eager(3, Time(10_000.0), Bandwidth(1e9), Bytes(65536));
        crate::model::build("simple", &machine).expect("simple")
    }

    fn msg(bytes: u64) -> Msg {
        Msg::between(0, 1, bytes, |r| r)
    }

    #[test]
    fn an_eager_send_completes_at_its_overhead_and_its_data_moves_at_once() {
        let mut model = simple();
        let m = msg(1000);
        let p = post(&mut *model, &m, Mode::Standard, 5.0, &mut unstretched);
        assert_eq!(p.free, 5.0);
        let x = p.eager.and_then(|c| c.known()).expect("eager");
        assert_eq!(x.end, 5.0 + 10_000.0 + 1000.0);
        // The receive posted long after: it completes at its post.
        let k = matched(
            &mut *model,
            &m,
            Mode::Standard,
            p.free,
            Some(x.end),
            50_000.0,
            &mut unstretched,
        );
        assert_eq!((k.send_done, k.recv_done), (5.0, 50_000.0));
    }

    #[test]
    fn a_rendezvous_waits_for_the_receive_and_completes_both_sides_at_the_arrival() {
        let mut model = simple();
        let m = msg(1 << 20);
        let p = post(&mut *model, &m, Mode::Standard, 0.0, &mut unstretched);
        assert!(p.eager.is_none());
        let k = matched(
            &mut *model,
            &m,
            Mode::Standard,
            p.free,
            None,
            4_204_304.0,
            &mut unstretched,
        );
        assert_eq!(k.ready, 4_204_304.0);
        assert_eq!(k.send_done, 4_204_304.0 + 10_000.0 + 1_048_576.0);
        assert_eq!(k.recv_done, k.send_done);
        // A synchronous send completes at the match.
        let k = matched(
            &mut *model,
            &m,
            Mode::Synchronous,
            p.free,
            None,
            4_204_304.0,
            &mut unstretched,
        );
        assert_eq!(k.send_done, 4_204_304.0);
    }

    #[test]
    fn the_mode_decides_eager_or_rendezvous_beside_the_threshold() {
        let model = simple();
        assert!(eager(&*model, &msg(1 << 20), Mode::Buffered));
        assert!(!eager(&*model, &msg(8), Mode::Synchronous));
        assert!(eager(&*model, &msg(65536), Mode::Standard));
        assert!(!eager(&*model, &msg(65537), Mode::Standard));
    }

    #[test]
    fn a_routines_name_gives_its_send_mode() {
        assert_eq!(Mode::of("MPI_Issend_c"), Mode::Synchronous);
        assert_eq!(Mode::of("MPI_Bsend"), Mode::Buffered);
        assert_eq!(Mode::of("MPI_Ibsend"), Mode::Buffered);
        assert_eq!(Mode::of("MPI_Ssend_init"), Mode::Synchronous);
        assert_eq!(Mode::of("MPI_Isend"), Mode::Standard);
        assert_eq!(Mode::of("MPI_Rsend"), Mode::Standard);
        assert_eq!(Mode::of("MPI_Send"), Mode::Standard);
    }

    /// Posts `bytes` on `ch` at `post`: the envelope, and the matched
    /// times of a receive posted at 0.
    fn sent(
        model: &mut dyn Model,
        ch: &mut Channels<(u32, u32)>,
        key: (u32, u32),
        bytes: u64,
        post: Ns,
    ) -> (Envelope, Matched) {
        let m = Msg::between(key.0, key.1, bytes, |r| r);
        let p = super::post(model, &m, Mode::Standard, post, &mut unstretched);
        let e = ch.send(key, &p, model.lookahead());
        let k = matched(
            model,
            &m,
            Mode::Standard,
            p.free,
            e.arrival,
            0.0,
            &mut unstretched,
        );
        (e, k)
    }

    #[test]
    fn small_messages_after_a_rendezvous_complete_before_its_data() {
        // overtake.c at 10 us and 1 GB/s: 2 MiB, three 8 B of its tag and
        // 64 KiB of another, all posted at 0, every receive at 0.
        let mut model = simple();
        let mut ch = Channels::default();
        let us = |t: Ns| t.round() / 1e3;
        let (big, k) = sent(&mut *model, &mut ch, (0, 1), 2 << 20, 0.0);
        assert_eq!(
            (big.at, big.arrival),
            (10_000.0, None),
            "a rendezvous envelope: one lookahead"
        );
        assert_eq!(us(k.recv_done), 2107.152);
        for _ in 0..3 {
            let (e, k) = sent(&mut *model, &mut ch, (0, 1), 8, 0.0);
            assert_eq!(e.arrival, Some(10_008.0));
            assert_eq!(us(k.recv_done), 10.008);
        }
        let (_, k) = sent(&mut *model, &mut ch, (0, 1), 64 << 10, 0.0);
        assert_eq!(us(k.recv_done), 75.536);
    }

    #[test]
    fn an_eager_message_lands_no_earlier_than_the_envelopes_before_it() {
        let mut model = simple();
        let mut ch = Channels::default();
        let (first, _) = sent(&mut *model, &mut ch, (0, 1), 64 << 10, 0.0);
        let (held, k) = sent(&mut *model, &mut ch, (0, 1), 8, 0.0);
        assert_eq!(held.arrival, first.arrival, "held behind the 64 KiB");
        assert_eq!(k.recv_done, 75_536.0);
        // Another channel is not held.
        let (other, _) = sent(&mut *model, &mut ch, (0, 2), 8, 0.0);
        assert_eq!(other.arrival, Some(10_008.0));
    }

    #[test]
    fn many_channels_keep_their_order_and_nothing_lands_before_its_own_transfer() {
        // A random mix on 3x3 channels: per channel the envelopes never go
        // back, and each lands at its own time or at the latest before it.
        let mut model = simple();
        let mut ch = Channels::default();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut clock = [0.0f64; 3];
        let mut last: FxHashMap<(u32, u32), Ns> = FxHashMap::default();
        for _ in 0..2000 {
            let (src, dst) = (next(3) as u32, next(3) as u32);
            let bytes = [8, 4096, 65536, 1 << 20][next(4) as usize];
            clock[src as usize] += next(20_000) as f64;
            let m = Msg::between(src, dst, bytes, |r| r);
            let p = super::post(
                &mut *model,
                &m,
                Mode::Standard,
                clock[src as usize],
                &mut unstretched,
            );
            let e = ch.send((src, dst), &p, model.lookahead());
            let own = p
                .eager
                .and_then(|c| c.known())
                .map_or(p.free + model.lookahead(), |x| x.end);
            let before = last.get(&(src, dst)).copied().unwrap_or(Ns::NEG_INFINITY);
            assert!(e.at >= before, "a channel's envelopes go back");
            assert_eq!(e.at, own.max(before));
            assert_eq!(e.arrival.is_some(), p.eager.is_some());
            last.insert((src, dst), e.at);
        }
        assert_eq!(last.len(), 9, "every channel was used");
    }

    #[test]
    fn the_cpu_runs_both_overheads() {
        let mut model = simple();
        let m = msg(8);
        let mut slow = |s: Ns, w: Ns| s + 2.0 * w + 1.0;
        let p = post(&mut *model, &m, Mode::Standard, 0.0, &mut slow);
        assert_eq!(p.free, 1.0);
        let arrival = p.eager.and_then(|c| c.known()).expect("eager").end;
        let k = matched(
            &mut *model,
            &m,
            Mode::Standard,
            p.free,
            Some(arrival),
            0.0,
            &mut slow,
        );
        assert_eq!(k.recv_done, arrival + 1.0);
    }
}
