//! The run's options: `PNMPI_VRANKS` (how many virtual ranks),
//! `PNMPI_VRANK_STACK` (their stack size) and, in the configuration file
//! `PNMPI_CONF` (the classic form: `module NAME` then `argument KEY
//! VALUE` lines), the `vtime` module's arguments, which give the machine,
//! the model and the CPU factor exactly as they do for vtime, and the
//! `tracer` module's, which make the run write a trace (the `trace` layer).

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
    /// The trace to write, when the configuration loads the tracer.
    pub trace: Option<TraceOptions>,
}

/// The `tracer` module's settings, read as the tracer reads them: its
/// `argument` lines, else `PNMPI_TRACE_DIR` and `PNMPI_TRACE_BUFFER`.
pub struct TraceOptions {
    /// `outdir`: the folder (a fresh `pnmpi-trace-<UTC time>` if none).
    pub dir: Option<String>,
    /// `buffer`: bytes of events each rank holds before writing them out.
    pub buffer: Option<usize>,
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
    let b = stack_like_size(text).map_err(|e| format!("PNMPI_VRANK_STACK (--vrank-stack) `{text}`: {e}"))?;
    if b < MIN_STACK {
        return Err(format!(
            "PNMPI_VRANK_STACK (--vrank-stack) `{text}`: a stack of {b} bytes is too small; give at least {} KiB (the layer's and the MPI library's own frames need it)",
            MIN_STACK / 1024
        ));
    }
    Ok(b)
}

/// A size as `ulimit -s` and the tracer's `buffer` write it (`8M`,
/// `256k`, `1G`: binary) or as `pnmpi sim` reads it (`8MiB`, `65536B`).
fn stack_like_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let expanded = match t.chars().last() {
        Some(u @ ('k' | 'K' | 'M' | 'G'))
            if t[..t.len() - 1].chars().all(|c| c.is_ascii_digit() || c == '.') =>
        {
            format!("{}{}iB", &t[..t.len() - 1], u.to_ascii_uppercase())
        }
        _ => t.to_string(),
    };
    parse_bytes(&expanded)
        .map(|b| b.0 as usize)
        .map_err(|e| e.to_string())
}

/// The arguments of the modules this mode reads.
#[derive(Default)]
struct Modules {
    vtime: Option<HashMap<String, String>>,
    tracer: Option<HashMap<String, String>>,
}

/// Whether the `module` line's `name` is the bundled module `short`
/// (by name, or by path to its library).
fn is_module(name: &str, short: &str) -> bool {
    let lib = format!("lib{short}.so");
    name == short || name == lib || name.ends_with(&format!("/{lib}"))
}

/// The `vtime` and `tracer` arguments of a classic configuration file.
fn module_arguments(path: &str) -> Result<Modules, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("PNMPI_CONF {path}: cannot read it: {e}"))?;
    let mut found = Modules::default();
    let mut current: Option<&mut HashMap<String, String>> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.splitn(2, char::is_whitespace);
        match (words.next(), words.next().map(str::trim)) {
            (Some("module"), Some(name)) => {
                current = if is_module(name, "vtime") {
                    Some(found.vtime.get_or_insert_with(HashMap::new))
                } else if is_module(name, "tracer") {
                    Some(found.tracer.get_or_insert_with(HashMap::new))
                } else {
                    pnmpi_sdk::say::unranked(
                        "vranks",
                        pnmpi_sdk::say::Level::Warning,
                        format_args!(
                            "{path}:{}: module {name} is not loaded with virtual ranks (only vtime's and the tracer's arguments are read)",
                            i + 1
                        ),
                    );
                    None
                };
            }
            (Some("argument"), Some(rest)) => {
                if let Some(args) = current.as_deref_mut() {
                    let mut kv = rest.splitn(2, char::is_whitespace);
                    let key = kv.next().unwrap_or("").to_string();
                    let value = kv.next().unwrap_or("").trim().to_string();
                    args.insert(key, value);
                }
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
    Ok(found)
}

/// The tracer's settings from its arguments, else its variables.
fn trace_options(args: &HashMap<String, String>, path: &str) -> Result<TraceOptions, String> {
    let setting = |key: &str, var: &str| {
        args.get(key)
            .cloned()
            .or_else(|| std::env::var(var).ok())
            .filter(|v| !v.trim().is_empty())
    };
    let buffer = match setting("buffer", "PNMPI_TRACE_BUFFER") {
        None => None,
        Some(b) => Some(stack_like_size(&b).map_err(|e| format!("{path}: tracer argument buffer: {e}"))?),
    };
    if let Ok(clock) = std::env::var("PNMPI_TRACE_CLOCK") {
        if !clock.is_empty() && clock != "vtime" {
            pnmpi_sdk::say::unranked(
                "vranks",
                pnmpi_sdk::say::Level::Warning,
                format_args!(
                    "PNMPI_TRACE_CLOCK={clock} is not used: virtual ranks are traced on their virtual clock"
                ),
            );
        }
    }
    Ok(TraceOptions {
        dir: setting("outdir", "PNMPI_TRACE_DIR"),
        buffer,
    })
}

/// Reads the options from the environment.
pub fn read() -> Result<Options, String> {
    let ranks = ranks(&std::env::var("PNMPI_VRANKS").unwrap_or_default())?;
    let stack = match std::env::var("PNMPI_VRANK_STACK") {
        Ok(s) if !s.trim().is_empty() => stack(&s)?,
        _ if ranks <= BIG_STACKS_UP_TO => 8 << 20,
        _ => 256 << 10,
    };
    let (modules, conf) = match std::env::var("PNMPI_CONF") {
        Ok(path) if !path.is_empty() => (module_arguments(&path)?, path),
        _ => (Modules::default(), String::new()),
    };
    let trace = match &modules.tracer {
        Some(args) => Some(trace_options(args, &conf)?),
        None => None,
    };
    let (config, source) = match modules.vtime.map(|a| (a, conf)) {
        Some((args, path)) => (
            target::read(|k| args.get(k).cloned(), target::View::Global)
                .map_err(|e| format!("{path}: vtime {e}"))?,
            format!("vtime's arguments in {path}"),
        ),
        None => {
            let defaults: HashMap<&str, &str> = [("latency", "1us"), ("bandwidth", "10GB/s")].into();
            (
                target::read(|k| defaults.get(k).map(|v| v.to_string()), target::View::Global)?,
                "no vtime module in the configuration: vtime's defaults for this mode (latency 1us, bandwidth 10GB/s, model simple, cpu_factor 1)".into(),
            )
        }
    };
    Ok(Options {
        ranks,
        stack,
        config,
        source,
        trace,
    })
}
