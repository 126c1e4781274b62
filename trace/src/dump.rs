//! `pnmpi trace dump`: every event as one line of text,
//! `rank.thread start_ns duration_ns routine key=value...`, after the
//! communicator and window tables, for reading a trace with grep and
//! less. Streamed:
//! one event in memory (a folder is read twice, since the header lists the
//! events and communicators before them).

use crate::error::Error;
use crate::fields::{NV, VALUE_NAMES};
use crate::rma;
use crate::sites::Site;
use crate::source::{for_each_event_of, StreamedTrace};
use crate::trace::{Event, ReqRef};
use crate::Result;
use std::io::Write;

/// What an event's line refers to: routine names and the streams.
struct Names<'a> {
    routines: &'a [String],
    streams: &'a [(u32, u32)],
    sites: &'a [Site],
}

impl Names<'_> {
    fn req(&self, r: Option<ReqRef>) -> String {
        match r.and_then(|r| self.streams.get(r.stream as usize).map(|s| (s, r.index))) {
            Some(((rank, thread), index)) => format!("{rank}.{thread}#{index}"),
            None => "?".into(),
        }
    }

    fn event_line(&self, rank: u32, thread: u32, e: &Event) -> String {
        let routine = self.routines.get(e.routine as usize).map_or("?", String::as_str);
        let mut line = format!("{rank}.{thread} {} {} {routine}", e.start, e.duration());
        for (name, v) in VALUE_NAMES.iter().zip(e.vals).take(NV) {
            if let Some(v) = v {
                if *name == "reqs" {
                    let last = e.first_req + (v.max(1) as u32) - 1;
                    line.push_str(&format!(
                        " reqs={}",
                        if last > e.first_req {
                            format!("{}-{last}", e.first_req)
                        } else {
                            e.first_req.to_string()
                        }
                    ));
                } else if *name == "site" {
                    // `site=file:line` (`object+0xoffset` without debug
                    // information); the id if the table lacks it.
                    match usize::try_from(v).ok().and_then(|i| self.sites.get(i)) {
                        Some(site) => line.push_str(&format!(" site={}", site.place())),
                        None => line.push_str(&format!(" site=#{v}")),
                    }
                } else if *name == "op" {
                    line.push_str(&format!(" op={}", rma::op_name(v)));
                } else if *name == "assert" {
                    line.push_str(&format!(" assert={}", rma::assert_text(v)));
                } else if *name == "lock" {
                    line.push_str(&format!(" lock={}", rma::lock_name(v)));
                } else {
                    line.push_str(&format!(" {name}={v}"));
                }
            }
        }
        if !e.done.is_empty() {
            let done: Vec<String> = e
                .done
                .iter()
                .map(|d| match d.status {
                    Some((src, tag)) => format!("{}@{src}/{tag}", self.req(d.req)),
                    None => self.req(d.req),
                })
                .collect();
            line.push_str(&format!(" done={}", done.join(",")));
        }
        if !e.init.is_empty() {
            let init: Vec<String> = e.init.iter().map(|&r| self.req(r)).collect();
            line.push_str(&format!(" init={}", init.join(",")));
        }
        match e.newcomm {
            Some(Some(id)) => line.push_str(&format!(" newcomm={id}")),
            Some(None) => line.push_str(" newcomm=null"),
            None => {}
        }
        if let Some(w) = e.newwin {
            line.push_str(&format!(" newwin={} disp_unit={}", w.id, w.disp_unit));
        }
        if let Some(g) = &e.group {
            line.push_str(&format!(" group={}", list(g)));
        }
        if let Some(c) = &e.counts {
            // Per-peer bytes, in communicator rank order.
            for (name, side) in [("sent", &c.send), ("received", &c.recv)] {
                if !side.is_empty() {
                    let v: Vec<String> = side.iter().map(i64::to_string).collect();
                    line.push_str(&format!(" {name}={}", v.join(",")));
                }
            }
        }
        line
    }
}

/// Ranks joined by commas.
fn list(v: &[i64]) -> String {
    v.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(",")
}

/// Writes the dump of `src` (only rank `only`'s events, if given) to
/// `out`, named `out_name` in errors; `progress` is told of the events
/// read (a folder's first pass included).
pub fn dump(
    src: &mut dyn StreamedTrace,
    only: Option<u32>,
    out: &mut dyn Write,
    out_name: &str,
    progress: &dyn Fn(u64),
) -> Result<()> {
    let io = |e| Error::io(out_name, e);
    let events = src.count_events(progress)?;
    let streams = src.stream_list();
    let world_size = src.world_size();
    writeln!(
        out,
        "# pnmpi trace: {world_size} ranks, {} threads, {events} events, MPI: {}",
        streams.len(),
        src.mpi()
    )
    .map_err(io)?;
    let world: Vec<String> = (0..world_size).map(|r| r.to_string()).collect();
    writeln!(out, "comm 0 world members={}", world.join(",")).map_err(io)?;
    writeln!(out, "comm 1 self").map_err(io)?;
    for (i, c) in src.comms().iter().enumerate() {
        let mut line = format!("comm {} members={}", i + 2, list(&c.members));
        if let Some(r) = &c.remote {
            line.push_str(&format!(" remote={}", list(r)));
        }
        writeln!(out, "{line}").map_err(io)?;
    }
    for (i, w) in src.wins().iter().enumerate() {
        writeln!(
            out,
            "win {i} {} comm={} members={}",
            w.kind.name(),
            w.comm,
            list(&w.members)
        )
        .map_err(io)?;
    }
    let routines = src.routines().to_vec();
    let sites = src.sites().to_vec();
    let names = Names {
        routines: &routines,
        streams: &streams,
        sites: &sites,
    };
    let wanted = |(rank, _): (u32, u32)| only.is_none_or(|r| r == rank);
    for_each_event_of(src, &wanted, progress, |_, _, (rank, thread), _, e| {
        writeln!(out, "{}", names.event_line(rank, thread, e)).map_err(io)
    })?;
    out.flush().map_err(io)
}
