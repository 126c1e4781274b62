//! `pnmpi trace stats --json`: the figures of [`Stats`] as one JSON
//! object, for scripts (the text report's tables, by name).

use pnmpi_trace::stats::Stats;
use serde_json::{json, Value};

/// The figures as JSON.
pub fn stats_json(s: &Stats) -> Value {
    let routines: Vec<Value> = s
        .routines
        .iter()
        .map(|r| json!({"name": r.name, "calls": r.calls, "time_ns": r.time, "bytes": r.bytes}))
        .collect();
    let ranks: Vec<Value> = s
        .ranks
        .iter()
        .map(|r| {
            json!({"rank": r.rank, "events": r.events, "wall_ns": r.wall, "compute_ns": r.compute, "mpi_ns": r.mpi})
        })
        .collect();
    let rma_ranks: Vec<Value> = s
        .rma
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({"rank": i, "calls": r.ops, "sent": r.sent, "fetched": r.fetched,
                   "as_target": r.as_target, "syncs": r.syncs})
        })
        .collect();
    let pairs: Vec<Value> = s
        .rma
        .pairs
        .iter()
        .map(|(&(origin, target), p)| {
            json!({"origin": origin, "target": target, "calls": p.ops, "sent": p.sent, "fetched": p.fetched})
        })
        .collect();
    json!({
        "ranks": s.world_size,
        "threads": s.streams,
        "events": s.events,
        "trace_bytes": s.file_bytes,
        "messages": {"count": s.messages.0, "bytes": s.messages.1},
        "routines": routines,
        "per_rank": ranks,
        "rma": {"windows_created": s.rma.creations, "per_rank": rma_ranks, "pairs": pairs},
    })
}
