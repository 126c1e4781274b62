//! Repeated arguments in rank files (format version 3): an event that
//! carries peer, tag, communicator and bytes, all four equal to those of
//! the previous such event of the same routine in its chunk, sets the
//! `SAME` bit of its head byte and omits them. In a loop that sends or
//! receives the same message again and again, the commonest case, the
//! tracer then writes no argument at all, only the comparison.
//!
//! Encoder and decoder keep the same table: one slot per routine code
//! modulo [`SLOTS`], holding the last four arguments of a routine of that
//! slot; a slot names its routine, so two routines that share it never
//! match each other's arguments.

/// Slots of the table (a power of two).
pub const SLOTS: usize = 32;

/// The arguments an event can repeat, with its routine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Args {
    /// Routine code.
    pub routine: u32,
    /// Peer, as recorded.
    pub peer: i64,
    /// Tag.
    pub tag: i64,
    /// Communicator handle.
    pub comm: u64,
    /// Bytes.
    pub bytes: i64,
}

/// A slot that matches no routine.
const EMPTY: Args = Args {
    routine: u32::MAX,
    peer: 0,
    tag: 0,
    comm: 0,
    bytes: 0,
};

/// The last arguments of each slot, for one chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repeats([Args; SLOTS]);

impl Default for Repeats {
    fn default() -> Repeats {
        Repeats([EMPTY; SLOTS])
    }
}

impl Repeats {
    /// The encoder's question: whether `a` repeats its routine's last
    /// arguments; if not, they become `a`.
    #[inline(always)]
    pub fn repeat(&mut self, a: Args) -> bool {
        let slot = &mut self.0[a.routine as usize % SLOTS];
        if *slot == a {
            return true;
        }
        *slot = a;
        false
    }

    /// The arguments in `routine`'s slot: after [`Repeats::repeat`], the
    /// ones it was asked about.
    #[inline(always)]
    pub fn slot(&self, routine: u32) -> Args {
        self.0[routine as usize % SLOTS]
    }

    /// The decoder's: the last arguments of `routine`, if its slot holds
    /// them.
    pub fn last(&self, routine: u32) -> Option<Args> {
        Some(self.0[routine as usize % SLOTS]).filter(|a| a.routine == routine)
    }

    /// The decoder's record of an event's arguments, once the whole event
    /// decoded.
    pub fn commit(&mut self, a: Args) {
        self.0[a.routine as usize % SLOTS] = a;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(routine: u32, peer: i64) -> Args {
        Args {
            routine,
            peer,
            tag: 7,
            comm: 0x55,
            bytes: 4,
        }
    }

    #[test]
    fn a_routine_repeats_only_its_own_arguments() {
        let (mut enc, mut dec) = (Repeats::default(), Repeats::default());
        assert!(!enc.repeat(args(3, 1)));
        assert!(enc.repeat(args(3, 1)));
        assert_eq!(dec.last(3), None);
        dec.commit(args(3, 1));
        assert_eq!(dec.last(3), Some(args(3, 1)));
        // Routine 35 shares routine 3's slot, but not its arguments.
        let other = 3 + SLOTS as u32;
        assert!(!enc.repeat(args(other, 1)));
        assert_eq!(dec.last(other), None);
        assert!(!enc.repeat(args(3, 1)));
        assert!(!enc.repeat(args(3, 2)));
    }
}
