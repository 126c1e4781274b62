//! The machine fitted to a trace, for the what-if replays: its latency
//! and bandwidth taken from the matched messages as they are matched.

use crate::matching::MatchedMessage;
use pnmpi_sim::machine::Machine;
use pnmpi_sim::units::{Bandwidth, Bytes, Ns, Time};
use rustc_hash::FxHashMap;

/// What fitting a machine to the trace needs of its messages, gathered
/// as they are matched ([`Fit::message`]): the fastest small transfer,
/// and per large size the fastest transfer slower than the latency. The
/// latency is known at the end only, and a faster small message can only
/// lower it; so a large transfer not above the latency so far is kept
/// until one is (few are: a large message is seldom faster than the
/// fastest small one).
#[derive(Default)]
pub(crate) struct Fit {
    small: Option<Ns>,
    large: FxHashMap<u64, Fastest>,
}

/// One size's large transfers, as [`Fit`] keeps them.
#[derive(Default)]
struct Fastest {
    /// Not above the latency so far.
    below: Vec<Ns>,
    /// The fastest above it.
    above: Option<Ns>,
}

impl Fastest {
    fn above(&mut self, t: Ns) {
        self.above = Some(self.above.map_or(t, |a| a.min(t)));
    }
}

impl Fit {
    /// The latency the small transfers so far give (none yet: any).
    fn latency(&self) -> Ns {
        self.small.map_or(Ns::INFINITY, |t| t.max(100.0))
    }

    /// Takes in a matched message: a transfer is the time from the send's
    /// entry to the end of a blocking receive that was waiting already.
    pub fn message(&mut self, m: &MatchedMessage) {
        let recv = m.recv_done_span;
        if m.recv != m.recv_done || recv.start >= m.send_start {
            return;
        }
        let t = recv.end - m.send_start;
        if t <= 0.0 {
            return;
        }
        if m.bytes <= 1024 {
            self.small = Some(self.small.map_or(t, |s| s.min(t)));
            let latency = self.latency();
            for f in self.large.values_mut() {
                let (above, below): (Vec<Ns>, Vec<Ns>) = f.below.iter().partition(|&&b| b > latency);
                f.below = below;
                if let Some(&fastest) = above.iter().min_by(|a, b| a.total_cmp(b)) {
                    f.above(fastest);
                }
            }
        } else if m.bytes >= 65536 {
            let latency = self.latency();
            let f = self.large.entry(m.bytes).or_default();
            if t > latency {
                f.above(t);
            } else {
                f.below.push(t);
            }
        }
    }

    /// A machine fitted to the trace: one node per rank, the latency the
    /// fastest transfer of a small message whose receiver was already waiting
    /// (its receive ended when the message arrived), the bandwidth the
    /// fastest of the large ones likewise: the fastest, since a loaded node
    /// only ever adds time (a receiver not scheduled at once); at least
    /// 0.1 us, and 1 us and 10 GB/s where the trace has no such message. The
    /// eager threshold is 64 KiB.
    pub fn machine(&self, world_size: u32) -> Machine {
        let latency = self.small.map_or(1e3, |t| t.max(100.0));
        let bandwidth = self
            .large
            .iter()
            .filter_map(|(&b, s)| {
                let t = s
                    .below
                    .iter()
                    .copied()
                    .filter(|&t| t > latency)
                    .chain(s.above)
                    .min_by(|a, b| a.total_cmp(b))?;
                Some(b as f64 * 1e9 / (t - latency))
            })
            .fold(None, |best: Option<f64>, r| Some(best.map_or(r, |b| b.max(r))))
            .unwrap_or(10e9);
        let mut m = Machine::uniform_eager(world_size, Time(latency), Bandwidth(bandwidth), Bytes(65536));
        m.name = format!(
            "fitted to the trace: latency {:.2} us, bandwidth {:.2} GB/s",
            latency / 1e3,
            bandwidth / 1e9
        );
        m
    }
}
