//! The analysis of `pnmpi trace analyze` as OTF2 metrics: each wait-state
//! pattern, and the time on the critical path, become members of one
//! metric class, accumulated from the start of the run (ns), written on
//! each rank's first location where they grow. OTF2 has no wait-state
//! record of its own; Vampir and `otf2-print` show metrics as counters.
//!
//! A metric event cannot go back in time on its location: a wait that
//! ends inside a call is written at the end of that call (its `Leave`),
//! so each value is the total up to the call that waited.

use crate::writer::{ArchiveWriter, EventWriter};
use pnmpi_trace::chrome::Mark;
use pnmpi_trace::Result;

/// The metric class's id (the archive defines one).
const CLASS: u32 = 0;

/// The member of the critical path's marks.
const PATH: &str = "critical path";

/// One location's samples, in time order, and where writing is.
#[derive(Default)]
struct Samples {
    /// (time, member, ns) sorted by time.
    at: Vec<(u64, u32, u64)>,
    /// The first not yet written.
    next: usize,
    /// Each member's total so far.
    totals: Vec<u64>,
    /// The time of the location's last record.
    last: u64,
}

/// The member a mark adds to.
fn member(m: &Mark) -> &str {
    if m.track == "critical path" {
        PATH
    } else {
        &m.name
    }
}

/// The metrics of an export, per stream.
pub(crate) struct Metrics {
    members: Vec<String>,
    streams: Vec<Samples>,
}

impl Metrics {
    /// The metrics of `marks` (wait states by pattern, the critical path)
    /// on the first stream of each mark's rank; `streams` lists the
    /// export's streams as (rank, thread).
    pub fn of(marks: &[Mark], streams: &[(u32, u32)]) -> Metrics {
        let mut members: Vec<String> = Vec::new();
        for m in marks {
            if !members.iter().any(|n| n == member(m)) {
                members.push(member(m).to_owned());
            }
        }
        members.sort();
        let mut first = std::collections::HashMap::new();
        for (i, &(rank, _)) in streams.iter().enumerate().rev() {
            first.insert(rank, i);
        }
        let mut per: Vec<Samples> = streams.iter().map(|_| Samples::default()).collect();
        for m in marks {
            if let Some(&i) = first.get(&m.rank) {
                let k = members.iter().position(|n| n == member(m)).unwrap_or(0) as u32;
                per[i].at.push((m.end, k, m.end.saturating_sub(m.start)));
            }
        }
        for s in &mut per {
            s.at.sort_unstable();
            s.totals = vec![0; members.len()];
        }
        Metrics {
            members,
            streams: per,
        }
    }

    /// Writes the samples of `stream` up to `time` (all with `None`),
    /// each at its own time or the location's last record's if later;
    /// samples written at one time share one event.
    pub fn write_until(&mut self, w: &mut EventWriter, stream: usize, time: Option<u64>) -> Result<()> {
        let Some(s) = self.streams.get_mut(stream) else {
            return Ok(());
        };
        while let Some(&(t, _, _)) = s.at.get(s.next) {
            if time.is_some_and(|until| t > until) {
                break;
            }
            let at = t.max(s.last);
            while let Some(&(t, k, ns)) = s.at.get(s.next) {
                if t.max(s.last) != at || time.is_some_and(|until| t > until) {
                    break;
                }
                s.totals[k as usize] += ns;
                s.next += 1;
            }
            w.metric(at, CLASS, &s.totals)?;
            s.last = at;
        }
        Ok(())
    }

    /// Notes that `stream`'s last record is at `time`.
    pub fn written(&mut self, stream: usize, time: u64) {
        if let Some(s) = self.streams.get_mut(stream) {
            s.last = s.last.max(time);
        }
    }

    /// Defines the members and their class, if any.
    pub fn define(&self, w: &mut ArchiveWriter) -> Result<()> {
        if self.members.is_empty() {
            return Ok(());
        }
        for (k, name) in self.members.iter().enumerate() {
            let description = if name == PATH {
                "time on the critical path (pnmpi trace analyze)".to_owned()
            } else {
                format!("time waiting as {name} (pnmpi trace analyze)")
            };
            w.metric_member(k as u32, name, &description)?;
        }
        let ids: Vec<u32> = (0..self.members.len() as u32).collect();
        w.metric_class(CLASS, &ids)
    }
}
