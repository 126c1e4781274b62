//! The communicators a process has known, in the order it learnt of
//! them: live ones by handle, freed ones kept (with their member lists,
//! which the C API hands out as pointers that stay valid) and marked.
//! An MPI may hand a freed communicator's handle to a new one: the
//! handle then names the new record.

use std::collections::HashMap;

/// How a communicator was made (`PNMPIMOD_COMM_MADE_*` in C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
// The unit tests name one of them; the wrappers, left out of them, all.
#[cfg_attr(test, allow(dead_code))]
pub enum Kind {
    World = 0,
    SelfComm = 1,
    Dup = 2,
    Split = 3,
    Create = 4,
    Cart = 5,
    Graph = 6,
    Intercomm = 7,
    Merge = 8,
}

/// One communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The id every member agreed on.
    pub id: i32,
    /// The lowest world rank among its members (both groups).
    pub leader: i32,
    pub kind: Kind,
    /// The id of the communicator it was made from (-1: none).
    pub parent: i32,
    /// This process's rank in it.
    pub rank: i32,
    /// World ranks of the (local) group, by rank in it.
    pub members: Vec<i32>,
    /// World ranks of the remote group (empty for an intracommunicator).
    pub remote: Vec<i32>,
    pub inter: bool,
    pub freed: bool,
    /// The handle's bits (`Handle::bits`).
    pub handle: u64,
}

/// The lowest world rank in `members` and `remote` (members outside
/// `MPI_COMM_WORLD`, given as negative, do not count); -1 if none.
pub fn leader(members: &[i32], remote: &[i32]) -> i32 {
    members
        .iter()
        .chain(remote)
        .copied()
        .filter(|&r| r >= 0)
        .min()
        .unwrap_or(-1)
}

/// Every communicator known, and the next id this process proposes.
#[derive(Default)]
pub struct Registry {
    /// In the order they were made; never removed, so that the member
    /// lists (heap buffers that stay put when a record moves) stay valid.
    pub records: Vec<Record>,
    /// The live records' indices, by handle.
    live: HashMap<u64, usize>,
    /// Above every id this process has seen.
    next_id: i32,
}

impl Registry {
    /// The id this process proposes for a new communicator: above every
    /// id it knows, so that an id agreed as the members' maximum is new
    /// to each of them.
    pub fn proposal(&self) -> i32 {
        self.next_id
    }

    /// Adds a communicator (its agreed id in `record`); a handle still
    /// live (freed past this module) is taken over by the new record.
    pub fn add(&mut self, record: Record) -> usize {
        self.next_id = self.next_id.max(record.id + 1);
        if let Some(old) = self.live.remove(&record.handle) {
            self.records[old].freed = true;
        }
        let index = self.records.len();
        self.live.insert(record.handle, index);
        self.records.push(record);
        index
    }

    /// The live record of `handle`.
    pub fn get(&self, handle: u64) -> Option<&Record> {
        self.live.get(&handle).map(|&i| &self.records[i])
    }

    /// Marks `handle`'s communicator freed; false if it was not known.
    pub fn free(&mut self, handle: u64) -> bool {
        match self.live.remove(&handle) {
            Some(i) => {
                self.records[i].freed = true;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: i32, handle: u64, members: &[i32]) -> Record {
        Record {
            id,
            leader: leader(members, &[]),
            kind: Kind::Split,
            parent: 0,
            rank: 0,
            members: members.to_vec(),
            remote: Vec::new(),
            inter: false,
            freed: false,
            handle,
        }
    }

    #[test]
    fn proposals_stay_above_every_agreed_id() {
        let mut r = Registry::default();
        assert_eq!(r.proposal(), 0);
        r.add(record(0, 10, &[0, 1]));
        assert_eq!(r.proposal(), 1);
        // Another member proposed more: the agreed id jumps, and so does the next proposal.
        r.add(record(7, 11, &[1]));
        assert_eq!(r.proposal(), 8);
    }

    #[test]
    fn a_freed_communicator_is_kept_and_its_handle_may_name_another() {
        let mut r = Registry::default();
        r.add(record(0, 10, &[0, 1]));
        r.add(record(1, 20, &[2, 0]));
        assert!(r.free(20));
        assert!(!r.free(20));
        assert!(r.get(20).is_none());
        assert!(r.records[1].freed);
        // The MPI hands the handle out again.
        r.add(record(2, 20, &[3]));
        assert_eq!(r.get(20).map(|c| c.id), Some(2));
        // A handle freed past the module and reused: the old record is closed.
        r.add(record(3, 20, &[1]));
        assert!(r.records[2].freed);
        assert_eq!(r.records.len(), 4);
        assert_eq!(r.records.iter().filter(|c| !c.freed).count(), 2);
    }

    #[test]
    fn the_leader_is_the_lowest_world_rank_of_both_groups() {
        assert_eq!(leader(&[3, 1], &[2, 0]), 0);
        assert_eq!(leader(&[3, -1], &[]), 3);
        assert_eq!(leader(&[], &[]), -1);
    }
}
