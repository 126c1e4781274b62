//! Global concurrency in one-sided communication, the rules without MPI:
//! what each rank noted of its accesses to a window (an operation's
//! bytes of its target's window, or its own use of its window memory as
//! the buffer of an MPI call, or a store of its own found by comparing
//! the memory), how the ranks send the notes to each other at a
//! synchronization that closes an epoch (`rma_race`), and which two
//! accesses of one target conflict: overlapping bytes, one of them
//! writing (accumulates and the other atomic operations do not conflict
//! among themselves; nor do two puts of the same data to the same bytes),
//! from two ranks, in one epoch that nothing orders.
//!
//! Two accesses are in one epoch when both are in the same fence epoch
//! (the window's fences counted alike on every rank), or both in
//! passive-target epochs of shared locks (`MPI_LOCK_SHARED`,
//! `MPI_Win_lock_all`) and nothing orders them: an order needs a
//! synchronizing call (any MPI call but a one-sided operation, a shared
//! lock, an unlock of one, a flush) of the first rank after its access
//! completed (a flush, an unlock) and of the second before its access. A rank's operation
//! on its own window is compared by its buffer only: MBI counts a rank's
//! put to itself from its window memory, beside another rank's get of
//! the same bytes, as correct.

/// How an access touches its bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Read,
    Write,
    /// An accumulate, a get-accumulate, a fetch-and-op or a
    /// compare-and-swap: atomic with one another.
    Atomic,
}

/// When an access was made.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Epoch {
    /// In the fence epoch of this number (the window's fences, counted).
    Fence(u64),
    /// In a passive-target epoch: made at this count of the rank's
    /// synchronizing calls (`gate::syncs`) and completed at that one
    /// (`None` until then).
    Passive {
        shared: bool,
        opened: u64,
        closed: Option<u64>,
    },
}

/// One access of a window, as the rank that made it noted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The window rank whose memory is accessed.
    pub target: i32,
    /// Bytes `[start, end)` of the target's window.
    pub range: (i64, i64),
    pub kind: Kind,
    /// The rank's own use of its window memory (a buffer of an MPI call,
    /// or a store), not a one-sided operation.
    pub local: bool,
    pub epoch: Epoch,
    /// The routine (an index of `ROUTINE_NAMES`, or `usize::MAX` for a
    /// store of the program) and its site's return address.
    pub routine: usize,
    pub ra: usize,
    /// A put's data checksum, when origin and target data are contiguous
    /// bytes alike: the target finds a store of its own into them.
    pub sum: Option<u64>,
}

/// The most accesses a rank keeps of one window between two exchanges:
/// more are not compared, so that a loop of many operations keeps its
/// memory.
pub const MAX_ACCESSES: usize = 4096;

/// Notes `a` in `list`: merged into the last access when it is the same
/// call's, to the same target, of the same kind, in the same epoch, on
/// adjacent or overlapping bytes (a loop over an array).
pub fn note(list: &mut Vec<Access>, a: Access) {
    if let Some(last) = list.last_mut() {
        if (
            last.target,
            last.kind,
            last.local,
            last.epoch,
            last.routine,
            last.ra,
        ) == (a.target, a.kind, a.local, a.epoch, a.routine, a.ra)
            && a.range.0 <= last.range.1
            && last.range.0 <= a.range.1
            && last.sum.is_none()
            && a.sum.is_none()
        {
            last.range = (last.range.0.min(a.range.0), last.range.1.max(a.range.1));
            return;
        }
    }
    if list.len() < MAX_ACCESSES {
        list.push(a);
    }
}

/// An access as sent to the other ranks: the origin's window rank, the
/// counts of its synchronizing calls since the last exchange before the
/// access and after its completion, and its site's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub origin: i32,
    pub access: Access,
    pub before: u64,
    pub after: u64,
    pub site: String,
}

impl Record {
    /// Whether the two accesses are in one epoch that nothing orders.
    fn concurrent(&self, o: &Record) -> bool {
        match (self.access.epoch, o.access.epoch) {
            (Epoch::Fence(a), Epoch::Fence(b)) => a == b,
            (Epoch::Passive { shared: true, .. }, Epoch::Passive { shared: true, .. }) => {
                (self.after == 0 || o.before == 0) && (o.after == 0 || self.before == 0)
            }
            _ => false,
        }
    }

    /// Whether the two accesses conflict (see the module's header).
    pub fn conflicts(&self, o: &Record) -> bool {
        let (a, b) = (&self.access, &o.access);
        // A write on either side, but an atomic operation with another,
        // and two puts of the same data to the same bytes, which leave
        // them the same whichever lands last (mpi4py's suite puts from
        // every rank so).
        let same = a.range == b.range && a.sum.is_some() && a.sum == b.sum;
        let writes = (a.kind == Kind::Write || b.kind == Kind::Write) && !same;
        writes
            && a.target == b.target
            && self.origin != o.origin
            && !self.to_itself()
            && !o.to_itself()
            && a.range.0 < b.range.1
            && b.range.0 < a.range.1
            && self.concurrent(o)
    }

    /// A one-sided operation of a rank on its own window.
    fn to_itself(&self) -> bool {
        !self.access.local && self.origin == self.access.target
    }

    /// One line of text: numbers, then the site (which may hold spaces).
    fn line(&self) -> String {
        let a = &self.access;
        let (fence, shared) = match a.epoch {
            Epoch::Fence(g) => (g as i64, 0),
            Epoch::Passive { shared, .. } => (-1, i64::from(shared)),
        };
        let kind = match a.kind {
            Kind::Read => 0,
            Kind::Write => 1,
            Kind::Atomic => 2,
        };
        format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
            self.origin,
            a.target,
            a.range.0,
            a.range.1,
            kind,
            u8::from(a.local),
            fence,
            shared,
            self.before,
            self.after,
            u8::from(a.sum.is_some()),
            a.sum.unwrap_or(0),
            a.routine as i64,
            a.ra,
            self.site
        )
    }

    /// The record of a [`Record::line`].
    fn parse(line: &str) -> Option<Record> {
        let mut f = line.splitn(15, ' ');
        let mut num = || f.next()?.parse::<i64>().ok();
        let (origin, target, start, end, kind, local, fence, shared, before, after, has_sum) = (
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
            num()?,
        );
        let sum = f.next()?.parse::<u64>().ok()?;
        let routine = f.next()?.parse::<i64>().ok()?;
        let ra = f.next()?.parse::<usize>().ok()?;
        let site = f.next().unwrap_or("").to_string();
        let epoch = if fence >= 0 {
            Epoch::Fence(fence as u64)
        } else {
            Epoch::Passive {
                shared: shared != 0,
                opened: 0,
                closed: Some(0),
            }
        };
        Some(Record {
            origin: origin as i32,
            access: Access {
                target: target as i32,
                range: (start, end),
                kind: match kind {
                    0 => Kind::Read,
                    1 => Kind::Write,
                    _ => Kind::Atomic,
                },
                local: local != 0,
                epoch,
                routine: if routine < 0 { usize::MAX } else { routine as usize },
                ra,
                sum: (has_sum != 0).then_some(sum),
            },
            before: before as u64,
            after: after as u64,
            site,
        })
    }
}

/// Records as bytes, one line each.
pub fn encode(records: &[Record]) -> Vec<u8> {
    let mut out = String::new();
    for r in records {
        out.push_str(&r.line());
        out.push('\n');
    }
    out.into_bytes()
}

/// The records of [`encode`]'s bytes, several ranks' one after another,
/// each padded with zeroes.
pub fn decode(bytes: &[u8]) -> Vec<Record> {
    let text = String::from_utf8_lossy(bytes);
    text.split(['\n', '\0'])
        .filter(|l| !l.is_empty())
        .filter_map(Record::parse)
        .collect()
}

/// The pairs of conflicting records among `records`, by index (the one
/// that starts first, then the lower, first), at most `max`, each pair of
/// sites once. Only records of
/// two origins can conflict, so each pair of origins is swept by byte
/// range on its own: a rank's many accesses to the same bytes in one long
/// epoch (a counter under `MPI_Win_lock_all`) cost no comparison among
/// themselves.
pub fn conflicts(records: &[Record], max: usize) -> Vec<(usize, usize)> {
    let mut by_origin: std::collections::BTreeMap<i32, Vec<usize>> = Default::default();
    for (i, r) in records.iter().enumerate() {
        by_origin.entry(r.origin).or_default().push(i);
    }
    let groups: Vec<Vec<usize>> = by_origin.into_values().collect();
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (g, first) in groups.iter().enumerate() {
        for second in &groups[g + 1..] {
            let mut order: Vec<usize> = first.iter().chain(second).copied().collect();
            order.sort_by_key(|&i| (records[i].access.range.0, i));
            for (k, &i) in order.iter().enumerate() {
                for &j in &order[k + 1..] {
                    if records[j].access.range.0 >= records[i].access.range.1 {
                        break;
                    }
                    let (a, b) = (&records[i], &records[j]);
                    if a.origin != b.origin
                        && a.conflicts(b)
                        && seen.insert((a.origin, a.access.ra, b.origin, b.access.ra))
                    {
                        found.push((i, j));
                    }
                }
            }
        }
    }
    // The first `max` in the order one sweep of all records gives: by
    // the first record's start, then the second's.
    let key = |i: usize| (records[i].access.range.0, i);
    found.sort_by_key(|&(i, j)| (key(i), key(j)));
    found.truncate(max);
    found
}

/// The byte runs `[start, end)` where `now` differs from `then`, runs
/// closer than 8 bytes joined.
pub fn changed(then: &[u8], now: &[u8]) -> Vec<(i64, i64)> {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for (i, (a, b)) in then.iter().zip(now).enumerate() {
        if a == b {
            continue;
        }
        let i = i as i64;
        match runs.last_mut() {
            Some(last) if i - last.1 < 8 => last.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    runs
}

/// `runs` without the bytes of `covered`.
pub fn uncovered(runs: &[(i64, i64)], covered: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for &(s, e) in runs {
        let mut pieces = vec![(s, e)];
        for &(cs, ce) in covered {
            pieces = pieces
                .into_iter()
                .flat_map(|(ps, pe)| {
                    if ce <= ps || pe <= cs {
                        vec![(ps, pe)]
                    } else {
                        [(ps, cs), (ce, pe)].into_iter().filter(|(a, b)| a < b).collect()
                    }
                })
                .collect();
        }
        out.extend(pieces);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(origin: i32, target: i32, range: (i64, i64), kind: Kind, local: bool, epoch: Epoch) -> Record {
        Record {
            origin,
            access: Access {
                target,
                range,
                kind,
                local,
                epoch,
                routine: 1,
                ra: origin as usize,
                sum: None,
            },
            before: 0,
            after: 0,
            site: format!("f.c:{origin} (main)"),
        }
    }

    const SHARED: Epoch = Epoch::Passive {
        shared: true,
        opened: 0,
        closed: Some(0),
    };

    #[test]
    fn writes_of_two_ranks_in_one_epoch_conflict() {
        let put = rec(0, 1, (0, 40), Kind::Write, false, Epoch::Fence(1));
        let get = rec(2, 1, (36, 80), Kind::Read, false, Epoch::Fence(1));
        assert!(put.conflicts(&get) && get.conflicts(&put));
        let later = rec(2, 1, (36, 80), Kind::Read, false, Epoch::Fence(2));
        assert!(!put.conflicts(&later), "another fence epoch");
        let apart = rec(2, 1, (40, 80), Kind::Read, false, Epoch::Fence(1));
        assert!(!put.conflicts(&apart), "disjoint bytes");
        let read = rec(0, 1, (0, 40), Kind::Read, false, Epoch::Fence(1));
        assert!(!read.conflicts(&get), "two reads");
        let acc = rec(0, 1, (0, 40), Kind::Atomic, false, Epoch::Fence(1));
        let acc2 = rec(2, 1, (0, 40), Kind::Atomic, false, Epoch::Fence(1));
        assert!(
            !acc.conflicts(&acc2) && acc.conflicts(&rec(2, 1, (0, 4), Kind::Write, false, Epoch::Fence(1)))
        );
        let other_target = rec(2, 0, (0, 40), Kind::Write, false, Epoch::Fence(1));
        assert!(!put.conflicts(&other_target));
        let (mut same, mut again) = (
            put.clone(),
            rec(2, 1, (0, 40), Kind::Write, false, Epoch::Fence(1)),
        );
        same.access.sum = Some(7);
        again.access.sum = Some(7);
        assert!(!same.conflicts(&again), "the same data put twice");
        again.access.sum = Some(8);
        assert!(same.conflicts(&again));
    }

    #[test]
    fn a_ranks_own_buffer_counts_and_its_operation_on_itself_not() {
        let get = rec(0, 1, (0, 40), Kind::Read, false, Epoch::Fence(1));
        let into_window = rec(1, 1, (20, 60), Kind::Write, true, Epoch::Fence(1));
        assert!(get.conflicts(&into_window));
        let to_itself = rec(1, 1, (0, 40), Kind::Write, false, Epoch::Fence(1));
        assert!(!get.conflicts(&to_itself));
    }

    #[test]
    fn shared_lock_epochs_conflict_unless_ordered() {
        let mut a = rec(0, 1, (0, 40), Kind::Write, false, SHARED);
        let mut b = rec(2, 1, (0, 40), Kind::Read, false, SHARED);
        assert!(a.conflicts(&b));
        a.after = 1;
        assert!(a.conflicts(&b), "b made no call before its epoch");
        b.before = 2;
        assert!(!a.conflicts(&b), "a call of each may order them");
        let exclusive = Epoch::Passive {
            shared: false,
            opened: 0,
            closed: Some(0),
        };
        let c = rec(2, 1, (0, 40), Kind::Read, false, exclusive);
        assert!(!rec(0, 1, (0, 40), Kind::Write, false, SHARED).conflicts(&c));
        assert!(
            !rec(0, 1, (0, 40), Kind::Write, false, Epoch::Fence(0)).conflicts(&rec(
                2,
                1,
                (0, 40),
                Kind::Read,
                false,
                SHARED
            ))
        );
    }

    #[test]
    fn records_go_through_bytes() {
        let mut r = rec(3, 1, (-4, 1 << 40), Kind::Atomic, true, Epoch::Fence(7));
        r.access.sum = Some(u64::MAX);
        r.site = "a b.c:3 (main)".into();
        let mut s = rec(0, 2, (0, 4), Kind::Read, false, SHARED);
        s.before = 5;
        s.access.routine = usize::MAX;
        let mut bytes = encode(&[r.clone()]);
        bytes.extend([0; 5]);
        bytes.extend(encode(&[s.clone()]));
        assert_eq!(decode(&bytes), vec![r, s]);
    }

    #[test]
    fn conflicts_are_found_once_per_pair_of_sites() {
        let list = vec![
            rec(0, 1, (0, 40), Kind::Write, false, Epoch::Fence(1)),
            rec(2, 1, (100, 140), Kind::Write, false, Epoch::Fence(1)),
            rec(2, 1, (30, 50), Kind::Write, false, Epoch::Fence(1)),
            rec(2, 1, (30, 50), Kind::Write, false, Epoch::Fence(1)),
        ];
        assert_eq!(conflicts(&list, 10), vec![(0, 2)]);
    }

    #[test]
    fn notes_of_one_loop_merge() {
        let mut list = Vec::new();
        for i in 0..4 {
            note(
                &mut list,
                rec(0, 1, (4 * i, 4 * i + 4), Kind::Write, false, Epoch::Fence(0)).access,
            );
        }
        note(
            &mut list,
            rec(0, 1, (100, 104), Kind::Write, false, Epoch::Fence(0)).access,
        );
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].range, (0, 16));
    }

    #[test]
    fn changed_bytes_not_written_by_mpi_are_stores() {
        let then = [0u8; 64];
        let mut now = then;
        now[20] = 1;
        now[23] = 1;
        now[40] = 9;
        assert_eq!(changed(&then, &now), vec![(20, 24), (40, 41)]);
        assert_eq!(
            uncovered(&changed(&then, &now), &[(0, 22), (40, 48)]),
            vec![(22, 24)]
        );
    }
}
