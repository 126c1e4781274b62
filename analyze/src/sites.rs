//! Call sites (file:line) of calls, where the trace records them (the
//! tracer does since format version 4, unless `argument sites off`):
//! the report's tables by site, the critical path's sites, and the
//! `compute site FILE:LINE xF` what-if read them from here.
//!
//! The ops come from the replay engine's reader, which may make several
//! ops of one event (`MPI_Startall`) and carries no site; so the reader's
//! events are noted as they pass ([`Log`]: each event's start and site
//! id), and each op takes the site of the event it came from: the last
//! event that started at or before the op. A trace without sites costs
//! nothing here.

use crate::load::{OpRef, Run, Span};
use crate::path::{Activity, Segment};
use pnmpi_sim::units::Ns;
use pnmpi_trace::fields::V;
use pnmpi_trace::sites::Site;
use pnmpi_trace::trace::Event;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// "No site" in [`CallSites`].
const NONE: u32 = u32::MAX;

/// The sites of a run's ops.
#[derive(Debug, Default)]
pub struct CallSites {
    /// The trace's site table.
    pub table: Vec<Site>,
    /// Per actor, the site id of each op ([`NONE`] for none); empty when
    /// the trace records no sites.
    per_op: Vec<Vec<u32>>,
}

impl CallSites {
    /// The site of op `at`, if the trace has it.
    pub fn of(&self, at: OpRef) -> Option<&Site> {
        let id = *self.per_op.get(at.actor as usize)?.get(at.op as usize)?;
        self.table.get(id as usize)
    }

    /// The site id of op `op` of actor `actor` ([`u32::MAX`]: none).
    pub fn id(&self, actor: usize, op: usize) -> u32 {
        self.per_op
            .get(actor)
            .and_then(|ops| ops.get(op))
            .copied()
            .unwrap_or(NONE)
    }
}

/// The events' sites as the reader hands them out, until each actor's
/// ops are placed.
#[derive(Default)]
pub struct Log {
    table: Vec<Site>,
    /// Per stream (actor), (start, site id) of its events.
    events: Vec<Vec<(u64, u32)>>,
    per_op: Vec<Vec<u32>>,
}

/// A [`Log`] shared by the reader's wrapper and the loader.
pub type SharedLog = Rc<RefCell<Log>>;

impl Log {
    /// A log for a trace whose site table is `table`.
    pub fn new(table: &[Site]) -> SharedLog {
        Rc::new(RefCell::new(Log {
            table: table.to_vec(),
            ..Log::default()
        }))
    }

    /// Notes event `ev` of stream `stream`.
    pub fn note(&mut self, stream: usize, ev: &Event) {
        if self.table.is_empty() {
            return;
        }
        let id = ev
            .get(V::Site)
            .and_then(|s| u32::try_from(s).ok())
            .unwrap_or(NONE);
        if self.events.len() <= stream {
            self.events.resize_with(stream + 1, Vec::new);
        }
        self.events[stream].push((ev.start, id));
    }

    /// Places actor `actor`'s ops, whose times are `spans`, at their
    /// events' sites; forgets the actor's events.
    pub fn place(&mut self, actor: usize, spans: &[Span]) {
        if self.table.is_empty() {
            return;
        }
        let events = self.events.get_mut(actor).map(std::mem::take).unwrap_or_default();
        let mut k = 0;
        let mut current = NONE;
        let ids = spans
            .iter()
            .map(|s| {
                // Whole ns in an f64: exact below 2^53.
                let start = s.start.round().max(0.0) as u64;
                while k < events.len() && events[k].0 <= start {
                    current = events[k].1;
                    k += 1;
                }
                current
            })
            .collect();
        if self.per_op.len() <= actor {
            self.per_op.resize_with(actor + 1, Vec::new);
        }
        self.per_op[actor] = ids;
    }

    /// The sites of every op placed.
    pub fn finish(log: &SharedLog) -> CallSites {
        let mut log = log.borrow_mut();
        CallSites {
            table: std::mem::take(&mut log.table),
            per_op: std::mem::take(&mut log.per_op),
        }
    }
}

/// The call site of a call, `file:line` (`object+0xoffset` without
/// debug information), when the trace has it; none for an op index past
/// the actor's last (the end of the run).
pub fn site(run: &Run, at: OpRef) -> Option<String> {
    run.sites.of(at).map(Site::place)
}

/// Whether the trace records call sites at all.
pub fn recorded(run: &Run) -> bool {
    !run.sites.table.is_empty()
}

/// The site ids `spec` names (`FILE:LINE`, a trailing part of the path
/// allowed, or `object+0xoffset`), as a mask by id; an error naming the
/// trace's sites when it names none.
pub fn named(run: &Run, spec: &str) -> Result<Vec<bool>, String> {
    if !recorded(run) {
        return Err(
            "this trace records no call sites (traced with `argument sites off`, before format version 4, or an OTF2 archive)"
                .into(),
        );
    }
    let mask: Vec<bool> = run.sites.table.iter().map(|s| s.matches(spec)).collect();
    if mask.iter().any(|&m| m) {
        return Ok(mask);
    }
    let mut known: Vec<String> = run.sites.table.iter().map(Site::place).collect();
    known.sort();
    known.dedup();
    let more = known.len().saturating_sub(8);
    known.truncate(8);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Err(format!(
        "no call site of the trace is {spec}; it has {}{more}",
        known.join(", ")
    ))
}

/// The places of the `n` sites with the most compute on `path` (the
/// bursts before their calls), most first: the sites the opportunities
/// try to speed up.
pub fn on_path(run: &Run, path: &[Segment], n: usize) -> Vec<String> {
    let mut by_place: HashMap<String, Ns> = HashMap::new();
    for s in path {
        if let Activity::Compute { after, .. } = s.what {
            let at = OpRef {
                actor: s.actor,
                op: after,
            };
            if let Some(place) = site(run, at) {
                *by_place.entry(place).or_default() += s.len();
            }
        }
    }
    let mut places: Vec<(String, Ns)> = by_place.into_iter().filter(|(_, t)| *t > 0.0).collect();
    places.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    places.into_iter().take(n).map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(line: u32) -> Site {
        Site {
            file: Some("/src/cg.f".into()),
            line: Some(line),
            object: "/bin/cg".into(),
            offset: u64::from(line),
            ..Site::default()
        }
    }

    fn ev(start: u64, site: Option<i64>) -> Event {
        let mut e = Event {
            start,
            end: start + 5,
            ..Event::default()
        };
        e.set(V::Site, site);
        e
    }

    #[test]
    fn ops_take_the_site_of_the_event_they_came_from() {
        let log = Log::new(&[site(512), site(600)]);
        for e in [ev(10, Some(0)), ev(20, Some(1)), ev(40, None), ev(50, Some(0))] {
            log.borrow_mut().note(0, &e);
        }
        // Two ops from the event at 20 (a Startall), the second at its end;
        // the event at 40 has no site.
        let spans: Vec<Span> = [10.0, 20.0, 25.0, 40.0, 50.0]
            .map(|s| Span {
                start: s,
                end: s + 5.0,
            })
            .to_vec();
        log.borrow_mut().place(0, &spans);
        let sites = Log::finish(&log);
        let ids: Vec<u32> = (0..5).map(|i| sites.id(0, i)).collect();
        assert_eq!(ids, [0, 1, 1, NONE, 0]);
        assert_eq!(sites.id(1, 0), NONE);
        assert_eq!(
            sites.of(OpRef { actor: 0, op: 1 }).map(Site::place).as_deref(),
            Some("/src/cg.f:600")
        );
    }

    #[test]
    fn a_trace_without_sites_keeps_nothing() {
        let log = Log::new(&[]);
        log.borrow_mut().note(0, &ev(10, Some(0)));
        log.borrow_mut().place(
            0,
            &[Span {
                start: 10.0,
                end: 15.0,
            }],
        );
        let sites = Log::finish(&log);
        assert!(sites.table.is_empty() && sites.per_op.is_empty());
    }

    /// Two ranks, each of whose calls are at one site: rank 0 computes
    /// 2 us before its send (site a.c:5), rank 1 waits in its receive
    /// (site a.c:9).
    fn two_sites() -> Run {
        let routines = ["MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv"];
        let call = |r: u32, start: u64, end: u64, site: i64, peer: Option<i64>| {
            let mut e = Event {
                routine: r,
                start,
                end,
                ..Event::default()
            };
            e.set(V::Site, Some(site));
            if let Some(p) = peer {
                for (v, x) in [(V::Comm, 0), (V::Peer, p), (V::Tag, 0), (V::Bytes, 8)] {
                    e.set(v, Some(x));
                }
            }
            e
        };
        let rank = |r: u32, mid: Event| pnmpi_trace::trace::Stream {
            rank: r,
            thread: 0,
            events: vec![
                call(0, 0, 10, i64::from(r), None),
                mid,
                call(1, 2030, 2040, i64::from(r), None),
            ],
        };
        let file = |line| Site {
            file: Some("/src/a.c".into()),
            line: Some(line),
            object: "/bin/a".into(),
            offset: u64::from(line),
            ..Site::default()
        };
        crate::load::from_trace(pnmpi_trace::Trace {
            world_size: 2,
            mpi: "test".into(),
            routines: routines.map(String::from).to_vec(),
            streams: vec![
                rank(0, call(2, 2010, 2020, 0, Some(1))),
                rank(1, call(3, 20, 2025, 1, Some(0))),
            ],
            sites: vec![file(5), file(9)],
            ..pnmpi_trace::Trace::default()
        })
        .unwrap()
    }

    #[test]
    fn a_site_that_is_a_ranks_only_one_scales_as_the_rank_does() {
        use crate::spec::Change;
        use crate::whatif::{fit, Setup, Study};
        let run = two_sites();
        assert_eq!(
            super::site(&run, OpRef { actor: 0, op: 1 }).as_deref(),
            Some("/src/a.c:5")
        );
        let links = crate::matching::link(&run, 65536);
        let setup = Setup {
            machine: fit(&run, &links),
            model: "simple".into(),
        };
        let study = Study::new(&run, setup).unwrap();
        let by_rank = study
            .predict(&Change::Compute {
                rank: Some(0),
                factor: 0.5,
            })
            .unwrap();
        let by_site = study
            .predict(&Change::ComputeSite {
                site: "a.c:5".into(),
                factor: 0.5,
            })
            .unwrap();
        assert!(by_rank.gain_s > 0.9e-6, "{by_rank:?}");
        assert_eq!(by_site.runtime_s, by_rank.runtime_s);
        // Rank 1's site: its bursts are not on the path, nothing gained.
        let other = study
            .predict(&Change::ComputeSite {
                site: "a.c:9".into(),
                factor: 0.5,
            })
            .unwrap();
        assert!(other.gain_s < by_rank.gain_s / 10.0, "{other:?}");
        let e = study
            .predict(&Change::ComputeSite {
                site: "b.c:5".into(),
                factor: 0.5,
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no call site of the trace is b.c:5") && e.contains("/src/a.c:9"),
            "{e}"
        );
    }
}
