//! The wait-for graph of a deadlock: each rank's blocking call, its site
//! and the ranks it waits for; the report names a cycle when there is one.

use serde::{Deserialize, Serialize};

/// What a blocked rank waits in, as it tells the watchdog.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Blocked {
    /// The rank's `MPI_COMM_WORLD` rank.
    pub rank: i32,
    /// Its blocking calls so far; this one's number.
    pub seq: u64,
    /// Whether it is blocked (false: the call completed).
    pub blocked: bool,
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

/// A cycle of ranks each waiting for the next (the last for the first),
/// if the explicit edges have one: the first found from the lowest rank.
pub fn cycle(states: &[Blocked]) -> Option<Vec<i32>> {
    let of = |r: i32| states.iter().find(|s| s.rank == r);
    for start in states {
        // Follow the first edge from each rank; a revisit closes a cycle.
        let mut path = vec![start.rank];
        let mut at = start;
        while let Some(&next) = at.peers.first() {
            if let Some(i) = path.iter().position(|&r| r == next) {
                return Some(path[i..].to_vec());
            }
            path.push(next);
            at = of(next)?;
        }
    }
    None
}

/// The report's text: one line per rank, then the cycle. `eager_limit`:
/// the bytes up to which standard sends were taken as buffered (None:
/// none was, `sends synchronous`).
pub fn describe(states: &[Blocked], eager_limit: Option<u64>) -> String {
    let mut text = String::new();
    let potential = states.iter().any(|s| s.standard_send);
    if potential {
        match eager_limit {
            Some(limit) => text.push_str(&format!(
                "potential deadlock: every rank is blocked once standard sends of more than {limit} bytes \
                 are not buffered (MPI_Send may wait for its receive: this run completes only on an MPI \
                 that buffers such messages, and hangs on one that does not, e.g. Open MPI's shared memory \
                 above 4040 bytes)"
            )),
            None => text.push_str(
                "potential deadlock: every rank is blocked once standard sends are not buffered \
                 (MPI_Send may wait for its receive; this run completes only if MPI buffers them)",
            ),
        }
    } else {
        text.push_str("deadlock: every rank is blocked");
    }
    text.push_str("; wait-for graph:");
    for s in states {
        text.push_str(&format!(
            "\n    rank {}: {} at {} waits for {}",
            s.rank, s.call, s.site, s.waits
        ));
    }
    if let Some(c) = cycle(states) {
        let names: Vec<String> = c.iter().chain(c.first()).map(|r| r.to_string()).collect();
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
            blocked: true,
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
        assert_eq!(cycle(&states), Some(vec![1, 2]));
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
}
