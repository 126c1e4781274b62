//! Noise trace formats.
//!
//! - **ours, text** (`.txt`): `# pnmpi jitter trace v1`, then `# key value`
//!   header lines (`tsc_hz`, `core`, `t_min`, `threshold`, in TSC cycles),
//!   then one `<jitter_duration> <cycles_to_next_jitter>` row a line, in
//!   cycles: the paper's TraceCollector tuples.
//! - **ours, binary** (`.pnj`): `PNMPIJIT` (8 bytes), version 1 (u8), then
//!   little-endian `tsc_hz` (f64), `core` (u32), `t_min`, `threshold`,
//!   `rows` (u64 each), then `rows` pairs of u64: the same tuples.
//! - **netgauge** (selfish-detour mode) and **LogGOPSim** noise traces:
//!   one `<start_ns> <duration_ns>` pair a line (tab or spaces); `#`
//!   starts a comment.
//!
//! The format is told from the content (`--format` names it instead).

use crate::sim::NoiseSource;
use crate::JitterError;
use std::path::Path;

/// A trace file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Our text rows.
    Text,
    /// Our binary rows.
    Binary,
    /// `<start_ns> <duration_ns>` lines (LogGOPSim, netgauge).
    Events,
}

impl Format {
    /// From a `--format` name.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "pnmpi" | "text" => Some(Format::Text),
            "binary" => Some(Format::Binary),
            "loggopsim" | "netgauge" | "events" => Some(Format::Events),
            _ => None,
        }
    }
}

/// The magic of our binary traces.
pub const MAGIC: &[u8; 8] = b"PNMPIJIT";
/// The first line of our text traces.
pub const TEXT_HEADER: &str = "# pnmpi jitter trace v1";

/// A trace as the collector writes it: cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// TSC ticks per second.
    pub tsc_hz: f64,
    /// The core it was collected on.
    pub core: u32,
    /// The smallest delta seen between two reads, cycles.
    pub t_min: u64,
    /// Deltas above this were noise, cycles.
    pub threshold: u64,
    /// `(jitter_duration, cycles_to_next_jitter)`, cycles.
    pub rows: Vec<(u64, u64)>,
}

impl Trace {
    /// Our text form.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{TEXT_HEADER}\n# tsc_hz {}\n# core {}\n# t_min {}\n# threshold {}\n",
            self.tsc_hz, self.core, self.t_min, self.threshold
        );
        for (j, g) in &self.rows {
            s.push_str(&format!("{j} {g}\n"));
        }
        s
    }

    /// Our binary form.
    pub fn to_binary(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(45 + 16 * self.rows.len());
        b.extend_from_slice(MAGIC);
        b.push(1);
        b.extend_from_slice(&self.tsc_hz.to_le_bytes());
        b.extend_from_slice(&self.core.to_le_bytes());
        for v in [self.t_min, self.threshold, self.rows.len() as u64] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for (j, g) in &self.rows {
            b.extend_from_slice(&j.to_le_bytes());
            b.extend_from_slice(&g.to_le_bytes());
        }
        b
    }

    /// The rows in ns.
    pub fn rows_ns(&self) -> Vec<(u64, u64)> {
        let ns = |c: u64| (c as f64 * 1e9 / self.tsc_hz).round() as u64;
        self.rows.iter().map(|&(j, g)| (ns(j), ns(g))).collect()
    }
}

fn bad(file: &Path, at: String, what: impl Into<String>) -> JitterError {
    JitterError::Trace {
        file: file.to_owned(),
        at,
        what: what.into(),
    }
}

/// Tells the format from the content.
pub fn detect(data: &[u8]) -> Format {
    if data.starts_with(MAGIC) {
        return Format::Binary;
    }
    let text = String::from_utf8_lossy(&data[..data.len().min(4096)]);
    if text.lines().next().is_some_and(|l| l.trim() == TEXT_HEADER) {
        Format::Text
    } else {
        Format::Events
    }
}

/// Parses our binary form.
pub fn parse_binary(data: &[u8], file: &Path) -> Result<Trace, JitterError> {
    let need = |at: usize, n: usize| -> Result<&[u8], JitterError> {
        data.get(at..at + n).ok_or_else(|| {
            bad(
                file,
                format!("byte {at}"),
                "the file ends early: it is truncated (collect it again)",
            )
        })
    };
    if need(0, 8)? != MAGIC {
        return Err(bad(file, "byte 0".into(), "not a pnmpi jitter trace (bad magic)"));
    }
    if need(8, 1)?[0] != 1 {
        return Err(bad(
            file,
            "byte 8".into(),
            "unknown version: this pnmpi reads version 1",
        ));
    }
    let u64_at = |at: usize| -> Result<u64, JitterError> {
        Ok(u64::from_le_bytes(need(at, 8)?.try_into().expect("8 bytes")))
    };
    let tsc_hz = f64::from_le_bytes(need(9, 8)?.try_into().expect("8 bytes"));
    let core = u32::from_le_bytes(need(17, 4)?.try_into().expect("4 bytes"));
    let (t_min, threshold, n) = (u64_at(21)?, u64_at(29)?, u64_at(37)?);
    let body = 45usize;
    if (data.len() - body.min(data.len())) as u64 != n.saturating_mul(16) {
        return Err(bad(
            file,
            format!("byte {body}"),
            format!(
                "the header says {n} rows but {} bytes follow (16 per row)",
                data.len().saturating_sub(body)
            ),
        ));
    }
    let rows = (0..n as usize)
        .map(|i| Ok((u64_at(body + 16 * i)?, u64_at(body + 16 * i + 8)?)))
        .collect::<Result<Vec<_>, JitterError>>()?;
    check_hz(tsc_hz, file, "byte 9")?;
    Ok(Trace {
        tsc_hz,
        core,
        t_min,
        threshold,
        rows,
    })
}

fn check_hz(hz: f64, file: &Path, at: &str) -> Result<(), JitterError> {
    if hz.is_finite() && hz > 0.0 {
        Ok(())
    } else {
        Err(bad(file, at.into(), format!("tsc_hz {hz} is not a frequency")))
    }
}

fn numbers(line: &str, file: &Path, n: usize) -> Result<(u64, u64), JitterError> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let num = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| v.round() as u64)
    };
    match w.as_slice() {
        [a, b] => match (num(a), num(b)) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(bad(
                file,
                format!("line {n}"),
                format!("`{line}`: expected two non-negative numbers"),
            )),
        },
        _ => Err(bad(
            file,
            format!("line {n}"),
            format!("`{line}`: expected two numbers"),
        )),
    }
}

/// Parses our text form.
pub fn parse_text(text: &str, file: &Path) -> Result<Trace, JitterError> {
    let mut t = Trace {
        tsc_hz: 0.0,
        ..Trace::default()
    };
    let mut hz_line = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(h) = line.strip_prefix('#') {
            let mut w = h.split_whitespace();
            let value = |w: &mut std::str::SplitWhitespace| w.next().and_then(|v| v.parse::<f64>().ok());
            match w.next() {
                Some("tsc_hz") => {
                    t.tsc_hz = value(&mut w).unwrap_or(f64::NAN);
                    hz_line = i + 1;
                }
                Some("core") => t.core = value(&mut w).unwrap_or(0.0) as u32,
                Some("t_min") => t.t_min = value(&mut w).unwrap_or(0.0) as u64,
                Some("threshold") => t.threshold = value(&mut w).unwrap_or(0.0) as u64,
                _ => {}
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        t.rows.push(numbers(line, file, i + 1)?);
    }
    if hz_line == 0 {
        return Err(bad(
            file,
            "line 1".into(),
            "no `# tsc_hz N` header line: the rows' cycles cannot be turned into time",
        ));
    }
    check_hz(t.tsc_hz, file, &format!("line {hz_line}"))?;
    Ok(t)
}

/// Parses `<start_ns> <duration_ns>` lines.
pub fn parse_events(text: &str, file: &Path) -> Result<Vec<(u64, u64)>, JitterError> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        v.push(numbers(line, file, i + 1)?);
    }
    Ok(v)
}

/// Reads a noise trace of any format (or `format`) as a simulation source.
pub fn load(path: &Path, format: Option<Format>) -> Result<NoiseSource, JitterError> {
    let data = std::fs::read(path).map_err(|err| JitterError::Io {
        file: path.to_owned(),
        err,
    })?;
    let name = path.display().to_string();
    let empty = || {
        bad(
            path,
            "byte 0".into(),
            "no noise rows: the trace is empty or all comments",
        )
    };
    let none_free = || {
        bad(
            path,
            "byte 0".into(),
            "the trace is noise from end to end: no free time for any work",
        )
    };
    let text = || {
        std::str::from_utf8(&data)
            .map_err(|e| bad(path, format!("byte {}", e.valid_up_to()), "not UTF-8 text"))
    };
    match format.unwrap_or_else(|| detect(&data)) {
        Format::Binary | Format::Text => {
            let t = if data.starts_with(MAGIC) || format == Some(Format::Binary) {
                parse_binary(&data, path)?
            } else {
                parse_text(text()?, path)?
            };
            if t.rows.is_empty() {
                return Err(empty());
            }
            NoiseSource::from_rows(&name, &t.rows_ns()).ok_or_else(none_free)
        }
        Format::Events => {
            let ev = parse_events(text()?, path)?;
            if ev.is_empty() {
                return Err(empty());
            }
            NoiseSource::from_events(&name, &ev).ok_or_else(none_free)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_round_trip_and_are_detected() {
        let t = Trace {
            tsc_hz: 2.5e9,
            core: 3,
            t_min: 24,
            threshold: 240,
            rows: vec![(500, 25_000), (2500, 1_000_000)],
        };
        let p = Path::new("t");
        assert_eq!(detect(t.to_text().as_bytes()), Format::Text);
        assert_eq!(detect(&t.to_binary()), Format::Binary);
        assert_eq!(parse_text(&t.to_text(), p).unwrap(), t);
        assert_eq!(parse_binary(&t.to_binary(), p).unwrap(), t);
        assert_eq!(t.rows_ns(), vec![(200, 10_000), (1000, 400_000)]);
    }

    #[test]
    fn netgauge_and_loggopsim_lines_are_events() {
        let text = "# Time [ns]\tselfish duration [ns]\n1000\t50\n5000 70\n";
        assert_eq!(detect(text.as_bytes()), Format::Events);
        assert_eq!(
            parse_events(text, Path::new("n")).unwrap(),
            vec![(1000, 50), (5000, 70)]
        );
    }

    #[test]
    fn bad_input_names_the_file_and_where() {
        let p = Path::new("noise.txt");
        let e = parse_events("10 5\nabc 3\n", p).unwrap_err().to_string();
        assert_eq!(e, "noise.txt: line 2: `abc 3`: expected two non-negative numbers");
        let e = parse_text(&format!("{TEXT_HEADER}\n10 20\n"), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no `# tsc_hz N` header"), "{e}");
        let mut b = Trace {
            tsc_hz: 1e9,
            rows: vec![(1, 2)],
            ..Trace::default()
        }
        .to_binary();
        b.pop();
        let e = parse_binary(&b, p).unwrap_err().to_string();
        assert!(e.starts_with("noise.txt: byte 45: the header says 1 rows"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, "# nothing\n").unwrap();
        let e = load(&empty, None).unwrap_err().to_string();
        assert!(
            e.ends_with("no noise rows: the trace is empty or all comments"),
            "{e}"
        );
    }
}
