//! Summary figures of a trace: events and time per routine, bytes per
//! event, and the compute/communication split of each rank, computed in
//! one streamed pass over the trace; one-sided communication's bytes
//! per rank and pair in [`crate::rma_stats`].

use crate::fields::V;
use crate::rma::RmaRole;
use crate::rma_stats::RmaStats;
use crate::routine::{classify, RoutineKind};
use crate::source::{for_each_event, StreamedTrace};
use crate::trace::members;
use crate::Result;
use std::fmt;

/// One routine's totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoutineStats {
    /// Routine name.
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Time inside the calls, ns.
    pub time: u64,
    /// Bytes sent (or moved, for collectives) by the calls.
    pub bytes: u64,
}

/// One rank's totals, between the end of `MPI_Init` and the start of
/// `MPI_Finalize` (as mpiP counts), so that start-up does not hide the
/// application's own split.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RankStats {
    /// World rank.
    pub rank: u32,
    /// Calls (all of them).
    pub events: u64,
    /// From the end of its first call (or `MPI_Init`) to the start of
    /// `MPI_Finalize` (or the end of its last call), ns.
    pub wall: u64,
    /// Time inside MPI, ns (summed over its threads).
    pub mpi: u64,
    /// Time between MPI calls (CPU bursts), ns.
    pub compute: u64,
}

/// The whole trace's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Ranks.
    pub world_size: u32,
    /// Threads traced.
    pub streams: usize,
    /// Calls.
    pub events: u64,
    /// Size of the encoded trace, when known.
    pub file_bytes: Option<u64>,
    /// Per routine, most time first.
    pub routines: Vec<RoutineStats>,
    /// Per rank.
    pub ranks: Vec<RankStats>,
    /// Point-to-point messages sent, and their bytes.
    pub messages: (u64, u64),
    /// Entries of the variable-length fields: completed and activated
    /// requests, members of created communicators.
    pub list_entries: u64,
    /// One-sided communication.
    pub rma: RmaStats,
}

/// Bytes of one event as a fixed-width binary record of the same fields,
/// the comparison PSINS made against MPIDtrace: routine (u16), start and
/// duration (u64 ns each; the CPU burst follows from them), peer, tag,
/// communicator, root and request (i32 each), bytes (u64).
pub const FIXED_RECORD: u64 = 2 + 8 + 8 + 4 * 5 + 8;
/// Bytes per entry of a variable-length field in that record (a u32).
pub const FIXED_ENTRY: u64 = 4;

impl Stats {
    /// Bytes per event of the encoded trace.
    pub fn bytes_per_event(&self) -> Option<f64> {
        self.file_bytes
            .filter(|_| self.events > 0)
            .map(|b| b as f64 / self.events as f64)
    }

    /// The same events as fixed-width records ([`FIXED_RECORD`]).
    pub fn fixed_width_bytes(&self) -> u64 {
        self.events * FIXED_RECORD + self.list_entries * FIXED_ENTRY
    }
}

/// One stream's first and last call, for its rank's wall time.
#[derive(Clone, Copy, Default)]
struct Span {
    /// Whether it has events.
    any: bool,
    /// The end of its first call if that is `MPI_Init`, else its start.
    first: u64,
    /// The start of its last call if that is `MPI_Finalize`, else its end.
    last: u64,
    /// The end of the previous call (CPU bursts are the gaps).
    prev_end: u64,
}

/// Computes the figures of `src`, read once stream by stream (memory: a
/// few words per stream and routine); `file_bytes` is the encoded size,
/// if known, and `progress` is told of the events read.
pub fn stats(src: &mut dyn StreamedTrace, file_bytes: Option<u64>, progress: &dyn Fn(u64)) -> Result<Stats> {
    let names = src.routines().to_vec();
    let mut routines: Vec<RoutineStats> = names
        .iter()
        .map(|n| RoutineStats {
            name: n.clone(),
            calls: 0,
            time: 0,
            bytes: 0,
        })
        .collect();
    let kinds: Vec<RoutineKind> = names.iter().map(|n| classify(n)).collect();
    let roles: Vec<Option<RmaRole>> = names.iter().map(|n| RmaRole::of(n)).collect();
    let world_size = src.world_size();
    let mut ranks: Vec<RankStats> = (0..world_size)
        .map(|rank| RankStats {
            rank,
            ..RankStats::default()
        })
        .collect();
    let edge: Vec<bool> = names
        .iter()
        .map(|n| matches!(n.as_str(), "MPI_Init" | "MPI_Init_thread" | "MPI_Finalize"))
        .collect();
    let streams = src.stream_list();
    let mut spans = vec![Span::default(); streams.len()];
    let mut messages = (0, 0);
    let mut list_entries = 0u64;
    let mut events = 0u64;
    let mut rma = RmaStats::new(world_size);
    for_each_event(src, progress, |src, si, (rank, _), _, e| {
        events += 1;
        let Some(r) = ranks.get_mut(rank as usize) else {
            return Ok(());
        };
        let routine = e.routine as usize;
        let span = &mut spans[si];
        if !span.any {
            *span = Span {
                any: true,
                first: if edge[routine] { e.end } else { e.start },
                last: 0,
                prev_end: e.start,
            };
        }
        span.last = if edge[routine] { e.start } else { e.end };
        let rs = &mut routines[routine];
        rs.calls += 1;
        rs.time += e.duration();
        let bytes = e.get(V::Bytes).unwrap_or(0).max(0) as u64;
        rs.bytes += bytes;
        r.events += 1;
        if !edge[routine] {
            r.mpi += e.duration();
        }
        r.compute += e.start.saturating_sub(span.prev_end);
        span.prev_end = e.end;
        list_entries += (e.done.len() + e.init.len()) as u64;
        if let Some(Some(id)) = e.newcomm {
            list_entries +=
                members(world_size, src.comms(), i64::from(id), rank).map_or(0, |m| m.len() as u64);
        }
        if matches!(kinds[routine], RoutineKind::Send { .. } | RoutineKind::Sendrecv) {
            messages.0 += 1;
            messages.1 += bytes;
        }
        rma.add(rank, roles[routine], e);
        Ok(())
    })?;
    for (span, (rank, _)) in spans.iter().zip(&streams) {
        if let Some(r) = ranks.get_mut(*rank as usize).filter(|_| span.any) {
            r.wall = r.wall.max(span.last.saturating_sub(span.first));
        }
    }
    routines.retain(|r| r.calls > 0);
    routines.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.name.cmp(&b.name)));
    Ok(Stats {
        world_size,
        streams: streams.len(),
        events,
        file_bytes,
        routines,
        ranks,
        messages,
        list_entries,
        rma,
    })
}

/// Formats ns with a unit that keeps 3-4 significant digits.
pub fn human_ns(ns: u64) -> String {
    match ns {
        0..=9_999 => format!("{ns} ns"),
        10_000..=9_999_999 => format!("{:.1} us", ns as f64 / 1e3),
        10_000_000..=9_999_999_999 => format!("{:.1} ms", ns as f64 / 1e6),
        _ => format!("{:.2} s", ns as f64 / 1e9),
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ranks {}  threads {}  events {}",
            self.world_size, self.streams, self.events
        )?;
        if let (Some(b), Some(per)) = (self.file_bytes, self.bytes_per_event()) {
            write!(f, "  trace bytes {b}  bytes/event {per:.2}")?;
            let fixed = self.fixed_width_bytes();
            write!(
                f,
                "  (fixed-width records: {fixed} bytes, {:.1}x larger)",
                fixed as f64 / b.max(1) as f64
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "point-to-point messages {}  bytes {}",
            self.messages.0, self.messages.1
        )?;
        let mpi_total: u64 = self.routines.iter().map(|r| r.time).sum();
        writeln!(
            f,
            "\n{:<28} {:>10} {:>12} {:>7} {:>12} {:>14}",
            "routine", "calls", "time", "%mpi", "mean", "bytes"
        )?;
        for r in &self.routines {
            writeln!(
                f,
                "{:<28} {:>10} {:>12} {:>6.1}% {:>12} {:>14}",
                r.name,
                r.calls,
                human_ns(r.time),
                percent(r.time, mpi_total),
                human_ns(r.time / r.calls.max(1)),
                r.bytes
            )?;
        }
        writeln!(
            f,
            "\nper rank, from the end of MPI_Init to the start of MPI_Finalize:"
        )?;
        writeln!(
            f,
            "{:<6} {:>10} {:>12} {:>12} {:>12} {:>7}",
            "rank", "events", "wall", "compute", "mpi", "%mpi"
        )?;
        for r in &self.ranks {
            writeln!(
                f,
                "{:<6} {:>10} {:>12} {:>12} {:>12} {:>6.1}%",
                r.rank,
                r.events,
                human_ns(r.wall),
                human_ns(r.compute),
                human_ns(r.mpi),
                percent(r.mpi, r.mpi + r.compute)
            )?;
        }
        if self.rma.any() {
            writeln!(f)?;
            write!(f, "{}", self.rma)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tests::sample_reader;

    #[test]
    fn figures_of_the_sample() {
        let (mut r, _dir) = sample_reader();
        let s = stats(&mut r, Some(1000), &|_| {}).unwrap();
        assert_eq!(s.events, 6);
        assert_eq!(s.bytes_per_event(), Some(1000.0 / 6.0));
        let isend = s.routines.iter().find(|r| r.name == "MPI_Isend").unwrap();
        assert_eq!((isend.calls, isend.time, isend.bytes), (2, 110, 1600));
        assert_eq!(s.messages, (2, 1600));
        let r0 = &s.ranks[0];
        assert_eq!((r0.events, r0.wall, r0.mpi), (4, 1000, 810));
        assert_eq!(r0.compute, 50 + 40 + 100);
        let text = s.to_string();
        assert!(text.contains("MPI_Waitall"), "{text}");
        assert!(text.contains("bytes/event 166.67"), "{text}");
    }

    #[test]
    fn human_units() {
        assert_eq!(human_ns(999), "999 ns");
        assert_eq!(human_ns(12_345), "12.3 us");
        assert_eq!(human_ns(12_345_678), "12.3 ms");
        assert_eq!(human_ns(12_345_678_901), "12.35 s");
    }
}
