//! The value history of one chunk of a merged trace's stream: for each
//! routine the chunk used so far, the value fields of its last
//! [`HISTORY`] events, which a merged event's code names as the base its
//! unchanged fields come from.
//!
//! A replay holds one per stream (a million at a million ranks) and
//! consults it on every event, so it is compact and cheap: only the
//! routines seen (a routine never seen has empty slots, and so does one
//! whose events carried no value), only the fields that any of their
//! events carried, one `i64` per value, and a rotating cursor for the
//! newest slot instead of a shift of every slot on each event.

use crate::fields::NV;
use crate::trace::HISTORY;

/// "No value": `i64::MIN` has no code in a merged trace (the writer
/// clamps it to `i64::MIN + 1`, and no varint decodes to it).
const NONE: i64 = i64::MIN;

/// One routine's slots.
#[derive(Clone, Copy, Debug)]
struct Entry {
    routine: u32,
    /// Where its `HISTORY x fields` values start in [`ValueHistory::vals`].
    at: u32,
    /// The fields kept, as bits by value index ([`crate::fields::V`]).
    fields: u16,
    /// The physical slot of the newest event.
    newest: u8,
}

impl Entry {
    fn width(&self) -> usize {
        self.fields.count_ones() as usize
    }

    /// Where logical slot `slot` (0: newest) starts.
    fn slot_at(&self, slot: usize) -> usize {
        self.at as usize + (self.newest as usize + slot) % HISTORY * self.width()
    }
}

/// The fields of `vals` that hold a value, as bits by index.
fn present(vals: &[Option<i64>; NV]) -> u16 {
    vals.iter()
        .enumerate()
        .fold(0, |m, (i, v)| m | u16::from(v.is_some()) << i)
}

/// A routine's place in a [`ValueHistory`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slots {
    routine: u32,
    entry: Option<usize>,
}

/// The value histories of one chunk's routines.
#[derive(Clone, Debug, Default)]
pub(crate) struct ValueHistory {
    /// In the order of their values in `vals`.
    entries: Vec<Entry>,
    vals: Vec<i64>,
}

impl ValueHistory {
    /// Forgets every routine (a new chunk starts), keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.vals.clear();
    }

    /// The slots of `routine`, for [`get`](Self::get) and
    /// [`remember`](Self::remember) (valid until the next `remember`).
    pub(crate) fn find(&self, routine: u32) -> Slots {
        Slots {
            routine,
            entry: self.entries.iter().position(|e| e.routine == routine),
        }
    }

    /// Slot `slot` (0: the newest event) of `of` into `out`.
    pub(crate) fn get(&self, of: Slots, slot: usize, out: &mut [Option<i64>; NV]) {
        *out = [None; NV];
        let Some(e) = of.entry.map(|i| self.entries[i]) else {
            return;
        };
        let mut fields = e.fields;
        for &v in &self.vals[e.slot_at(slot)..][..e.width()] {
            let i = fields.trailing_zeros() as usize;
            fields &= fields - 1;
            out[i] = (v != NONE).then_some(v);
        }
    }

    /// Makes `vals` the newest event of `of`'s routine.
    pub(crate) fn remember(&mut self, of: Slots, vals: &[Option<i64>; NV]) {
        let has = present(vals);
        let e = match of.entry {
            Some(e) => e,
            // Its slots are all empty, and stay so.
            None if has == 0 => return,
            None => {
                self.entries.push(Entry {
                    routine: of.routine,
                    at: self.vals.len() as u32,
                    fields: 0,
                    newest: 0,
                });
                self.entries.len() - 1
            }
        };
        if has & !self.entries[e].fields != 0 {
            self.widen(e, has | self.entries[e].fields);
        }
        let entry = &mut self.entries[e];
        entry.newest = ((entry.newest as usize + HISTORY - 1) % HISTORY) as u8;
        let (at, mut fields) = (entry.slot_at(0), entry.fields);
        for v in &mut self.vals[at..][..entry.width()] {
            let i = fields.trailing_zeros() as usize;
            fields &= fields - 1;
            *v = vals[i].unwrap_or(NONE);
        }
    }

    /// Keeps `fields` (a superset of its own) for entry `e`: its values
    /// are laid out again, the new fields empty, and the later entries
    /// move up.
    fn widen(&mut self, e: usize, fields: u16) {
        let old = self.entries[e];
        let (k0, k1) = (old.width(), fields.count_ones() as usize);
        let at = old.at as usize;
        let mut block = [NONE; HISTORY * NV];
        for p in 0..HISTORY {
            let (mut src, mut dst) = (at + p * k0, p * k1);
            for i in 0..NV {
                let bit = 1u16 << i;
                if old.fields & bit != 0 {
                    block[dst] = self.vals[src];
                    src += 1;
                }
                if fields & bit != 0 {
                    dst += 1;
                }
            }
        }
        let (extra, tail, len) = (HISTORY * (k1 - k0), at + HISTORY * k0, self.vals.len());
        self.vals.reserve_exact(extra);
        self.vals.resize(len + extra, NONE);
        self.vals.copy_within(tail..len, tail + extra);
        self.vals[at..at + HISTORY * k1].copy_from_slice(&block[..HISTORY * k1]);
        self.entries[e].fields = fields;
        for later in &mut self.entries[e + 1..] {
            later.at += (HISTORY * (k1 - k0)) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain model: each routine's last HISTORY value sets, newest
    /// first, shifted on every event.
    #[test]
    fn agrees_with_a_shifted_history() {
        let mut plain = vec![[[None; NV]; HISTORY]; 3];
        let mut h = ValueHistory::default();
        let mut x = 12345u64;
        for step in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let routine = (x >> 33) as u32 % 3;
            let mut vals = [None; NV];
            for (i, v) in vals.iter_mut().enumerate() {
                // Fields appear over time, and come and go.
                if (x >> (i + 5)) & 3 == 0 && step > i * 50 {
                    *v = Some((x >> 40) as i64 - 1000 * i as i64);
                }
            }
            if routine == 2 {
                vals = [None; NV];
            }
            let p = &mut plain[routine as usize];
            p.rotate_right(1);
            p[0] = vals;
            h.remember(h.find(routine), &vals);
            for (r, slots) in (0u32..).zip(&plain) {
                for (s, want) in slots.iter().enumerate() {
                    let mut got = [Some(7); NV];
                    h.get(h.find(r), s, &mut got);
                    assert_eq!(&got, want, "step {step} routine {r} slot {s}");
                }
            }
        }
        // Routine 2 never carried a value: it holds nothing.
        assert!(h.entries.iter().all(|e| e.routine != 2));
    }
}
