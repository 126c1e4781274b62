//! The calls of each actor as the analysis keeps them: encoded, a few
//! bytes a call, since a trace of 65,536 ranks holds tens of millions.
//!
//! A call is its position among its actor's ops, its entry, its duration,
//! its routine, what it is to the critical path ([`Class`]) and its call
//! site. The rest of an op (peers, tags, requests) serves matching only,
//! which takes it as the trace is read ([`crate::matching`]); the what-if
//! replays read the trace again. Calls that communicate nothing (a failed
//! `MPI_Test` or `MPI_Iprobe`, `MPI_Wtime`: [`Class::Local`]) are folded
//! into the compute around them unless asked not to
//! ([`crate::run::Options::fold`]): the analysis counts them as compute
//! and they are never a wait or its cause, so the figures do not need
//! them one by one. The reader makes each run of them one op, its last
//! call, whose burst holds the others' time
//! ([`pnmpi_sim::input::trace::TraceOps::folding`]), and the list keeps
//! none; only their count stays, in the positions of the calls after
//! them. A polling program's millions of polls cost no memory, and no
//! time past reading them.
//!
//! Each call is stored as variable-length integers (LEB128): the
//! distance from the end of the call stored before it to its entry, its
//! duration, its routine and class, the ops folded before it when there
//! are any, and its site when the trace records sites. Every `CHUNK`
//! calls a mark notes where the next one starts, so that a call is found
//! by decoding at most a chunk. Times are whole nanoseconds, as traces
//! give them, so the entries are the exact running sums of the trace's
//! bursts and durations.

use pnmpi_sim::input::{OpKind, NO_SITE};
use pnmpi_sim::units::Ns;

/// A call: the `op`-th op of actor `actor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct OpRef {
    /// Actor index.
    pub actor: u32,
    /// Op index on the actor.
    pub op: u32,
}

/// What a call is to the critical path and the compute figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No communication (`MPI_Wtime`, `MPI_Comm_rank`, a poll that
    /// completed nothing...): CPU time.
    Local,
    /// `MPI_Init`: the analysed window starts at its end.
    Init,
    /// `MPI_Finalize`: the window ends at its start.
    Finalize,
    /// Any other MPI call.
    Mpi,
}

impl Class {
    /// The class of an op of kind `kind`.
    pub fn of(kind: &OpKind) -> Class {
        match kind {
            OpKind::Local => Class::Local,
            OpKind::Init => Class::Init,
            OpKind::Finalize => Class::Finalize,
            _ => Class::Mpi,
        }
    }

    fn code(self) -> u64 {
        match self {
            Class::Local => 0,
            Class::Init => 1,
            Class::Finalize => 2,
            Class::Mpi => 3,
        }
    }

    fn from_code(code: u64) -> Class {
        match code & 3 {
            0 => Class::Local,
            1 => Class::Init,
            2 => Class::Finalize,
            _ => Class::Mpi,
        }
    }
}

/// When a call ran, ns on the trace clock.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Span {
    /// Entry.
    pub start: Ns,
    /// Return.
    pub end: Ns,
}

/// A call, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    /// Its position among its actor's ops, folded ones counted.
    pub op: u32,
    /// Entry, ns on the trace clock.
    pub start: Ns,
    /// Duration, ns.
    pub dur: Ns,
    /// Routine index into [`crate::run::Run::routines`].
    pub routine: u32,
    /// What it is.
    pub class: Class,
    /// Call site: an index into the trace's site table, [`NO_SITE`] for none.
    pub site: u32,
}

impl Call {
    /// Return, ns on the trace clock.
    pub fn end(&self) -> Ns {
        self.start + self.dur
    }

    /// Its entry and return.
    pub fn span(&self) -> Span {
        Span {
            start: self.start,
            end: self.end(),
        }
    }

    /// CPU time the call stands for: a local call's duration, else none.
    pub fn cpu(&self) -> Ns {
        if self.class == Class::Local {
            self.dur
        } else {
            0.0
        }
    }
}

/// Calls between two marks.
const CHUNK: usize = 64;

/// Where a chunk starts, and the decoder's state there.
#[derive(Clone, Copy, Debug)]
struct Mark {
    /// Byte offset of its first call.
    offset: u64,
    /// The op index of its first call.
    first: u32,
    /// The op index of the call stored before it, `u32::MAX` for none.
    before: u32,
    /// The exact end of the call stored before it (the actor's clock
    /// origin for the first chunk).
    end: Ns,
}

/// One actor's calls, encoded.
#[derive(Debug, Default)]
pub struct Calls {
    bytes: Vec<u8>,
    marks: Vec<Mark>,
    stored: u64,
    sites: bool,
    /// The encoder's state: the last call's op index (`u32::MAX`: none)
    /// and exact end.
    last_op: u32,
    last_end: Ns,
}

fn put(bytes: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        bytes.push((v as u8) | 0x80);
        v >>= 7;
    }
    bytes.push(v as u8);
}

fn get(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

/// Signed to unsigned, small magnitudes small (zigzag).
fn zig(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzig(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

impl Calls {
    /// An empty list for an actor whose clock starts at `origin`; `sites`:
    /// whether the trace records call sites.
    pub fn new(origin: Ns, sites: bool) -> Calls {
        Calls {
            sites,
            last_op: u32::MAX,
            last_end: origin,
            ..Calls::default()
        }
    }

    /// Appends a call; op indices increase.
    pub fn push(&mut self, c: &Call) {
        if self.stored.is_multiple_of(CHUNK as u64) {
            self.marks.push(Mark {
                offset: self.bytes.len() as u64,
                first: c.op,
                before: self.last_op,
                end: self.last_end,
            });
        }
        let skipped = c.op.wrapping_sub(self.last_op.wrapping_add(1));
        let head = (u64::from(c.routine) << 3) | (c.class.code() << 1) | u64::from(skipped > 0);
        put(&mut self.bytes, head);
        if skipped > 0 {
            put(&mut self.bytes, u64::from(skipped));
        }
        // Whole nanoseconds: exact in an f64, and so is their difference.
        put(&mut self.bytes, zig((c.start - self.last_end) as i64));
        put(&mut self.bytes, c.dur as u64);
        if self.sites {
            put(&mut self.bytes, u64::from(c.site.wrapping_add(1)));
        }
        self.last_op = c.op;
        self.last_end = c.start + c.dur;
        self.stored += 1;
    }

    /// Frees the spare capacity once the actor is read.
    pub fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.marks.shrink_to_fit();
    }

    /// The number of calls stored.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// Chunk `k`'s calls, in order.
    fn chunk(&self, k: usize) -> Chunk<'_> {
        let m = self.marks[k];
        let end = self
            .marks
            .get(k + 1)
            .map_or(self.bytes.len(), |n| n.offset as usize);
        Chunk {
            calls: self,
            at: m.offset as usize,
            stop: end,
            last_op: m.before,
            last_end: m.end,
        }
    }

    /// The chunk holding op `op`, if stored, or the last one before it.
    fn chunk_of(&self, op: u32) -> Option<usize> {
        self.marks.partition_point(|m| m.first <= op).checked_sub(1)
    }

    /// Call `op`, if it is stored (not folded, not past the end).
    pub fn get(&self, op: u32) -> Option<Call> {
        let k = self.chunk_of(op)?;
        self.chunk(k).find(|c| c.op >= op).filter(|c| c.op == op)
    }

    /// The last stored call before op `op`.
    pub fn below(&self, op: u32) -> Option<Call> {
        let k = self.chunk_of(op.checked_sub(1)?)?;
        self.chunk(k).take_while(|c| c.op < op).last()
    }

    /// Every stored call, in order.
    pub fn iter(&self) -> impl Iterator<Item = Call> + '_ {
        (0..self.marks.len()).flat_map(move |k| self.chunk(k))
    }
}

/// A chunk's calls, decoded one by one.
struct Chunk<'a> {
    calls: &'a Calls,
    at: usize,
    stop: usize,
    last_op: u32,
    last_end: Ns,
}

impl Iterator for Chunk<'_> {
    type Item = Call;

    fn next(&mut self) -> Option<Call> {
        if self.at >= self.stop {
            return None;
        }
        let bytes = &self.calls.bytes;
        let head = get(bytes, &mut self.at);
        let skipped = if head & 1 == 1 {
            get(bytes, &mut self.at) as u32
        } else {
            0
        };
        let start = self.last_end + unzig(get(bytes, &mut self.at)) as Ns;
        let dur = get(bytes, &mut self.at) as Ns;
        let site = if self.calls.sites {
            (get(bytes, &mut self.at) as u32).wrapping_sub(1)
        } else {
            NO_SITE
        };
        let op = self.last_op.wrapping_add(1).wrapping_add(skipped);
        self.last_op = op;
        self.last_end = start + dur;
        Some(Call {
            op,
            start,
            dur,
            routine: (head >> 3) as u32,
            class: Class::from_code(head >> 1),
            site,
        })
    }
}

/// Lookups in a run's calls in about the order they are stored (the
/// waits by call, the path backwards, which goes back and forth between
/// a call and the one it waited for): the chunks last decoded are kept.
pub struct Cursor<'a> {
    lists: &'a [Calls],
    /// Decoded chunks, replaced in turn.
    slots: [Slot; SLOTS],
    next: usize,
}

/// Chunks a [`Cursor`] keeps.
const SLOTS: usize = 4;

/// A decoded chunk: actor `actor`'s calls with op indices from `from`
/// (its first) up to `to` (the next chunk's first, excluded).
#[derive(Default)]
struct Slot {
    actor: usize,
    from: u32,
    to: u32,
    calls: Vec<Call>,
}

impl<'a> Cursor<'a> {
    /// A cursor over the actors' lists `lists`.
    pub fn new(lists: &'a [Calls]) -> Cursor<'a> {
        Cursor {
            lists,
            slots: Default::default(),
            next: 0,
        }
    }

    /// The decoded chunk of actor `actor` that holds op `op`, if stored,
    /// or the last call before it.
    fn chunk(&mut self, actor: usize, op: u32) -> Option<&[Call]> {
        let held = |s: &Slot| s.actor == actor && s.from <= op && op < s.to;
        let i = match self.slots.iter().position(held) {
            Some(i) => i,
            None => {
                let list = self.lists.get(actor)?;
                let k = list.chunk_of(op)?;
                let i = self.next;
                self.next = (i + 1) % SLOTS;
                let slot = &mut self.slots[i];
                slot.calls.clear();
                slot.calls.extend(list.chunk(k));
                slot.actor = actor;
                slot.from = list.marks[k].first;
                slot.to = list.marks.get(k + 1).map_or(u32::MAX, |m| m.first);
                i
            }
        };
        Some(&self.slots[i].calls)
    }

    /// Op `op` of actor `actor`, if it is stored.
    pub fn get(&mut self, actor: usize, op: u32) -> Option<Call> {
        let chunk = self.chunk(actor, op)?;
        chunk.binary_search_by_key(&op, |c| c.op).ok().map(|i| chunk[i])
    }

    /// The last stored call of actor `actor` before op `op`.
    pub fn below(&mut self, actor: usize, op: u32) -> Option<Call> {
        let chunk = self.chunk(actor, op.checked_sub(1)?)?;
        let i = chunk.partition_point(|c| c.op < op);
        i.checked_sub(1).map(|i| chunk[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: u32, start: Ns, dur: Ns, class: Class, site: u32) -> Call {
        Call {
            op,
            start,
            dur,
            routine: op % 300,
            class,
            site,
        }
    }

    /// Calls with gaps in their op indices (folded ones), entries before
    /// the previous call's end, long durations and sites come back as
    /// stored, found by index and by the one below.
    #[test]
    fn calls_decode_as_stored_and_are_found() {
        let mut want = Vec::new();
        let mut t = 1e3;
        for i in 0..1000u32 {
            let op = i * 3 + (i % 3);
            let dur = if i % 97 == 0 {
                3e10
            } else {
                f64::from(i % 50) * 1e3
            };
            let start = if i % 13 == 0 {
                t - 5.0
            } else {
                t + f64::from(i % 11)
            };
            let class = [Class::Local, Class::Init, Class::Finalize, Class::Mpi][i as usize % 4];
            let site = if i % 5 == 0 { NO_SITE } else { i };
            want.push(call(op, start, dur, class, site));
            t = start + dur;
        }
        for sites in [true, false] {
            let mut calls = Calls::new(1e3, sites);
            for c in &want {
                calls.push(c);
            }
            let expect = |c: &Call| Call {
                site: if sites { c.site } else { NO_SITE },
                ..*c
            };
            let got: Vec<Call> = calls.iter().collect();
            assert_eq!(got, want.iter().map(expect).collect::<Vec<_>>());
            let lists = [calls];
            let mut cursor = Cursor::new(&lists);
            for (k, c) in want.iter().enumerate() {
                assert_eq!(lists[0].get(c.op), Some(expect(c)));
                assert_eq!(cursor.get(0, c.op), Some(expect(c)));
                let before = k.checked_sub(1).map(|j| expect(&want[j]));
                assert_eq!(lists[0].below(c.op), before);
                assert_eq!(cursor.below(0, c.op), before);
                if k + 1 < want.len() && want[k + 1].op > c.op + 1 {
                    assert_eq!(lists[0].get(c.op + 1), None);
                    assert_eq!(cursor.below(0, c.op + 1), Some(expect(c)));
                }
            }
            assert_eq!(cursor.get(1, 0), None);
            assert_eq!(lists[0].get(u32::MAX), None);
            assert_eq!(lists[0].below(0), None);
        }
    }
}
