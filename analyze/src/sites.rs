//! Call sites (file:line) of calls, where the trace records them (the
//! tracer does since format version 4, unless `argument sites off`):
//! the report's tables by site, the critical path's sites, and the
//! `compute site FILE:LINE xF` what-if read them from here. Each op
//! carries the site of the event it came from ([`pnmpi_sim::input::Op`]),
//! and each call kept its op's ([`crate::calls::Call::site`]).

use crate::calls::Call;
use crate::calls::OpRef;
use crate::path::{Activity, Segment};
use crate::run::Run;
use pnmpi_sim::units::Ns;
use pnmpi_trace::sites::Site;
use std::collections::HashMap;

/// The call site of a call, `file:line` (`object+0xoffset` without
/// debug information), when the trace has it; none for an op index past
/// the actor's last (the end of the run).
pub fn site(run: &Run, at: OpRef) -> Option<String> {
    run.call(at).and_then(|c| place(run, &c))
}

/// The call site of call `c` of `run`, as [`site`] names it.
pub fn place(run: &Run, c: &Call) -> Option<String> {
    run.sites.get(c.site as usize).map(Site::place)
}

/// Whether the trace records call sites at all.
pub fn recorded(run: &Run) -> bool {
    !run.sites.is_empty()
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
    let mask: Vec<bool> = run.sites.iter().map(|s| s.matches(spec)).collect();
    if mask.iter().any(|&m| m) {
        return Ok(mask);
    }
    let mut known: Vec<String> = run.sites.iter().map(Site::place).collect();
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
    use pnmpi_trace::fields::V;
    use pnmpi_trace::trace::Event;

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
        crate::load::from_trace(
            pnmpi_trace::Trace {
                world_size: 2,
                mpi: "test".into(),
                routines: routines.map(String::from).to_vec(),
                streams: vec![
                    rank(0, call(2, 2010, 2020, 0, Some(1))),
                    rank(1, call(3, 20, 2025, 1, Some(0))),
                ],
                sites: vec![file(5), file(9)],
                ..pnmpi_trace::Trace::default()
            },
            crate::load::Options::default(),
        )
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
        let setup = Setup {
            machine: fit(&run),
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
