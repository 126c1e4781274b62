//! Merged traces (`.pnt`): every rank's events on one clock (rank 0's,
//! in ns from the start of the run), with communicators and requests
//! resolved, in the most compact encoding of the format.
//!
//! Compactness comes from three rules on top of varints: times are gaps
//! and durations; a value field that did not change since the previous
//! event of the same routine in the chunk is left out (one mask bit);
//! requests get implicit ids, so creating one costs nothing and completing
//! one is a short back-reference.

use crate::container::{self, FileKind};
use crate::counts::{CountsHistory, PeerBytes};
use crate::error::{Error, Malformed, Result};
use crate::fields::*;
use crate::history::{ValueHistory, HISTORY};
use crate::rma::{parse_wins, wins_payload, Win, CHUNK_WINS};
use crate::sites::{merged_sites_payload, parse_merged_sites, Site, CHUNK_MERGED_SITES};
use crate::varint::{self, Cursor};
use std::io::Write;
use std::path::Path;

/// Chunk type: the communicator table.
pub const CHUNK_COMMS: u8 = 16;
/// Chunk type: events of one thread of one rank.
pub const CHUNK_STREAM: u8 = 17;
/// Chunk type: per-rank clock alignment figures.
pub const CHUNK_CLOCKS: u8 = 18;

/// Events per `STREAM` chunk that the writer aims at; small enough that a
/// damaged chunk loses little, large enough that chunk headers cost nothing.
pub const CHUNK_EVENTS: usize = 1 << 16;

/// A communicator of the table (ids from [`FIRST_TABLE_COMM`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Comm {
    /// World ranks of its (local) group, in rank order.
    pub members: Vec<i64>,
    /// World ranks of the remote group of an intercommunicator.
    pub remote: Option<Vec<i64>>,
}

/// A request: the `index`-th request created on stream `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReqRef {
    /// Index into [`Trace::streams`].
    pub stream: u32,
    /// Creation order on that stream, from 0.
    pub index: u32,
}

/// A request that a wait, test or free completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The request, if the trace saw it created.
    pub req: Option<ReqRef>,
    /// (world source, tag) from its status, kept for receives posted with
    /// a wildcard.
    pub status: Option<(i64, i64)>,
}

/// One MPI call.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Event {
    /// Index into [`Trace::routines`].
    pub routine: u32,
    /// Entry, ns on the trace clock.
    pub start: u64,
    /// Return, ns on the trace clock.
    pub end: u64,
    /// Value fields, indexed by [`V`]. Ranks are world ranks, communicators ids.
    pub vals: [Option<i64>; NV],
    /// The id (on this stream) of the first request this call created.
    pub first_req: u32,
    /// Requests completed or freed.
    pub done: Vec<Done>,
    /// For `MPI_Start`/`MPI_Startall`: the persistent request behind each
    /// request created (activation).
    pub init: Vec<Option<ReqRef>>,
    /// The communicator created: `Some(None)` when the call returned `MPI_COMM_NULL`.
    pub newcomm: Option<Option<u32>>,
    /// Bytes to and from each peer of a `v` collective, in communicator
    /// rank order.
    pub counts: Option<PeerBytes>,
    /// The window created (format 4).
    pub newwin: Option<WinCreated>,
    /// World ranks of the group of `MPI_Win_post`/`MPI_Win_start`.
    pub group: Option<Vec<i64>>,
}

/// A window that a call created, as a merged event names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WinCreated {
    /// Its id in the window table ([`Trace::wins`]).
    pub id: u32,
    /// This process's displacement unit.
    pub disp_unit: i64,
}

impl Event {
    /// A value field.
    pub fn get(&self, v: V) -> Option<i64> {
        self.vals[v as usize]
    }

    /// Sets a value field.
    pub fn set(&mut self, v: V, value: Option<i64>) {
        self.vals[v as usize] = value;
    }

    /// How many requests the call created.
    pub fn created(&self) -> u32 {
        self.get(V::Req)
            .map_or(0, |n| n.clamp(0, i64::from(u32::MAX)) as u32)
    }

    /// The gap-free duration, ns.
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// One thread of one rank.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Stream {
    /// World rank.
    pub rank: u32,
    /// Thread index on the rank (0: the first thread that called MPI).
    pub thread: u32,
    /// Its calls, in order.
    pub events: Vec<Event>,
}

/// How one rank's clock was aligned to rank 0's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RankClock {
    /// World rank.
    pub rank: u32,
    /// Offset to rank 0 measured at `MPI_Init`, ns.
    pub init_offset: Option<i64>,
    /// Offset measured at `MPI_Finalize`, ns.
    pub fin_offset: Option<i64>,
    /// Worst round trip of the measurements, ns (the alignment's error bound).
    pub rtt: u64,
    /// Whether its rank file ended cleanly.
    pub complete: bool,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Trace {
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// MPI flavour of the run.
    pub mpi: String,
    /// Routine names; [`Event::routine`] indexes this.
    pub routines: Vec<String>,
    /// Communicators beyond world and self (id = index + [`FIRST_TABLE_COMM`]).
    pub comms: Vec<Comm>,
    /// Every thread of every rank, ordered by rank then thread.
    pub streams: Vec<Stream>,
    /// Clock alignment per rank.
    pub clocks: Vec<RankClock>,
    /// Call sites ([`V::Site`] values index this); empty when the trace
    /// records none.
    pub sites: Vec<Site>,
    /// One-sided windows ([`V::Win`] values index this).
    pub wins: Vec<Win>,
}

impl Trace {
    /// Total number of events.
    pub fn event_count(&self) -> u64 {
        self.streams.iter().map(|s| s.events.len() as u64).sum()
    }

    /// The name of an event's routine.
    pub fn routine(&self, ev: &Event) -> &str {
        self.routines.get(ev.routine as usize).map_or("?", String::as_str)
    }

    /// World ranks of communicator `id` as seen from `rank`, or `None` for
    /// an unknown id.
    pub fn members(&self, id: i64, rank: u32) -> Option<Vec<i64>> {
        members(self.world_size, &self.comms, id, rank)
    }

    /// Encodes the trace; `progress` is told of each event written.
    pub fn write(&self, out: &mut impl Write, progress: &dyn Fn(u64)) -> std::io::Result<u64> {
        let mut w = MergedWriter::new(
            out,
            self.world_size,
            &self.mpi,
            &self.routines,
            &self.comms,
            &self.clocks,
            &self.sites,
            &self.wins,
        )?;
        for (index, stream) in self.streams.iter().enumerate() {
            w.stream(index as u32, stream.rank, stream.thread, &stream.events, progress)?;
        }
        w.finish()
    }

    /// Writes the trace to `path` through a temporary file and a rename, so
    /// that a failed write never leaves a partial trace under the final name.
    pub fn save(&self, path: &Path, progress: &dyn Fn(u64)) -> Result<u64> {
        save_atomic(path, |w, tmp| {
            self.write(w, progress).map_err(|e| Error::io(tmp, e))
        })
    }

    /// Decodes a merged trace's bytes. A truncated last chunk is returned
    /// as the second value, not as an error.
    pub fn parse(data: &[u8]) -> Result<(Trace, Option<Malformed>), Malformed> {
        let file = container::parse(data)?;
        if file.kind != FileKind::Merged {
            return Err(Malformed::new(
                9,
                "a rank file, not a merged trace: merge it first",
            ));
        }
        let mut t = Trace::default();
        (t.world_size, t.mpi, t.routines) = parse_header(&mut file.header.clone())?;
        for chunk in file.chunks {
            let mut c = chunk.payload;
            match chunk.chunk_type {
                CHUNK_COMMS => parse_comms(&mut c, &mut t.comms)?,
                CHUNK_CLOCKS => parse_clocks(&mut c, &mut t.clocks)?,
                CHUNK_MERGED_SITES => parse_merged_sites(&mut c, &mut t.sites)?,
                CHUNK_WINS => parse_wins(&mut c, &mut t.wins)?,
                CHUNK_STREAM => t.stream_chunk(&mut c)?,
                _ => continue,
            }
            if !c.is_empty() {
                return Err(c.error("unexpected bytes at the end of a chunk"));
            }
        }
        Ok((t, file.truncated))
    }

    fn stream_chunk(&mut self, c: &mut Cursor<'_>) -> Result<(), Malformed> {
        let at = c.offset();
        let StreamHead {
            index,
            rank,
            thread,
            base,
            first_req,
            count,
        } = StreamHead::parse(c, 0)?;
        let i = index as usize;
        if i > self.streams.len() {
            return Err(Malformed::new(
                at,
                format!("stream {index} before stream {}", self.streams.len()),
            ));
        }
        if i == self.streams.len() {
            self.streams.push(Stream {
                rank,
                thread,
                events: Vec::with_capacity(count),
            });
        }
        let stream = &mut self.streams[i];
        if (stream.rank, stream.thread) != (rank, thread) {
            return Err(Malformed::new(
                at,
                format!("stream {index} changes rank or thread"),
            ));
        }
        let routines = u32::try_from(self.routines.len()).unwrap_or(u32::MAX);
        let mut dec = Encoder::new(index, base, first_req);
        for _ in 0..count {
            let ev = dec.decode(c, routines)?;
            stream.events.push(ev);
        }
        Ok(())
    }

    /// Reads a merged trace file; a truncated last chunk is reported in
    /// the second value.
    pub fn read(path: &Path) -> Result<(Trace, Option<Error>)> {
        let name = path.display().to_string();
        let data = std::fs::read(path).map_err(|e| Error::io(&name, e))?;
        let (t, truncated) = Trace::parse(&data).map_err(|e| e.in_file(&name))?;
        Ok((t, truncated.map(|m| m.in_file(&name))))
    }
}

/// World ranks of communicator `id` as seen from `rank`, in a world of
/// `world_size` ranks with the communicator table `comms`, or `None` for
/// an unknown id: shared by a whole [`Trace`] and the streamed readers.
pub fn members(world_size: u32, comms: &[Comm], id: i64, rank: u32) -> Option<Vec<i64>> {
    match id {
        COMM_WORLD => Some((0..i64::from(world_size)).collect()),
        COMM_SELF => Some(vec![i64::from(rank)]),
        _ => {
            let i = usize::try_from(id - FIRST_TABLE_COMM).ok()?;
            comms.get(i).map(|c| c.members.clone())
        }
    }
}

/// Writes `path` through `write`, given a buffered temporary file and its
/// name, then syncs it and renames it to `path`; on failure the temporary
/// file is removed and nothing is left under `path`.
pub(crate) fn save_atomic<T>(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>, &str) -> Result<T>,
) -> Result<T> {
    let tmp = path.with_extension("pnt.tmp");
    let name = tmp.display().to_string();
    let io = |e| Error::io(&name, e);
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = write(&mut w, &name).and_then(|out| {
        w.into_inner()
            .map_err(|e| io(e.into_error()))?
            .sync_all()
            .map_err(io)?;
        Ok(out)
    });
    match written {
        Ok(out) => {
            std::fs::rename(&tmp, path).map_err(|e| Error::io(path.display(), e))?;
            Ok(out)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes a merged trace as it goes: the header and the communicator and
/// clock tables first, then each stream's events, a chunk of at most
/// [`CHUNK_EVENTS`] at a time. It holds one chunk, so a trace of any size
/// can be written from events made on the fly.
pub struct MergedWriter<'w, W: Write> {
    out: &'w mut W,
    written: u64,
    payload: Vec<u8>,
    chunk: Vec<u8>,
    /// The places of the stream chunks, written last ([`Self::finish`]).
    index: crate::pnt_index::IndexWriter,
}

impl<'w, W: Write> MergedWriter<'w, W> {
    /// Writes the prologue and the tables.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        out: &'w mut W,
        world_size: u32,
        mpi: &str,
        routines: &[String],
        comms: &[Comm],
        clocks: &[RankClock],
        sites: &[Site],
        wins: &[Win],
    ) -> std::io::Result<MergedWriter<'w, W>> {
        let mut h = Vec::new();
        varint::push(&mut h, u64::from(world_size));
        varint::push_str(&mut h, mpi);
        varint::push(&mut h, routines.len() as u64);
        for r in routines {
            varint::push_str(&mut h, r);
        }
        let mut w = MergedWriter {
            out,
            written: 0,
            payload: Vec::new(),
            chunk: container::prologue(FileKind::Merged, &h),
            index: Default::default(),
        };
        container::push_chunk(&mut w.chunk, CHUNK_COMMS, &comms_payload(comms));
        container::push_chunk(&mut w.chunk, CHUNK_CLOCKS, &clocks_payload(clocks));
        if !sites.is_empty() {
            container::push_chunk(&mut w.chunk, CHUNK_MERGED_SITES, &merged_sites_payload(sites));
        }
        if !wins.is_empty() {
            container::push_chunk(&mut w.chunk, CHUNK_WINS, &wins_payload(wins));
        }
        w.flush_chunk()?;
        Ok(w)
    }

    fn flush_chunk(&mut self) -> std::io::Result<()> {
        self.written += self.chunk.len() as u64;
        self.out.write_all(&self.chunk)?;
        self.chunk.clear();
        Ok(())
    }

    /// Writes stream `index` (rank, thread) whole, from its events in
    /// order; `progress` is told of each chunk's events.
    pub fn stream<E: std::borrow::Borrow<Event>>(
        &mut self,
        index: u32,
        rank: u32,
        thread: u32,
        events: impl IntoIterator<Item = E>,
        progress: &dyn Fn(u64),
    ) -> std::io::Result<()> {
        let mut events = events.into_iter().peekable();
        let mut next_req = 0u32;
        let mut prev_end = events.peek().map_or(0, |e| e.borrow().start);
        while events.peek().is_some() {
            let mut body = std::mem::take(&mut self.payload);
            body.clear();
            let mut enc = Encoder::new(index, prev_end, next_req);
            let mut n = 0u64;
            for ev in events.by_ref().take(CHUNK_EVENTS) {
                enc.event(ev.borrow(), &mut body);
                n += 1;
            }
            let mut head = Vec::with_capacity(32);
            for v in [
                u64::from(index),
                u64::from(rank),
                u64::from(thread),
                prev_end,
                u64::from(next_req),
                n,
            ] {
                varint::push(&mut head, v);
            }
            let frame = container::frame(CHUNK_STREAM, &[&head, &body]);
            let crc = frame[frame.len() - 4..].try_into().map_or(0, u32::from_le_bytes);
            let at = crate::frame::ChunkAt {
                frame: self.written,
                payload: self.written + frame.len() as u64,
                len: (head.len() + body.len()) as u32,
                crc,
            };
            self.index.chunk(index, rank, thread, at, n);
            self.chunk.extend_from_slice(&frame);
            self.chunk.extend_from_slice(&head);
            self.chunk.extend_from_slice(&body);
            self.payload = body;
            self.flush_chunk()?;
            prev_end = enc.prev_end;
            next_req = enc.next_req;
            progress(n);
        }
        Ok(())
    }

    /// Writes the index of the stream chunks (`pnt_index`), which
    /// ends the file; returns the bytes written in all.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.chunk = self.index.finish(self.written);
        self.flush_chunk()?;
        Ok(self.written)
    }
}

fn comms_payload(comms: &[Comm]) -> Vec<u8> {
    let mut p = Vec::new();
    varint::push(&mut p, comms.len() as u64);
    for c in comms {
        varint::push(&mut p, u64::from(c.remote.is_some()));
        varint::put_ranks(&mut p, &c.members);
        if let Some(r) = &c.remote {
            varint::put_ranks(&mut p, r);
        }
    }
    p
}

fn clocks_payload(clocks: &[RankClock]) -> Vec<u8> {
    let mut p = Vec::new();
    varint::push(&mut p, clocks.len() as u64);
    for c in clocks {
        varint::push(&mut p, u64::from(c.rank));
        let flags = u64::from(c.init_offset.is_some())
            | u64::from(c.fin_offset.is_some()) << 1
            | u64::from(c.complete) << 2;
        varint::push(&mut p, flags);
        for o in [c.init_offset, c.fin_offset].into_iter().flatten() {
            varint::push_i(&mut p, o);
        }
        varint::push(&mut p, c.rtt);
    }
    p
}

/// A merged trace's header: world size, MPI, routine table.
pub(crate) fn parse_header(h: &mut Cursor<'_>) -> Result<(u32, String, Vec<String>), Malformed> {
    let world = h.u32()?;
    let mpi = h.string()?;
    let n = h.count(1)?;
    let routines = (0..n).map(|_| h.string()).collect::<Result<_, _>>()?;
    Ok((world, mpi, routines))
}

/// A `COMMS` chunk's communicators, appended to `out`.
pub(crate) fn parse_comms(c: &mut Cursor<'_>, out: &mut Vec<Comm>) -> Result<(), Malformed> {
    let n = c.count(2)?;
    for _ in 0..n {
        let inter = c.u64()?;
        if inter > 1 {
            return Err(c.error(format!("unknown communicator flags {inter}")));
        }
        let members = c.ranks()?;
        let remote = if inter == 1 { Some(c.ranks()?) } else { None };
        out.push(Comm { members, remote });
    }
    Ok(())
}

/// A `CLOCKS` chunk's ranks, appended to `out`.
pub(crate) fn parse_clocks(c: &mut Cursor<'_>, out: &mut Vec<RankClock>) -> Result<(), Malformed> {
    let n = c.count(3)?;
    for _ in 0..n {
        let rank = c.u32()?;
        let flags = c.u64()?;
        let init_offset = if flags & 1 != 0 { Some(c.i64()?) } else { None };
        let fin_offset = if flags & 2 != 0 { Some(c.i64()?) } else { None };
        out.push(RankClock {
            rank,
            init_offset,
            fin_offset,
            rtt: c.u64()?,
            complete: flags & 4 != 0,
        });
    }
    Ok(())
}

/// The head of a `STREAM` chunk.
pub(crate) struct StreamHead {
    pub index: u32,
    pub rank: u32,
    pub thread: u32,
    pub base: u64,
    pub first_req: u32,
    pub count: usize,
}

impl StreamHead {
    /// Parses a head from `c`, which holds the chunk's payload but for
    /// its last `beyond` bytes (0: all of it).
    pub(crate) fn parse(c: &mut Cursor<'_>, beyond: usize) -> Result<StreamHead, Malformed> {
        Ok(StreamHead {
            index: c.u32()?,
            rank: c.u32()?,
            thread: c.u32()?,
            base: c.u64()?,
            first_req: c.u32()?,
            count: c.count_beyond(4, beyond)?,
        })
    }
}

/// What a merged trace's decoder is told of the events it decodes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoding {
    /// Routines in the trace's table.
    pub(crate) routines: u32,
    /// Whether to keep the events' call sites (else read past).
    pub(crate) sites: bool,
}

/// Decodes one `STREAM` chunk's events one at a time.
pub(crate) struct ChunkDecoder(Encoder);

impl ChunkDecoder {
    pub(crate) fn new(head: &StreamHead) -> ChunkDecoder {
        ChunkDecoder(Encoder::new(head.index, head.base, head.first_req))
    }

    /// Starts the next chunk `head` of the same stream, keeping the memory.
    pub(crate) fn restart(&mut self, head: &StreamHead) {
        let e = &mut self.0;
        e.hist.clear();
        if let Some(c) = e.counts.as_mut() {
            c.clear();
        }
        (e.stream, e.prev_end, e.next_req) = (head.index, head.base, head.first_req);
    }

    /// Decodes the next event into `ev` as `how` says (not kept here: a
    /// replay holds a decoder per stream).
    pub(crate) fn decode_into(
        &mut self,
        c: &mut Cursor<'_>,
        ev: &mut Event,
        how: Decoding,
    ) -> Result<(), Malformed> {
        self.0.decode_into(c, ev, how)
    }

    /// What a failed [`decode_into`](Self::decode_into) may have changed,
    /// for [`reset`](Self::reset): an event is decoded again from its
    /// start when its bytes were not all there. (The value and counts
    /// histories change only once an event decoded whole.)
    pub(crate) fn mark(&self) -> (u64, u32) {
        (self.0.prev_end, self.0.next_req)
    }

    /// Back to the state of [`mark`](Self::mark).
    pub(crate) fn reset(&mut self, (prev_end, next_req): (u64, u32)) {
        (self.0.prev_end, self.0.next_req) = (prev_end, next_req);
    }
}

/// The per-chunk state shared by the merged encoder and decoder.
struct Encoder {
    hist: ValueHistory,
    /// Boxed, made at the first `v` collective: a replay holds a decoder
    /// per stream, and most streams have none.
    counts: Option<Box<CountsHistory>>,
    stream: u32,
    prev_end: u64,
    next_req: u32,
}

/// A merged value on the wire: zigzag plus one, 0 meaning "no value".
fn put_val(out: &mut Vec<u8>, v: Option<i64>) {
    match v {
        // i64::MIN has no code; the writer clamps it (no real field reaches it).
        Some(v) => varint::push(out, varint::zigzag(v.max(i64::MIN + 1)) + 1),
        None => varint::push(out, 0),
    }
}

fn val_len(v: Option<i64>) -> usize {
    v.map_or(1, |v| varint::len(varint::zigzag(v.max(i64::MIN + 1)) + 1))
}

impl Encoder {
    fn new(stream: u32, prev_end: u64, next_req: u32) -> Encoder {
        Encoder {
            hist: ValueHistory::default(),
            counts: None,
            stream,
            prev_end,
            next_req,
        }
    }

    fn reference(&self, r: Option<ReqRef>) -> (u64, Option<ReqRef>) {
        match r {
            Some(r) if r.stream == self.stream && r.index < self.next_req => {
                (u64::from(self.next_req - 1 - r.index) + 1, None)
            }
            Some(r) => (0, Some(r)),
            None => (0, None),
        }
    }

    fn put_ref(&self, out: &mut Vec<u8>, r: Option<ReqRef>, low: u64, low_bits: u32) {
        let (back, cross) = self.reference(r);
        let x = (back << (low_bits + 1)) | u64::from(cross.is_some()) << low_bits | low;
        varint::push(out, x);
        if let Some(r) = cross {
            varint::push(out, u64::from(r.stream));
            varint::push(out, u64::from(r.index));
        }
    }

    fn get_ref(&self, c: &mut Cursor<'_>, low_bits: u32) -> Result<(Option<ReqRef>, u64), Malformed> {
        let at = c.offset();
        let x = c.u64()?;
        let low = x & ((1 << low_bits) - 1);
        let cross = x >> low_bits & 1 == 1;
        let back = x >> (low_bits + 1);
        if cross {
            let r = ReqRef {
                stream: c.u32()?,
                index: c.u32()?,
            };
            return Ok((Some(r), low));
        }
        if back == 0 {
            return Ok((None, low));
        }
        Ok((Some(self.back(at, back)?), low))
    }

    /// The request `back` (>= 1) places before the next one.
    fn back(&self, at: u64, back: u64) -> Result<ReqRef, Malformed> {
        let index = u64::from(self.next_req).checked_sub(back).ok_or_else(|| {
            Malformed::new(
                at,
                format!("request back-reference {back} before the first request"),
            )
        })?;
        Ok(ReqRef {
            stream: self.stream,
            index: index as u32,
        })
    }

    /// If `done` is a run of this stream's requests in creation order,
    /// without statuses: (count, places before the next request of its last).
    fn run(&self, done: &[Done]) -> Option<(u64, u64)> {
        if done.len() < 2 || done.iter().any(|d| d.status.is_some()) {
            return None;
        }
        let first = done[0].req.filter(|r| r.stream == self.stream)?;
        let consecutive = done.iter().enumerate().all(|(i, d)| {
            d.req
                == Some(ReqRef {
                    index: first.index + i as u32,
                    ..first
                })
        });
        let last = first.index + done.len() as u32 - 1;
        (consecutive && last < self.next_req)
            .then(|| (done.len() as u64, u64::from(self.next_req - 1 - last)))
    }

    fn event(&mut self, ev: &Event, out: &mut Vec<u8>) {
        // The slot whose fields cost least to patch.
        let of = self.hist.find(ev.routine);
        let slots: [_; HISTORY] = std::array::from_fn(|s| {
            let mut base = [None; NV];
            self.hist.get(of, s, &mut base);
            base
        });
        let cost = |base: &[Option<i64>; NV]| -> usize {
            (0..NV)
                .filter(|&i| ev.vals[i] != base[i])
                .map(|i| val_len(ev.vals[i]))
                .sum()
        };
        let slot = (0..HISTORY).min_by_key(|&s| (cost(&slots[s]), s)).unwrap_or(0);
        let base = slots[slot];
        varint::push(out, u64::from(ev.routine) * HISTORY as u64 + slot as u64);
        let gap = ev.start.saturating_sub(self.prev_end);
        let dur = ev.end.saturating_sub(ev.start);
        self.prev_end = self.prev_end.saturating_add(gap).saturating_add(dur);
        varint::push(out, gap);
        varint::push(out, dur);
        let mut mask = 0u32;
        for (i, bit) in VALUE_BITS.iter().enumerate() {
            if ev.vals[i] != base[i] {
                mask |= bit;
            }
        }
        if !ev.done.is_empty() {
            mask |= DONE;
        }
        if !ev.init.is_empty() {
            mask |= INIT;
        }
        if ev.newcomm.is_some() {
            mask |= NEWCOMM;
        }
        if ev.counts.is_some() {
            mask |= COUNTS;
        }
        if ev.newwin.is_some() {
            mask |= NEWWIN;
        }
        if ev.group.is_some() {
            mask |= GROUP;
        }
        varint::push(out, u64::from(mask));
        // Fields go in bit order: value fields and lists interleave. The
        // call's own requests exist before its completions are written.
        self.next_req += ev.created();
        for bit in 0..=ALL.ilog2() {
            let b = 1u32 << bit;
            if mask & b == 0 {
                continue;
            }
            if let Some(i) = VALUE_BITS.iter().position(|&vb| vb == b) {
                put_val(out, ev.vals[i]);
            } else if b == DONE {
                if let Some((n, back)) = self.run(&ev.done) {
                    varint::push(out, n << 1 | 1);
                    varint::push(out, back);
                    continue;
                }
                varint::push(out, (ev.done.len() as u64) << 1);
                for d in &ev.done {
                    self.put_ref(out, d.req, u64::from(d.status.is_some()), 1);
                    if let Some((s, t)) = d.status {
                        varint::push_i(out, s);
                        varint::push_i(out, t);
                    }
                }
            } else if b == NEWCOMM {
                varint::push(out, ev.newcomm.flatten().map_or(0, |id| u64::from(id) + 1));
            } else if b == INIT {
                varint::push(out, ev.init.len() as u64);
                for &r in &ev.init {
                    self.put_ref(out, r, 0, 0);
                }
            } else if b == COUNTS {
                if let Some(c) = &ev.counts {
                    self.counts
                        .get_or_insert_with(Box::default)
                        .put(out, ev.routine, c.as_raw());
                }
            } else if b == NEWWIN {
                if let Some(w) = ev.newwin {
                    varint::push(out, u64::from(w.id));
                    varint::push_i(out, w.disp_unit);
                }
            } else if b == GROUP {
                if let Some(g) = &ev.group {
                    varint::put_ranks(out, g);
                }
            }
        }
        self.hist.remember(of, &ev.vals);
    }

    fn decode(&mut self, c: &mut Cursor<'_>, routines: u32) -> Result<Event, Malformed> {
        let mut ev = Event::default();
        self.decode_into(
            c,
            &mut ev,
            Decoding {
                routines,
                sites: true,
            },
        )?;
        Ok(ev)
    }

    /// Decodes the next event into `ev`, reusing its lists' memory;
    /// without its call site unless `how.sites` (the value is read past,
    /// and the history keeps none).
    fn decode_into(&mut self, c: &mut Cursor<'_>, ev: &mut Event, how: Decoding) -> Result<(), Malformed> {
        let Decoding { routines, sites } = how;
        let at = c.offset();
        let code = c.u64()?;
        let (routine, slot) = (code / HISTORY as u64, (code % HISTORY as u64) as usize);
        if routine >= u64::from(routines) {
            return Err(Malformed::new(
                at,
                format!("routine code {routine} outside the routine table ({routines} entries)"),
            ));
        }
        let routine = routine as u32;
        let gap = c.u64()?;
        let dur = c.u64()?;
        let start = self.prev_end.checked_add(gap);
        let end = start.and_then(|s| s.checked_add(dur));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(Malformed::new(at, "event time overflows 64 bits"));
        };
        self.prev_end = end;
        let mask_at = c.offset();
        let mask = c.u64()?;
        if mask & !u64::from(ALL) != 0 {
            return Err(Malformed::new(
                mask_at,
                format!("unknown field bits in mask {mask:#x}"),
            ));
        }
        let mask = mask as u32;
        ev.routine = routine;
        ev.start = start;
        ev.end = end;
        let of = self.hist.find(routine);
        self.hist.get(of, slot, &mut ev.vals);
        ev.done.clear();
        ev.init.clear();
        ev.newcomm = None;
        ev.newwin = None;
        let mut group = ev.group.take();
        let mut counts = ev.counts.take();
        // The value fields below DONE are the first VALUE_BITS, and REQ
        // (bit 4) precedes every list: read them first.
        let mut low = mask & (DONE - 1);
        while low != 0 {
            ev.vals[low.trailing_zeros() as usize] = get_val(c)?;
            low &= low - 1;
        }
        ev.first_req = self.next_req;
        self.next_req = self.next_req.saturating_add(ev.created());
        let mut high = mask & !(DONE - 1);
        while high != 0 {
            let bit = high.trailing_zeros();
            high &= high - 1;
            let b = 1u32 << bit;
            if VALUE_BITS.contains(&b) {
                let v = get_val(c)?;
                if sites || b != SITE {
                    ev.vals[value_index(bit)] = v;
                }
            } else if b == DONE {
                let at = c.offset();
                let h = c.u64()?;
                if h & 1 == 1 {
                    let n = h >> 1;
                    let back = c.u64()?;
                    let last = self.back(at, back.saturating_add(1))?;
                    if n == 0 || n > u64::from(last.index) + 1 || n as usize > (c.remaining() + 1) << 16 {
                        return Err(Malformed::new(
                            at,
                            format!("request run of {n} before the first request"),
                        ));
                    }
                    let first = last.index + 1 - n as u32;
                    ev.done.extend((first..=last.index).map(|index| Done {
                        req: Some(ReqRef { index, ..last }),
                        status: None,
                    }));
                    continue;
                }
                let n = usize::try_from(h >> 1)
                    .ok()
                    .filter(|&n| n <= c.remaining())
                    .ok_or_else(|| Malformed::new(at, format!("count {} exceeds the data left", h >> 1)))?;
                for _ in 0..n {
                    let (req, has_status) = self.get_ref(c, 1)?;
                    let status = if has_status == 1 {
                        Some((c.i64()?, c.i64()?))
                    } else {
                        None
                    };
                    ev.done.push(Done { req, status });
                }
            } else if b == NEWCOMM {
                let v = c.u64()?;
                let id = if v == 0 {
                    None
                } else {
                    Some(u32::try_from(v - 1).map_err(|_| c.error("communicator id out of range"))?)
                };
                ev.newcomm = Some(id);
            } else if b == INIT {
                let n = c.count(1)?;
                for _ in 0..n {
                    ev.init.push(self.get_ref(c, 0)?.0);
                }
            } else if b == COUNTS {
                let mut v = counts.take().unwrap_or_default();
                let history = self.counts.get_or_insert_with(Box::default);
                history.get(c, routine, &mut v)?;
                history.commit(routine, v.as_raw());
                ev.counts = Some(v);
            } else if b == NEWWIN {
                let id = c.u32()?;
                ev.newwin = Some(WinCreated {
                    id,
                    disp_unit: c.i64()?,
                });
            } else if b == GROUP {
                let mut g = group.take().unwrap_or_default();
                g.clear();
                g.extend(c.ranks()?);
                ev.group = Some(g);
            }
        }
        self.hist.remember(of, &ev.vals);
        Ok(())
    }
}

/// The index in [`Event::vals`] of the value field of mask bit `bit`
/// (a bit of [`VALUE_BITS`]).
#[inline(always)]
fn value_index(bit: u32) -> usize {
    VALUE_AT[bit as usize] as usize
}

/// [`value_index`]'s table: the position in [`VALUE_BITS`] of each mask bit.
const VALUE_AT: [u8; 32] = {
    let mut at = [0u8; 32];
    let mut i = 0;
    while i < NV {
        at[VALUE_BITS[i].trailing_zeros() as usize] = i as u8;
        i += 1;
    }
    at
};

// The decoder reads the value fields below DONE (bit 5) as indices
// equal to their bits.
const _: () = {
    let mut i = 0;
    while i < 5 {
        assert!(VALUE_BITS[i] == 1 << i);
        i += 1;
    }
};

fn get_val(c: &mut Cursor<'_>) -> Result<Option<i64>, Malformed> {
    let v = c.u64()?;
    Ok(if v == 0 {
        None
    } else {
        Some(varint::unzigzag(v - 1))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// [`sample`] saved and opened streamed (keep the folder while reading).
    pub fn sample_reader() -> (crate::stream::MergedReader, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sample.pnt");
        sample().save(&p, &|_| {}).unwrap();
        (crate::stream::MergedReader::open(&p).unwrap(), dir)
    }

    /// A small two-rank trace with every kind of field.
    pub fn sample() -> Trace {
        let mut isend = Event {
            routine: 1,
            start: 100,
            end: 150,
            ..Event::default()
        };
        isend.set(V::Peer, Some(1));
        isend.set(V::Tag, Some(5));
        isend.set(V::Comm, Some(COMM_WORLD));
        isend.set(V::Bytes, Some(800));
        isend.set(V::Req, Some(1));
        isend.set(V::Site, Some(0));
        let mut isend2 = isend.clone();
        isend2.start = 200;
        isend2.end = 260;
        isend2.first_req = 1;
        isend2.set(V::Site, Some(1));
        let wait = Event {
            routine: 2,
            start: 300,
            end: 900,
            first_req: 2,
            done: vec![
                Done {
                    req: Some(ReqRef { stream: 0, index: 0 }),
                    status: None,
                },
                Done {
                    req: Some(ReqRef { stream: 0, index: 1 }),
                    status: Some((1, 5)),
                },
                Done {
                    req: Some(ReqRef { stream: 1, index: 0 }),
                    status: None,
                },
                Done {
                    req: None,
                    status: None,
                },
            ],
            ..Event::default()
        };
        let mut split = Event {
            routine: 3,
            start: 1000,
            end: 1100,
            first_req: 2,
            newcomm: Some(Some(2)),
            ..Event::default()
        };
        split.set(V::Comm, Some(COMM_WORLD));
        let mut recv = Event {
            routine: 0,
            start: 50,
            end: 400,
            ..Event::default()
        };
        recv.set(V::Peer, Some(0));
        recv.set(V::Tag, Some(5));
        recv.set(V::Comm, Some(COMM_WORLD));
        recv.set(V::Wild, Some(WILD_SOURCE | WILD_TAG));
        let null_split = Event {
            routine: 3,
            start: 1000,
            end: 1200,
            newcomm: Some(None),
            vals: split.vals,
            ..Event::default()
        };
        Trace {
            world_size: 2,
            mpi: "mpich".into(),
            routines: vec![
                "MPI_Recv".into(),
                "MPI_Isend".into(),
                "MPI_Waitall".into(),
                "MPI_Comm_split".into(),
            ],
            comms: vec![Comm {
                members: vec![0],
                remote: None,
            }],
            streams: vec![
                Stream {
                    rank: 0,
                    thread: 0,
                    events: vec![isend, isend2, wait, split],
                },
                Stream {
                    rank: 1,
                    thread: 0,
                    events: vec![recv, null_split],
                },
            ],
            clocks: vec![
                RankClock {
                    rank: 0,
                    init_offset: Some(0),
                    fin_offset: Some(0),
                    rtt: 0,
                    complete: true,
                },
                RankClock {
                    rank: 1,
                    init_offset: Some(-1234),
                    fin_offset: None,
                    rtt: 900,
                    complete: false,
                },
            ],
            sites: vec![
                Site {
                    function: Some("main".into()),
                    file: Some("/src/app.c".into()),
                    line: Some(42),
                    object: "/bin/app".into(),
                    offset: 0x1139,
                },
                Site {
                    object: "/lib/libsolver.so".into(),
                    offset: 0x2c0,
                    ..Site::default()
                },
            ],
            wins: Vec::new(),
        }
    }

    fn bytes_of(t: &Trace) -> Vec<u8> {
        let mut out = Vec::new();
        t.write(&mut out, &|_| {}).unwrap();
        out
    }

    #[test]
    fn a_trace_round_trips() {
        let t = sample();
        let data = bytes_of(&t);
        let (back, truncated) = Trace::parse(&data).unwrap();
        assert!(truncated.is_none());
        assert_eq!(back, t);
    }

    #[test]
    fn one_sided_fields_round_trip() {
        let mut t = sample();
        t.routines
            .extend(["MPI_Win_allocate", "MPI_Put", "MPI_Win_post", "MPI_Win_lock"].map(String::from));
        t.wins = vec![Win {
            kind: crate::rma::WinKind::Allocate,
            comm: COMM_WORLD,
            members: vec![0, 1],
        }];
        let mut create = Event {
            routine: 4,
            start: 2000,
            end: 2100,
            first_req: 2,
            newwin: Some(WinCreated { id: 0, disp_unit: 8 }),
            ..Event::default()
        };
        create.set(V::Comm, Some(COMM_WORLD));
        create.set(V::Bytes, Some(1 << 17));
        let mut put = Event {
            routine: 5,
            start: 2200,
            end: 2300,
            first_req: 2,
            ..Event::default()
        };
        put.set(V::Win, Some(0));
        put.set(V::Peer, Some(1));
        put.set(V::Bytes, Some(1 << 17));
        put.set(V::Op, Some(crate::rma::OP_USER));
        let mut puts: Vec<Event> = (0..3)
            .map(|i| Event {
                start: put.start + 200 * i,
                end: put.end + 200 * i,
                ..put.clone()
            })
            .collect();
        let mut post = Event {
            routine: 6,
            start: 3000,
            end: 3010,
            first_req: 2,
            group: Some(vec![1, 0]),
            ..Event::default()
        };
        post.set(V::Win, Some(0));
        post.set(V::Assert, Some(1 | 16));
        let mut lock = Event {
            routine: 7,
            start: 3100,
            end: 3110,
            first_req: 2,
            group: Some(Vec::new()),
            ..Event::default()
        };
        lock.set(V::Win, Some(0));
        lock.set(V::Peer, Some(0));
        lock.set(V::Lock, Some(crate::rma::LOCK_EXCLUSIVE));
        let events = &mut t.streams[0].events;
        events.push(create);
        events.append(&mut puts);
        events.extend([post, lock]);
        let data = bytes_of(&t);
        assert_eq!(Trace::parse(&data).unwrap().0, t);
        let (mut r, _dir) = {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("rma.pnt");
            t.save(&p, &|_| {}).unwrap();
            (crate::stream::MergedReader::open(&p).unwrap(), dir)
        };
        assert_eq!(r.wins, t.wins);
        let mut got = Vec::new();
        while let Some(ev) = r.next(0).unwrap() {
            got.push(ev);
        }
        assert_eq!(got, t.streams[0].events);
    }

    #[test]
    fn unchanged_fields_cost_nothing() {
        let mut t = sample();
        t.streams.truncate(1);
        let ev = t.streams[0].events[0].clone();
        let many: Vec<Event> = (0..1000)
            .map(|i| Event {
                start: 1000 + i * 100,
                end: 1000 + i * 100 + 50,
                first_req: i as u32,
                ..ev.clone()
            })
            .collect();
        t.streams[0].events = many;
        let data = bytes_of(&t);
        let fixed = bytes_of(&Trace {
            streams: vec![],
            ..t.clone()
        })
        .len();
        let per_event = (data.len() - fixed) as f64 / 1000.0;
        // code, gap, duration and an empty mask: one byte each.
        assert!(per_event < 4.1, "{per_event} bytes per event");
        assert_eq!(Trace::parse(&data).unwrap().0, t);
    }

    #[test]
    fn long_streams_span_chunks_and_keep_request_ids() {
        let mut t = sample();
        let ev = t.streams[0].events[0].clone();
        t.streams[0].events = (0..(CHUNK_EVENTS as u64 + 10))
            .map(|i| Event {
                start: i * 10,
                end: i * 10 + 5,
                first_req: i as u32,
                ..ev.clone()
            })
            .collect();
        let last = t.streams[0].events.len() as u32 - 1;
        t.streams[1].events.push(Event {
            routine: 2,
            start: 2000,
            end: 2100,
            done: vec![Done {
                req: Some(ReqRef {
                    stream: 0,
                    index: last,
                }),
                status: None,
            }],
            ..Event::default()
        });
        t.streams[0].events.push(Event {
            routine: 2,
            start: u64::from(last) * 10 + 100,
            end: u64::from(last) * 10 + 200,
            first_req: last + 1,
            done: vec![Done {
                req: Some(ReqRef { stream: 0, index: 3 }),
                status: None,
            }],
            ..Event::default()
        });
        let (back, _) = Trace::parse(&bytes_of(&t)).unwrap();
        assert_eq!(back, t);
    }
}
