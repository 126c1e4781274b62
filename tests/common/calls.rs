//! The calls of a trace as `pnmpi trace dump` prints them, for tests
//! that check an analysis against the trace's own timestamps.

use super::{pnmpi_cli, succeeded};
use std::path::Path;

/// One call of `pnmpi trace dump`: rank, its position among the rank's
/// calls, start and end (ns), routine.
#[derive(Clone, Debug)]
pub struct Call {
    pub rank: u32,
    pub index: usize,
    pub start: f64,
    pub end: f64,
    pub routine: String,
}

/// Every call of the trace, per rank, in order.
pub fn dump(trace: &Path, dir: &Path) -> Vec<Vec<Call>> {
    let out = succeeded(pnmpi_cli(&["trace", "dump", &trace.display().to_string()], dir));
    let mut ranks: Vec<Vec<Call>> = Vec::new();
    for line in out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("comm") && !l.starts_with("win "))
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        let rank: u32 = w[0].split('.').next().unwrap().parse().unwrap();
        let start: f64 = w[1].parse().unwrap();
        let dur: f64 = w[2].parse().unwrap();
        if ranks.len() <= rank as usize {
            ranks.resize(rank as usize + 1, Vec::new());
        }
        let index = ranks[rank as usize].len();
        ranks[rank as usize].push(Call {
            rank,
            index,
            start,
            end: start + dur,
            routine: w[3].to_owned(),
        });
    }
    ranks
}

/// The `k`-th call of `routine` on a rank.
pub fn nth<'a>(calls: &'a [Call], routine: &str, k: usize) -> &'a Call {
    calls
        .iter()
        .filter(|c| c.routine == routine)
        .nth(k)
        .unwrap_or_else(|| panic!("call {k} of {routine} on rank {}", calls[0].rank))
}
