//! The run's options: `PNMPI_VRANKS` (how many virtual ranks),
//! `PNMPI_VRANK_STACK` (their stack size) and the `vtime` module's
//! arguments in the configuration file `PNMPI_CONF` (the classic form:
//! `module vtime` then `argument KEY VALUE` lines), which give the
//! machine, the model and the CPU factor exactly as they do for vtime.

use crate::stack::MIN_STACK;
use pnmpi_sim::live::target::{self, Config};
use pnmpi_sim::units::parse_bytes;
use std::collections::HashMap;

/// The most virtual ranks in one run (handles carry an index of 24 bits
/// under MPICH).
pub const MAX_RANKS: u32 = 1 << 24;

/// The default stack: 8 MiB, as a Linux main thread gets, up to this many
/// ranks; above, 256 KiB, so that a million ranks' stacks and their page
/// tables fit in memory (each rank touches only the pages it uses).
const BIG_STACKS_UP_TO: u32 = 16384;

/// Everything the run needs to start.
pub struct Options {
    pub ranks: u32,
    pub stack: usize,
    pub config: Config,
    /// What the start-up line says about where the model came from.
    pub source: String,
}

/// The number of ranks from `PNMPI_VRANKS`, or what is wrong with it.
pub fn ranks(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 && n <= u64::from(MAX_RANKS) => Ok(n as u32),
        _ => Err(format!(
            "PNMPI_VRANKS (--vranks) `{text}`: not a number of virtual ranks; give a whole number from 1 to {MAX_RANKS}"
        )),
    }
}

/// A stack size: `8M`, `256K`, `1G` (binary, as `ulimit -s` means them)
/// or any size `pnmpi sim` reads (`8MiB`, `65536B`).
pub fn stack(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let expanded = match t.chars().last() {
        Some(u @ ('K' | 'M' | 'G')) if t[..t.len() - 1].chars().all(|c| c.is_ascii_digit() || c == '.') => {
            format!("{}{}iB", &t[..t.len() - 1], u)
        }
        _ => t.to_string(),
    };
    let b = parse_bytes(&expanded).map_err(|e| format!("PNMPI_VRANK_STACK (--vrank-stack) `{text}`: {e}"))?;
    let b = b.0 as usize;
    if b < MIN_STACK {
        return Err(format!(
            "PNMPI_VRANK_STACK (--vrank-stack) `{text}`: a stack of {b} bytes is too small; give at least {} KiB (the layer's and the MPI library's own frames need it)",
            MIN_STACK / 1024
        ));
    }
    Ok(b)
}

/// The `vtime` arguments of a classic configuration file.
fn vtime_arguments(path: &str) -> Result<Option<HashMap<String, String>>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("PNMPI_CONF {path}: cannot read it: {e}"))?;
    let mut args: Option<HashMap<String, String>> = None;
    let mut in_vtime = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.splitn(2, char::is_whitespace);
        match (words.next(), words.next().map(str::trim)) {
            (Some("module"), Some(name)) => {
                in_vtime = name == "vtime" || name.ends_with("/libvtime.so") || name == "libvtime.so";
                if in_vtime {
                    args.get_or_insert_with(HashMap::new);
                } else {
                    eprintln!(
                        "pnmpi vranks: warning: {path}:{}: module {name} is not loaded with virtual ranks (only vtime's arguments are read)",
                        i + 1
                    );
                }
            }
            (Some("argument"), Some(rest)) if in_vtime => {
                let mut kv = rest.splitn(2, char::is_whitespace);
                let key = kv.next().unwrap_or("").to_string();
                let value = kv.next().unwrap_or("").trim().to_string();
                args.get_or_insert_with(HashMap::new).insert(key, value);
            }
            (Some(w), _) if w.starts_with('[') => {
                return Err(format!(
                    "PNMPI_CONF {path}:{}: the TOML form is not read with virtual ranks; write `module vtime` and `argument KEY VALUE` lines",
                    i + 1
                ))
            }
            _ => {}
        }
    }
    Ok(args)
}

/// Reads the options from the environment.
pub fn read() -> Result<Options, String> {
    let ranks = ranks(&std::env::var("PNMPI_VRANKS").unwrap_or_default())?;
    let stack = match std::env::var("PNMPI_VRANK_STACK") {
        Ok(s) if !s.trim().is_empty() => stack(&s)?,
        _ if ranks <= BIG_STACKS_UP_TO => 8 << 20,
        _ => 256 << 10,
    };
    let found = match std::env::var("PNMPI_CONF") {
        Ok(path) if !path.is_empty() => vtime_arguments(&path)?.map(|a| (a, path)),
        _ => None,
    };
    let (config, source) = match found {
        Some((args, path)) => (
            target::read(|k| args.get(k).cloned()).map_err(|e| format!("{path}: vtime {e}"))?,
            format!("vtime's arguments in {path}"),
        ),
        None => {
            let defaults: HashMap<&str, &str> = [("latency", "1us"), ("bandwidth", "10GB/s")].into();
            (
                target::read(|k| defaults.get(k).map(|v| v.to_string()))?,
                "no vtime module in the configuration: vtime's defaults for this mode (latency 1us, bandwidth 10GB/s, model simple, cpu_factor 1)".into(),
            )
        }
    };
    Ok(Options {
        ranks,
        stack,
        config,
        source,
    })
}
