//! Export to the Chrome trace-event JSON format, which ui.perfetto.dev and
//! chrome://tracing open: one process per rank, one thread track per
//! traced thread, MPI calls and CPU bursts as complete (`X`) slices, and a
//! flow arrow (`s` to `f`) from each send to the call where its receive
//! completed.

use crate::fields::VALUE_NAMES;
use crate::messages::messages;
use crate::trace::Trace;
use std::io::{self, Write};

/// What an export wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChromeSummary {
    /// Slices (calls and bursts).
    pub slices: u64,
    /// Message arrows.
    pub flows: u64,
}

/// Microseconds with ns precision, as JSON: `1234.567`.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// Writes the trace as Chrome JSON; `progress` is told of each event done.
pub fn write(trace: &Trace, out: &mut impl Write, progress: &dyn Fn(u64)) -> io::Result<ChromeSummary> {
    let mut sum = ChromeSummary::default();
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut first = true;
    let mut line = |out: &mut dyn Write, text: String| -> io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        out.write_all(text.as_bytes())
    };
    for rank in 0..trace.world_size {
        line(
            out,
            format!(
                "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{rank},\"tid\":0,\"args\":{{\"name\":\"rank {rank}\"}}}}"
            ),
        )?;
        line(
            out,
            format!("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{rank},\"tid\":0,\"args\":{{\"sort_index\":{rank}}}}}"),
        )?;
    }
    for s in &trace.streams {
        let (pid, tid) = (s.rank, s.thread);
        line(
            out,
            format!("{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":\"thread {tid}\"}}}}"),
        )?;
        let mut prev_end = s.events.first().map_or(0, |e| e.start);
        for e in &s.events {
            if e.start > prev_end {
                line(
                    out,
                    format!(
                        "{{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{}}}",
                        us(prev_end),
                        us(e.start - prev_end)
                    ),
                )?;
                sum.slices += 1;
            }
            prev_end = e.end;
            let mut args = String::new();
            for (name, v) in VALUE_NAMES.iter().zip(e.vals) {
                if let Some(v) = v {
                    args.push_str(&format!(",\"{name}\":{v}"));
                }
            }
            if let Some(c) = e.newcomm {
                args.push_str(&format!(",\"newcomm\":{}", c.map_or(-1, i64::from)));
            }
            if !e.done.is_empty() {
                args.push_str(&format!(",\"completed\":{}", e.done.len()));
            }
            let args = args.strip_prefix(',').unwrap_or("");
            line(
                out,
                format!(
                    "{{\"name\":\"{}\",\"cat\":\"mpi\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"args\":{{{args}}}}}",
                    json_escape(trace.routine(e)),
                    us(e.start),
                    us(e.duration())
                ),
            )?;
            sum.slices += 1;
        }
        progress(s.events.len() as u64);
    }
    for (id, m) in messages(trace).iter().enumerate() {
        let (ss, se) = m.send;
        let (rs, re) = m.recv;
        let (send, recv) = (&trace.streams[ss], &trace.streams[rs]);
        let (a, b) = (&send.events[se], &recv.events[re]);
        // Flow ends bind to the slice enclosing their time: the middle of each call.
        line(
            out,
            format!(
                "{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"s\",\"id\":{id},\"pid\":{},\"tid\":{},\"ts\":{},\"args\":{{\"bytes\":{}}}}}",
                send.rank,
                send.thread,
                us(a.start + a.duration() / 2),
                m.bytes
            ),
        )?;
        line(
            out,
            format!(
                "{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"pid\":{},\"tid\":{},\"ts\":{}}}",
                recv.rank,
                recv.thread,
                us(b.start + b.duration() / 2)
            ),
        )?;
        sum.flows += 1;
    }
    out.write_all(b"\n]}\n")?;
    Ok(sum)
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
    use crate::trace::tests::sample;

    #[test]
    fn the_export_is_valid_json_with_slices_and_arrows() {
        let t = sample();
        let mut out = Vec::new();
        let sum = write(&t, &mut out, &|_| {}).unwrap();
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
}
