//! Per-peer byte vectors of the `v` collectives (`MPI_Alltoallv`,
//! `MPI_Allgatherv`, `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Reduce_scatter`,
//! `MPI_Alltoallw` and their nonblocking forms): the [`COUNTS`] field,
//! format version 2.
//!
//! Applications call a `v` collective in a loop with vectors that repeat
//! or change a little, so each vector is written against the previous
//! one *of the same routine in the same chunk* (call sites are not known
//! when the tracer records, routines are): an identical pair costs one
//! byte, a changed one the differences entry by entry. The same encoding
//! serves rank files and merged traces (`docs/trace-format.md`).
//!
//! [`COUNTS`]: crate::fields::COUNTS

use crate::error::Malformed;
use crate::varint::{self, Cursor, Put};

/// Bytes exchanged with each process of the communicator, in
/// communicator rank order (remote group of an intercommunicator); an
/// empty side was not recorded (not significant on this process, or the
/// call's other side is a single count in `BYTES`/`RBYTES`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerBytesOf<V> {
    /// Sent to each peer.
    pub send: V,
    /// Received from each peer (for `MPI_Reduce_scatter`: each process's
    /// share of the result).
    pub recv: V,
}

/// The vectors as the tracer records them (borrowed).
pub type RawPeerBytes<'a> = PeerBytesOf<&'a [i64]>;

/// The vectors as decoded (owned).
pub type PeerBytes = PeerBytesOf<Vec<i64>>;

impl<V: AsRef<[i64]>> PeerBytesOf<V> {
    /// The same, borrowed.
    pub fn as_raw(&self) -> RawPeerBytes<'_> {
        RawPeerBytes {
            send: self.send.as_ref(),
            recv: self.recv.as_ref(),
        }
    }

    /// The vectors as sizes, a negative entry (no real size) as 0: what
    /// the simulators time, from a trace's record or from the counts a
    /// call gives.
    pub fn sizes(&self) -> PeerBytesOf<Vec<u64>> {
        let side = |v: &[i64]| v.iter().map(|&b| b.max(0) as u64).collect();
        PeerBytesOf {
            send: side(self.send.as_ref()),
            recv: side(self.recv.as_ref()),
        }
    }
}

impl RawPeerBytes<'_> {
    /// An upper bound of the encoded size.
    pub fn max_size(&self) -> usize {
        (3 + self.send.len() + self.recv.len()) * varint::MAX_LEN
    }
}

/// One routine's previous vectors.
#[derive(Clone, Debug, Default)]
struct Slot {
    routine: u32,
    live: bool,
    last: PeerBytes,
}

/// The previous vectors of each routine seen in the chunk: the state that
/// an encoder and a decoder of one chunk share. Clearing keeps the memory,
/// so that the tracer's encoder allocates only when a routine's vectors
/// first grow.
#[derive(Clone, Debug, Default)]
pub struct CountsHistory {
    slots: Vec<Slot>,
}

/// Writes `v` against `prev`, entry by entry.
fn put_vector(out: &mut impl Put, v: &[i64], prev: &[i64]) {
    out.put(v.len() as u64);
    for (i, &x) in v.iter().enumerate() {
        out.put_i(x.wrapping_sub(prev.get(i).copied().unwrap_or(0)));
    }
}

/// Reads a vector written by [`put_vector`] into `out`.
fn get_vector(c: &mut Cursor<'_>, prev: &[i64], out: &mut Vec<i64>) -> Result<(), Malformed> {
    let n = c.count(1)?;
    out.clear();
    for i in 0..n {
        out.push(c.i64()?.wrapping_add(prev.get(i).copied().unwrap_or(0)));
    }
    Ok(())
}

impl CountsHistory {
    /// Forgets every routine's vectors (a new chunk starts).
    pub fn clear(&mut self) {
        for s in &mut self.slots {
            s.live = false;
        }
    }

    fn last(&self, routine: u32) -> Option<&PeerBytes> {
        self.slots
            .iter()
            .find(|s| s.live && s.routine == routine)
            .map(|s| &s.last)
    }

    /// Makes `counts` the routine's previous vectors.
    fn remember(&mut self, routine: u32, counts: RawPeerBytes<'_>) {
        let i = match self.slots.iter().position(|s| s.routine == routine) {
            Some(i) => i,
            None => match self.slots.iter().position(|s| !s.live) {
                Some(i) => i,
                None => {
                    self.slots.push(Slot::default());
                    self.slots.len() - 1
                }
            },
        };
        let s = &mut self.slots[i];
        s.routine = routine;
        s.live = true;
        s.last.send.clear();
        s.last.send.extend_from_slice(counts.send);
        s.last.recv.clear();
        s.last.recv.extend_from_slice(counts.recv);
    }

    /// Writes `counts` of a call of `routine`: `0` if both vectors equal
    /// the routine's previous ones, else `1 + sides` (bit 0: the send
    /// vector follows, bit 1: the receive vector) and each present vector
    /// as its length and the differences from the previous vector of its
    /// side (0 past its end).
    pub fn put(&mut self, out: &mut impl Put, routine: u32, counts: RawPeerBytes<'_>) {
        let empty = PeerBytes::default();
        let last = self.last(routine);
        if last.is_some_and(|l| l.as_raw() == counts) {
            out.put(0);
            return;
        }
        let last = last.unwrap_or(&empty);
        let sides = u64::from(!counts.send.is_empty()) | u64::from(!counts.recv.is_empty()) << 1;
        out.put(1 + sides);
        if !counts.send.is_empty() {
            put_vector(out, counts.send, &last.send);
        }
        if !counts.recv.is_empty() {
            put_vector(out, counts.recv, &last.recv);
        }
        self.remember(routine, counts);
    }

    /// Reads what [`CountsHistory::put`] wrote into `out`. The history is
    /// only read: call [`CountsHistory::commit`] once the whole event
    /// decoded (a reader that ran out of bytes retries the event).
    pub fn get(&self, c: &mut Cursor<'_>, routine: u32, out: &mut PeerBytes) -> Result<(), Malformed> {
        let at = c.offset();
        let h = c.u64()?;
        let empty = PeerBytes::default();
        let last = self.last(routine);
        if h == 0 {
            let last = last.ok_or_else(|| {
                Malformed::new(at, "per-peer counts repeat a routine that had none in this chunk")
            })?;
            out.send.clone_from(&last.send);
            out.recv.clone_from(&last.recv);
            return Ok(());
        }
        if h > 4 {
            return Err(Malformed::new(at, format!("unknown per-peer count flags {h}")));
        }
        let last = last.unwrap_or(&empty);
        let sides = h - 1;
        out.send.clear();
        out.recv.clear();
        if sides & 1 != 0 {
            get_vector(c, &last.send, &mut out.send)?;
        }
        if sides & 2 != 0 {
            get_vector(c, &last.recv, &mut out.recv)?;
        }
        Ok(())
    }

    /// Records a decoded event's vectors as the routine's previous ones.
    pub fn commit(&mut self, routine: u32, counts: RawPeerBytes<'_>) {
        self.remember(routine, counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_vector_costs_a_byte_and_a_changed_one_its_differences() {
        let mut enc = CountsHistory::default();
        let mut out = Vec::new();
        let a = RawPeerBytes {
            send: &[4000, 4100, 3900, 4050],
            recv: &[4000, 3950, 4200, 4010],
        };
        enc.put(&mut out, 7, a);
        let first = out.len();
        enc.put(&mut out, 7, a);
        assert_eq!(out.len(), first + 1);
        let b = RawPeerBytes {
            send: &[4001, 4100, 3900, 4050],
            recv: &[],
        };
        enc.put(&mut out, 7, b);
        assert_eq!(
            out.len(),
            first + 1 + 6,
            "flags, length, four one-byte differences: {out:?}"
        );
        let mut dec = CountsHistory::default();
        let mut c = Cursor::new(&out, 0);
        for want in [a, a, b] {
            let mut got = PeerBytes::default();
            dec.get(&mut c, 7, &mut got).unwrap();
            assert_eq!(got.as_raw(), want);
            dec.commit(7, got.as_raw());
        }
        assert!(c.is_empty());
    }

    #[test]
    fn a_repeat_without_a_previous_vector_is_an_error() {
        let dec = CountsHistory::default();
        let e = dec
            .get(&mut Cursor::new(&[0], 40), 3, &mut PeerBytes::default())
            .unwrap_err();
        assert_eq!(e.offset, 40);
    }
}
