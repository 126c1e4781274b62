//! Per actor, how many collectives it entered on each communicator: the
//! sequence number that pairs a member's collective with the others'.

/// The counts of one actor: the first communicator's in place, the others
/// in a list made at the second, 24 bytes in all while a rank calls
/// collectives on one communicator, as most ranks of a large run do (a
/// list took 24 and an allocation of 32).
#[derive(Debug, Default)]
pub struct CollSeq {
    /// A communicator and the collectives entered on it; unused while
    /// that count is 0.
    first: (i64, u64),
    /// The others: boxed, 8 bytes where most actors have none.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<(i64, u64)>>>,
}

impl CollSeq {
    /// The sequence number of the actor's next collective on `comm`,
    /// from 0, counted.
    pub fn next(&mut self, comm: i64) -> u64 {
        let (c, n) = &mut self.first;
        if *n == 0 {
            self.first = (comm, 1);
            return 0;
        }
        if *c == comm {
            *n += 1;
            return *n - 1;
        }
        let more = self.more.get_or_insert_with(Box::default);
        if let Some((_, n)) = more.iter_mut().find(|(c, _)| *c == comm) {
            *n += 1;
            return *n - 1;
        }
        more.push((comm, 1));
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each communicator counts from 0 on its own, whichever comes first,
    /// any id included.
    #[test]
    fn each_communicator_counts_on_its_own() {
        for first in [0, i64::MIN, -1] {
            let mut s = CollSeq::default();
            let comms = [first, 5, first, 3, i64::MIN + 1, 5, first, i64::MIN + 1, 3, first];
            let got: Vec<u64> = comms.iter().map(|&c| s.next(c)).collect();
            assert_eq!(got, [0, 0, 1, 0, 0, 1, 2, 1, 1, 3], "first {first}");
        }
    }
}
