//! Rank files (`rank-NNNNN.pnr`): what the tracer writes, one per rank.
//!
//! The tracer encodes straight into a fixed per-thread buffer with
//! [`RawEncoder`], which never allocates, and writes the buffer out whole
//! as one `EVENTS` chunk when it is full. Values are recorded as the
//! application passed them (communicator and request handles, ranks local
//! to their communicator, times in the tracer's clock ticks): translating
//! them is left to [`crate::merge`], off the traced program's hot path.

use crate::container::{self, FileKind};
use crate::counts::{CountsHistory, PeerBytesOf};
use crate::error::{Error, Malformed, Result};
use crate::fields::*;
use crate::repeats::{Args, Repeats};
use crate::rma::WinKind;
use crate::sites::{parse_rank_sites, Site, CHUNK_SITES};
use crate::varint::{self, zigzag, Cursor, Sink};
use std::path::Path;

/// Chunk type: a run of events of one thread.
pub const CHUNK_EVENTS: u8 = 1;
/// Chunk type: a clock-offset measurement against rank 0.
pub const CHUNK_SYNC: u8 = 2;
/// Chunk type: the tracer finished cleanly (written at `MPI_Finalize`).
pub const CHUNK_END: u8 = 3;

/// The unit of a rank file's times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Nanoseconds of `CLOCK_MONOTONIC`.
    Monotonic = 0,
    /// Time-stamp counter ticks, converted to nanoseconds with the file's
    /// calibration pairs.
    Tsc = 1,
}

/// The same instant read on the trace clock and on `CLOCK_MONOTONIC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ClockPair {
    /// Trace clock.
    pub tick: u64,
    /// `CLOCK_MONOTONIC`, ns.
    pub ns: u64,
}

/// Values of the MPI implementation the rank ran on, so that the merge can
/// recognise them in recorded arguments.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MpiValues {
    /// `MPI_COMM_WORLD`'s handle.
    pub comm_world: u64,
    /// `MPI_COMM_SELF`'s handle.
    pub comm_self: u64,
    /// `MPI_COMM_NULL`'s handle.
    pub comm_null: u64,
    /// `MPI_REQUEST_NULL`'s handle.
    pub request_null: u64,
    /// `MPI_ANY_SOURCE`.
    pub any_source: i64,
    /// `MPI_PROC_NULL`.
    pub proc_null: i64,
    /// `MPI_ANY_TAG`.
    pub any_tag: i64,
    /// `MPI_ROOT`.
    pub root: i64,
}

/// A rank file's header. Its routine names are `R`: owned when read from
/// a file, the routine table's own `&'static str` when the tracer writes
/// one (no string made per routine at start-up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankHeader<R = String> {
    /// Rank in `MPI_COMM_WORLD`.
    pub rank: u32,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Identifies the run (the same in every rank file of a run).
    pub run_id: u64,
    /// Unit of the times.
    pub clock: Clock,
    /// Both clocks when tracing started.
    pub start: ClockPair,
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// The MPI flavour ("openmpi", "mpich").
    pub mpi: String,
    /// The MPI's handles and constants.
    pub values: MpiValues,
    /// Routine names; an event's routine code indexes this table.
    pub routines: Vec<R>,
}

impl<R: AsRef<str>> RankHeader<R> {
    /// The header body.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 24 * self.routines.len());
        for v in [
            u64::from(self.rank),
            u64::from(self.world_size),
            self.run_id,
            self.clock as u64,
        ] {
            varint::push(&mut out, v);
        }
        varint::push(&mut out, self.start.tick);
        varint::push(&mut out, self.start.ns);
        varint::push(&mut out, u64::from(self.pid));
        varint::push_str(&mut out, &self.host);
        varint::push_str(&mut out, &self.mpi);
        let v = &self.values;
        for h in [v.comm_world, v.comm_self, v.comm_null, v.request_null] {
            varint::push(&mut out, h);
        }
        for c in [v.any_source, v.proc_null, v.any_tag, v.root] {
            varint::push_i(&mut out, c);
        }
        varint::push(&mut out, self.routines.len() as u64);
        for r in &self.routines {
            varint::push_str(&mut out, r.as_ref());
        }
        out
    }

    /// The file prologue for this header.
    pub fn prologue(&self) -> Vec<u8> {
        container::prologue(FileKind::Rank, &self.encode())
    }
}

impl RankHeader {
    pub(crate) fn decode(c: &mut Cursor<'_>) -> Result<RankHeader, Malformed> {
        let rank = c.u32()?;
        let world_size = c.u32()?;
        if rank >= world_size {
            return Err(c.error(format!("rank {rank} not below world size {world_size}")));
        }
        let run_id = c.u64()?;
        let clock = match c.u64()? {
            0 => Clock::Monotonic,
            1 => Clock::Tsc,
            k => return Err(c.error(format!("unknown clock kind {k}"))),
        };
        let start = ClockPair {
            tick: c.u64()?,
            ns: c.u64()?,
        };
        let pid = c.u32()?;
        let host = c.string()?;
        let mpi = c.string()?;
        let values = MpiValues {
            comm_world: c.u64()?,
            comm_self: c.u64()?,
            comm_null: c.u64()?,
            request_null: c.u64()?,
            any_source: c.i64()?,
            proc_null: c.i64()?,
            any_tag: c.i64()?,
            root: c.i64()?,
        };
        let n = c.count(1)?;
        let routines = (0..n).map(|_| c.string()).collect::<Result<_, _>>()?;
        Ok(RankHeader {
            rank,
            world_size,
            run_id,
            clock,
            start,
            pid,
            host,
            mpi,
            values,
            routines,
        })
    }
}

/// A request completed by a wait or test, as the tracer saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawDone {
    /// The request's handle before the call.
    pub handle: u64,
    /// Its status (source local to the request's communicator, tag), when
    /// MPI filled one.
    pub status: Option<(i64, i64)>,
}

/// A communicator created by a call, its rank lists borrowed
/// ([`RawNewComm`], as the tracer records it) or owned ([`NewComm`], as
/// decoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewCommOf<Ranks> {
    /// Its handle (`MPI_COMM_NULL`'s when the call gave none).
    pub handle: u64,
    /// World ranks of its (local) group, in rank order; [`UNKNOWN_RANK`]
    /// for processes outside `MPI_COMM_WORLD`.
    pub members: Ranks,
    /// World ranks of the remote group of an intercommunicator.
    pub remote: Option<Ranks>,
}

/// A communicator created by a call, as the tracer records it.
pub type RawNewComm<'a> = NewCommOf<&'a [i64]>;

/// A decoded communicator creation.
pub type NewComm = NewCommOf<Vec<i64>>;

/// A window created by a call (format 5), its members borrowed
/// ([`RawNewWin`], as the tracer records it) or owned ([`NewWin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewWinOf<Ranks> {
    /// Its handle.
    pub handle: u64,
    /// Its kind.
    pub kind: WinKind,
    /// This process's displacement unit.
    pub disp_unit: i64,
    /// World ranks of its group, in window rank order ([`UNKNOWN_RANK`]
    /// for processes outside `MPI_COMM_WORLD`).
    pub members: Ranks,
}

/// A window created by a call, as the tracer records it.
pub type RawNewWin<'a> = NewWinOf<&'a [i64]>;

/// A decoded window creation.
pub type NewWin = NewWinOf<Vec<i64>>;

impl<Ranks: AsRef<[i64]>> NewWinOf<Ranks> {
    /// The same, borrowed.
    pub fn as_raw(&self) -> RawNewWin<'_> {
        RawNewWin {
            handle: self.handle,
            kind: self.kind,
            disp_unit: self.disp_unit,
            members: self.members.as_ref(),
        }
    }
}

impl<Ranks: AsRef<[i64]>> NewCommOf<Ranks> {
    /// The same, borrowed.
    pub fn as_raw(&self) -> RawNewComm<'_> {
        RawNewComm {
            handle: self.handle,
            members: self.members.as_ref(),
            remote: self.remote.as_ref().map(AsRef::as_ref),
        }
    }
}

/// One call, its lists (requests, completions, ranks) borrowed
/// ([`RawEvent`], what the tracer records) or owned ([`RawRecord`], what a
/// rank file decodes to). Absent fields are `None` or empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RawCall<Reqs, Done, Ranks> {
    /// Index into the header's routine table.
    pub routine: u32,
    /// Trace clock at entry.
    pub start: u64,
    /// Trace clock at return.
    pub end: u64,
    /// [`PEER`], local to the communicator.
    pub peer: Option<i64>,
    /// [`TAG`]
    pub tag: Option<i64>,
    /// [`COMM`]: the communicator handle.
    pub comm: Option<u64>,
    /// [`BYTES`]
    pub bytes: Option<i64>,
    /// [`ROOT`], local to the communicator.
    pub root: Option<i64>,
    /// [`RBYTES`]
    pub rbytes: Option<i64>,
    /// [`SRC`], local to the communicator.
    pub src: Option<i64>,
    /// [`RTAG`]
    pub rtag: Option<i64>,
    /// [`REQ`]: handles of the requests created or started.
    pub reqs: Reqs,
    /// [`DONE`]
    pub done: Done,
    /// [`STATUS`]: (source, tag) of a blocking receive or probe.
    pub status: Option<(i64, i64)>,
    /// [`NEWCOMM`]
    pub newcomm: Option<NewCommOf<Ranks>>,
    /// [`COUNTS`]: bytes to and from each peer of a `v` collective.
    pub counts: Option<PeerBytesOf<Ranks>>,
    /// The call site: an id of the rank's `SITES` chunks (format 4).
    pub site: Option<u32>,
    /// [`WIN`]: the window handle (format 5).
    pub win: Option<u64>,
    /// [`NEWWIN`]: the window created.
    pub newwin: Option<NewWinOf<Ranks>>,
    /// [`OP`]: the operation code ([`crate::rma::OP_NAMES`]).
    pub op: Option<i64>,
    /// [`ASSERT`]: the assertion bits ([`crate::rma::ASSERT_NAMES`]).
    pub assert: Option<i64>,
    /// [`LOCK`]: the lock type code.
    pub lock: Option<i64>,
    /// [`GROUP`]: world ranks of the group of `MPI_Win_post`/`MPI_Win_start`.
    pub group: Option<Ranks>,
}

/// One call as the tracer records it: the encoder's input.
pub type RawEvent<'a> = RawCall<&'a [u64], &'a [RawDone], &'a [i64]>;

/// A decoded event of a rank file.
pub type RawRecord = RawCall<Vec<u64>, Vec<RawDone>, Vec<i64>>;

impl<Reqs, Done, Ranks> RawCall<Reqs, Done, Ranks>
where
    Reqs: AsRef<[u64]>,
    Done: AsRef<[RawDone]>,
    Ranks: AsRef<[i64]>,
{
    /// The call as encoder input (for a [`RawRecord`]: for tests and tools
    /// that rewrite rank files).
    pub fn as_event(&self) -> RawEvent<'_> {
        RawEvent {
            routine: self.routine,
            start: self.start,
            end: self.end,
            peer: self.peer,
            tag: self.tag,
            comm: self.comm,
            bytes: self.bytes,
            root: self.root,
            rbytes: self.rbytes,
            src: self.src,
            rtag: self.rtag,
            reqs: self.reqs.as_ref(),
            done: self.done.as_ref(),
            status: self.status,
            newcomm: self.newcomm.as_ref().map(NewCommOf::as_raw),
            counts: self.counts.as_ref().map(PeerBytesOf::as_raw),
            site: self.site,
            win: self.win,
            newwin: self.newwin.as_ref().map(NewWinOf::as_raw),
            op: self.op,
            assert: self.assert,
            lock: self.lock,
            group: self.group.as_ref().map(AsRef::as_ref),
        }
    }
}

impl RawEvent<'static> {
    /// A call with no recorded argument.
    pub const fn plain(routine: u32, start: u64, end: u64) -> RawEvent<'static> {
        RawEvent {
            routine,
            start,
            end,
            peer: None,
            tag: None,
            comm: None,
            bytes: None,
            root: None,
            rbytes: None,
            src: None,
            rtag: None,
            reqs: &[],
            done: &[],
            status: None,
            newcomm: None,
            counts: None,
            site: None,
            win: None,
            newwin: None,
            op: None,
            assert: None,
            lock: None,
            group: None,
        }
    }
}

impl RawEvent<'_> {
    /// An upper bound of its encoded size.
    pub fn max_size(&self) -> usize {
        const V: usize = varint::MAX_LEN;
        // The head byte and the 8-byte stores of the times: at most 24
        // bytes where two varints took 20.
        let mut n = 4 * V + 8 * V + 2 * V + 2 * V + 8 + V;
        n += self.reqs.len() * V + self.done.len() * (3 * V + 1);
        if let Some(c) = &self.newcomm {
            n += 4 * V + (c.members.len() + c.remote.map_or(0, <[i64]>::len)) * V;
        }
        n += 4 * V + self.newwin.map_or(0, |w| 4 * V + w.members.len() * V);
        n += self.group.map_or(0, |g| (g.len() + 1) * V);
        n + self.counts.map_or(0, |c| c.max_size())
    }
}

/// A send or receive as [`RawEncoder::encode_p2p`] takes it: peer, tag,
/// communicator and bytes always, at most one request, and the status of
/// a wildcard receive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct P2p {
    /// Routine code.
    pub routine: u32,
    /// Start tick.
    pub start: u64,
    /// End tick.
    pub end: u64,
    /// Destination or source, as passed.
    pub peer: i64,
    /// Tag, as passed.
    pub tag: i64,
    /// Communicator handle.
    pub comm: u64,
    /// Bytes.
    pub bytes: i64,
    /// The request created.
    pub req: Option<u64>,
    /// (source, tag) from the status.
    pub status: Option<(i64, i64)>,
    /// The call site.
    pub site: SiteCode,
}

/// Room that [`RawEncoder::encode_p2p`] may need: routine, mask, at most
/// eight values, the head byte and the times (with the slack of their
/// 8-byte stores), 115 bytes.
pub const P2P_MAX: usize = 13 * varint::MAX_LEN;

impl P2p {
    /// What [`RawEncoder::encode_taken_p2p`] takes of it, once
    /// [`RawEncoder::take_p2p`] took its arguments and said `same`.
    pub fn end(&self, same: bool) -> P2pEnd {
        P2pEnd {
            routine: self.routine,
            start: self.start,
            end: self.end,
            same,
            req: self.req,
            status: self.status,
            site: self.site,
        }
    }

    /// The same call as a general [`RawEvent`] (for tests and tools).
    pub fn as_event<'a>(&self, req: &'a [u64]) -> RawEvent<'a> {
        RawEvent {
            peer: Some(self.peer),
            tag: Some(self.tag),
            comm: Some(self.comm),
            bytes: Some(self.bytes),
            reqs: req,
            status: self.status,
            site: self.site.id(),
            ..RawEvent::plain(self.routine, self.start, self.end)
        }
    }
}

/// A send or receive whose arguments [`RawEncoder::take_p2p`] took, as
/// [`RawEncoder::encode_taken_p2p`] takes the rest of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct P2pEnd {
    /// Routine code.
    pub routine: u32,
    /// Start tick.
    pub start: u64,
    /// End tick.
    pub end: u64,
    /// What `take_p2p` said: the arguments repeat the routine's last.
    pub same: bool,
    /// The request created.
    pub req: Option<u64>,
    /// (source, tag) from the status.
    pub status: Option<(i64, i64)>,
    /// The call site.
    pub site: SiteCode,
}

/// A blocking collective as [`RawEncoder::encode_coll`] takes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CollCall {
    /// Routine code.
    pub routine: u32,
    /// Start tick.
    pub start: u64,
    /// End tick.
    pub end: u64,
    /// Communicator handle.
    pub comm: u64,
    /// Bytes, if the routine moves data.
    pub bytes: Option<i64>,
    /// Root, local to the communicator, if the routine has one.
    pub root: Option<i64>,
    /// The call site.
    pub site: SiteCode,
}

impl CollCall {
    /// The same call as a general [`RawEvent`] (for tests and tools).
    pub fn as_event(&self) -> RawEvent<'static> {
        RawEvent {
            comm: Some(self.comm),
            bytes: self.bytes,
            root: self.root,
            site: self.site.id(),
            ..RawEvent::plain(self.routine, self.start, self.end)
        }
    }
}

/// Room that [`RawEncoder::encode_done`] and [`RawEncoder::encode_coll`]
/// may need: the start of an event and at most five values.
pub const SMALL_MAX: usize = HEAD_ROOM + 5 * varint::MAX_LEN;

/// Encodes one thread's events into a chunk, keeping the registers that
/// make times and handles small: the end of the previous event, the last
/// communicator and request handles, each `v` routine's last per-peer
/// counts, and each routine's last arguments ([`Repeats`]).
///
/// An event (format version 3) starts with its routine code (2 bytes,
/// little-endian) and a head byte: the bytes of its gap (bits 0-2, plus one) and of its
/// duration (bits 3-5, plus one), and [`SAME`] (bit 6). Gap and duration
/// follow, little-endian, in that many bytes: one store each, where a
/// varint took a loop (the tracer's hot path). Then the field mask and
/// the fields, as varints.
#[derive(Clone, Debug)]
pub struct RawEncoder {
    base: u64,
    prev_end: u64,
    last_comm: u64,
    last_req: u64,
    count: u64,
    counts: CountsHistory,
    repeats: Repeats,
    /// The window register (format 5): the last window handle.
    last_win: u64,
    /// The communicator delta of the arguments [`RawEncoder::take_p2p`]
    /// took last.
    taken_comm: i64,
}

/// Head byte bit: the event repeats the peer, tag, communicator and bytes
/// of the previous event of its routine that had them all, and omits them.
pub const SAME: u8 = 1 << 6;

/// Head byte bit (format version 4): the call site's id follows the
/// duration, as a varint.
pub const SITE_HEAD: u8 = 1 << 7;

/// Room that the start of an event may need: routine, head, gap and
/// duration (with the slack of their 8-byte stores), a site id and a
/// one-byte mask.
const HEAD_ROOM: usize = 32;

/// An event's call site as its start carries it (format 4): the head
/// byte's [`SITE_HEAD`] and the id's varint, encoded once. Two words, so
/// that it passes in registers: the tracer keeps each routine's last site
/// so, and writes it with the mask in one store; no site sets no bit and
/// takes no byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteCode {
    /// The id's varint, little-endian (at most 5 bytes).
    bytes: u64,
    /// [`SITE_HEAD`] where the head byte sits in an event's first 8 bytes
    /// (bit 23), and the varint's length in bits (bits 0-5): 0 without a
    /// site.
    meta: u64,
}

/// [`SiteCode::meta`]'s bits of the varint's length, in bits.
const SITE_BITS: u64 = 63;

impl SiteCode {
    /// No site.
    pub const NONE: SiteCode = SiteCode { bytes: 0, meta: 0 };

    /// The site `id`, or none.
    pub fn new(id: Option<u32>) -> SiteCode {
        let Some(id) = id else {
            return SiteCode::NONE;
        };
        let mut buf = [0u8; 8];
        let mut s = Sink::new(&mut buf);
        s.put(u64::from(id));
        let len = s.len() as u64;
        SiteCode {
            bytes: u64::from_le_bytes(buf),
            meta: (u64::from(SITE_HEAD) << 16) | (8 * len),
        }
    }

    /// The site's id, if any.
    pub fn id(&self) -> Option<u32> {
        // Seven bits a byte, the lowest first.
        let len = self.len() as u64;
        let id = (0..len).fold(0, |id, i| id | (self.bytes >> (8 * i) & 0x7f) << (7 * i));
        (len > 0).then_some(id as u32)
    }

    /// The varint's length in bytes.
    #[inline(always)]
    fn len(&self) -> usize {
        ((self.meta & SITE_BITS) >> 3) as usize
    }
}

/// What a finished chunk's prefix needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// The trace clock the first event's gap counts from.
    pub base: u64,
    /// Events in the chunk.
    pub count: u64,
}

impl RawEncoder {
    /// A chunk whose first gap counts from `start`.
    pub fn new(start: u64) -> RawEncoder {
        RawEncoder {
            base: start,
            prev_end: start,
            last_comm: 0,
            last_req: 0,
            count: 0,
            counts: CountsHistory::default(),
            repeats: Repeats::default(),
            last_win: 0,
            taken_comm: 0,
        }
    }

    /// Events encoded since the chunk started.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The end of the last event (the time the next gap counts from).
    pub fn prev_end(&self) -> u64 {
        self.prev_end
    }

    /// Closes the chunk: returns its base and count and starts the next
    /// chunk from the current end, with cleared registers.
    pub fn finish_chunk(&mut self) -> ChunkInfo {
        let info = ChunkInfo {
            base: self.base,
            count: self.count,
        };
        // Cleared in place: the counts' memory serves the next chunk.
        let mut counts = std::mem::take(&mut self.counts);
        counts.clear();
        *self = RawEncoder {
            counts,
            ..RawEncoder::new(self.prev_end)
        };
        info
    }

    /// Writes what starts every event into `out`: its routine code, its
    /// head byte (with [`SAME`] if `same`, [`SITE_HEAD`] with a `site`),
    /// its gap and duration, its site, and its field `mask`; returns the
    /// bytes written. The first [`HEAD_ROOM`]
    /// bytes of `out` are written as a fixed array: one bounds check,
    /// and plain stores. With `wide`, times that both fit 4 bytes take 4
    /// each, without measuring them (the point-to-point path, where the
    /// few instructions that saves count most).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn head(
        &mut self,
        out: &mut [u8],
        routine: u32,
        start: u64,
        end: u64,
        same: bool,
        mask: u32,
        wide: bool,
        site: SiteCode,
    ) -> usize {
        debug_assert!(
            routine <= u32::from(u16::MAX),
            "routine code {routine} above 65535"
        );
        let gap = start.saturating_sub(self.prev_end);
        let dur = end.saturating_sub(start);
        // The decoder rebuilds times from gaps and durations; following the
        // same sums keeps both in step even if a clock stepped back.
        self.prev_end = self.prev_end.wrapping_add(gap).wrapping_add(dur);
        self.count += 1;
        let a: &mut [u8; HEAD_ROOM] = (&mut out[..HEAD_ROOM]).try_into().expect("room");
        let same = u64::from(same) << 22 | site.meta & u64::from(SITE_HEAD) << 16;
        let n = if wide && (gap | dur) >> 32 == 0 {
            // Routine (2 bytes) and head (4-byte times) in one store, both
            // times in another.
            a[..8].copy_from_slice(&(u64::from(routine & 0xffff) | 0x1b << 16 | same).to_le_bytes());
            a[3..11].copy_from_slice(&(gap | dur << 32).to_le_bytes());
            11
        } else {
            // Laid out of the way of the tracer's calls, whose times fit.
            std::hint::cold_path();
            // Each time's byte count less one: its highest set bit over 8.
            let (gap_code, dur_code) = ((gap | 1).ilog2() >> 3, (dur | 1).ilog2() >> 3);
            let head = u64::from(gap_code | dur_code << 3) << 16 | same;
            a[..8].copy_from_slice(&(u64::from(routine & 0xffff) | head).to_le_bytes());
            a[3..11].copy_from_slice(&gap.to_le_bytes());
            let n = 4 + gap_code as usize;
            a[n..n + 8].copy_from_slice(&dur.to_le_bytes());
            n + 1 + dur_code as usize
        };
        // At most 19 bytes so far, and at most 5 of site and 1 of mask.
        if mask < 0x80 {
            // The site and the mask in one store.
            let tail = site.bytes | u64::from(mask) << (site.meta & SITE_BITS);
            a[n..n + 8].copy_from_slice(&tail.to_le_bytes());
            return n + site.len() + 1;
        }
        a[n..n + 8].copy_from_slice(&site.bytes.to_le_bytes());
        let n = n + site.len();
        let mut s = Sink::new(&mut out[n..]);
        s.put(u64::from(mask));
        n + s.len()
    }

    /// Encodes a call without arguments into `out`, which must have room
    /// for 40 bytes; returns the bytes written. The tracer's path for most
    /// routines: times that fit 4 bytes take 4 each (12 bytes an event),
    /// without measuring them.
    #[inline(always)]
    pub fn encode_plain(
        &mut self,
        routine: u32,
        start: u64,
        end: u64,
        site: SiteCode,
        out: &mut [u8],
    ) -> usize {
        self.head(out, routine, start, end, false, 0, true, site)
    }

    /// Encodes a point-to-point call exactly as [`RawEncoder::encode`]
    /// encodes the [`RawEvent`] with these fields, without building one:
    /// the tracer's path for sends and receives, its most frequent calls.
    /// `out` must hold at least [`P2P_MAX`] bytes.
    #[inline(always)]
    pub fn encode_p2p(&mut self, call: &P2p, out: &mut [u8]) -> usize {
        let same = self.take_p2p(call.routine, call.peer, call.tag, call.comm, call.bytes);
        self.encode_taken_p2p(&call.end(same), out)
    }

    /// The first half of [`RawEncoder::encode_p2p`]: takes a send's or
    /// receive's peer, tag, communicator and bytes; returns whether they
    /// repeat its routine's last ([`SAME`]). The tracer takes them before
    /// the call, so that it keeps none of them across it; the event must
    /// be the next encoded ([`RawEncoder::encode_taken_p2p`]).
    #[inline(always)]
    pub fn take_p2p(&mut self, routine: u32, peer: i64, tag: i64, comm: u64, bytes: i64) -> bool {
        let same = self.repeats.repeat(Args {
            routine,
            peer,
            tag,
            comm,
            bytes,
        });
        self.taken_comm = comm.wrapping_sub(self.last_comm) as i64;
        self.last_comm = comm;
        same
    }

    /// The second half of [`RawEncoder::encode_p2p`]: encodes the call
    /// whose arguments [`RawEncoder::take_p2p`] took last, from where it
    /// keeps them. `out` must hold at least [`P2P_MAX`] bytes.
    #[inline(always)]
    pub fn encode_taken_p2p(&mut self, call: &P2pEnd, out: &mut [u8]) -> usize {
        let mut mask = PEER | TAG | COMM | BYTES;
        if call.req.is_some() {
            mask |= REQ;
        }
        if call.status.is_some() {
            mask |= STATUS;
        }
        let n = self.head(
            out,
            call.routine,
            call.start,
            call.end,
            call.same,
            mask,
            true,
            call.site,
        );
        if call.same && mask == PEER | TAG | COMM | BYTES {
            // A blocking call repeating its arguments: nothing more.
            return n;
        }
        let mut s = Sink::new(&mut out[n..]);
        if !call.same {
            let a = self.repeats.slot(call.routine);
            s.put3([a.peer, a.tag, self.taken_comm].map(zigzag));
            s.put_short(zigzag(a.bytes));
        }
        if let Some(h) = call.req {
            s.put(1);
            s.put_i(h.wrapping_sub(self.last_req) as i64);
            self.last_req = h;
        }
        if let Some((source, tag)) = call.status {
            s.put_i(source);
            s.put_i(tag);
        }
        n + s.len()
    }

    /// Encodes a call that completed at most one request (`MPI_Wait`,
    /// `MPI_Test`) exactly as [`RawEncoder::encode`] encodes the
    /// [`RawEvent`] whose `done` holds `done` or nothing, without building
    /// one. `out` must hold at least [`SMALL_MAX`] bytes.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn encode_done(
        &mut self,
        routine: u32,
        start: u64,
        end: u64,
        site: SiteCode,
        done: Option<RawDone>,
        out: &mut [u8],
    ) -> usize {
        let Some(d) = done else {
            return self.head(out, routine, start, end, false, 0, true, site);
        };
        let n = self.head(out, routine, start, end, false, DONE, true, site);
        let delta = zigzag(d.handle.wrapping_sub(self.last_req) as i64);
        self.last_req = d.handle;
        if let Some((source, tag)) = d.status {
            let (source, tag) = (zigzag(source), zigzag(tag));
            if (delta | source | tag) < 0x80 {
                // The commonest completion, a request completed again
                // after its last mention with a small status: count,
                // handle, flag and status in one store.
                let a: &mut [u8; 8] = (&mut out[n..n + 8]).try_into().expect("room");
                *a = (1 | delta << 8 | 1 << 16 | source << 24 | tag << 32).to_le_bytes();
                return n + 5;
            }
        }
        let mut s = Sink::new(&mut out[n..]);
        s.put(1);
        s.put(delta);
        put_completion_status(&mut s, d.status);
        n + s.len()
    }

    /// Encodes a blocking collective with at most a communicator, bytes
    /// and a root (`MPI_Barrier`, `MPI_Bcast`, `MPI_Reduce`,
    /// `MPI_Allreduce` ...) exactly as [`RawEncoder::encode`] encodes the
    /// [`RawEvent`] with these fields, without building one. `out` must
    /// hold at least [`SMALL_MAX`] bytes.
    #[inline(always)]
    pub fn encode_coll(&mut self, call: &CollCall, out: &mut [u8]) -> usize {
        let mut mask = COMM;
        if call.bytes.is_some() {
            mask |= BYTES;
        }
        if call.root.is_some() {
            mask |= ROOT;
        }
        let n = self.head(
            out,
            call.routine,
            call.start,
            call.end,
            false,
            mask,
            true,
            call.site,
        );
        let mut s = Sink::new(&mut out[n..]);
        s.put_i(call.comm.wrapping_sub(self.last_comm) as i64);
        self.last_comm = call.comm;
        for v in [call.bytes, call.root].into_iter().flatten() {
            s.put_i(v);
        }
        n + s.len()
    }

    /// Encodes `ev` into `out`, which must hold at least
    /// [`RawEvent::max_size`] bytes; returns the bytes written.
    pub fn encode(&mut self, ev: &RawEvent<'_>, out: &mut [u8]) -> usize {
        let same = match (ev.peer, ev.tag, ev.comm, ev.bytes) {
            (Some(peer), Some(tag), Some(comm), Some(bytes)) => self.repeats.repeat(Args {
                routine: ev.routine,
                peer,
                tag,
                comm,
                bytes,
            }),
            _ => false,
        };
        let mut mask = 0;
        let bit = |present: bool, b: u32| if present { b } else { 0 };
        mask |= bit(ev.peer.is_some(), PEER) | bit(ev.tag.is_some(), TAG) | bit(ev.comm.is_some(), COMM);
        mask |= bit(ev.bytes.is_some(), BYTES) | bit(!ev.reqs.is_empty(), REQ);
        mask |= bit(!ev.done.is_empty(), DONE) | bit(ev.root.is_some(), ROOT);
        mask |= bit(ev.rbytes.is_some(), RBYTES) | bit(ev.src.is_some(), SRC) | bit(ev.rtag.is_some(), RTAG);
        mask |= bit(ev.status.is_some(), STATUS) | bit(ev.newcomm.is_some(), NEWCOMM);
        mask |= bit(ev.counts.is_some(), COUNTS) | bit(ev.win.is_some(), WIN);
        mask |= bit(ev.newwin.is_some(), NEWWIN) | bit(ev.op.is_some(), OP);
        mask |= bit(ev.assert.is_some(), ASSERT) | bit(ev.lock.is_some(), LOCK);
        mask |= bit(ev.group.is_some(), GROUP);
        let n = self.head(
            out,
            ev.routine,
            ev.start,
            ev.end,
            same,
            mask,
            false,
            SiteCode::new(ev.site),
        );
        let mut s = Sink::new(&mut out[n..]);
        if let (Some(c), true) = (ev.comm, same) {
            self.last_comm = c;
        } else {
            for v in [ev.peer, ev.tag].into_iter().flatten() {
                s.put_i(v);
            }
            if let Some(c) = ev.comm {
                s.put_i(c.wrapping_sub(self.last_comm) as i64);
                self.last_comm = c;
            }
            if let Some(b) = ev.bytes {
                s.put_i(b);
            }
        }
        if !ev.reqs.is_empty() {
            s.put(ev.reqs.len() as u64);
            for &h in ev.reqs {
                s.put_i(h.wrapping_sub(self.last_req) as i64);
                self.last_req = h;
            }
        }
        if !ev.done.is_empty() {
            s.put(ev.done.len() as u64);
            for d in ev.done {
                s.put_i(d.handle.wrapping_sub(self.last_req) as i64);
                self.last_req = d.handle;
                put_completion_status(&mut s, d.status);
            }
        }
        for v in [ev.root, ev.rbytes, ev.src, ev.rtag].into_iter().flatten() {
            s.put_i(v);
        }
        if let Some((source, tag)) = ev.status {
            s.put_i(source);
            s.put_i(tag);
        }
        if let Some(c) = &ev.newcomm {
            s.put_i(c.handle.wrapping_sub(self.last_comm) as i64);
            self.last_comm = c.handle;
            s.put(u64::from(c.remote.is_some()));
            varint::put_ranks(&mut s, c.members);
            if let Some(remote) = c.remote {
                varint::put_ranks(&mut s, remote);
            }
        }
        if let Some(counts) = ev.counts {
            self.counts.put(&mut s, ev.routine, counts);
        }
        if let Some(w) = ev.win {
            s.put_i(w.wrapping_sub(self.last_win) as i64);
            self.last_win = w;
        }
        if let Some(w) = &ev.newwin {
            s.put_i(w.handle.wrapping_sub(self.last_win) as i64);
            self.last_win = w.handle;
            s.put(w.kind as u64);
            s.put_i(w.disp_unit);
            varint::put_ranks(&mut s, w.members);
        }
        for v in [ev.op, ev.assert, ev.lock].into_iter().flatten() {
            s.put_i(v);
        }
        if let Some(g) = ev.group {
            varint::put_ranks(&mut s, g);
        }
        n + s.len()
    }
}

/// A completion's flags (1 with a status, 0 without) and status.
#[inline(always)]
fn put_completion_status(s: &mut Sink<'_>, status: Option<(i64, i64)>) {
    match status {
        Some((source, tag)) => {
            s.put(1);
            s.put_i(source);
            s.put_i(tag);
        }
        None => s.put(0),
    }
}

/// The prefix of an `EVENTS` chunk's payload; the encoded events follow it.
pub fn events_prefix(stream: u32, info: ChunkInfo, pair: ClockPair) -> Vec<u8> {
    let mut out = Vec::with_capacity(48);
    for v in [u64::from(stream), info.base, pair.tick, pair.ns, info.count] {
        varint::push(&mut out, v);
    }
    out
}

/// Everything of an `EVENTS` chunk that goes before its encoded `events`
/// (the frame and the prefix), so that the tracer can write its buffer out
/// without copying it.
pub fn events_chunk_head(stream: u32, info: ChunkInfo, pair: ClockPair, events: &[u8]) -> Vec<u8> {
    let prefix = events_prefix(stream, info, pair);
    let mut head = container::frame(CHUNK_EVENTS, &[&prefix, events]);
    head.extend_from_slice(&prefix);
    head
}

/// A clock-offset measurement: at `pair`, rank 0's `CLOCK_MONOTONIC` read
/// `pair.ns + offset`, measured with a round trip of `rtt` ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sync {
    /// 0 at `MPI_Init`, 1 at `MPI_Finalize`.
    pub phase: u8,
    /// When it was taken.
    pub pair: ClockPair,
    /// Rank 0's clock minus this rank's, ns.
    pub offset: i64,
    /// The best round trip, ns.
    pub rtt: u64,
}

impl Sync {
    /// The payload of a `SYNC` chunk.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(40);
        varint::push(&mut out, u64::from(self.phase));
        varint::push(&mut out, self.pair.tick);
        varint::push(&mut out, self.pair.ns);
        varint::push_i(&mut out, self.offset);
        varint::push(&mut out, self.rtt);
        out
    }
}

/// The payload of the `END` chunk.
pub fn end_payload(events: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint::push(&mut out, events);
    out
}

/// Decodes the events of one chunk, mirroring [`RawEncoder`]. Its state
/// is three registers, so a reader that ran out of bytes in the middle of
/// an event can restore a copy and retry with more.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawDecoder {
    prev_end: u64,
    last_comm: u64,
    last_req: u64,
    last_win: u64,
    /// Format version 3 or later: events have a head byte and may repeat
    /// arguments (before 3, times are varints).
    packed: bool,
    /// Format version 4 or later: the head byte may announce a site.
    sites: bool,
    /// Format version 5 or later: events may carry one-sided fields.
    rma: bool,
}

impl RawDecoder {
    /// The decoder of a chunk, of a file of format `version`, whose first
    /// gap counts from `base`.
    pub(crate) fn new(base: u64, version: u8) -> RawDecoder {
        RawDecoder {
            prev_end: base,
            last_comm: 0,
            last_req: 0,
            last_win: 0,
            packed: version >= 3,
            sites: version >= 4,
            rma: version >= 5,
        }
    }

    /// The routine code, gap and duration of an event, whether it
    /// repeats its routine's arguments, and its site.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn start(&self, c: &mut Cursor<'_>) -> Result<(u32, u64, u64, bool, Option<u32>), Malformed> {
        if !self.packed {
            return Ok((c.u32()?, c.u64()?, c.u64()?, false, None));
        }
        let routine = c.le(2)? as u32;
        let at = c.offset();
        let head = c.u8()?;
        if head & SITE_HEAD != 0 && !self.sites {
            return Err(Malformed::new(
                at,
                format!("unknown bits in event head {head:#x}"),
            ));
        }
        let gap = c.le(usize::from(head & 7) + 1)?;
        let dur = c.le(usize::from(head >> 3 & 7) + 1)?;
        let site = if head & SITE_HEAD != 0 {
            Some(c.u32()?)
        } else {
            None
        };
        Ok((routine, gap, dur, head & SAME != 0, site))
    }

    /// The gap of the event at `c` (the start of a chunk's first event).
    pub(crate) fn first_gap(&self, c: &mut Cursor<'_>) -> Result<u64, Malformed> {
        self.start(c).map(|(_, gap, _, _, _)| gap)
    }

    /// Decodes the next event into `r`, reusing its lists' memory.
    /// `counts` and `repeats` are the chunk's per-peer count history and
    /// last arguments, kept apart from the registers (which a reader
    /// copies to retry an event) and changed only once the whole event
    /// decoded.
    pub(crate) fn event_into(
        &mut self,
        c: &mut Cursor<'_>,
        routines: usize,
        r: &mut RawRecord,
        counts: &mut CountsHistory,
        repeats: &mut Repeats,
    ) -> Result<(), Malformed> {
        let at = c.offset();
        let (routine, gap, dur, same, site) = self.start(c)?;
        if routine as usize >= routines {
            return Err(Malformed::new(
                at,
                format!("routine code {routine} outside the routine table ({routines} entries)"),
            ));
        }
        let start = self.prev_end.wrapping_add(gap);
        let end = start.wrapping_add(dur);
        self.prev_end = end;
        let mask_at = c.offset();
        let mask = c.u64()?;
        let known = if self.rma { ALL } else { ALL & !RMA_BITS };
        if mask & !u64::from(known & !INIT & !SITE) != 0 {
            return Err(Malformed::new(
                mask_at,
                format!("unknown field bits in mask {mask:#x}"),
            ));
        }
        let mask = mask as u32;
        let has = |b: u32| mask & b != 0;
        r.routine = routine;
        r.start = start;
        r.end = end;
        r.site = site;
        if same {
            const FOUR: u32 = PEER | TAG | COMM | BYTES;
            if mask & FOUR != FOUR {
                return Err(Malformed::new(
                    mask_at,
                    "repeated arguments on an event without peer, tag, communicator and bytes",
                ));
            }
            let a = repeats.last(routine).ok_or_else(|| {
                Malformed::new(
                    at,
                    format!("event repeats the arguments of an earlier event of routine {routine}, but its chunk has none"),
                )
            })?;
            (r.peer, r.tag, r.comm, r.bytes) = (Some(a.peer), Some(a.tag), Some(a.comm), Some(a.bytes));
            self.last_comm = a.comm;
        } else {
            r.peer = opt_i64(c, has(PEER))?;
            r.tag = opt_i64(c, has(TAG))?;
            r.comm = None;
            if has(COMM) {
                self.last_comm = self.last_comm.wrapping_add(c.i64()? as u64);
                r.comm = Some(self.last_comm);
            }
            r.bytes = opt_i64(c, has(BYTES))?;
        }
        r.reqs.clear();
        if has(REQ) {
            let n = c.count(1)?;
            for _ in 0..n {
                self.last_req = self.last_req.wrapping_add(c.i64()? as u64);
                r.reqs.push(self.last_req);
            }
        }
        r.done.clear();
        if has(DONE) {
            let n = c.count(2)?;
            for _ in 0..n {
                self.last_req = self.last_req.wrapping_add(c.i64()? as u64);
                let status = match c.u64()? {
                    0 => None,
                    1 => Some((c.i64()?, c.i64()?)),
                    f => return Err(c.error(format!("unknown completion flags {f}"))),
                };
                r.done.push(RawDone {
                    handle: self.last_req,
                    status,
                });
            }
        }
        r.root = opt_i64(c, has(ROOT))?;
        r.rbytes = opt_i64(c, has(RBYTES))?;
        r.src = opt_i64(c, has(SRC))?;
        r.rtag = opt_i64(c, has(RTAG))?;
        r.status = if has(STATUS) {
            Some((c.i64()?, c.i64()?))
        } else {
            None
        };
        r.newcomm = None;
        if has(NEWCOMM) {
            self.last_comm = self.last_comm.wrapping_add(c.i64()? as u64);
            let inter = match c.u64()? {
                0 => false,
                1 => true,
                f => return Err(c.error(format!("unknown communicator flags {f}"))),
            };
            let members = c.ranks()?;
            let remote = if inter { Some(c.ranks()?) } else { None };
            r.newcomm = Some(NewComm {
                handle: self.last_comm,
                members,
                remote,
            });
        }
        if has(COUNTS) {
            let mut v = r.counts.take().unwrap_or_default();
            counts.get(c, routine, &mut v)?;
            counts.commit(routine, v.as_raw());
            r.counts = Some(v);
        } else {
            r.counts = None;
        }
        r.win = None;
        if has(WIN) {
            self.last_win = self.last_win.wrapping_add(c.i64()? as u64);
            r.win = Some(self.last_win);
        }
        r.newwin = None;
        if has(NEWWIN) {
            self.last_win = self.last_win.wrapping_add(c.i64()? as u64);
            let k = c.u64()?;
            let kind = WinKind::from_code(k).ok_or_else(|| c.error(format!("unknown window kind {k}")))?;
            let disp_unit = c.i64()?;
            let members = c.ranks()?;
            r.newwin = Some(NewWin {
                handle: self.last_win,
                kind,
                disp_unit,
                members,
            });
        }
        r.op = opt_i64(c, has(OP))?;
        r.assert = opt_i64(c, has(ASSERT))?;
        r.lock = opt_i64(c, has(LOCK))?;
        r.group = if has(GROUP) { Some(c.ranks()?) } else { None };
        if let (true, Some(peer), Some(tag), Some(comm), Some(bytes)) =
            (self.packed, r.peer, r.tag, r.comm, r.bytes)
        {
            repeats.commit(Args {
                routine,
                peer,
                tag,
                comm,
                bytes,
            });
        }
        Ok(())
    }
}

/// A zigzagged varint if `present`.
#[inline(always)]
fn opt_i64(c: &mut Cursor<'_>, present: bool) -> Result<Option<i64>, Malformed> {
    if present {
        c.i64().map(Some)
    } else {
        Ok(None)
    }
}

/// The prefix of an `EVENTS` chunk, as decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventsPrefix {
    /// The thread's stream id.
    pub stream: u32,
    /// What the first gap counts from.
    pub base: u64,
    /// The calibration pair read when the chunk was written.
    pub pair: ClockPair,
    /// The event count, as written.
    count: u64,
    /// Where the count is (for messages).
    count_at: u64,
}

impl EventsPrefix {
    pub(crate) fn parse(c: &mut Cursor<'_>) -> Result<EventsPrefix, Malformed> {
        Ok(EventsPrefix {
            stream: c.u32()?,
            base: c.u64()?,
            pair: ClockPair {
                tick: c.u64()?,
                ns: c.u64()?,
            },
            count_at: c.offset(),
            count: c.u64()?,
        })
    }

    /// The event count, checked against the `bytes` of events that follow
    /// (an event takes at least 4), so that a corrupt count cannot ask for
    /// a huge allocation.
    pub(crate) fn count(&self, bytes: usize) -> Result<usize, Malformed> {
        usize::try_from(self.count)
            .ok()
            .filter(|&n| n.saturating_mul(4) <= bytes)
            .ok_or_else(|| {
                Malformed::new(
                    self.count_at,
                    format!("count {} exceeds the data left", self.count),
                )
            })
    }
}

impl Sync {
    /// Decodes a `SYNC` chunk's payload.
    pub(crate) fn parse(c: &mut Cursor<'_>) -> Result<Sync, Malformed> {
        let phase = c.u64()?;
        let phase = u8::try_from(phase)
            .ok()
            .filter(|&p| p <= 1)
            .ok_or_else(|| c.error(format!("unknown sync phase {phase}")))?;
        Ok(Sync {
            phase,
            pair: ClockPair {
                tick: c.u64()?,
                ns: c.u64()?,
            },
            offset: c.i64()?,
            rtt: c.u64()?,
        })
    }
}

/// One thread's events, its chunks concatenated in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawStream {
    /// The thread's index on its rank (0 for the first thread that called MPI).
    pub id: u32,
    /// Its events.
    pub records: Vec<RawRecord>,
}

/// A decoded rank file.
#[derive(Clone, Debug)]
pub struct RankFile {
    /// Its header.
    pub header: RankHeader,
    /// Its threads' events, by stream id.
    pub streams: Vec<RawStream>,
    /// Its clock-offset measurements.
    pub syncs: Vec<Sync>,
    /// Every calibration pair (header, chunks, syncs), in file order.
    pub pairs: Vec<ClockPair>,
    /// The event total of the `END` chunk, if the tracer finished cleanly.
    pub end: Option<u64>,
    /// Set when the file ends inside a chunk.
    pub truncated: Option<Malformed>,
    /// Its call sites: (the rank's id, site), from its `SITES` chunks.
    pub sites: Vec<(u32, Site)>,
}

impl RankFile {
    /// Decodes a rank file's bytes.
    pub fn parse(data: &[u8]) -> Result<RankFile, Malformed> {
        let file = container::parse(data)?;
        if file.kind != FileKind::Rank {
            return Err(Malformed::new(9, "a merged trace, not a rank file"));
        }
        let mut hc = file.header.clone();
        let header = RankHeader::decode(&mut hc)?;
        let mut out = RankFile {
            pairs: vec![header.start],
            header,
            streams: Vec::new(),
            syncs: Vec::new(),
            end: None,
            truncated: file.truncated,
            sites: Vec::new(),
        };
        for chunk in file.chunks {
            let mut c = chunk.payload;
            match chunk.chunk_type {
                CHUNK_EVENTS => out.events_chunk(&mut c, file.version)?,
                CHUNK_SYNC => {
                    let sync = Sync::parse(&mut c)?;
                    out.pairs.push(sync.pair);
                    out.syncs.push(sync);
                }
                CHUNK_END => out.end = Some(c.u64()?),
                CHUNK_SITES => parse_rank_sites(&mut c, &mut out.sites)?,
                // Later versions may add chunk types; this reader skips them.
                _ => continue,
            }
            if !c.is_empty() {
                return Err(c.error("unexpected bytes at the end of a chunk"));
            }
        }
        Ok(out)
    }

    fn events_chunk(&mut self, c: &mut Cursor<'_>, version: u8) -> Result<(), Malformed> {
        let prefix = EventsPrefix::parse(c)?;
        self.pairs.push(prefix.pair);
        let count = prefix.count(c.remaining())?;
        let mut dec = RawDecoder::new(prefix.base, version);
        let mut counts = CountsHistory::default();
        let mut repeats = Repeats::default();
        let routines = self.header.routines.len();
        let index = match self.streams.iter().position(|s| s.id == prefix.stream) {
            Some(i) => i,
            None => {
                self.streams.push(RawStream {
                    id: prefix.stream,
                    records: Vec::new(),
                });
                self.streams.len() - 1
            }
        };
        let records = &mut self.streams[index].records;
        records.reserve(count);
        for _ in 0..count {
            let mut r = RawRecord::default();
            dec.event_into(c, routines, &mut r, &mut counts, &mut repeats)?;
            records.push(r);
        }
        Ok(())
    }

    /// Reads and decodes the rank file at `path`.
    pub fn read(path: &Path) -> Result<RankFile> {
        let data = std::fs::read(path).map_err(|e| Error::io(path.display(), e))?;
        RankFile::parse(&data).map_err(|e| e.in_file(&path.display().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_point_to_point_path_decodes_as_the_general_one() {
        let calls = [
            P2p {
                routine: 3,
                start: 1_000,
                end: 1_250,
                peer: 1,
                tag: 7,
                comm: 0x7f00_1234_5000,
                bytes: 4,
                req: None,
                status: None,
                site: SiteCode::NONE,
            },
            P2p {
                routine: 4,
                start: 90_000,
                end: 90_001,
                peer: -1,
                tag: -1,
                comm: 0x7f00_1234_5000,
                bytes: 1 << 40,
                req: None,
                status: Some((1, 7)),
                site: SiteCode::NONE,
            },
            P2p {
                routine: 5,
                start: 1 << 50,
                end: (1 << 50) + 77,
                peer: 0,
                tag: i64::MAX,
                comm: 0x55,
                bytes: 0,
                req: Some(0x7f00_dead_0000),
                status: None,
                site: SiteCode::new(Some(3)),
            },
            P2p {
                routine: 6,
                start: (1 << 50) + 10,
                end: (1 << 50) + 5,
                peer: 3,
                tag: 0,
                comm: 0x7f00_1234_5000,
                bytes: -1,
                req: Some(0x10),
                status: Some((i64::MIN, -3)),
                site: SiteCode::new(Some(200_000)),
            },
        ];
        // Each call twice, so that the second repeats its arguments.
        let calls: Vec<P2p> = calls.iter().flat_map(|c| [*c, *c]).collect();
        let (mut fast, mut general) = (RawEncoder::new(500), RawEncoder::new(500));
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        let (mut n, mut m) = (0, 0);
        for c in &calls {
            let k = fast.encode_p2p(c, &mut a[n..]);
            assert!(k + 8 <= P2P_MAX, "{c:?}: {k} bytes");
            n += k;
            let req: Vec<u64> = c.req.into_iter().collect();
            let ev = c.as_event(&req);
            let k = general.encode(&ev, &mut b[m..]);
            assert!(k <= ev.max_size());
            m += k;
        }
        // The point-to-point path may give times more bytes; both decode
        // to the same calls.
        let decode = |data: &[u8]| {
            let mut c = Cursor::new(data, 0);
            let mut dec = RawDecoder::new(500, container::VERSION);
            let (mut counts, mut repeats) = (CountsHistory::default(), Repeats::default());
            let mut out = Vec::new();
            while !c.is_empty() {
                let mut r = RawRecord::default();
                dec.event_into(&mut c, 7, &mut r, &mut counts, &mut repeats)
                    .unwrap();
                out.push(r);
            }
            out
        };
        let (fast, general) = (decode(&a[..n]), decode(&b[..m]));
        assert_eq!(fast, general);
        assert_eq!(fast.len(), calls.len());
        for (got, c) in fast.iter().zip(&calls) {
            let args = (got.routine, got.peer, got.tag, got.comm, got.bytes);
            assert_eq!(
                args,
                (c.routine, Some(c.peer), Some(c.tag), Some(c.comm), Some(c.bytes))
            );
            assert_eq!((got.reqs.first().copied(), got.status), (c.req, c.status));
        }
    }

    pub(crate) fn header() -> RankHeader {
        RankHeader {
            rank: 1,
            world_size: 2,
            run_id: 77,
            clock: Clock::Tsc,
            start: ClockPair { tick: 1000, ns: 500 },
            pid: 4242,
            host: "node".into(),
            mpi: "openmpi".into(),
            values: MpiValues {
                comm_world: 0x7f00_1234_5000,
                comm_self: 0x7f00_1234_6000,
                comm_null: 0x7f00_1234_7000,
                request_null: 0x7f00_1234_8000,
                any_source: -1,
                proc_null: -2,
                any_tag: -1,
                root: -4,
            },
            routines: vec![
                "MPI_Init".into(),
                "MPI_Isend".into(),
                "MPI_Waitall".into(),
                "MPI_Comm_split".into(),
            ],
        }
    }

    fn file_with(events: &[RawEvent<'_>]) -> Vec<u8> {
        let h = header();
        let mut out = h.prologue();
        let mut enc = RawEncoder::new(h.start.tick);
        let mut buf = vec![0u8; 1 << 16];
        let mut len = 0;
        for ev in events {
            len += enc.encode(ev, &mut buf[len..]);
        }
        let info = enc.finish_chunk();
        out.extend_from_slice(&events_chunk_head(
            0,
            info,
            ClockPair { tick: 9000, ns: 4500 },
            &buf[..len],
        ));
        out.extend_from_slice(&buf[..len]);
        out
    }

    #[test]
    fn every_field_round_trips() {
        let done = [
            RawDone {
                handle: 0x5000_0010,
                status: Some((1, 7)),
            },
            RawDone {
                handle: 0x5000_0000,
                status: None,
            },
        ];
        let members = [0, 2, 3];
        let remote = [1];
        let events = [
            RawEvent::plain(0, 1100, 5000),
            RawEvent {
                peer: Some(1),
                tag: Some(-1),
                comm: Some(0x7f00_1234_5000),
                bytes: Some(800),
                reqs: &[0x5000_0000, 0x5000_0010],
                ..RawEvent::plain(1, 5100, 5200)
            },
            RawEvent {
                done: &done,
                status: Some((3, 9)),
                root: Some(0),
                rbytes: Some(16),
                src: Some(-2),
                rtag: Some(i64::MAX),
                ..RawEvent::plain(2, 6000, 9000)
            },
            RawEvent {
                comm: Some(0x7f00_1234_5000),
                newcomm: Some(RawNewComm {
                    handle: 0x7f00_2000_0000,
                    members: &members,
                    remote: Some(&remote),
                }),
                ..RawEvent::plain(3, 9000, 9000)
            },
        ];
        let data = file_with(&events);
        let f = RankFile::parse(&data).unwrap();
        assert_eq!(f.header, header());
        assert_eq!(f.streams.len(), 1);
        let got: Vec<RawEvent<'_>> = f.streams[0].records.iter().map(RawRecord::as_event).collect();
        assert_eq!(got, events);
        assert_eq!(f.pairs.len(), 2);
        assert!(f.truncated.is_none());
        for ev in &events {
            let mut buf = vec![0u8; ev.max_size()];
            RawEncoder::new(0).encode(ev, &mut buf);
        }
    }

    #[test]
    fn one_sided_fields_round_trip() {
        let members = [0, 1];
        let group = [1];
        let events = [
            RawEvent {
                comm: Some(0x7f00_1234_5000),
                bytes: Some(4096),
                newwin: Some(RawNewWin {
                    handle: 0x7f00_3000_0000,
                    kind: WinKind::AllocateShared,
                    disp_unit: 8,
                    members: &members,
                }),
                ..RawEvent::plain(1, 1100, 1200)
            },
            RawEvent {
                peer: Some(1),
                bytes: Some(131_072),
                rbytes: Some(8),
                win: Some(0x7f00_3000_0000),
                op: Some(2),
                reqs: &[0x5000_0000],
                ..RawEvent::plain(2, 1300, 1400)
            },
            RawEvent {
                win: Some(0x7f00_3000_0000),
                assert: Some(8),
                group: Some(&group),
                ..RawEvent::plain(3, 1500, 1600)
            },
            RawEvent {
                peer: Some(0),
                win: Some(0x7f00_3000_0000),
                assert: Some(0),
                lock: Some(crate::rma::LOCK_SHARED),
                ..RawEvent::plain(3, 1700, 1800)
            },
        ];
        let data = file_with(&events);
        let f = RankFile::parse(&data).unwrap();
        let got: Vec<RawEvent<'_>> = f.streams[0].records.iter().map(RawRecord::as_event).collect();
        assert_eq!(got, events);
        // A version 4 file cannot carry them.
        let mut buf = vec![0u8; events[1].max_size()];
        let n = RawEncoder::new(0).encode(&events[1], &mut buf);
        let mut dec = RawDecoder::new(0, 4);
        let mut r = RawRecord::default();
        let (mut counts, mut repeats) = (CountsHistory::default(), Repeats::default());
        let e = dec
            .event_into(
                &mut Cursor::new(&buf[..n], 0),
                4,
                &mut r,
                &mut counts,
                &mut repeats,
            )
            .unwrap_err();
        assert!(e.what.contains("unknown field bits"), "{e}");
    }

    #[test]
    fn site_codes_give_back_their_ids() {
        for id in [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 200_000, u32::MAX] {
            assert_eq!(SiteCode::new(Some(id)).id(), Some(id), "{id}");
        }
        assert_eq!(SiteCode::new(None), SiteCode::NONE);
        assert_eq!(SiteCode::NONE.id(), None);
    }

    #[test]
    fn plain_events_take_a_few_bytes() {
        let mut enc = RawEncoder::new(0);
        let mut buf = [0u8; 64];
        let n = enc.encode_plain(55, 100, 130, SiteCode::NONE, &mut buf);
        // Routine (2 bytes), head (4-byte times), gap, duration, mask.
        assert_eq!(n, 12);
        assert_eq!(buf[..12], [55, 0, 0x1b, 100, 0, 0, 0, 30, 0, 0, 0, 0]);
        assert_eq!(enc.count(), 1);
        assert_eq!(enc.prev_end(), 130);
        // A call site: the head's bit 7, then its id, one more byte.
        let n = enc.encode_plain(55, 140, 150, SiteCode::new(Some(5)), &mut buf);
        assert_eq!(n, 13);
        assert_eq!(buf[..13], [55, 0, 0x9b, 10, 0, 0, 0, 10, 0, 0, 0, 5, 0]);
    }

    #[test]
    fn a_clock_stepping_back_keeps_encoder_and_decoder_in_step() {
        let events = [RawEvent::plain(0, 2000, 3000), RawEvent::plain(1, 2500, 2600)];
        let f = RankFile::parse(&file_with(&events)).unwrap();
        let r = &f.streams[0].records;
        assert_eq!((r[1].start, r[1].end), (3000, 3100));
    }

    #[test]
    fn sync_and_end_chunks_are_read() {
        let mut data = file_with(&[RawEvent::plain(0, 1100, 1200)]);
        let sync = Sync {
            phase: 1,
            pair: ClockPair { tick: 5, ns: 6 },
            offset: -300,
            rtt: 40,
        };
        container::push_chunk(&mut data, CHUNK_SYNC, &sync.encode());
        container::push_chunk(&mut data, CHUNK_END, &end_payload(1));
        container::push_chunk(&mut data, 99, b"future");
        let f = RankFile::parse(&data).unwrap();
        assert_eq!(f.syncs, [sync]);
        assert_eq!(f.end, Some(1));
    }

    #[test]
    fn a_bad_routine_code_is_an_error_at_its_offset() {
        let data = file_with(&[RawEvent::plain(9, 1100, 1200)]);
        let e = RankFile::parse(&data).unwrap_err();
        assert!(e.what.contains("routine code 9"), "{e}");
        assert!(e.offset > 0 && (e.offset as usize) < data.len());
    }
}
