//! The predicted run as a Chrome/Perfetto trace (ui.perfetto.dev,
//! chrome://tracing): one process per rank, a slice per MPI call with its
//! wait, and a flow arrow per message from its send to the completion of
//! its receive. Written as the replay goes, to a temporary file renamed
//! at the end, so memory stays flat and no half-written file is left.

use crate::engine::{CallSpan, Observer};
use crate::input::Actor;
use crate::units::Ns;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes the timeline.
pub struct Timeline {
    out: BufWriter<File>,
    tmp: PathBuf,
    path: PathBuf,
    actors: Vec<Actor>,
    routines: Vec<String>,
    flows: u64,
    error: Option<io::Error>,
    finished: bool,
}

#[derive(Serialize)]
struct Slice<'a> {
    name: &'a str,
    cat: &'static str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    ts: f64,
    dur: f64,
    args: SliceArgs,
}

#[derive(Serialize)]
struct SliceArgs {
    wait_us: f64,
}

#[derive(Serialize)]
struct Flow {
    name: &'static str,
    cat: &'static str,
    ph: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    id: u64,
    pid: u32,
    tid: u32,
    ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<FlowArgs>,
}

#[derive(Serialize)]
struct FlowArgs {
    bytes: u64,
    /// Time the message waited for a bus or link before its transfer.
    resource_wait_us: f64,
}

#[derive(Serialize)]
struct Meta<'a> {
    name: &'static str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    args: MetaArgs<'a>,
}

#[derive(Serialize)]
struct MetaArgs<'a> {
    name: &'a str,
}

/// µs, the format's unit.
fn us(ns: Ns) -> f64 {
    ns / 1e3
}

impl Timeline {
    /// Starts `path` (written as `path.part` until [`Timeline::finish`]).
    pub fn create(path: &Path, actors: &[Actor], routines: &[String], nodes: &[u32]) -> io::Result<Timeline> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".part");
        let tmp = PathBuf::from(tmp);
        let mut t = Timeline {
            out: BufWriter::with_capacity(1 << 20, File::create(&tmp)?),
            tmp,
            path: path.to_owned(),
            actors: actors.to_vec(),
            routines: routines.to_vec(),
            flows: 0,
            error: None,
            finished: false,
        };
        t.out
            .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        let mut first = true;
        for a in actors.iter().filter(|a| a.thread == 0) {
            let node = nodes.get(a.rank as usize).copied().unwrap_or(0);
            let name = format!("rank {} (node {node})", a.rank);
            if !first {
                t.out.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(
                &mut t.out,
                &Meta {
                    name: "process_name",
                    ph: "M",
                    pid: a.rank,
                    tid: 0,
                    args: MetaArgs { name: &name },
                },
            )?;
        }
        Ok(t)
    }

    fn put(&mut self, v: &impl Serialize) {
        if self.error.is_some() {
            return;
        }
        let r = self
            .out
            .write_all(b",\n")
            .and_then(|_| serde_json::to_writer(&mut self.out, v).map_err(io::Error::other));
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    /// Ends the JSON and renames the file into place.
    pub fn finish(mut self) -> io::Result<(PathBuf, u64)> {
        if let Some(e) = self.error.take() {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(e);
        }
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        std::fs::rename(&self.tmp, &self.path)?;
        self.finished = true;
        Ok((self.path.clone(), self.flows))
    }
}

impl Observer for Timeline {
    fn call(&mut self, actor: usize, c: &CallSpan) {
        let a = self.actors[actor];
        let name = self.routines.get(c.routine as usize).cloned().unwrap_or_default();
        self.put(&Slice {
            name: &name,
            cat: "mpi",
            ph: "X",
            pid: a.rank,
            tid: a.thread,
            ts: us(c.start),
            dur: us(c.end - c.start),
            args: SliceArgs { wait_us: us(c.wait) },
        });
    }

    fn message(&mut self, src: usize, dst: usize, sent: Ns, received: Ns, bytes: u64, resource_wait: Ns) {
        let (s, d) = (self.actors[src], self.actors[dst]);
        self.flows += 1;
        let id = self.flows;
        self.put(&Flow {
            name: "message",
            cat: "message",
            ph: "s",
            bp: None,
            id,
            pid: s.rank,
            tid: s.thread,
            ts: us(sent),
            args: Some(FlowArgs {
                bytes,
                resource_wait_us: us(resource_wait),
            }),
        });
        // The receive's slice ends at `received`: land half a ns inside it.
        self.put(&Flow {
            name: "message",
            cat: "message",
            ph: "f",
            bp: Some("e"),
            id,
            pid: d.rank,
            tid: d.thread,
            ts: us((received - 0.5).max(sent)),
            args: None,
        });
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        // Not finished (an error stopped the replay): leave no partial file.
        if !self.finished {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
