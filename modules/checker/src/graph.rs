//! The wait-for graph of a deadlock: a node per blocked thread (rank,
//! thread), its blocking call, its site and the ranks it waits for; the
//! report names a cycle when there is one. A thread waiting for a rank
//! may be waiting for any of its blocked threads (MPI does not say which
//! thread will send), its own rank's other threads included.

use serde::{Deserialize, Serialize};

/// What a blocked thread waits in, as its rank tells the watchdog.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Blocked {
    /// The rank's `MPI_COMM_WORLD` rank.
    pub rank: i32,
    /// The thread's number in its rank (`threads`: 0 initialized MPI).
    pub thread: u32,
    /// The routine.
    pub call: String,
    /// Its call site.
    pub site: String,
    /// The world ranks it waits for; empty with `any`.
    pub peers: Vec<i32>,
    /// It waits for any rank of its communicator (a wildcard receive).
    pub any: bool,
    /// What it waits for, in words.
    pub waits: String,
    /// A standard send checked as synchronous: it would complete if MPI
    /// buffered it.
    pub standard_send: bool,
}

/// A node of the graph: (rank, thread).
pub type Node = (i32, u32);

/// The nodes a blocked thread may wait for: the blocked threads of each
/// rank it waits for but itself, or itself if it waits for its own rank
/// and no other thread of it is blocked (a message only it could send).
fn successors(states: &[Blocked], s: &Blocked) -> Vec<usize> {
    let mut next = Vec::new();
    for &peer in &s.peers {
        let of_peer = states
            .iter()
            .enumerate()
            .filter(|(_, t)| t.rank == peer && (t.rank, t.thread) != (s.rank, s.thread));
        let before = next.len();
        next.extend(of_peer.map(|(i, _)| i));
        if next.len() == before && peer == s.rank {
            next.extend(
                states
                    .iter()
                    .position(|t| (t.rank, t.thread) == (s.rank, s.thread)),
            );
        }
    }
    next
}

/// A cycle of blocked threads each waiting for the next (the last for
/// the first), if the explicit edges have one: the first a depth-first
/// search finds from the lowest node, taking edges in the order of the
/// ranks each waits for.
pub fn cycle(states: &[Blocked]) -> Option<Vec<Node>> {
    fn search(states: &[Blocked], at: usize, path: &mut Vec<usize>, done: &mut [bool]) -> Option<Vec<usize>> {
        if let Some(i) = path.iter().position(|&p| p == at) {
            return Some(path[i..].to_vec());
        }
        if done[at] {
            return None;
        }
        path.push(at);
        for next in successors(states, &states[at]) {
            if let Some(c) = search(states, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done[at] = true;
        None
    }
    let mut order: Vec<usize> = (0..states.len()).collect();
    order.sort_by_key(|&i| (states[i].rank, states[i].thread));
    let mut done = vec![false; states.len()];
    for start in order {
        if let Some(c) = search(states, start, &mut Vec::new(), &mut done) {
            return Some(c.iter().map(|&i| (states[i].rank, states[i].thread)).collect());
        }
    }
    None
}

/// The report's text: one line per blocked thread, then the cycle.
/// `eager_limit`: the bytes up to which standard sends were taken as
/// buffered (None: none was, `sends synchronous`). Threads are named
/// when some rank has a blocked thread other than its first.
pub fn describe(states: &[Blocked], eager_limit: Option<u64>) -> String {
    let mut text = String::new();
    let potential = states.iter().any(|s| s.standard_send);
    let threads = states.iter().any(|s| s.thread != 0);
    let name = |(rank, thread): Node| {
        if threads {
            format!("rank {rank} thread {thread}")
        } else {
            format!("rank {rank}")
        }
    };
    let every = if threads {
        "every rank is blocked (each of its threads that calls MPI blocked in MPI, or idle)"
    } else {
        "every rank is blocked"
    };
    if potential {
        match eager_limit {
            Some(limit) => text.push_str(&format!(
                "potential deadlock: {every} once standard sends of more than {limit} bytes \
                 are not buffered (MPI_Send may wait for its receive: this run completes only on an MPI \
                 that buffers such messages, and hangs on one that does not, e.g. Open MPI's shared memory \
                 above 4040 bytes)"
            )),
            None => text.push_str(&format!(
                "potential deadlock: {every} once standard sends are not buffered \
                 (MPI_Send may wait for its receive; this run completes only if MPI buffers them)",
            )),
        }
    } else {
        text.push_str(&format!("deadlock: {every}"));
    }
    text.push_str("; wait-for graph:");
    for s in states {
        text.push_str(&format!(
            "\n    {}: {} at {} waits for {}",
            name((s.rank, s.thread)),
            s.call,
            s.site,
            s.waits
        ));
    }
    if let Some(c) = cycle(states) {
        let names: Vec<String> = c
            .iter()
            .chain(c.first())
            .map(|&n| if threads { name(n) } else { n.0.to_string() })
            .collect();
        text.push_str(&format!("\n    cycle: {}", names.join(" -> ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(rank: i32, peers: &[i32]) -> Blocked {
        Blocked {
            rank,
            call: "MPI_Recv".into(),
            site: format!("a.c:{}", 10 + rank),
            peers: peers.to_vec(),
            waits: format!("rank {peers:?}"),
            ..Blocked::default()
        }
    }

    #[test]
    fn finds_the_cycle_and_names_each_rank() {
        let states = [state(0, &[1]), state(1, &[2]), state(2, &[1])];
        assert_eq!(cycle(&states), Some(vec![(1, 0), (2, 0)]));
        let text = describe(&states, None);
        assert!(text.starts_with("deadlock: every rank is blocked"));
        assert!(text.contains("rank 2: MPI_Recv at a.c:12"));
        assert!(text.contains("cycle: 1 -> 2 -> 1"));
    }

    #[test]
    fn no_cycle_without_explicit_edges() {
        let states = [state(0, &[]), state(1, &[0])];
        assert_eq!(cycle(&states), None);
        let mut send = state(0, &[1]);
        send.standard_send = true;
        let text = describe(&[send.clone(), state(1, &[0])], Some(4040));
        assert!(text.starts_with(
            "potential deadlock: every rank is blocked once standard sends of more than 4040 bytes"
        ));
        assert!(describe(&[send, state(1, &[0])], None).starts_with("potential deadlock"));
    }

    fn thread(rank: i32, thread: u32, peers: &[i32]) -> Blocked {
        Blocked {
            thread,
            ..state(rank, peers)
        }
    }

    #[test]
    fn a_cycle_between_threads_of_two_ranks_names_the_threads() {
        // Each rank's thread 1 waits for the other rank, whose thread 0
        // waits for a message from this rank.
        let states = [
            thread(0, 0, &[1]),
            thread(0, 1, &[1]),
            thread(1, 0, &[0]),
            thread(1, 1, &[0]),
        ];
        assert_eq!(cycle(&states), Some(vec![(0, 0), (1, 0)]));
        let text = describe(&states, None);
        assert!(text.contains("rank 0 thread 1: MPI_Recv at a.c:10"), "{text}");
        assert!(
            text.contains("cycle: rank 0 thread 0 -> rank 1 thread 0 -> rank 0 thread 0"),
            "{text}"
        );
    }

    #[test]
    fn a_thread_waiting_for_its_own_rank_waits_for_its_other_threads() {
        let states = [thread(0, 0, &[0]), thread(0, 1, &[0]), state(1, &[])];
        assert_eq!(cycle(&states), Some(vec![(0, 0), (0, 1)]));
        // Alone in its rank, it waits for itself: a message only it would send.
        assert_eq!(cycle(&[state(0, &[0])]), Some(vec![(0, 0)]));
        assert_eq!(cycle(&[thread(0, 1, &[1]), state(1, &[])]), None);
    }
}
