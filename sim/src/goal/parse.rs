//! GOAL text schedules (LogGOPSim's input, as its `txt2bin` reads them and
//! its generator Schedgen2 writes them): `num_ranks N`, then per rank
//! `rank R { ... }` with one statement a line:
//!
//! ```text
//! [label:] send <size>b to <rank> [tag <t>] [cpu <c>] [nic <n>]
//! [label:] recv <size>b from <rank|-1> [tag <t|-1>] [cpu <c>] [nic <n>]
//! [label:] calc <ns> [cpu <c>] [nic <n>]
//! <label> requires <label>      (starts after the other ends)
//! <label> irequires <label>     (starts after the other starts)
//! ```
//!
//! and `//` or `/* */` comments. A schedule is kept as flat arrays (an op
//! is 16 bytes, a dependency 4, a row of dependents 1.5), so that a million ranks of a collective
//! fit where LogGOPSim's graph needs several times more.

pub use super::edges::Edges;
use super::edges::{add_wait, Rows};
use super::fast;
use super::labels::Labels;
use super::lex::{Chunks, Lines, MAX_WORDS};
pub use super::stmt::Kind;
use super::stmt::Stmt;
use crate::SimError;
use rustc_hash::FxHashMap;

/// `-1` as a source or tag: any.
pub const ANY: u32 = u32::MAX;

/// [`Op::size`] of an op whose size does not fit 32 bits.
pub const BIG: u32 = u32::MAX;

/// One operation of a rank's schedule: 16 bytes (a size beyond 32 bits
/// is kept aside, [`Schedule::size`]), its wait counter included (the
/// engine counts it down where it reads the op).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Bytes sent or received, or ns computed; [`BIG`] for a size kept in
    /// [`Schedule::big`].
    pub size: u32,
    /// The other rank (not for [`Kind::Calc`]).
    pub peer: u32,
    /// The tag (not for [`Kind::Calc`]).
    pub tag: u32,
    /// What it does.
    pub kind: Kind,
    /// The CPU of its rank that runs it.
    pub cpu: u8,
    /// The NIC of its rank that moves it.
    pub nic: u8,
    /// How many ops it waits for (to end or to start); `u8::MAX` for a
    /// count kept in [`Schedule::many_waits`].
    pub waits: u8,
}

/// A whole schedule: every rank's ops, in one array.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    /// Every op; rank `r`'s are `ops[first[r]..first[r + 1]]`.
    pub ops: Vec<Op>,
    /// Where each rank's ops begin, and the end.
    pub first: Vec<u32>,
    /// The wait counts of `u8::MAX` and more, by op.
    pub many_waits: FxHashMap<u32, u32>,
    /// Per op: the ops that wait for it to end (`requires`).
    pub after_end: Edges,
    /// Per op: the ops that wait for it to start (`irequires`).
    pub after_start: Edges,
    /// The sizes of 2^32 - 1 and more, by op.
    pub big: FxHashMap<u32, u64>,
    /// CPUs and NICs a rank has: one more than the largest named.
    pub cpus: u8,
    /// See `cpus`.
    pub nics: u8,
}

impl Schedule {
    /// Op `i`'s size: bytes, or ns for a computation.
    #[inline]
    pub fn size(&self, i: u32) -> u64 {
        self.size_of(self.ops[i as usize], i)
    }

    /// The size of `op`, op `i` (read already).
    #[inline]
    pub fn size_of(&self, op: Op, i: u32) -> u64 {
        match op.size {
            BIG => self.big.get(&i).copied().unwrap_or(u64::from(BIG)),
            s => u64::from(s),
        }
    }

    /// The number of ranks.
    pub fn ranks(&self) -> u32 {
        (self.first.len() - 1) as u32
    }
}

/// Whether `text` begins as a GOAL schedule does (`num_ranks` after
/// comments and blank lines).
pub fn is_goal(text: &[u8]) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_ascii_start();
        if let Some(r) = rest.strip_prefix(b"//") {
            rest = r.iter().position(|&c| c == b'\n').map_or(&[][..], |n| &r[n..]);
        } else if let Some(r) = rest.strip_prefix(b"/*") {
            match r.windows(2).position(|w| w == b"*/") {
                Some(n) => rest = &r[n + 2..],
                None => return false,
            }
        } else {
            return rest.starts_with(b"num_ranks");
        }
    }
}

/// Parses the GOAL schedule `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Schedule, SimError> {
    parse_from(text.as_bytes(), file)
}

/// Parses a GOAL schedule read from `input` in chunks of whole lines (a
/// schedule of a million ranks is gigabytes of text: it is never held
/// whole); `file` names it in errors. Rank blocks come in rank order, as
/// LogGOPSim's `txt2bin` wants them.
pub fn parse_from(input: impl std::io::Read, file: &str) -> Result<Schedule, SimError> {
    let part = read_part(input, file, Builder::default())?;
    part.b
        .finish()
        .map_err(|what| input_error(file, part.lines.line, what))
}

/// An error of `file` at `line`.
pub(super) fn input_error(file: &str, line: usize, what: String) -> SimError {
    SimError::Input {
        file: file.to_string(),
        line,
        what,
    }
}

/// A part of a schedule's text read: what it built, and where the lexer
/// stood at its end (the lines read, inside a comment or not).
pub(super) struct Part {
    pub b: Builder,
    pub lines: Lines,
}

/// Reads `input`'s lines into `b` ([`parse_from`], which reads a whole
/// schedule; [`super::split`] reads two parts at once).
pub(super) fn read_part(input: impl std::io::Read, file: &str, mut b: Builder) -> Result<Part, SimError> {
    let err = |line: usize, what: String| input_error(file, line, what);
    let mut lines = Lines::new();
    let mut chunks = Chunks::new(input);
    while let Some(text) = chunks
        .next()
        .map_err(|e| err(lines.line, format!("cannot read it: {e}")))?
    {
        let (mut at, mut words) = (0, [&[][..]; MAX_WORDS]);
        loop {
            // Most lines: an op or a dependency of the open block, in
            // Schedgen2's form.
            if let (Some(rank), false) = (b.open, lines.in_comment) {
                if let Some((st, used)) = fast::statement(&text[at..]) {
                    lines.line += 1;
                    at += used;
                    b.statement(st, rank).map_err(|what| err(lines.line, what))?;
                    continue;
                }
            }
            let Some(count) = lines.next(text, &mut at, &mut words) else {
                break;
            };
            let count = count.map_err(|_| err(lines.line, "too many words for a GOAL statement".into()))?;
            if count > 0 {
                b.line(&words[..count]).map_err(|what| err(lines.line, what))?;
            }
        }
    }
    Ok(Part { b, lines })
}

/// The schedule being read: the flat arrays, and the open rank block's
/// labels and dependencies (as (awaited, waiting) op indices).
#[derive(Default)]
pub(super) struct Builder {
    pub s: Schedule,
    pub ranks: Option<u32>,
    /// The rank whose block is open.
    pub open: Option<u32>,
    /// The next rank block expected.
    pub next: u32,
    labels: Labels,
    /// The rows of `requires`, and of `irequires`.
    pub ends: Rows,
    pub starts: Rows,
    /// The ops before `s.ops`'s first: a part read from the middle of a
    /// schedule moves its ops to `sealed` a few blocks at a time
    /// ([`Builder::sealing`]).
    pub base: u32,
    /// Ops moved out of `s.ops`, in order, each at least [`SEAL_OPS`].
    pub sealed: Vec<Vec<Op>>,
    seal: bool,
}

/// Ops a sealing builder moves out at once: 16 MiB, what joining its part
/// to the one before holds twice.
const SEAL_OPS: usize = 1 << 20;

impl Builder {
    /// A builder for the blocks from rank `next`'s on of a schedule of
    /// `ranks`, whose ops are moved out, [`SEAL_OPS`] at a time at a
    /// block's close, into `sealed`: joined to the part before, they are
    /// copied a seal at a time, never all of them beside their copy.
    pub fn sealing(ranks: u32, next: u32) -> Builder {
        Builder {
            ranks: Some(ranks),
            next,
            seal: true,
            ..Builder::default()
        }
    }

    /// The ops read so far.
    #[inline]
    fn count(&self) -> usize {
        self.base as usize + self.s.ops.len()
    }
}

/// A word as text, for an error.
fn text(w: &[u8]) -> String {
    String::from_utf8_lossy(w).into_owned()
}

/// The decimal number `w`, for `what` (an error names it).
fn number(w: Option<&[u8]>, what: &str) -> Result<u64, String> {
    let digits = w.unwrap_or(b"");
    decimal(digits).ok_or_else(|| format!("{what} needs a number, not `{}`", text(digits)))
}

/// `digits` as a number, if they are one and it fits 64 bits.
fn decimal(digits: &[u8]) -> Option<u64> {
    // Up to 19 digits cannot overflow: no check per digit.
    if digits.is_empty() || digits.len() > 19 {
        return long_decimal(digits);
    }
    let mut v = 0u64;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

/// [`decimal`] of no digits or 20 and more, apart so that the common case
/// stays small.
#[cold]
#[inline(never)]
fn long_decimal(digits: &[u8]) -> Option<u64> {
    match digits.split_last_chunk::<19>() {
        Some((head, tail)) if head.len() == 1 => {
            decimal(tail)?.checked_add(decimal(head)?.checked_mul(10u64.pow(19))?)
        }
        _ => None,
    }
}

/// The statement a rank block's line of `words` says.
fn decode<'t>(words: &[&'t [u8]]) -> Result<Stmt<'t>, String> {
    // `A requires B` / `A irequires B`.
    if let [a, dep @ (b"requires" | b"irequires"), bb] = words {
        return Ok(Stmt::Dep {
            waiting: a,
            starts: *dep == b"irequires",
            awaited: bb,
        });
    }
    // `[label:] op ...`: the label may be glued to its colon or not.
    let (label, rest) = match words[0].strip_suffix(b":") {
        Some(l) => (Some(l), &words[1..]),
        None if words.get(1) == Some(&&b":"[..]) => (Some(words[0]), &words[2..]),
        None => (None, words),
    };
    let (kind, size, peer, mut i) = match rest.first().copied() {
        Some(b"send") => message(rest, Kind::Send)?,
        Some(b"recv") => message(rest, Kind::Recv)?,
        Some(b"calc") => (Kind::Calc, number(rest.get(1).copied(), "`calc`")?, Some(0), 2),
        Some(other) => {
            return Err(format!(
                "unknown statement `{}`: send, recv, calc, requires or irequires",
                text(other)
            ))
        }
        None => return Err("a label with no op".into()),
    };
    let (mut tag, mut cpu, mut nic) = (Some(0), 0, 0);
    while i < rest.len() {
        let v = rest.get(i + 1).copied();
        match rest[i] {
            b"tag" if kind != Kind::Calc => {
                tag = match v {
                    Some(b"-1") if kind == Kind::Recv => None,
                    _ => Some(number(v, "`tag`")?),
                }
            }
            b"cpu" => cpu = u8::try_from(number(v, "`cpu`")?).map_err(|_| "a CPU above 255".to_string())?,
            b"nic" => nic = u8::try_from(number(v, "`nic`")?).map_err(|_| "a NIC above 255".to_string())?,
            other => return Err(format!("unexpected `{}`: tag, cpu or nic", text(other))),
        }
        i += 2;
    }
    Ok(Stmt::Op {
        label,
        kind,
        size,
        peer,
        tag,
        cpu,
        nic,
    })
}

/// `send <size>b to <rank>` or `recv <size>b from <rank|-1>` (`rest`
/// past the label): its size, peer and the index of the word after.
fn message(rest: &[&[u8]], kind: Kind) -> Result<(Kind, u64, Option<u64>, usize), String> {
    let (k, want, what) = match kind {
        Kind::Send => ("send", &b"to"[..], "`send ... to`"),
        _ => ("recv", &b"from"[..], "`recv ... from`"),
    };
    // `8b` or `8 b`.
    let (size, i) = match rest.get(1).and_then(|w| w.strip_suffix(b"b")) {
        Some(n) => (number(Some(n), k)?, 2),
        None if rest.get(2) == Some(&&b"b"[..]) => (number(rest.get(1).copied(), k)?, 3),
        None => return Err(format!("`{k}` needs a size in bytes, as `{k} 8b`")),
    };
    if rest.get(i) != Some(&want) {
        return Err(format!("`{k} {size}b` needs `{} RANK`", text(want)));
    }
    let peer = match rest.get(i + 1).copied() {
        Some(b"-1") if kind == Kind::Recv => None,
        w => Some(number(w, what)?),
    };
    Ok((kind, size, peer, i + 2))
}

impl Builder {
    fn line(&mut self, words: &[&[u8]]) -> Result<(), String> {
        match words[0] {
            b"num_ranks" => {
                if self.ranks.is_some() {
                    return Err("a second `num_ranks`".into());
                }
                let v = number(words.get(1).copied(), "`num_ranks`")?;
                let v = u32::try_from(v)
                    .ok()
                    .filter(|&v| v > 0 && words.len() == 2 && v < u32::MAX)
                    .ok_or("`num_ranks` needs one number of ranks, from 1 to 2^32 - 2")?;
                self.ranks = Some(v);
                self.s.first.reserve(v as usize + 1);
            }
            b"rank" => {
                let total = self.ranks.ok_or("`rank` before `num_ranks`")?;
                if self.open.is_some() {
                    return Err("`rank` inside another rank's block: close it with `}`".into());
                }
                let first = words.get(1).copied().unwrap_or(b"");
                let digits = first.strip_suffix(b"{").unwrap_or(first);
                let r =
                    u32::try_from(number(Some(digits), "`rank`")?).map_err(|_| "a rank beyond 32 bits")?;
                if r >= total {
                    return Err(format!("rank {r} of a schedule of {total} ranks"));
                }
                if r != self.next {
                    return Err(format!(
                        "rank {r}'s block where rank {}'s was expected: blocks come in rank order, once each",
                        self.next
                    ));
                }
                if !(first.ends_with(b"{") || words.get(2) == Some(&&b"{"[..])) {
                    return Err(format!("`rank {r}` needs `{{` on its line"));
                }
                self.open = Some(r);
                self.s.first.push(self.count() as u32);
            }
            b"}" => {
                self.open.take().ok_or("`}` with no rank block open")?;
                self.next += 1;
                self.labels.clear();
                self.close_rows();
                if self.seal && self.s.ops.len() >= SEAL_OPS {
                    self.base += self.s.ops.len() as u32;
                    self.sealed.push(std::mem::take(&mut self.s.ops));
                }
            }
            _ => {
                let Some(rank) = self.open else {
                    return Err(format!("`{}` outside a `rank R {{ ... }}` block", text(words[0])));
                };
                self.statement(decode(words)?, rank)?;
            }
        }
        Ok(())
    }

    /// One statement of rank `rank`'s block, read or not yet: an op, or a
    /// dependency between two of its labelled ops.
    #[inline(always)]
    fn statement(&mut self, st: Stmt<'_>, rank: u32) -> Result<(), String> {
        let (label, kind, size, peer, tag, cpu, nic) = match st {
            Stmt::Dep {
                waiting,
                starts,
                awaited,
            } => {
                let find = |l: &[u8]| {
                    self.labels
                        .get(l)
                        .ok_or_else(|| format!("label `{}` is not defined (yet) in rank {rank}", text(l)))
                };
                let (waiting, awaited) = (find(waiting)?, find(awaited)?);
                add_wait(
                    &mut self.s.ops[(waiting - self.base) as usize].waits,
                    &mut self.s.many_waits,
                    waiting,
                );
                if starts {
                    self.starts.push(awaited, waiting);
                } else {
                    self.ends.push(awaited, waiting);
                }
                return Ok(());
            }
            Stmt::Op {
                label,
                kind,
                size,
                peer,
                tag,
                cpu,
                nic,
            } => (label, kind, size, peer, tag, cpu, nic),
        };
        let ranks = self.ranks.unwrap_or(0);
        let peer = match peer {
            None => ANY,
            Some(p) => u32::try_from(p)
                .ok()
                .filter(|&p| p < ranks)
                .ok_or_else(|| format!("rank {p} of a schedule of {ranks} ranks"))?,
        };
        let tag = match tag {
            None => ANY,
            Some(t) => u32::try_from(t).map_err(|_| "a tag beyond 32 bits".to_string())?,
        };
        // Below 2^31: the engine marks messages with the top bit.
        let index = u32::try_from(self.count())
            .ok()
            .filter(|&i| i < 1 << 31)
            .ok_or("more than 2^31 ops")?;
        let op = Op {
            size: u32::try_from(size).ok().filter(|&s| s != BIG).unwrap_or(BIG),
            peer,
            tag,
            kind,
            cpu,
            nic,
            waits: 0,
        };
        self.s.cpus = self.s.cpus.max(op.cpu.saturating_add(1));
        self.s.nics = self.s.nics.max(op.nic.saturating_add(1));
        if op.size == BIG {
            self.s.big.insert(index, size);
        }
        if let Some(l) = label {
            if !self.labels.insert(l, index) {
                return Err(format!("label `{}` defined twice in rank {rank}", text(l)));
            }
        }
        self.s.ops.push(op);
        Ok(())
    }

    /// The schedule read, checked whole (a part read from the middle is
    /// joined to the one before first: [`super::split`]).
    pub fn finish(mut self) -> Result<Schedule, String> {
        if let Some(r) = self.open {
            return Err(format!("rank {r}'s block has no closing `}}`"));
        }
        let total = self.ranks.ok_or("no `num_ranks`: not a GOAL schedule")?;
        // Ranks with no block have no ops.
        while (self.s.first.len() as u32) < total {
            self.s.first.push(self.s.ops.len() as u32);
        }
        self.s.first.push(self.s.ops.len() as u32);
        self.s.cpus = self.s.cpus.max(1);
        self.s.nics = self.s.nics.max(1);
        self.close_rows();
        self.s.after_end = std::mem::take(&mut self.ends.edges);
        self.s.after_start = std::mem::take(&mut self.starts.edges);
        Ok(self.s)
    }

    /// Completes the dependency rows up to the last op read.
    pub fn close_rows(&mut self) {
        let ops = self.count() as u32;
        self.ends.close(ops);
        self.starts.close(ops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "// two ranks\nnum_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 5\nl2: calc 100 cpu 1\nl2 requires l1\n}\n\
                       /* rank 1\n   receives */\nrank 1 {\na: recv 8b from -1 tag -1 nic 2\nb: calc 7\nb irequires a\n}\n";

    #[test]
    fn statements_labels_and_dependencies_are_read() {
        assert!(is_goal(TWO.as_bytes()));
        let s = parse(TWO, "t.goal").unwrap();
        assert_eq!(s.ranks(), 2);
        assert_eq!(s.first, [0, 2, 4]);
        assert_eq!((s.cpus, s.nics), (2, 3));
        assert_eq!(
            s.ops[0],
            Op {
                size: 8,
                peer: 1,
                tag: 5,
                kind: Kind::Send,
                cpu: 0,
                nic: 0,
                waits: 0
            }
        );
        assert_eq!((s.ops[2].peer, s.ops[2].tag, s.ops[2].nic), (ANY, ANY, 2));
        assert_eq!(s.after_end.of(0), [1]);
        assert_eq!(s.after_start.of(2), [3]);
        assert_eq!(s.ops.iter().map(|o| o.waits).collect::<Vec<_>>(), [0, 1, 0, 1]);
        // Sizes beyond 32 bits are kept aside.
        let big = parse(
            "num_ranks 1\nrank 0 {\ncalc 4294967295\ncalc 12345678901\ncalc 7\n}\n",
            "b.goal",
        )
        .unwrap();
        assert_eq!(
            [big.size(0), big.size(1), big.size(2)],
            [4294967295, 12345678901, 7]
        );
    }

    #[test]
    fn dependency_rows_keep_their_order_across_blocks() {
        // Rank 0 has no dependency, rank 1 the first `requires`, rank 2
        // the first `irequires`; a row keeps its declaration order.
        let s = parse(
            "num_ranks 4\nrank 0 {\na: calc 1\n}\nrank 1 {\na: calc 1\nb: calc 2\nc: calc 3\n\
             c requires a\nc requires b\nb requires a\n}\nrank 2 {\nx: calc 1\ny: calc 1\ny irequires x\n}\n",
            "r.goal",
        )
        .unwrap();
        let rows = |e: &Edges| {
            (0..s.ops.len() as u32)
                .map(|i| e.of(i).to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            rows(&s.after_end),
            [vec![], vec![3, 2], vec![3], vec![], vec![], vec![]]
        );
        assert_eq!(
            rows(&s.after_start),
            [vec![], vec![], vec![], vec![], vec![5], vec![]]
        );
        assert_eq!(
            s.ops.iter().map(|o| o.waits).collect::<Vec<_>>(),
            [0, 0, 1, 2, 0, 1]
        );
        assert_eq!(s.first, [0, 1, 4, 6, 6]);
    }

    #[test]
    fn numbers_are_decimal_and_fit_64_bits() {
        assert_eq!(decimal(b"0"), Some(0));
        assert_eq!(decimal(b"0042001"), Some(42001));
        assert_eq!(decimal(b"18446744073709551615"), Some(u64::MAX));
        for bad in [
            &b""[..],
            b"18446744073709551616",
            b"99999999999999999999",
            b"-1",
            b"+1",
            b"1b",
            b"1.5",
            b"x",
        ] {
            assert_eq!(decimal(bad), None, "{:?}", text(bad));
        }
        let e = number(Some(b"8k"), "`calc`").unwrap_err();
        assert_eq!(e, "`calc` needs a number, not `8k`");
    }

    #[test]
    fn mistakes_name_their_line() {
        for (text, line, what) in [
            ("num_ranks 1\nrank 0 {\nsend 8 to 0\n}\n", 3, "size in bytes"),
            (
                "num_ranks 1\nrank 0 {\nsend 8b to 3\n}\n",
                3,
                "rank 3 of a schedule of 1",
            ),
            ("num_ranks 1\nrank 0 {\nx requires y\n}\n", 3, "label `x`"),
            ("num_ranks 1\nrank 0 {\nl: calc 1\n", 3, "closing"),
            (
                "num_ranks 1\nrank 0 { /* a\n  comment */ l: calc 1 // done\n}\nrank 0 {\n",
                5,
                "rank order",
            ),
            ("rank 0 {\n}\n", 1, "before `num_ranks`"),
            ("num_ranks 2\nrank 1 {\n}\n", 2, "rank order"),
            ("num_ranks 1\nrank 0 {\nl: wait 1\n}\n", 3, "unknown statement"),
            (
                "num_ranks 1\nrank 0 {\nl: calc 1 tag 3\n}\n",
                3,
                "unexpected `tag`",
            ),
        ] {
            let e = parse(text, "x.goal").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("x.goal:{line}:")) && e.contains(what),
                "{e}"
            );
        }
        assert!(!is_goal(b"0 init\n0 send 1 0 8\n"));
    }

    /// On lines of Schedgen2's forms and on near misses, the fast path
    /// gives what the word splitter and its decoder give, or leaves the
    /// line to them.
    #[test]
    fn fast_lines_read_as_split_ones() {
        let mut rng = fastrand::Rng::with_seed(11);
        let pick = |rng: &mut fastrand::Rng, of: &[&str]| of[rng.usize(..of.len())].to_string();
        let labels = [
            "l1",
            "l65578001",
            "a",
            "x:y",
            "a/b",
            "rank",
            "}",
            "num_ranks",
            "l1:",
            "\u{e9}",
        ];
        let numbers = [
            "0",
            "8",
            "007",
            "524288",
            "-1",
            "-12",
            "4294967296",
            "1234567890123456789",
            "12345678901234567890",
            "x",
            "",
        ];
        let (mut fast, mut slow) = (0, 0);
        for _ in 0..50_000 {
            let label = pick(&mut rng, &labels);
            let mut line = match rng.u8(0..4) {
                0 => format!(
                    "{label} {} {}",
                    pick(&mut rng, &["requires", "irequires", "needs"]),
                    pick(&mut rng, &labels)
                ),
                1 => format!("{label}: calc {}", pick(&mut rng, &numbers)),
                _ => {
                    let (op, to) = if rng.bool() {
                        ("send", "to")
                    } else {
                        ("recv", "from")
                    };
                    let mut l = format!(
                        "{label}: {op} {}b {to} {}",
                        pick(&mut rng, &numbers),
                        pick(&mut rng, &numbers)
                    );
                    if rng.bool() {
                        l += &format!(" tag {}", pick(&mut rng, &numbers));
                    }
                    l
                }
            };
            // Near misses: a byte changed, dropped or doubled.
            if rng.u8(0..3) == 0 && !line.is_empty() {
                let at = rng.usize(..line.len());
                if line.is_char_boundary(at) && line.is_char_boundary(at + 1) {
                    let c = pick(
                        &mut rng,
                        &[" ", "  ", "\t", "\r", ":", "/", "//", "/*", "", "b", "1", "}"],
                    );
                    line.replace_range(at..at + 1, &c);
                }
            }
            let text = format!("{line}\nnext line\n");
            let got = fast::statement(text.as_bytes());
            let (mut lines, mut at, mut words) = (Lines::new(), 0, [&[][..]; MAX_WORDS]);
            let count = lines.next(text.as_bytes(), &mut at, &mut words).unwrap();
            match got {
                Some((st, used)) => {
                    fast += 1;
                    assert_eq!(used, at, "{line:?}");
                    let count = count.unwrap();
                    assert_eq!(decode(&words[..count]), Ok(st), "{line:?}");
                }
                None => slow += 1,
            }
        }
        assert!(fast > 5_000 && slow > 5_000, "{fast} {slow}");
    }
}
