//! The module's configuration: what its arguments (or the environment)
//! chose, read once by the `PNMPI_Init` hook.

use pnmpi_sdk::services;
use std::path::PathBuf;
use std::sync::OnceLock;

/// What the arguments chose.
#[derive(Debug, Clone)]
pub struct Config {
    /// Record (`true`) or replay.
    pub record: bool,
    /// The folder of the rank files.
    pub dir: PathBuf,
    /// Whether `MPI_Wtime`'s values are recorded.
    pub wtime: bool,
    /// Whether records are written gzip-compressed.
    pub compress: bool,
    /// Whether the results of one-sided reads are recorded (and then
    /// replayed).
    pub rma: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration, once `PNMPI_Init` read it.
pub fn config() -> Option<&'static Config> {
    CONFIG.get()
}

/// Prints `what` and stops this process before MPI starts.
fn stop(what: &str) -> ! {
    use pnmpi_sdk::say::{self, Level};
    // Two lines in one write; no rank: MPI does not run yet.
    say::write_line(
        &(say::line("replay", Level::Error, None, what)
            + &say::line("replay", Level::Note, None, "stopping before MPI starts")),
    );
    // A moment for the launcher to read the message before it tears the
    // job down at the first failed rank.
    std::thread::sleep(std::time::Duration::from_millis(200));
    say::stop()
}

/// The `PNMPI_Init` hook: reads `mode`, `dir`, `wtime`, `compress`, `rma`
/// (arguments, else `PNMPI_REPLAY_MODE`, `PNMPI_REPLAY_DIR`,
/// `PNMPI_REPLAY_WTIME`, `PNMPI_REPLAY_COMPRESS`, `PNMPI_REPLAY_RMA`).
pub fn load() {
    let arg = |key: &str, var: &str| {
        services::argument(key)
            .or_else(|| std::env::var(var).ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let record = match arg("mode", "PNMPI_REPLAY_MODE").as_deref() {
        Some("record") => true,
        Some("replay") => false,
        Some(other) => stop(&format!("mode: `{other}` is neither record nor replay")),
        None => stop(
            "no mode: give `argument mode record` or `argument mode replay` after `module replay`, \
             or set PNMPI_REPLAY_MODE",
        ),
    };
    let dir = PathBuf::from(arg("dir", "PNMPI_REPLAY_DIR").unwrap_or_else(|| "pnmpi-replay".into()));
    let switch = |key: &str, var: &str, default: bool| match arg(key, var).as_deref() {
        None => default,
        Some("on") => true,
        Some("off") => false,
        Some(other) => stop(&format!("{key}: `{other}` is neither on nor off")),
    };
    CONFIG.get_or_init(|| Config {
        record,
        dir,
        wtime: switch("wtime", "PNMPI_REPLAY_WTIME", false),
        compress: switch("compress", "PNMPI_REPLAY_COMPRESS", true),
        rma: switch("rma", "PNMPI_REPLAY_RMA", false),
    });
}
