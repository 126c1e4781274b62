//! The value history of one chunk of a merged trace's stream: for each
//! routine the chunk used so far, the value fields of its last
//! [`HISTORY`] events, which a merged event's code names as the base its
//! unchanged fields come from.
//!
//! A replay holds one per stream (a million at a million ranks) and
//! consults it on every event, so it is compact and cheap: only the
//! routines seen (a routine never seen has empty slots, and so does one
//! whose events carried no value), only the value fields up to the last
//! that any of their events carried (the common calls' fields come
//! first), one `i32` per value while every value fits one (peers, tags,
//! communicators and sizes of common runs do; else one `i64`), and a
//! rotating cursor for the newest slot instead of a shift of every slot
//! on each event.

use crate::fields::NV;

/// How many earlier events of the same routine a merged event may take
/// its unchanged fields from: codes in a chunk are `routine * HISTORY +
/// slot`, and slot `s` names the (s+1)-th most recent event of that
/// routine. Cyclic patterns (a halo exchange's four neighbours) then
/// repeat at no cost.
pub const HISTORY: usize = 4;
use smallvec::SmallVec;

/// "No value": `i64::MIN` has no code in a merged trace (the writer
/// clamps it to `i64::MIN + 1`, and no varint decodes to it).
const NONE: i64 = i64::MIN;

/// "No value" in narrow slots.
const NONE32: i32 = i32::MIN;

/// The slots' values: narrow until a value does not fit an `i32`.
#[derive(Clone, Debug)]
enum Vals {
    Narrow(Vec<i32>),
    Wide(Vec<i64>),
}

impl Default for Vals {
    fn default() -> Vals {
        Vals::Narrow(Vec::new())
    }
}

/// A value in a narrow slot, if it fits one.
fn narrow(v: Option<i64>) -> Option<i32> {
    match v {
        None => Some(NONE32),
        Some(v) => i32::try_from(v).ok().filter(|&v| v != NONE32),
    }
}

impl Vals {
    fn len(&self) -> usize {
        match self {
            Vals::Narrow(v) => v.len(),
            Vals::Wide(v) => v.len(),
        }
    }

    /// `n` values from `at` into `out`.
    fn read(&self, at: usize, n: usize, out: &mut [Option<i64>; NV]) {
        match self {
            Vals::Narrow(v) => {
                for (o, &v) in out.iter_mut().zip(&v[at..][..n]) {
                    *o = (v != NONE32).then_some(i64::from(v));
                }
            }
            Vals::Wide(v) => {
                for (o, &v) in out.iter_mut().zip(&v[at..][..n]) {
                    *o = (v != NONE).then_some(v);
                }
            }
        }
    }

    /// The first `n` of `vals` at `at`, widening the slots first if one
    /// does not fit narrow ones.
    fn write(&mut self, at: usize, n: usize, vals: &[Option<i64>; NV]) {
        if let Vals::Narrow(v) = self {
            let mut fits = true;
            for (v, &new) in v[at..][..n].iter_mut().zip(vals) {
                match narrow(new) {
                    Some(x) => *v = x,
                    None => {
                        fits = false;
                        break;
                    }
                }
            }
            if fits {
                return;
            }
            let wide = v
                .iter()
                .map(|&x| if x == NONE32 { NONE } else { i64::from(x) })
                .collect();
            *self = Vals::Wide(wide);
        }
        if let Vals::Wide(v) = self {
            for (v, new) in v[at..][..n].iter_mut().zip(vals) {
                *v = new.unwrap_or(NONE);
            }
        }
    }

    fn clear(&mut self) {
        *self = match std::mem::take(self) {
            Vals::Narrow(mut v) => {
                v.clear();
                Vals::Narrow(v)
            }
            Vals::Wide(_) => Vals::default(),
        };
    }

    /// Lays entry `at`'s `HISTORY` slots of `k0` values out again as
    /// slots of `k1`, the new values empty, the values after them moving
    /// up.
    fn widen(&mut self, at: usize, k0: usize, k1: usize) {
        match self {
            Vals::Narrow(v) => widen_slots(v, at, k0, k1, NONE32),
            Vals::Wide(v) => widen_slots(v, at, k0, k1, NONE),
        }
    }
}

fn widen_slots<T: Copy>(vals: &mut Vec<T>, at: usize, k0: usize, k1: usize, none: T) {
    let mut block = [none; HISTORY * NV];
    for p in 0..HISTORY {
        block[p * k1..][..k0].copy_from_slice(&vals[at + p * k0..][..k0]);
    }
    let (extra, tail, len) = (HISTORY * (k1 - k0), at + HISTORY * k0, vals.len());
    vals.reserve_exact(extra);
    vals.resize(len + extra, none);
    vals.copy_within(tail..len, tail + extra);
    vals[at..at + HISTORY * k1].copy_from_slice(&block[..HISTORY * k1]);
}

/// One routine's slots.
#[derive(Clone, Copy, Debug)]
struct Entry {
    routine: u32,
    /// Where its `HISTORY x width` values start in [`ValueHistory::vals`].
    at: u32,
    /// The value fields kept: the first `width` ([`crate::fields::V`]).
    width: u8,
    /// The physical slot of the newest event.
    newest: u8,
}

impl Entry {
    /// Where logical slot `slot` (0: newest) starts.
    fn slot_at(&self, slot: usize) -> usize {
        self.at as usize + (self.newest as usize + slot) % HISTORY * self.width as usize
    }
}

/// How many leading value fields `vals` needs: up to its last value.
fn width(vals: &[Option<i64>; NV]) -> usize {
    NV - vals.iter().rev().take_while(|v| v.is_none()).count()
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
    /// In the order of their values in `vals`; the first 4 in place (a
    /// halo's few routines with values), saving a replay of a million
    /// ranks an allocation a rank.
    entries: SmallVec<[Entry; 4]>,
    vals: Vals,
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
        self.vals.read(e.slot_at(slot), e.width as usize, out);
    }

    /// Makes `vals` the newest event of `of`'s routine.
    pub(crate) fn remember(&mut self, of: Slots, vals: &[Option<i64>; NV]) {
        let need = width(vals);
        let e = match of.entry {
            Some(e) => e,
            // Its slots are all empty, and stay so.
            None if need == 0 => return,
            None => {
                self.entries.push(Entry {
                    routine: of.routine,
                    at: self.vals.len() as u32,
                    width: 0,
                    newest: 0,
                });
                self.entries.len() - 1
            }
        };
        if need > self.entries[e].width as usize {
            self.widen(e, need);
        }
        let entry = &mut self.entries[e];
        entry.newest = ((entry.newest as usize + HISTORY - 1) % HISTORY) as u8;
        let (at, n) = (entry.slot_at(0), entry.width as usize);
        self.vals.write(at, n, vals);
    }

    /// Keeps the first `k1` fields (more than it keeps) for entry `e`:
    /// its values are laid out again, the new fields empty, and the later
    /// entries move up.
    fn widen(&mut self, e: usize, k1: usize) {
        let old = self.entries[e];
        let (k0, at) = (old.width as usize, old.at as usize);
        self.vals.widen(at, k0, k1);
        self.entries[e].width = k1 as u8;
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
        let mut rng = fastrand::Rng::with_seed(12345);
        for step in 0..2000 {
            let x = rng.u64(..);
            let routine = (x >> 33) as u32 % 3;
            let mut vals = [None; NV];
            for (i, v) in vals.iter_mut().enumerate() {
                // Fields appear over time, and come and go.
                if (x >> (i + 5)) & 3 == 0 && step > i * 50 {
                    // From step 1000 on, field 3 no longer fits an i32:
                    // the history goes on in wide slots.
                    let big = if step > 1000 && i == 3 { 1i64 << 40 } else { 0 };
                    *v = Some((x >> 40) as i64 - 1000 * i as i64 + big);
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
        assert!(
            matches!(h.vals, Vals::Wide(_)),
            "the big values widened the slots"
        );
    }
}
