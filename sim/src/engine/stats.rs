//! PSINS's statistics module: what the replay gathers as it goes, per
//! actor, per routine, and as histograms of message sizes and achieved
//! bandwidths.

use crate::units::Ns;
use serde::Serialize;

/// One actor's (thread of a rank's) predicted times, ns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ActorStats {
    /// World rank.
    pub rank: u32,
    /// Thread index.
    pub thread: u32,
    /// Node it ran on.
    pub node: u32,
    /// CPU bursts (and local MPI calls), scaled to the target.
    pub compute: Ns,
    /// Time in MPI calls minus `wait`.
    pub comm: Ns,
    /// Time in MPI calls before the partner (sender, receiver, last
    /// member of a collective) had posted: load imbalance.
    pub wait: Ns,
    /// End of `MPI_Init` to start of `MPI_Finalize`.
    pub end: Ns,
    /// Calls replayed.
    pub calls: u64,
}

/// One routine's predicted totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RoutineStats {
    /// Calls.
    pub count: u64,
    /// Time in it, ns (all actors).
    pub time: Ns,
    /// Of which waiting for partners, ns.
    pub wait: Ns,
}

/// A histogram over powers of two: bucket `i` holds values in [2^(i-1), 2^i), bucket 0 the zeros.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Log2Histogram {
    /// Counts per bucket.
    pub counts: Vec<u64>,
}

impl Log2Histogram {
    /// Counts `v`.
    pub fn add(&mut self, v: f64) {
        // floor(log2 v) + 1 for v >= 1, read from the float's exponent
        // (exact, and without a libm call per message); below 1 or NaN: 0.
        let b = if v >= 1.0 {
            (((v.to_bits() >> 52) & 0x7ff) as usize).saturating_sub(1022)
        } else {
            0
        };
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
    }

    /// The lower bound of bucket `i`.
    pub fn lower(i: usize) -> f64 {
        if i == 0 {
            0.0
        } else {
            (2f64).powi(i as i32 - 1)
        }
    }
}

/// Everything the replay gathered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Per actor.
    pub actors: Vec<ActorStats>,
    /// Per routine, indexed like the source's routine names.
    pub routines: Vec<RoutineStats>,
    /// Message sizes, bytes.
    pub sizes: Log2Histogram,
    /// Achieved bandwidth of each message with a payload, bytes/s.
    pub bandwidths: Log2Histogram,
    /// Point-to-point messages replayed (collective expansions included).
    pub messages: u64,
    /// Of their transfer times, ns, the part spent waiting for resources.
    pub resource_wait: Ns,
    /// Ops replayed.
    pub events: u64,
    /// The most messages and receives unmatched at once.
    pub peak_in_flight: usize,
}

#[cfg(test)]
mod tests {
    use super::Log2Histogram;

    #[test]
    fn buckets_are_floor_log2_plus_one() {
        let mut h = Log2Histogram::default();
        for v in [0.0, 0.5, 1.0, 1.5, 2.0, 3.9, 4.0, 1023.0, 1024.0, 1e9, f64::NAN] {
            h.add(v);
        }
        // 0, 0.5 and NaN in 0; 1, 1.5 in 1; 2, 3.9 in 2; 4 in 3; 1023 in 10;
        // 1024 in 11; 1e9 (2^29.9) in 30.
        let mut want = vec![0u64; 31];
        for (b, n) in [(0, 3), (1, 2), (2, 2), (3, 1), (10, 1), (11, 1), (30, 1)] {
            want[b] = n;
        }
        assert_eq!(h.counts, want);
    }
}
