//! Reading a large GOAL file in two parts at once, on two threads: the
//! text up to a rank block near its middle, and the rest. Reading the text
//! is a third of what `pnmpi sim replay X.goal` takes on a collective of
//! 65,536 ranks, and LogGOPSim's `txt2bin` reads it on one core.
//!
//! The second part starts at a line `rank R {`. The split is taken only
//! where the first part, read to its end, agrees: no block open, no
//! comment open, `num_ranks` the one the head declared, rank `R`'s block
//! the next expected. Anything else (a `rank` line inside a comment, say)
//! reads the file again in one part, so that the result and every error,
//! line included, are the one-part reading's.

use super::lex::{Lines, MAX_WORDS};
use super::parse::{input_error, parse_from, read_part, Builder, Part, Schedule};
use crate::SimError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Files smaller than this are read in one part: a thread's start and
/// the join cost more than they save.
const TWO_PARTS: u64 = 16 << 20;

/// How far past the middle a `rank` line is looked for.
const LOOK: usize = 1 << 20;

/// Parses the GOAL schedule in the file at `path`, in two parts at once
/// when it is large and the machine has a second core; the same schedule
/// as [`parse_from`] in every case.
pub fn parse_file(path: &Path) -> Result<Schedule, SimError> {
    let name = path.display().to_string();
    let open = || File::open(path).map_err(|e| input_error(&name, 0, format!("cannot read it: {e}")));
    let mut file = open()?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let split = if cores > 1 && len >= TWO_PARTS {
        split_point(&mut file, len)
    } else {
        None
    };
    let Some((at, ranks, rank)) = split else {
        return parse_from(open()?, &name);
    };
    let mut rest = open()?;
    rest.seek(SeekFrom::Start(at))
        .map_err(|e| input_error(&name, 0, format!("cannot read it: {e}")))?;
    // The first part reads the handle the split was found with, from the
    // start.
    file.seek(SeekFrom::Start(0))
        .map_err(|e| input_error(&name, 0, format!("cannot read it: {e}")))?;
    let (first, second) = std::thread::scope(|s| {
        let second = s.spawn(|| read_part(rest, &name, Builder::sealing(ranks, rank)));
        let first = read_part(file.take(at), &name, Builder::default());
        (first, second.join())
    });
    let first = first?;
    let agrees = first.b.open.is_none()
        && !first.lines.in_comment
        && first.b.ranks == Some(ranks)
        && first.b.next == rank;
    let Ok(second) = second else {
        return parse_from(open()?, &name);
    };
    if !agrees {
        return parse_from(open()?, &name);
    }
    let lines = first.lines.line;
    let second = second.map_err(|e| match e {
        SimError::Input { file, line, what } => SimError::Input {
            file,
            line: line + lines,
            what,
        },
        e => e,
    })?;
    let line = lines + second.lines.line;
    join(first, second)
        .finish()
        .map_err(|what| input_error(&name, line, what))
}

/// Where the second part begins: the offset of the first `rank R {` line
/// at or past the middle of the file, with the `num_ranks` its head
/// declares and `R`; `None` where either is not found.
fn split_point(file: &mut File, len: u64) -> Option<(u64, u32, u32)> {
    let mut head = vec![0u8; 64 << 10];
    let n = file.read(&mut head).ok()?;
    let ranks = declared_ranks(&head[..n])?;
    let middle = len / 2;
    file.seek(SeekFrom::Start(middle)).ok()?;
    let mut window = vec![0u8; LOOK];
    let n = file.read(&mut window).ok()?;
    let window = &window[..n];
    let mut from = 0;
    while let Some(k) = memchr::memmem::find(&window[from..], b"\nrank ") {
        let start = from + k + 1;
        let digits: &[u8] = &window[start + 5..];
        let end = digits.iter().position(|c| !c.is_ascii_digit())?;
        if let Ok(rank) = std::str::from_utf8(&digits[..end]).ok()?.parse::<u32>() {
            return Some((middle + start as u64, ranks, rank));
        }
        from = start;
    }
    None
}

/// The `num_ranks` that the first statement of `head` declares.
fn declared_ranks(head: &[u8]) -> Option<u32> {
    let mut lines = Lines::new();
    let (mut at, mut words) = (0, [&[][..]; MAX_WORDS]);
    while let Some(count) = lines.next(head, &mut at, &mut words) {
        match count.ok()? {
            0 => continue,
            2 if words[0] == b"num_ranks" => return std::str::from_utf8(words[1]).ok()?.parse().ok(),
            _ => return None,
        }
    }
    None
}

/// `second` joined to the end of `first`: its ops (a seal at a time, each
/// freed once copied), rank starts, dependency rows and the sizes and
/// counters kept aside, all shifted by `first`'s ops.
fn join(first: Part, second: Part) -> Builder {
    let (mut b, mut o) = (first.b, second.b);
    let offset = b.s.ops.len() as u32;
    let rest: usize = o.sealed.iter().map(Vec::len).sum::<usize>() + o.s.ops.len();
    b.s.ops.reserve_exact(rest);
    for seal in std::mem::take(&mut o.sealed) {
        b.s.ops.extend_from_slice(&seal);
    }
    b.s.ops.append(&mut o.s.ops);
    b.s.first.extend(o.s.first.iter().map(|&f| f + offset));
    b.s.many_waits
        .extend(o.s.many_waits.iter().map(|(&i, &n)| (i + offset, n)));
    b.s.big.extend(o.s.big.iter().map(|(&i, &n)| (i + offset, n)));
    b.ends.edges.append(&o.ends.edges, offset);
    b.starts.edges.append(&o.starts.edges, offset);
    b.s.cpus = b.s.cpus.max(o.s.cpus);
    b.s.nics = b.s.nics.max(o.s.nics);
    b.open = o.open;
    b.next = o.next;
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal::parse;
    use std::fmt::Write as _;

    /// A schedule of `ranks` ranks whose blocks send around a ring with
    /// labelled dependencies, one op of size past 32 bits, a comment
    /// with a `rank` line in it at rank `commented`'s block.
    fn schedule(ranks: u32, commented: u32) -> String {
        let mut t = format!("// ring\nnum_ranks {ranks}\n");
        for r in 0..ranks {
            if r == commented {
                t += "/* a comment that reads\nrank 5 {\n*/\n";
            }
            let (to, from) = ((r + 1) % ranks, (r + ranks - 1) % ranks);
            let _ = write!(
                t,
                "rank {r} {{\na: send {}b to {to} tag {r}\nb: recv 8b from {from}\nc: calc {}\nc requires a\nc irequires b\n}}\n",
                8 + r,
                if r == 7 { 1u64 << 33 } else { u64::from(r) }
            );
        }
        t
    }

    fn same(a: &Schedule, b: &Schedule) {
        assert_eq!((&a.ops, &a.first), (&b.ops, &b.first));
        assert_eq!(
            (&a.many_waits, &a.big, a.cpus, a.nics),
            (&b.many_waits, &b.big, b.cpus, b.nics)
        );
        for i in 0..a.ops.len() as u32 + 2 {
            assert_eq!(a.after_end.of(i), b.after_end.of(i), "op {i}");
            assert_eq!(a.after_start.of(i), b.after_start.of(i), "op {i}");
        }
    }

    /// Reads `text` in two parts split at `at`, as [`parse_file`] does.
    fn two_parts(text: &str, at: usize) -> Result<Schedule, SimError> {
        let (ranks, rank) = (
            declared_ranks(text.as_bytes()).unwrap(),
            text[at + 5..].split(' ').next().unwrap().parse().unwrap(),
        );
        let first = read_part(&text.as_bytes()[..at], "t.goal", Builder::default())?;
        let second = read_part(&text.as_bytes()[at..], "t.goal", Builder::sealing(ranks, rank))?;
        Ok(join(first, second).finish().unwrap())
    }

    #[test]
    fn two_parts_read_the_schedule_one_part_reads() {
        let text = schedule(40, 99);
        let whole = parse(&text, "t.goal").unwrap();
        for (k, _) in text.match_indices("\nrank ") {
            same(&two_parts(&text, k + 1).unwrap(), &whole);
        }
        assert_eq!(declared_ranks(b"/* x */\n\nnum_ranks 12\nrank 0 {"), Some(12));
        assert_eq!(declared_ranks(b"rank 0 {\nnum_ranks 12\n"), None);
    }

    #[test]
    fn a_file_read_in_two_parts_is_the_file_read_in_one_and_so_are_its_errors() {
        let dir = tempfile::tempdir().unwrap();
        // About 17 MiB: past TWO_PARTS; first without a comment, then
        // with a `rank` line in a comment where the split would fall.
        let ranks = 190_000;
        let plain = schedule(ranks, u32::MAX);
        let path = dir.path().join("big.goal");
        std::fs::write(&path, &plain).unwrap();
        assert!(plain.len() as u64 > TWO_PARTS);
        let mut file = File::open(&path).unwrap();
        let (at, _, rank) = split_point(&mut file, plain.len() as u64).unwrap();
        assert!(at > plain.len() as u64 / 2 && plain[at as usize..].starts_with(&format!("rank {rank} {{")));
        same(&parse_file(&path).unwrap(), &parse(&plain, "t.goal").unwrap());
        let commented = (rank.saturating_sub(2)..rank + 2)
            .map(|c| schedule(ranks, c))
            .find(|t| {
                std::fs::write(&path, t).unwrap();
                split_point(&mut File::open(&path).unwrap(), t.len() as u64).map(|s| s.2) == Some(5)
            })
            .expect("a schedule whose split falls in its comment");
        same(&parse_file(&path).unwrap(), &parse(&commented, "t.goal").unwrap());
        // An error in the second part names its line in the whole file.
        let text = plain.replacen("rank 180000 {\na: send", "rank 180000 {\na: sned", 1);
        std::fs::write(&path, &text).unwrap();
        let (one, two) = (
            parse(&text, &path.display().to_string()).unwrap_err().to_string(),
            parse_file(&path).unwrap_err().to_string(),
        );
        assert_eq!(one, two);
        assert!(two.contains("sned"), "{two}");
    }
}
