//! The conservative-window agreement, one implementation for the two
//! simulators that spread ranks over processes: the parallel `pnmpi sim
//! replay` ([`crate::engine::parallel`]) and virtual ranks in several
//! processes (libvranks' `dist`). Between two windows every process
//! offers what it knows ([`Offer`]); one element-wise minimum of
//! integers over the processes gives what they agree ([`Agreement`]):
//! the earliest pending event anywhere, whether anyone owes records, and
//! whether anyone must stop.
//!
//! Each field is a word of its own whose minimum means what the field
//! says (a time by its bits, which order as the times do for times of 0
//! and more; a yes/no as 0 for "yes, some process"), so no encoding is
//! shared between fields and none can be read the wrong way round: the
//! two protocols this replaces wrote "none owed" as 1.0 and "owed" as
//! -1.0 in one float minimum. The words are signed 64-bit integers, all
//! of 0 and more (a non-negative double's bits are below 2^63): MPICH's
//! `MPI_MIN` over `MPI_UINT64_T` compares as signed (2^64 - 1 "wins"
//! against 5), so no word may use the top bit.

use crate::units::Ns;

/// What one process brings to the agreement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Offer {
    /// Its earliest pending event, if it has any (a virtual time, 0 or
    /// more: clocks start at 0).
    pub next: Option<Ns>,
    /// Whether it holds records for another process.
    pub owes: bool,
    /// Whether it met an error every process must stop for (one process
    /// alone stopping would leave the others in their next agreement).
    pub broken: bool,
}

/// What the processes agreed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    /// The earliest pending event of any process; `None`: no process has
    /// one.
    pub earliest: Option<Ns>,
    /// Some process holds records: move them, then agree again.
    pub owed: bool,
    /// Some process must stop.
    pub broken: bool,
}

/// An offer as words, or their minimum over the processes.
pub type Ballot = [i64; 3];

/// "No event": above every time's bits.
const NONE: i64 = i64::MAX;

/// "Yes, at some process": the least word wins.
fn yes(b: bool) -> i64 {
    i64::from(!b)
}

impl Offer {
    /// The words whose element-wise minimum over the processes is the
    /// agreement ([`Agreement::from_words`]).
    pub fn words(&self) -> Ballot {
        // A double of 0 or more has its sign bit clear: its bits, as an
        // i64, are 0 or more and order as the doubles do.
        let next = self.next.map_or(NONE, |t| t.max(0.0).to_bits() as i64);
        [next, yes(self.owes), yes(self.broken)]
    }
}

impl Agreement {
    /// The agreement from the element-wise minimum of every process's
    /// [`Offer::words`].
    pub fn from_words(w: Ballot) -> Agreement {
        Agreement {
            earliest: (w[0] != NONE).then(|| f64::from_bits(w[0] as u64)),
            owed: w[1] == 0,
            broken: w[2] == 0,
        }
    }

    /// The end of the next window: the earliest event plus the lookahead
    /// (events before it run); `None` when no process has an event left.
    pub fn window_end(&self, lookahead: Ns) -> Option<Ns> {
        self.earliest.map(|t| t + lookahead)
    }
}

/// The element-wise minimum of several processes' words (what the MPI
/// reduction computes; for tests and in-process stand-ins).
pub fn min_words(all: impl IntoIterator<Item = Ballot>) -> Ballot {
    all.into_iter()
        .fold([NONE; 3], |a, b| [a[0].min(b[0]), a[1].min(b[1]), a[2].min(b[2])])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agree(offers: &[Offer]) -> Agreement {
        Agreement::from_words(min_words(offers.iter().map(Offer::words)))
    }

    #[test]
    fn the_earliest_event_and_any_debt_win() {
        let idle = Offer {
            next: None,
            owes: false,
            broken: false,
        };
        let a = Offer {
            next: Some(1500.25),
            ..idle
        };
        let b = Offer {
            next: Some(0.0),
            owes: true,
            ..idle
        };
        assert_eq!(
            agree(&[a, idle, b]),
            Agreement {
                earliest: Some(0.0),
                owed: true,
                broken: false
            }
        );
        // Nobody owes, nobody has an event: the run is over.
        let done = agree(&[idle, idle]);
        assert_eq!((done.earliest, done.owed), (None, false));
        assert_eq!(done.window_end(10.0), None);
        assert_eq!(agree(&[a, idle]).window_end(10.0), Some(1510.25));
        // One process stopping stops all.
        assert!(agree(&[a, Offer { broken: true, ..idle }]).broken);
    }

    #[test]
    fn times_order_as_their_words_do() {
        let ts = [0.0, 1e-300, 1.0, 1e9, 4.5e15, f64::MAX];
        for w in ts.windows(2) {
            let at = |t| Offer {
                next: Some(t),
                owes: false,
                broken: false,
            };
            assert!(at(w[0]).words()[0] < at(w[1]).words()[0]);
            assert!(at(w[0]).words()[0] >= 0, "a word with its top bit set");
            assert_eq!(agree(&[at(w[1]), at(w[0])]).earliest, Some(w[0]));
        }
        // An infinite time is a time, not "no event".
        let inf = Offer {
            next: Some(f64::INFINITY),
            owes: false,
            broken: false,
        };
        assert_eq!(agree(&[inf]).earliest, Some(f64::INFINITY));
    }
}
