//! The compute record's format: the CPU time, in ns, that a timing module
//! above `replay` (vtime) charged for each interval between a rank's MPI
//! calls, one LEB128 varint each, after a short header.
//!
//! ```text
//! "PNMPICPU" version:u8 rank:varint then one ns:varint per interval
//! ```
//!
//! The values are not in the main record (`format`): they come once per
//! MPI call, and would break its runs of failed tests into single entries.
//! A file cut anywhere (a crash) is read up to its last whole value.

use pnmpi_trace::varint::{push, Cursor};

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"PNMPICPU";
/// The format version this module writes and reads.
pub const VERSION: u8 = 1;

/// The header of rank `rank`'s file.
pub fn header(rank: u32) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.push(VERSION);
    push(&mut out, u64::from(rank));
    out
}

/// Appends one interval's charge.
pub fn put(out: &mut Vec<u8>, ns: u64) {
    push(out, ns);
}

/// A rank's compute record: the rank it names, its values in call order,
/// and whether the file was cut (a crash) after its last whole value.
pub fn decode(data: &[u8]) -> Result<(u32, Vec<u64>, bool), String> {
    if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
        return Err("not a pnmpi compute record (bad magic)".into());
    }
    let mut c = Cursor::new(&data[MAGIC.len()..], MAGIC.len() as u64);
    let version = c.u8().map_err(|e| format!("truncated header: {e}"))?;
    if version != VERSION {
        return Err(format!(
            "format version {version}, but this module reads version {VERSION}"
        ));
    }
    let rank = c.u64().map_err(|e| format!("truncated header: {e}"))?;
    let rank = u32::try_from(rank).map_err(|_| "header: rank out of range".to_string())?;
    let mut values = Vec::with_capacity(c.remaining());
    while !c.is_empty() {
        let rest = c.remaining();
        let mut trial = c.clone();
        match trial.u64() {
            Ok(v) => {
                values.push(v);
                c = trial;
            }
            // A cut value: what is left is a varint's start, every byte
            // with its continuation bit.
            Err(_) if rest < 10 && data[data.len() - rest..].iter().all(|&b| b >= 0x80) => {
                return Ok((rank, values, true))
            }
            Err(e) => return Err(format!("bad value: {e}")),
        }
    }
    Ok((rank, values, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rank: u32, values: &[u64]) -> Vec<u8> {
        let mut out = header(rank);
        for &v in values {
            put(&mut out, v);
        }
        out
    }

    #[test]
    fn values_round_trip_in_order() {
        let values = [0, 1, 127, 128, 16_383, 1 << 40, u64::MAX];
        assert_eq!(decode(&file(7, &values)), Ok((7, values.to_vec(), false)));
    }

    #[test]
    fn small_intervals_take_a_byte_or_two() {
        let one = file(0, &[100]).len() - header(0).len();
        let two = file(0, &[10_000]).len() - header(0).len();
        assert_eq!((one, two), (1, 2));
    }

    #[test]
    fn every_cut_reads_its_whole_values() {
        let values = [5, 300, 70_000, 9];
        let whole = file(2, &values);
        let head = header(2).len();
        for cut in head..whole.len() {
            let (rank, got, was_cut) = decode(&whole[..cut]).expect("a prefix reads");
            assert_eq!(rank, 2);
            assert_eq!(got, values[..got.len()].to_vec(), "cut at {cut}");
            // A cut inside a varint says so; a cut between values cannot be seen.
            let ends_whole = file(2, &got).len() == cut;
            assert_eq!(was_cut, !ends_whole, "cut at {cut}");
        }
    }

    #[test]
    fn another_file_or_version_is_refused() {
        assert!(decode(b"PNMPIRPL\x01\x00").unwrap_err().contains("bad magic"));
        let mut v2 = header(0);
        v2[MAGIC.len()] = 2;
        assert!(decode(&v2).unwrap_err().contains("version 2"));
        assert!(decode(MAGIC).unwrap_err().contains("truncated header"));
    }
}
