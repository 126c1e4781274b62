//! The module's arguments (`argument KEY VALUE` after `module profiler`),
//! read once in `PNMPI_Init`, before MPI starts. A bad value stops the run
//! there, naming the argument, as libpnmpi does for configuration errors:
//! a user who asked for a profile never silently gets another one.

use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::services;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The most bins a distribution may have (8 bytes each, per thread).
const MAX_BINS: usize = 1 << 20;

/// Linear bins of a distribution: `[i * resolution, (i + 1) * resolution)`
/// for `i < bins`, then one overflow bin for `range` and beyond.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bins {
    /// Width of a bin: seconds for times, bytes for sizes.
    pub resolution: f64,
    /// Where the overflow bin starts.
    pub range: f64,
    /// Bins below `range`; there is one more, for the overflow.
    pub bins: usize,
}

impl Bins {
    fn new(key: &str, resolution: f64, range: f64) -> Result<Bins, String> {
        if !(resolution > 0.0 && range >= resolution) {
            return Err(format!("{key}: the resolution must be > 0 and at most the range"));
        }
        // Shaves float noise off: 10ms / 10us is 1000 bins, not 1001.
        let bins = (range / resolution * (1.0 - 1e-12)).ceil() as usize;
        if bins > MAX_BINS {
            return Err(format!(
                "{key}: {bins} bins, more than {MAX_BINS}; use a coarser resolution"
            ));
        }
        Ok(Bins {
            resolution,
            range: bins as f64 * resolution,
            bins,
        })
    }
}

/// Everything the arguments choose.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    /// The text report; the JSON and SVG files sit beside it with their
    /// own extensions (`output`, default `pnmpi-profile.txt`).
    pub output: PathBuf,
    /// Computation granularity: time between MPI calls (`comp_resolution`,
    /// `comp_range`, or `resolution`, `range` for both).
    pub comp: Bins,
    /// Communication overhead: time inside MPI (`comm_resolution`, `comm_range`).
    pub comm: Bins,
    /// Routines with latency and size distributions (`distributions`).
    pub distributions: Vec<String>,
    /// Their latency bins (`latency_resolution`, `latency_range`).
    pub latency: Bins,
    /// Their message-size bins, bytes (`size_resolution`, `size_range`).
    pub size: Bins,
    /// Whether call sites are recorded (`callsites on|off`).
    pub callsites: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration, once `PNMPI_Init` has read it.
pub fn get() -> Option<&'static Config> {
    CONFIG.get()
}

/// The `PNMPI_Init` hook: reads the arguments, or stops the run.
pub fn load() {
    match read(services::argument) {
        Ok(config) => {
            CONFIG.get_or_init(|| config);
        }
        Err(e) => pnmpi_sdk::say::fatal("profiler", format_args!("argument {e}")),
    }
}

fn read(arg: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
    let duration = |key: &str, default: &str| -> Result<f64, String> {
        let text = arg(key).unwrap_or_else(|| default.into());
        parse_duration(&text)
            .ok_or_else(|| format!("{key}: `{text}` is not a duration such as 100us, 10ms or 2s"))
    };
    let size = |key: &str, default: &str| -> Result<f64, String> {
        let text = arg(key).unwrap_or_else(|| default.into());
        parse_size(&text).ok_or_else(|| format!("{key}: `{text}` is not a size such as 512, 4k or 1M"))
    };
    let resolution = duration("resolution", "100us")?;
    let range = duration("range", "100ms")?;
    let comp = Bins::new(
        "comp_resolution",
        duration("comp_resolution", &format!("{resolution}s"))?,
        duration("comp_range", &format!("{range}s"))?,
    )?;
    let comm = Bins::new(
        "comm_resolution",
        duration("comm_resolution", &format!("{resolution}s"))?,
        duration("comm_range", &format!("{range}s"))?,
    )?;
    let latency = Bins::new(
        "latency_resolution",
        duration("latency_resolution", "10us")?,
        duration("latency_range", "10ms")?,
    )?;
    if size("size_resolution", "1k")? < 1.0 {
        return Err("size_resolution: bins are at least one byte wide".into());
    }
    let size = Bins::new(
        "size_resolution",
        size("size_resolution", "1k")?,
        size("size_range", "1M")?,
    )?;
    let callsites = match arg("callsites").as_deref().map(str::trim) {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => return Err(format!("callsites: `{other}` is neither on nor off")),
    };
    let mut distributions = Vec::new();
    for pattern in arg("distributions").unwrap_or_default().split([' ', ',', '\t']) {
        if pattern.is_empty() {
            continue;
        }
        let matches: Vec<&str> = ROUTINE_NAMES
            .iter()
            .copied()
            .filter(|name| glob(pattern, name))
            .collect();
        if matches.is_empty() {
            return Err(format!(
                "distributions: `{pattern}` names no MPI routine of this MPI"
            ));
        }
        for name in matches {
            if !distributions.iter().any(|d| d == name) {
                distributions.push(name.to_string());
            }
        }
    }
    let output = PathBuf::from(arg("output").unwrap_or_else(|| "pnmpi-profile.txt".into()).trim());
    Ok(Config {
        output,
        comp,
        comm,
        distributions,
        latency,
        size,
        callsites,
    })
}

/// `100us`, `10ms`, `2s`, `250ns`, `1.5e-3` (seconds): seconds.
fn parse_duration(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, scale) = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)]
        .iter()
        .find_map(|&(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
        .unwrap_or((text, 1.0));
    let value: f64 = number.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value * scale)
}

/// `512`, `4k`, `4KiB`, `1M`, `1MiB`: bytes (binary multiples).
fn parse_size(text: &str) -> Option<f64> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let (number, scale) = [
        ("kib", 1024.0),
        ("mib", 1048576.0),
        ("k", 1024.0),
        ("m", 1048576.0),
    ]
    .iter()
    .find_map(|&(unit, scale)| lower.strip_suffix(unit).map(|n| (n.to_string(), scale)))
    .unwrap_or((lower.clone(), 1.0));
    let value: f64 = number.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value * scale)
}

/// Shell-style match of `*` and `?`, as libpnmpi's `routines` lines.
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}
