//! The record format: one file per rank, a header then a stream of
//! entries, each a kind byte and a few varints (`pnmpi_trace::varint`).
//!
//! ```text
//! header: "PNMPIRPL" version:u8 flags:u8 world_size:varint rank:varint
//! entry:  kind:u8 payload
//!   kind | 0x80         n:varint             n failed calls of `kind` in a row
//!   RECV, PROBE, MPROBE, SENDRECV,
//!   IPROBE, IMPROBE     zz(source - prev) zz(tag - prev)
//!   TEST, TESTALL       -                    the call succeeded
//!   WAITANY, TESTANY    index+1:varint       0: MPI_UNDEFINED
//!   WAITSOME, TESTSOME  count+1:varint then count indices; 0: MPI_UNDEFINED
//!   MATCH               zz(post - prev - 1) zz(source - prev) zz(tag - prev)
//!   WTIME               zz(bits - prev bits)
//!   THREAD              thread:varint        the entries that follow are this thread's
//!   RMA_READ            n:varint n bytes     a one-sided read's result, packed (MPI_Pack)
//!   POST                call:u8              a wildcard RECV, IRECV or START was posted (FLAG_POSTS)
//! ```
//!
//! Sources and tags are deltas from the previous entry's (MATCH entries
//! have their own), so the usual small moves take a byte. A MATCH names
//! the wildcard `MPI_Irecv` by its posting number on the rank, and comes
//! when the receive completes; the others come in call order.
//!
//! Under `MPI_THREAD_MULTIPLE` the entries of a process's threads are
//! interleaved in the order they happened; a THREAD entry comes wherever
//! the thread changes (a single-threaded record has none: everything is
//! thread 0's). A MATCH comes under the thread that posted the receive.
//! When MPI granted `MPI_THREAD_MULTIPLE` (header flag `FLAG_POSTS`), a
//! POST comes where a thread posted a wildcard receive (`MPI_Recv`,
//! `MPI_Irecv`, `MPI_Start`), written before MPI posted it, under a lock
//! held until it is posted: the record's order of posts is the order in
//! which MPI matches them, and the blocking `MPI_Recv` then completes
//! with a MATCH, as an `MPI_Irecv` does.
//!
//! A file cut anywhere (a crash) is read up to its last whole entry.

use pnmpi_trace::varint::{push, zigzag, Cursor};
use std::fmt;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"PNMPIRPL";
/// The format version this module writes and reads.
pub const VERSION: u8 = 1;
/// Header flag: `MPI_Wtime`'s values are in the record.
pub const FLAG_WTIME: u8 = 1;
/// Header flag: the results of one-sided reads are in the record.
pub const FLAG_RMA: u8 = 2;
/// Header flag: wildcard receives' posts are in the record (POST), in
/// the order of every thread's posts (`crate::posts`).
pub const FLAG_POSTS: u8 = 4;

/// The calls whose outcome is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A wildcard `MPI_Recv`.
    Recv = 1,
    /// A wildcard `MPI_Probe`.
    Probe = 2,
    /// A wildcard `MPI_Mprobe`.
    Mprobe = 3,
    /// `MPI_Iprobe`.
    Iprobe = 4,
    /// `MPI_Improbe`.
    Improbe = 5,
    /// `MPI_Test`.
    Test = 6,
    /// `MPI_Testall`.
    Testall = 7,
    /// `MPI_Waitany`.
    Waitany = 8,
    /// `MPI_Testany`.
    Testany = 9,
    /// `MPI_Waitsome`.
    Waitsome = 10,
    /// `MPI_Testsome`.
    Testsome = 11,
    /// The completion of a wildcard `MPI_Irecv` (or persistent receive).
    Match = 12,
    /// `MPI_Wtime`.
    Wtime = 13,
    /// A wildcard `MPI_Sendrecv` or `MPI_Sendrecv_replace`.
    Sendrecv = 14,
    /// Not a call: the thread of the entries that follow.
    Thread = 15,
    /// The result of a one-sided read (`MPI_Get`, `MPI_Fetch_and_op`,
    /// `MPI_Compare_and_swap`, `MPI_Get_accumulate`), at the call that
    /// completed it.
    RmaRead = 16,
    /// Not a call: the post of a wildcard receive, ordered among every
    /// thread's; its payload is the call's kind.
    Post = 17,
    /// `MPI_Irecv(MPI_ANY_SOURCE)`, in a POST.
    Irecv = 18,
    /// `MPI_Start` of a persistent wildcard receive, in a POST.
    Start = 19,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        use Kind::*;
        Some(match b {
            1 => Recv,
            2 => Probe,
            3 => Mprobe,
            4 => Iprobe,
            5 => Improbe,
            6 => Test,
            7 => Testall,
            8 => Waitany,
            9 => Testany,
            10 => Waitsome,
            11 => Testsome,
            12 => Match,
            13 => Wtime,
            14 => Sendrecv,
            15 => Thread,
            16 => RmaRead,
            17 => Post,
            18 => Irecv,
            19 => Start,
            _ => return None,
        })
    }

    /// The MPI routine, for messages.
    pub fn routine(self) -> &'static str {
        use Kind::*;
        match self {
            Recv => "MPI_Recv",
            Probe => "MPI_Probe",
            Mprobe => "MPI_Mprobe",
            Iprobe => "MPI_Iprobe",
            Improbe => "MPI_Improbe",
            Test => "MPI_Test",
            Testall => "MPI_Testall",
            Waitany => "MPI_Waitany",
            Testany => "MPI_Testany",
            Waitsome => "MPI_Waitsome",
            Testsome => "MPI_Testsome",
            Match => "the completion of a wildcard MPI_Irecv",
            Wtime => "MPI_Wtime",
            Sendrecv => "MPI_Sendrecv",
            Thread => "a change of thread",
            RmaRead => "the completion of a one-sided read",
            Post => "the post of a wildcard receive",
            Irecv => "MPI_Irecv",
            Start => "MPI_Start",
        }
    }

    /// Whether the call can fail (a test or a nonblocking probe).
    pub fn can_fail(self) -> bool {
        use Kind::*;
        matches!(self, Iprobe | Improbe | Test | Testall | Testany | Testsome)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.routine())
    }
}

/// One entry of the record.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// `n` calls of `kind` in a row that failed (flag false, no request).
    Fails {
        /// The call.
        kind: Kind,
        /// How many.
        n: u64,
    },
    /// A receive or probe that matched a message from `source` with `tag`.
    Matched {
        /// Recv, Probe, Mprobe, Iprobe, Improbe or Sendrecv.
        kind: Kind,
        /// The message's source (rank in the call's communicator).
        source: i32,
        /// The message's tag.
        tag: i32,
    },
    /// A successful `MPI_Test` or `MPI_Testall`.
    Done(Kind),
    /// `MPI_Waitany` or `MPI_Testany` completed this request (`None`:
    /// `MPI_UNDEFINED`, no active request).
    Index(Kind, Option<u32>),
    /// `MPI_Waitsome` or `MPI_Testsome` completed these requests, in this
    /// order (`None`: `MPI_UNDEFINED`).
    Indices(Kind, Option<Vec<u32>>),
    /// The wildcard `MPI_Irecv` posted `post`-th on the rank (from 0)
    /// matched a message from `source` with `tag`.
    Match {
        /// Posting number.
        post: u64,
        /// The message's source.
        source: i32,
        /// The message's tag.
        tag: i32,
    },
    /// A value of `MPI_Wtime`.
    Wtime(f64),
    /// The entries that follow are those of this thread (numbered as
    /// the module numbers threads, see docs/replay.md).
    Thread(u32),
    /// What a one-sided read brought into its result buffer, packed as
    /// `MPI_Pack` packs its count and datatype: the value the target's
    /// memory had when MPI read it, which the order of other ranks'
    /// accesses decided.
    RmaRead(Vec<u8>),
    /// The calling thread posted a wildcard receive here, in a call of
    /// this kind (`Recv`, `Irecv` or `Start`): its place in the order of
    /// every thread's posts, which is MPI's order of matching.
    Post(Kind),
}

impl Entry {
    /// The call the entry is about.
    pub fn kind(&self) -> Kind {
        match self {
            Entry::Fails { kind, .. } | Entry::Matched { kind, .. } => *kind,
            Entry::Done(k) | Entry::Index(k, _) | Entry::Indices(k, _) => *k,
            Entry::Match { .. } => Kind::Match,
            Entry::Wtime(_) => Kind::Wtime,
            Entry::Thread(_) => Kind::Thread,
            Entry::RmaRead(_) => Kind::RmaRead,
            Entry::Post(k) => *k,
        }
    }

    /// How many calls the entry stands for.
    pub fn calls(&self) -> u64 {
        match self {
            Entry::Fails { n, .. } => *n,
            Entry::Match { .. } | Entry::Thread(_) => 0,
            _ => 1,
        }
    }
}

/// The header of a rank's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// [`FLAG_WTIME`], ...
    pub flags: u8,
    /// `MPI_COMM_WORLD`'s size in the recorded run.
    pub world: u32,
    /// The rank that wrote the file.
    pub rank: u32,
}

impl Header {
    /// The header's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(VERSION);
        out.push(self.flags);
        push(&mut out, u64::from(self.world));
        push(&mut out, u64::from(self.rank));
        out
    }
}

/// The delta state shared by writer and reader.
#[derive(Default, Clone)]
struct Prev {
    source: i64,
    tag: i64,
    msource: i64,
    mtag: i64,
    post: i64,
    wtime: u64,
}

/// Appends entries to a buffer.
#[derive(Default)]
pub struct Encoder {
    prev: Prev,
}

impl Encoder {
    /// Appends `e` to `out`.
    pub fn put(&mut self, out: &mut Vec<u8>, e: &Entry) {
        let p = &mut self.prev;
        match e {
            Entry::Fails { kind, n } => {
                out.push(*kind as u8 | 0x80);
                push(out, *n);
            }
            Entry::Matched { kind, source, tag } => {
                out.push(*kind as u8);
                push(out, zigzag(i64::from(*source) - p.source));
                push(out, zigzag(i64::from(*tag) - p.tag));
                p.source = i64::from(*source);
                p.tag = i64::from(*tag);
            }
            Entry::Done(kind) => out.push(*kind as u8),
            Entry::Index(kind, index) => {
                out.push(*kind as u8);
                push(out, index.map_or(0, |i| u64::from(i) + 1));
            }
            Entry::Indices(kind, indices) => {
                out.push(*kind as u8);
                match indices {
                    None => push(out, 0),
                    Some(v) => {
                        push(out, v.len() as u64 + 1);
                        for &i in v {
                            push(out, u64::from(i));
                        }
                    }
                }
            }
            Entry::Match { post, source, tag } => {
                out.push(Kind::Match as u8);
                let post = *post as i64;
                push(out, zigzag(post - p.post - 1));
                push(out, zigzag(i64::from(*source) - p.msource));
                push(out, zigzag(i64::from(*tag) - p.mtag));
                p.post = post;
                p.msource = i64::from(*source);
                p.mtag = i64::from(*tag);
            }
            Entry::Wtime(t) => {
                out.push(Kind::Wtime as u8);
                let bits = t.to_bits();
                push(out, zigzag(bits.wrapping_sub(p.wtime) as i64));
                p.wtime = bits;
            }
            Entry::Thread(t) => {
                out.push(Kind::Thread as u8);
                push(out, u64::from(*t));
            }
            Entry::Post(k) => {
                out.push(Kind::Post as u8);
                out.push(*k as u8);
            }
            Entry::RmaRead(bytes) => {
                out.push(Kind::RmaRead as u8);
                push(out, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
        }
    }
}

/// Why a file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord(pub String);

impl fmt::Display for BadRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a whole file: its header and every whole entry. A file cut in
/// the middle of an entry (a crash while recording) gives the entries
/// before the cut and `true` for "cut".
pub fn decode(data: &[u8]) -> Result<(Header, Vec<Entry>, bool), BadRecord> {
    if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
        return Err(BadRecord("not a pnmpi replay record (bad magic)".into()));
    }
    let mut c = Cursor::new(&data[MAGIC.len()..], MAGIC.len() as u64);
    let bad = |e: pnmpi_trace::error::Malformed| BadRecord(format!("truncated header: {e}"));
    let version = c.u8().map_err(bad)?;
    if version != VERSION {
        return Err(BadRecord(format!(
            "format version {version}, but this module reads version {VERSION}"
        )));
    }
    let flags = c.u8().map_err(bad)?;
    let world = c.u64().map_err(bad)?;
    let rank = c.u64().map_err(bad)?;
    let (Ok(world), Ok(rank)) = (u32::try_from(world), u32::try_from(rank)) else {
        return Err(BadRecord("header: world size or rank out of range".into()));
    };
    let header = Header { flags, world, rank };
    let mut prev = Prev::default();
    let mut entries = Vec::new();
    loop {
        if c.is_empty() {
            return Ok((header, entries, false));
        }
        let start = c.offset();
        let mut trial = c.clone();
        let mut p = prev.clone();
        match entry(&mut trial, &mut p) {
            Ok(e) => {
                entries.push(e);
                c = trial;
                prev = p;
            }
            Err(Cut::End) => return Ok((header, entries, true)),
            Err(Cut::Bad(what)) => return Err(BadRecord(format!("bad entry at byte {start}: {what}"))),
        }
    }
}

/// Why an entry could not be read.
enum Cut {
    /// The data ends inside it.
    End,
    /// It is not an entry.
    Bad(String),
}

fn entry(c: &mut Cursor<'_>, p: &mut Prev) -> Result<Entry, Cut> {
    let end = |_| Cut::End;
    let byte = c.u8().map_err(end)?;
    let kind = Kind::from_u8(byte & 0x7f).ok_or_else(|| Cut::Bad(format!("unknown kind {byte}")))?;
    if byte & 0x80 != 0 {
        if !kind.can_fail() {
            return Err(Cut::Bad(format!("{kind} cannot fail")));
        }
        let n = c.u64().map_err(end)?;
        return Ok(Entry::Fails { kind, n });
    }
    let int = |v: i64| i32::try_from(v).map_err(|_| Cut::Bad(format!("{v} is not an int")));
    Ok(match kind {
        Kind::Recv | Kind::Probe | Kind::Mprobe | Kind::Iprobe | Kind::Improbe | Kind::Sendrecv => {
            let source = p.source + c.i64().map_err(end)?;
            let tag = p.tag + c.i64().map_err(end)?;
            p.source = source;
            p.tag = tag;
            Entry::Matched {
                kind,
                source: int(source)?,
                tag: int(tag)?,
            }
        }
        Kind::Test | Kind::Testall => Entry::Done(kind),
        Kind::Waitany | Kind::Testany => {
            let i = c.u64().map_err(end)?;
            let index = match i {
                0 => None,
                i => Some(u32::try_from(i - 1).map_err(|_| Cut::Bad("index out of range".into()))?),
            };
            Entry::Index(kind, index)
        }
        Kind::Waitsome | Kind::Testsome => {
            let n = c.u64().map_err(end)?;
            if n == 0 {
                Entry::Indices(kind, None)
            } else {
                let n = n - 1;
                // Each index takes a byte at least: a count past the data
                // is a cut (or a bad count), never a huge allocation.
                if n > c.remaining() as u64 {
                    return Err(Cut::End);
                }
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let i = c.u64().map_err(end)?;
                    v.push(u32::try_from(i).map_err(|_| Cut::Bad("index out of range".into()))?);
                }
                Entry::Indices(kind, Some(v))
            }
        }
        Kind::Match => {
            let post = p.post + 1 + c.i64().map_err(end)?;
            let source = p.msource + c.i64().map_err(end)?;
            let tag = p.mtag + c.i64().map_err(end)?;
            if post < 0 {
                return Err(Cut::Bad("negative posting number".into()));
            }
            p.post = post;
            p.msource = source;
            p.mtag = tag;
            Entry::Match {
                post: post as u64,
                source: int(source)?,
                tag: int(tag)?,
            }
        }
        Kind::Wtime => {
            let bits = p.wtime.wrapping_add(c.i64().map_err(end)? as u64);
            p.wtime = bits;
            Entry::Wtime(f64::from_bits(bits))
        }
        Kind::Thread => {
            let t = c.u64().map_err(end)?;
            Entry::Thread(u32::try_from(t).map_err(|_| Cut::Bad(format!("thread {t} out of range")))?)
        }
        Kind::Post => {
            let b = c.u8().map_err(end)?;
            match Kind::from_u8(b) {
                Some(k @ (Kind::Recv | Kind::Irecv | Kind::Start)) => Entry::Post(k),
                _ => return Err(Cut::Bad(format!("a post of kind {b}, not a receive"))),
            }
        }
        Kind::Irecv | Kind::Start => return Err(Cut::Bad(format!("{kind} outside a post"))),
        Kind::RmaRead => {
            let n = usize::try_from(c.u64().map_err(end)?).map_err(|_| Cut::End)?;
            // `bytes` checks the length against the data before the copy:
            // a length past it is a cut (or a bad length), never a huge
            // allocation.
            Entry::RmaRead(c.bytes(n).map_err(end)?.to_vec())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Entry> {
        vec![
            Entry::Matched {
                kind: Kind::Recv,
                source: 3,
                tag: 17,
            },
            Entry::Matched {
                kind: Kind::Recv,
                source: 1,
                tag: 18,
            },
            Entry::Fails {
                kind: Kind::Testsome,
                n: 1234,
            },
            Entry::Indices(Kind::Testsome, Some(vec![2, 0, 1])),
            Entry::Indices(Kind::Waitsome, None),
            Entry::Index(Kind::Waitany, Some(5)),
            Entry::Index(Kind::Testany, None),
            Entry::Post(Kind::Irecv),
            Entry::Done(Kind::Test),
            Entry::Fails {
                kind: Kind::Iprobe,
                n: 2,
            },
            Entry::Matched {
                kind: Kind::Iprobe,
                source: 0,
                tag: -5,
            },
            Entry::Match {
                post: 0,
                source: 2,
                tag: 9,
            },
            Entry::Match {
                post: 4,
                source: 1,
                tag: 9,
            },
            Entry::Match {
                post: 2,
                source: 7,
                tag: 0,
            },
            Entry::Wtime(12.5),
            Entry::Wtime(12.500001),
            Entry::Done(Kind::Testall),
            Entry::Matched {
                kind: Kind::Improbe,
                source: 6,
                tag: i32::MAX,
            },
            Entry::Matched {
                kind: Kind::Mprobe,
                source: 0,
                tag: 0,
            },
            Entry::Thread(3),
            Entry::RmaRead(vec![1, 0, 0, 0, 0, 0, 0, 0]),
            Entry::RmaRead(Vec::new()),
            Entry::Done(Kind::Test),
            Entry::Thread(0),
        ]
    }

    fn encode(entries: &[Entry]) -> Vec<u8> {
        let mut out = Header {
            flags: FLAG_WTIME,
            world: 8,
            rank: 3,
        }
        .encode();
        let mut enc = Encoder::default();
        for e in entries {
            enc.put(&mut out, e);
        }
        out
    }

    #[test]
    fn round_trip() {
        let data = encode(&sample());
        let (h, entries, cut) = decode(&data).unwrap();
        assert_eq!(
            h,
            Header {
                flags: FLAG_WTIME,
                world: 8,
                rank: 3
            }
        );
        assert_eq!(entries, sample());
        assert!(!cut);
    }

    #[test]
    fn small_entries() {
        // A wildcard receive from a nearby rank with the next tag: 3 bytes.
        let mut out = Vec::new();
        let mut enc = Encoder::default();
        enc.put(
            &mut out,
            &Entry::Matched {
                kind: Kind::Recv,
                source: 2,
                tag: 40,
            },
        );
        let before = out.len();
        enc.put(
            &mut out,
            &Entry::Matched {
                kind: Kind::Recv,
                source: 1,
                tag: 41,
            },
        );
        assert_eq!(out.len() - before, 3);
        // A million failed tests: 4 bytes.
        let before = out.len();
        enc.put(
            &mut out,
            &Entry::Fails {
                kind: Kind::Test,
                n: 1_000_000,
            },
        );
        assert_eq!(out.len() - before, 4);
    }

    #[test]
    fn every_prefix_reads_as_a_prefix() {
        let all = sample();
        let data = encode(&all);
        let header = Header {
            flags: FLAG_WTIME,
            world: 8,
            rank: 3,
        }
        .encode()
        .len();
        for len in header..data.len() {
            let (_, entries, cut) = decode(&data[..len]).unwrap();
            assert!(entries.len() < all.len() || !cut, "{len}");
            assert_eq!(entries[..], all[..entries.len()], "prefix of {len} bytes");
        }
        for len in 0..header {
            assert!(decode(&data[..len]).is_err(), "{len}");
        }
    }

    #[test]
    fn bad_records_are_refused() {
        assert!(decode(b"PNMPIRPX\x01\x00\x02\x00").is_err());
        assert!(decode(b"PNMPIRPL\x09\x00\x02\x00").is_err());
        let mut data = Header {
            flags: 0,
            world: 2,
            rank: 0,
        }
        .encode();
        data.push(0x7f);
        assert!(decode(&data).unwrap_err().0.contains("unknown kind"));
        let mut data = Header {
            flags: 0,
            world: 2,
            rank: 0,
        }
        .encode();
        data.extend([0x80 | Kind::Recv as u8, 1]);
        assert!(decode(&data).unwrap_err().0.contains("cannot fail"));
        // A post of something that is not a receive, and a receive's
        // kind outside a post.
        let header = Header {
            flags: FLAG_POSTS,
            world: 2,
            rank: 0,
        }
        .encode();
        for (bytes, says) in [
            (vec![Kind::Post as u8, Kind::Test as u8], "not a receive"),
            (vec![Kind::Irecv as u8], "outside a post"),
        ] {
            let mut data = header.clone();
            data.extend(bytes);
            assert!(decode(&data).unwrap_err().0.contains(says), "{says}");
        }
    }
}
