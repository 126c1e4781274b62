//! Export to the Chrome trace-event JSON format, which ui.perfetto.dev and
//! chrome://tracing open: one process per rank, one thread track per
//! traced thread, MPI calls and CPU bursts as complete (`X`) slices, and a
//! flow arrow (`s` to `f`) from each send to the call where its receive
//! completed. A caller may add tracks of its own to each rank's process
//! ([`Mark`]): `pnmpi trace export --wait-states` adds the wait states and
//! the critical path that `pnmpi-analyze` found.

use crate::error::Error;
use crate::fields::VALUE_NAMES;
use crate::messages::Matcher;
use crate::rma;
use crate::source::{for_each_event, StreamedTrace};
use crate::Result;
use std::io::{self, Write};

/// What an export wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChromeSummary {
    /// Slices (calls and bursts).
    pub slices: u64,
    /// Message arrows.
    pub flows: u64,
}

/// A slice on an extra track of a rank's process: what an analysis found
/// there (a wait state, a stretch of the critical path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// World rank: the process it goes in.
    pub rank: u32,
    /// The track's name ("wait states"); one track per name and rank.
    pub track: &'static str,
    /// Start, ns on the trace clock.
    pub start: u64,
    /// End.
    pub end: u64,
    /// The slice's name.
    pub name: String,
    /// Shown in the slice's arguments as `detail`.
    pub detail: String,
}

/// Thread ids of the extra tracks: above any traced thread's index.
const MARK_TID: u32 = 1 << 20;

/// Microseconds with ns precision, as JSON: `1234.567`.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The metadata line naming a stream's track.
fn thread_name((pid, tid): (u32, u32)) -> String {
    format!("{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":\"thread {tid}\"}}}}")
}

/// Writes the lines of the `traceEvents` array, commas between them.
struct Lines<'a> {
    out: &'a mut dyn Write,
    first: bool,
}

impl Lines<'_> {
    fn put(&mut self, text: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(text.as_bytes())
    }
}

/// Writes the trace as Chrome JSON to `out` (named `out_name` in errors),
/// streamed: the slices in a first pass over `src`, which also notes where
/// each receive completed; the message arrows, in the order of their
/// sends, in a second ([`Matcher`]). `progress` is told of the events
/// read, twice each.
pub fn write(
    src: &mut dyn StreamedTrace,
    out: &mut dyn Write,
    out_name: &str,
    progress: &dyn Fn(u64),
) -> Result<ChromeSummary> {
    write_marked(src, out, out_name, progress, &[])
}

/// [`write()`], with `marks` on extra tracks of the ranks' processes.
pub fn write_marked(
    src: &mut dyn StreamedTrace,
    out: &mut dyn Write,
    out_name: &str,
    progress: &dyn Fn(u64),
    marks: &[Mark],
) -> Result<ChromeSummary> {
    let io = |e| Error::io(out_name, e);
    let mut sum = ChromeSummary::default();
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
        .map_err(io)?;
    let mut lines = Lines { out, first: true };
    for rank in 0..src.world_size() {
        lines
            .put(&format!(
                "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{rank},\"tid\":0,\"args\":{{\"name\":\"rank {rank}\"}}}}"
            ))
            .map_err(io)?;
        lines
            .put(&format!("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{rank},\"tid\":0,\"args\":{{\"sort_index\":{rank}}}}}"))
            .map_err(io)?;
    }
    let routines: Vec<String> = src.routines().iter().map(|n| json_escape(n)).collect();
    let sites: Vec<String> = src.sites().iter().map(|s| json_escape(&s.to_string())).collect();
    let mut m = Matcher::new(src.routines());
    let streams = src.stream_list();
    let (mut prev_end, mut named) = (0, 0);
    for_each_event(src, progress, |_, si, (pid, tid), ei, e| {
        m.receives(si, pid, ei, e);
        if ei == 0 {
            // Every track is named, streams without events too.
            while named <= si {
                lines.put(&thread_name(streams[named])).map_err(io)?;
                named += 1;
            }
            prev_end = e.start;
        }
        if e.start > prev_end {
            lines
                .put(&format!(
                    "{{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{}}}",
                    us(prev_end),
                    us(e.start - prev_end)
                ))
                .map_err(io)?;
            sum.slices += 1;
        }
        prev_end = e.end;
        let mut args = String::new();
        for (name, v) in VALUE_NAMES.iter().zip(e.vals) {
            match (v, *name) {
                (Some(v), "site") => match usize::try_from(v).ok().and_then(|i| sites.get(i)) {
                    Some(site) => args.push_str(&format!(",\"site\":\"{site}\"")),
                    None => args.push_str(&format!(",\"site\":{v}")),
                },
                (Some(v), "op") => args.push_str(&format!(",\"op\":\"{}\"", rma::op_name(v))),
                (Some(v), "assert") => args.push_str(&format!(",\"assert\":\"{}\"", rma::assert_text(v))),
                (Some(v), "lock") => args.push_str(&format!(",\"lock\":\"{}\"", rma::lock_name(v))),
                (Some(v), _) => args.push_str(&format!(",\"{name}\":{v}")),
                (None, _) => {}
            }
        }
        if let Some(c) = e.newcomm {
            args.push_str(&format!(",\"newcomm\":{}", c.map_or(-1, i64::from)));
        }
        if let Some(w) = e.newwin {
            args.push_str(&format!(",\"newwin\":{},\"disp_unit\":{}", w.id, w.disp_unit));
        }
        if let Some(g) = &e.group {
            let g: Vec<String> = g.iter().map(i64::to_string).collect();
            args.push_str(&format!(",\"group\":[{}]", g.join(",")));
        }
        if !e.done.is_empty() {
            args.push_str(&format!(",\"completed\":{}", e.done.len()));
        }
        let args = args.strip_prefix(',').unwrap_or("");
        lines
            .put(&format!(
                "{{\"name\":\"{}\",\"cat\":\"mpi\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"args\":{{{args}}}}}",
                routines.get(e.routine as usize).map_or("?", String::as_str),
                us(e.start),
                us(e.duration())
            ))
            .map_err(io)?;
        sum.slices += 1;
        Ok(())
    })?;
    while named < streams.len() {
        lines.put(&thread_name(streams[named])).map_err(io)?;
        named += 1;
    }
    sum.slices += put_marks(&mut lines, marks).map_err(io)?;
    while m.read_again() {
        for_each_event(src, &|_| {}, |_, si, (rank, _), ei, e| {
            m.receives(si, rank, ei, e);
            Ok(())
        })?;
    }
    m.end_receives();
    let mut sent = Vec::new();
    let mut id = 0u64;
    for_each_event(src, progress, |_, si, (rank, thread), ei, e| {
        m.sends(si, rank, ei, e, &mut sent);
        for msg in &sent {
            let (to_rank, to_thread) = streams[msg.recv.0];
            // Flow ends bind to the slice enclosing their time: the middle of each call.
            lines
                .put(&format!(
                    "{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"s\",\"id\":{id},\"pid\":{rank},\"tid\":{thread},\"ts\":{},\"args\":{{\"bytes\":{}}}}}",
                    us(msg.send_mid),
                    msg.bytes
                ))
                .map_err(io)?;
            lines
                .put(&format!(
                    "{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"pid\":{to_rank},\"tid\":{to_thread},\"ts\":{}}}",
                    us(msg.recv_mid)
                ))
                .map_err(io)?;
            id += 1;
        }
        Ok(())
    })?;
    sum.flows = id;
    lines.out.write_all(b"\n]}\n").map_err(io)?;
    Ok(sum)
}

/// Writes the marks, each extra track named once; returns the slices.
fn put_marks(lines: &mut Lines<'_>, marks: &[Mark]) -> io::Result<u64> {
    let mut tracks: Vec<&str> = Vec::new();
    let mut named = std::collections::HashSet::new();
    for m in marks {
        let t = match tracks.iter().position(|&t| t == m.track) {
            Some(t) => t,
            None => {
                tracks.push(m.track);
                tracks.len() - 1
            }
        };
        let tid = MARK_TID + t as u32;
        if named.insert((m.rank, tid)) {
            lines.put(&format!(
                "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{tid},\"args\":{{\"name\":\"{}\"}}}}",
                m.rank,
                json_escape(m.track)
            ))?;
        }
        lines.put(&format!(
            "{{\"name\":\"{}\",\"cat\":\"analysis\",\"ph\":\"X\",\"pid\":{},\"tid\":{tid},\"ts\":{},\"dur\":{},\"args\":{{\"detail\":\"{}\"}}}}",
            json_escape(&m.name),
            m.rank,
            us(m.start),
            us(m.end.saturating_sub(m.start)),
            json_escape(&m.detail)
        ))?;
    }
    Ok(marks.len() as u64)
}

fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tests::sample_reader;

    #[test]
    fn the_export_is_valid_json_with_slices_and_arrows() {
        let (mut r, _dir) = sample_reader();
        let mut out = Vec::new();
        let sum = write(&mut r, &mut out, "out", &|_| {}).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        let xs: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(xs.len() as u64, sum.slices);
        for x in &xs {
            for key in ["name", "cat", "pid", "tid", "ts", "dur"] {
                assert!(!x[key].is_null(), "{key} missing in {x}");
            }
        }
        let isend = xs.iter().find(|x| x["name"] == "MPI_Isend").unwrap();
        assert_eq!(isend["args"]["bytes"], 800);
        assert_eq!(isend["ts"].as_f64(), Some(0.1));
        // Rank 0's second Isend (tag 5, to rank 1) matches rank 1's
        // wildcard receive, which completed as (0, 5): the first Isend does.
        assert_eq!(sum.flows, 1);
        let s = events.iter().find(|e| e["ph"] == "s").unwrap();
        let f = events.iter().find(|e| e["ph"] == "f").unwrap();
        assert_eq!(s["id"], f["id"]);
        assert_eq!((s["pid"].as_u64(), f["pid"].as_u64()), (Some(0), Some(1)));
        assert_eq!(json_escape("a\"b\\\n"), "a\\\"b\\\\\\u000a");
    }

    #[test]
    fn marks_go_on_named_tracks_of_their_rank() {
        let (mut r, _dir) = sample_reader();
        let mark = |rank, name: &str| Mark {
            rank,
            track: "wait states",
            start: 1000,
            end: 3500,
            name: name.into(),
            detail: "waits for \"rank 0\"".into(),
        };
        let mut out = Vec::new();
        let plain = write(&mut r, &mut Vec::new(), "out", &|_| {}).unwrap();
        let sum = write_marked(
            &mut r,
            &mut out,
            "out",
            &|_| {},
            &[mark(1, "Late Sender"), mark(1, "Late Sender")],
        )
        .unwrap();
        assert_eq!(sum.slices, plain.slices + 2);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        let named: Vec<_> = events
            .iter()
            .filter(|e| e["args"]["name"] == "wait states")
            .collect();
        assert_eq!(named.len(), 1);
        let tid = named[0]["tid"].clone();
        let slices: Vec<_> = events.iter().filter(|e| e["cat"] == "analysis").collect();
        assert_eq!(slices.len(), 2);
        assert_eq!((slices[0]["pid"].as_u64(), &slices[0]["tid"]), (Some(1), &tid));
        assert_eq!(
            (slices[0]["ts"].as_f64(), slices[0]["dur"].as_f64()),
            (Some(1.0), Some(2.5))
        );
        assert_eq!(slices[0]["args"]["detail"], "waits for \"rank 0\"");
    }
}
