//! The tracer above virtual ranks: one rank file per virtual rank, on the
//! virtual clock, in the `tracer` module's format and folder layout, so
//! that `pnmpi trace` and `pnmpi sim replay` read an N-rank run traced at
//! N virtual ranks as they read one traced in N processes.
//!
//! The tracer module itself is not loaded in this mode: its state is one
//! rank per process (its stream per thread, its clock measurement, its
//! `MPI_Init` broadcast). This layer records what it would: every call
//! that charges the rank's clock (the API layer's `CallInProgress`) is an
//! event from the clock after the compute before it to the clock at its
//! return, and the routines the replay needs also record their arguments
//! (peer, tag, communicator, bytes, root, per-peer bytes, requests created
//! and completed, statuses, and each new communicator's members as world
//! ranks). Local calls that take no virtual time (`MPI_Comm_rank`, group
//! queries, `MPI_Pack`) are not recorded.
//!
//! Each rank's events wait in a buffer of their own (`buffer`, 64 KiB by
//! default, less when many ranks share a process) and a full buffer is
//! appended to the rank's `.part` file, which is opened for that write
//! only: a process holds thousands of ranks but few descriptors. A rank
//! that finishes renames its file to `rank-NNNNN.pnr`; a rank that never
//! reaches `MPI_Finalize` leaves what it recorded in its `.part`, which
//! the merge accepts as unfinished.
//!
//! The tracer is an observer: the engine holds it and the API layer tells
//! it what each call did (`api::traced`); it reads no other layer.

use crate::options::TraceOptions;
use pnmpi_mpi_sys::{constants as c, ffi, Handle};
use pnmpi_trace::rank::{Clock, ClockPair, MpiValues, RankHeader, RawRecord};
use pnmpi_trace::rank_writer::{fresh_folder, part_path, rank_path, Appender, RankWriter};
use std::collections::HashMap;
use std::ffi::c_int;
use std::path::PathBuf;

/// Events a rank buffers by default before writing them out, and the
/// least and the total the ranks of one process may hold.
const DEFAULT_BUFFER: usize = 64 << 10;
const LEAST_BUFFER: usize = 4 << 10;
const PROCESS_BUFFERS: usize = 512 << 20;

/// The routines a trace records: the header's table, whose index is an
/// event's routine code. Only what this layer records, not the MPI's
/// 400-odd routines: every rank file starts with the table, and at
/// thousands of ranks a full one would be most of the trace.
const RECORDED: &[&str] = &[
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Finalize",
    "MPI_Wtime",
    "MPI_Send",
    "MPI_Bsend",
    "MPI_Rsend",
    "MPI_Ssend",
    "MPI_Isend",
    "MPI_Ibsend",
    "MPI_Irsend",
    "MPI_Issend",
    "MPI_Recv",
    "MPI_Irecv",
    "MPI_Sendrecv",
    "MPI_Sendrecv_replace",
    "MPI_Probe",
    "MPI_Iprobe",
    "MPI_Send_init",
    "MPI_Bsend_init",
    "MPI_Rsend_init",
    "MPI_Ssend_init",
    "MPI_Recv_init",
    "MPI_Start",
    "MPI_Startall",
    "MPI_Request_free",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Waitany",
    "MPI_Waitsome",
    "MPI_Test",
    "MPI_Testall",
    "MPI_Testany",
    "MPI_Testsome",
    "MPI_Barrier",
    "MPI_Ibarrier",
    "MPI_Bcast",
    "MPI_Ibcast",
    "MPI_Reduce",
    "MPI_Ireduce",
    "MPI_Allreduce",
    "MPI_Iallreduce",
    "MPI_Scan",
    "MPI_Exscan",
    "MPI_Iscan",
    "MPI_Iexscan",
    "MPI_Reduce_scatter_block",
    "MPI_Reduce_scatter",
    "MPI_Ireduce_scatter_block",
    "MPI_Ireduce_scatter",
    "MPI_Gather",
    "MPI_Igather",
    "MPI_Gatherv",
    "MPI_Igatherv",
    "MPI_Allgather",
    "MPI_Iallgather",
    "MPI_Allgatherv",
    "MPI_Iallgatherv",
    "MPI_Scatter",
    "MPI_Iscatter",
    "MPI_Scatterv",
    "MPI_Iscatterv",
    "MPI_Alltoall",
    "MPI_Ialltoall",
    "MPI_Alltoallv",
    "MPI_Ialltoallv",
    "MPI_Comm_dup",
    "MPI_Comm_split",
    "MPI_Comm_split_type",
    "MPI_Comm_create",
    "MPI_Cart_create",
    "MPI_Buffer_attach",
    "MPI_Buffer_detach",
    "MPI_Win_create",
    "MPI_Win_allocate",
    "MPI_Win_allocate_shared",
    "MPI_Win_create_dynamic",
    "MPI_Win_free",
    "MPI_Put",
    "MPI_Get",
    "MPI_Rput",
    "MPI_Rget",
    "MPI_Accumulate",
    "MPI_Raccumulate",
    "MPI_Get_accumulate",
    "MPI_Rget_accumulate",
    "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
    "MPI_Win_fence",
    "MPI_Win_post",
    "MPI_Win_start",
    "MPI_Win_complete",
    "MPI_Win_wait",
    "MPI_Win_test",
    "MPI_Win_lock",
    "MPI_Win_unlock",
    "MPI_Win_lock_all",
    "MPI_Win_unlock_all",
    "MPI_Win_flush",
    "MPI_Win_flush_local",
    "MPI_Win_flush_all",
    "MPI_Win_flush_local_all",
    "MPI_Win_sync",
];

/// Longest folder path process 0 hands to the others.
const PATH_MAX: usize = 4096;

/// The trace of this process's virtual ranks.
pub struct Trace {
    dir: PathBuf,
    /// The first rank of this process's block.
    first: u32,
    ranks: Vec<RankTrace>,
    /// Routine name to its index in the header's table.
    ids: HashMap<&'static str, u32>,
    /// The header every rank's file starts with, but for its rank.
    header: RankHeader,
    buffer: usize,
}

/// One rank's file in progress.
struct RankTrace {
    w: RankWriter,
    /// Whether its `.part` file was written to yet.
    written: bool,
    /// Whether the rank finalized (its file is complete).
    finished: bool,
    /// The event of the call in progress.
    rec: RawRecord,
    /// Calls in progress (a routine built on another records once).
    depth: u32,
}

/// The virtual clock as the trace's nanoseconds.
fn ns(t: f64) -> u64 {
    t.max(0.0).round() as u64
}

impl Trace {
    /// Agrees on the folder and the run id with the other processes
    /// (process 0 decides; a collective of the native MPI, before any
    /// rank runs) and prepares the ranks `first..first + here` of `n`.
    pub fn open(opts: &TraceOptions, n: u32, first: u32, here: u32) -> Result<Trace, String> {
        let (dir, run_id) = agree_on_output(opts)?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create the trace folder {}: {e}", dir.display()))?;
        let buffer = opts
            .buffer
            .unwrap_or_else(|| (PROCESS_BUFFERS / here.max(1) as usize).clamp(LEAST_BUFFER, DEFAULT_BUFFER));
        let ids = RECORDED.iter().enumerate().map(|(i, &s)| (s, i as u32)).collect();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        let header = RankHeader {
            rank: 0,
            world_size: n,
            run_id,
            clock: Clock::Monotonic,
            start: ClockPair::default(),
            pid: std::process::id(),
            host,
            mpi: format!("{} (virtual ranks)", pnmpi_mpi_sys::FLAVOR),
            values: MpiValues {
                comm_world: c::COMM_WORLD().bits(),
                comm_self: c::COMM_SELF().bits(),
                comm_null: c::COMM_NULL().bits(),
                request_null: c::REQUEST_NULL().bits(),
                any_source: i64::from(c::ANY_SOURCE()),
                proc_null: i64::from(c::PROC_NULL()),
                any_tag: i64::from(c::ANY_TAG()),
                root: i64::from(c::ROOT()),
            },
            routines: RECORDED.iter().map(|s| s.to_string()).collect(),
        };
        let ranks = (0..here)
            .map(|_| RankTrace {
                w: RankWriter::new(buffer),
                written: false,
                finished: false,
                rec: RawRecord::default(),
                depth: 0,
            })
            .collect();
        Ok(Trace {
            dir,
            first,
            ranks,
            ids,
            header,
            buffer,
        })
    }

    /// The folder the rank files go to.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Bytes of events each rank buffers.
    pub fn buffer(&self) -> usize {
        self.buffer
    }

    fn part(&self, r: u32) -> PathBuf {
        part_path(&rank_path(&self.dir, r))
    }

    fn rank(&mut self, r: u32) -> &mut RankTrace {
        &mut self.ranks[(r - self.first) as usize]
    }

    /// Starts rank `r`'s file: its header and opening clock pair.
    pub fn start(&mut self, r: u32) {
        let header = RankHeader {
            rank: r,
            ..self.header.clone()
        };
        self.rank(r).w.start(&header, 0);
    }

    /// Runs `write` with rank `r`'s writer and its `.part` file, which it
    /// opens only if it writes. The first write goes to a temporary file
    /// renamed to the `.part` once written, so that a process killed
    /// meanwhile (another process's `MPI_Abort`) leaves no empty `.part`
    /// for the merge to stop at.
    fn write_out(
        &mut self,
        r: u32,
        write: impl FnOnce(&mut RankWriter, &mut Appender) -> std::io::Result<()>,
    ) -> Result<(), String> {
        let path = self.part(r);
        let rt = self.rank(r);
        let fresh = !rt.written;
        let first = part_path(&path);
        let mut out = Appender::new(if fresh { &first } else { &path }, fresh);
        let mut done = write(&mut rt.w, &mut out);
        if fresh && out.opened() {
            drop(out);
            done = done.and_then(|()| std::fs::rename(&first, &path));
            rt.written = true;
        }
        done.map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// A call of `routine` starts at virtual time `at` on rank `r`.
    pub fn begin(&mut self, r: u32, routine: &str, at: f64) -> Result<(), String> {
        let id = self.ids.get(routine).copied();
        let rt = self.rank(r);
        rt.depth += 1;
        if rt.depth == 1 {
            rt.rec.routine = id.ok_or_else(|| {
                format!("{routine} is missing from the trace's routine table (a bug of pnmpi)")
            })?;
            rt.rec.start = ns(at);
        }
        Ok(())
    }

    /// The event of rank `r`'s call in progress, to add arguments to.
    pub fn event(&mut self, r: u32) -> &mut RawRecord {
        &mut self.rank(r).rec
    }

    /// Rank `r`'s call ends at `at`: the outermost one is recorded.
    pub fn end(&mut self, r: u32, at: f64) -> Result<(), String> {
        let rt = self.rank(r);
        rt.depth -= 1;
        if rt.depth > 0 {
            return Ok(());
        }
        rt.rec.end = ns(at).max(rt.rec.start);
        let mut rec = std::mem::take(&mut rt.rec);
        let written = self.write_out(r, |w, out| w.event(&rec.as_event(), out));
        clear(&mut rec);
        self.rank(r).rec = rec;
        written
    }

    /// Rank `r` finalized at `at`: its file is complete and gets its name.
    pub fn finish(&mut self, r: u32, at: f64) -> Result<(), String> {
        self.write_out(r, |w, out| w.finish(ns(at), out))?;
        self.rank(r).finished = true;
        let path = rank_path(&self.dir, r);
        std::fs::rename(part_path(&path), &path).map_err(|e| format!("cannot name {}: {e}", path.display()))
    }

    /// The run stops early (`MPI_Abort`, an error): what this process's
    /// ranks recorded is written out to their `.part` files, which the
    /// merge reads as unfinished.
    pub fn abandon(&mut self) {
        let n = self.close();
        if n > 0 {
            pnmpi_sdk::say::unranked(
                "vranks",
                pnmpi_sdk::say::Level::Note,
                format_args!(
                    "tracer: the partial traces of {n} ranks are in {} (.part files)",
                    self.dir().display()
                ),
            );
        }
    }

    /// Writes out what the ranks that did not finish recorded (their
    /// files stay `.part`); returns how many there were.
    pub fn close(&mut self) -> usize {
        let mut unfinished = 0;
        for i in 0..self.ranks.len() {
            let r = self.first + i as u32;
            let rt = &self.ranks[i];
            if rt.finished || (!rt.written && !rt.w.pending()) {
                continue;
            }
            unfinished += 1;
            let at = rt.rec.start;
            if let Err(e) = self.write_out(r, |w, out| w.flush(at, out)) {
                pnmpi_sdk::say::unranked(
                    "vranks",
                    pnmpi_sdk::say::Level::Warning,
                    format_args!("tracer: {e}"),
                );
            }
        }
        unfinished
    }
}

/// Empties an event for the next call, keeping its lists' memory.
fn clear(rec: &mut RawRecord) {
    let mut reqs = std::mem::take(&mut rec.reqs);
    let mut done = std::mem::take(&mut rec.done);
    reqs.clear();
    done.clear();
    *rec = RawRecord {
        reqs,
        done,
        ..RawRecord::default()
    };
}

/// Process 0 picks the folder (the tracer's `outdir`, else a fresh one)
/// and a run id, and tells the others: the folder's path is broadcast
/// over the native MPI, as the tracer does at `MPI_Init`.
fn agree_on_output(opts: &TraceOptions) -> Result<(PathBuf, u64), String> {
    let mut me: c_int = 0;
    // SAFETY: the native MPI is initialized; the output is local.
    unsafe { ffi::PMPI_Comm_rank(c::COMM_WORLD(), &mut me) };
    let mut path = [0u8; PATH_MAX];
    let mut run_id = 0u64;
    if me == 0 {
        let dir = match &opts.dir {
            Some(d) => std::fs::create_dir_all(d).map(|()| PathBuf::from(d)),
            None => fresh_folder(),
        };
        match dir {
            Ok(d) => {
                let bytes = d.as_os_str().as_encoded_bytes();
                if bytes.len() < PATH_MAX {
                    path[..bytes.len()].copy_from_slice(bytes);
                }
            }
            Err(e) => pnmpi_sdk::say::unranked(
                "vranks",
                pnmpi_sdk::say::Level::Warning,
                format_args!("tracer: cannot create the trace folder: {e}"),
            ),
        }
        run_id = pnmpi_trace::civil::now_secs() as u64 ^ (u64::from(std::process::id()) << 32);
    }
    // SAFETY: the native MPI is initialized; every process calls these
    // broadcasts, with buffers of the sizes given.
    unsafe {
        ffi::PMPI_Bcast(
            path.as_mut_ptr().cast(),
            PATH_MAX as c_int,
            c::BYTE(),
            0,
            c::COMM_WORLD(),
        );
        ffi::PMPI_Bcast((&raw mut run_id).cast(), 1, c::UINT64_T(), 0, c::COMM_WORLD());
    }
    let len = path.iter().position(|&b| b == 0).unwrap_or(0);
    if len == 0 {
        return Err("the tracer has no folder to write to (process 0 could not create it)".into());
    }
    Ok((
        PathBuf::from(String::from_utf8_lossy(&path[..len]).into_owned()),
        run_id,
    ))
}

#[cfg(test)]
mod tests {
    use super::RECORDED;

    #[test]
    fn every_collective_the_ranks_run_is_in_the_recorded_table() {
        // The collectives are defined by a macro, blocking and
        // nonblocking form together: each name it is given must have a
        // routine code, or a traced program stops at its first call.
        let sources = [include_str!("api/coll.rs"), include_str!("api/comm.rs")];
        let mut seen = 0;
        for source in sources {
            for line in source.lines() {
                let Some(rest) = line.trim().strip_prefix("collective!(") else {
                    continue;
                };
                let names = rest.split('(').next().unwrap_or_default();
                for name in names.split('/').map(str::trim).filter(|n| n.starts_with("MPI_")) {
                    seen += 1;
                    assert!(RECORDED.contains(&name), "{name} has no routine code");
                }
            }
        }
        assert!(seen > 20, "found only {seen} collectives");
    }
}
