//! `pnmpi trace dump`: every event as one line of text,
//! `rank.thread start_ns duration_ns routine key=value...`, after the
//! communicator table, for reading a trace with grep and less.

use crate::fields::{NV, VALUE_NAMES};
use crate::trace::{Event, ReqRef, Trace};
use std::io::Write;

fn req_name(trace: &Trace, r: Option<ReqRef>) -> String {
    match r.and_then(|r| trace.streams.get(r.stream as usize).map(|s| (s, r.index))) {
        Some((s, index)) => format!("{}.{}#{index}", s.rank, s.thread),
        None => "?".into(),
    }
}

fn event_line(trace: &Trace, rank: u32, thread: u32, e: &Event) -> String {
    let mut line = format!(
        "{rank}.{thread} {} {} {}",
        e.start,
        e.duration(),
        trace.routine(e)
    );
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
                Some((src, tag)) => format!("{}@{src}/{tag}", req_name(trace, d.req)),
                None => req_name(trace, d.req),
            })
            .collect();
        line.push_str(&format!(" done={}", done.join(",")));
    }
    if !e.init.is_empty() {
        let init: Vec<String> = e.init.iter().map(|&r| req_name(trace, r)).collect();
        line.push_str(&format!(" init={}", init.join(",")));
    }
    match e.newcomm {
        Some(Some(id)) => line.push_str(&format!(" newcomm={id}")),
        Some(None) => line.push_str(" newcomm=null"),
        None => {}
    }
    line
}

/// Writes the dump of `trace` (only rank `only`'s events, if given).
pub fn dump(trace: &Trace, only: Option<u32>, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "# pnmpi trace: {} ranks, {} threads, {} events, MPI: {}",
        trace.world_size,
        trace.streams.len(),
        trace.event_count(),
        trace.mpi
    )?;
    let world: Vec<String> = (0..trace.world_size).map(|r| r.to_string()).collect();
    writeln!(out, "comm 0 world members={}", world.join(","))?;
    writeln!(out, "comm 1 self")?;
    for (i, c) in trace.comms.iter().enumerate() {
        let list = |v: &[i64]| v.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(",");
        let mut line = format!("comm {} members={}", i + 2, list(&c.members));
        if let Some(r) = &c.remote {
            line.push_str(&format!(" remote={}", list(r)));
        }
        writeln!(out, "{line}")?;
    }
    for s in trace.streams.iter().filter(|s| only.is_none_or(|r| r == s.rank)) {
        for e in &s.events {
            writeln!(out, "{}", event_line(trace, s.rank, s.thread, e))?;
        }
    }
    out.flush()
}
