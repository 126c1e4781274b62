//! The module's arguments (`argument KEY VALUE` after `module checker`),
//! read once in `PNMPI_Init`. A bad value stops the run there, naming the
//! argument: a user who asked for a check never silently gets another.

use pnmpi_sdk::services;
use std::path::PathBuf;
use std::sync::OnceLock;

/// What the checker does after it reported an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Report and go on (a call MPI would reject is not made, and returns
    /// an MPI error code); the process exits with [`Config::exit_code`].
    Report,
    /// Report, then `MPI_Abort` with [`Config::exit_code`].
    Abort,
}

/// How a standard `MPI_Send` is checked for the deadlocks that MPI's
/// buffering hides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sends {
    /// A send of at most `eager_limit` bytes completes locally, as every
    /// mainstream MPI sends it eagerly; a larger one waits for its
    /// receive. A cycle that needs a larger send buffered completes only
    /// on an MPI that buffers more than the portable limit.
    Eager(u64),
    /// Every standard send may wait for its receive (the MPI standard's
    /// strict reading, as MUST checks it).
    Synchronous,
    /// Standard sends as the MPI underneath makes them.
    Buffered,
}

impl Sends {
    /// Whether a standard send of `bytes` is checked as a synchronous send.
    #[inline]
    pub fn synchronous(self, bytes: u64) -> bool {
        match self {
            Sends::Eager(limit) => bytes > limit,
            Sends::Synchronous => true,
            Sends::Buffered => false,
        }
    }
}

/// The largest message every mainstream MPI transport sends eagerly, in
/// bytes of data: Open MPI 4.1's shared-memory transport (`btl vader`,
/// `btl_vader_eager_limit` 4096 bytes with its headers) buffers at most
/// 4040 bytes of data; MPICH 4.0 (`ch4:ucx`) 8255 here, and its own
/// shared memory up to 64 KiB (measured with a cycle of sends, see
/// docs/checker.md).
pub const EAGER_LIMIT: u64 = 4040;

/// Which datatypes match in a message or a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Types {
    /// Types that hold the same data on this machine match: integers of
    /// one signedness and size (`MPI_LONG`, `MPI_LONG_LONG`,
    /// `MPI_INT64_T`, `MPI_AINT`, 8-byte `MPI_INTEGER`), floating-point
    /// and complex types of one size (`MPI_FLOAT` and `MPI_REAL`), and
    /// `MPI_CHAR` and `MPI_UNSIGNED_CHAR`, C's types of an object's
    /// bytes, match any data of as many bytes, as `MPI_BYTE` does. What
    /// would corrupt data here is reported, not what would on another
    /// machine.
    Native,
    /// The MPI standard's rules as written: each named type matches only
    /// itself (`MPI_BYTE` and `MPI_PACKED` any bytes), for code that must
    /// port to machines where `long` is not `long long`.
    Standard,
}

/// Everything the arguments choose.
#[derive(Clone, Debug)]
pub struct Config {
    /// `action report|abort` (default `report`).
    pub action: Action,
    /// `output DIR`: each rank writes `DIR/rank-N.json` (default
    /// `pnmpi-checker`).
    pub output: PathBuf,
    /// `deadlock_timeout SECONDS` (default 2): how long a rank waits in a
    /// blocking call before it tells the watchdog, and how long the
    /// watchdog waits again before it declares a deadlock.
    pub timeout: f64,
    /// `sends eager|synchronous|buffered` (default `eager`) with
    /// `eager_limit BYTES` (default [`EAGER_LIMIT`]): which standard sends
    /// are checked as synchronous sends, so that a cycle of sends that
    /// completes only through MPI's buffering is reported as a potential
    /// deadlock.
    pub sends: Sends,
    /// `types native|standard` (default `native`): which datatypes match.
    pub types: Types,
    /// `exit_code N` (default 3): the exit status of a process that
    /// reported an error.
    pub exit_code: i32,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration (defaults before `PNMPI_Init` read it).
pub fn get() -> &'static Config {
    CONFIG.get_or_init(|| parse(&|_| None).expect("the defaults parse"))
}

/// Reads the arguments; a bad one ends the process with its message.
pub fn load() {
    match parse(&services::argument) {
        Ok(config) => {
            let _ = CONFIG.set(config);
        }
        Err(e) => {
            pnmpi_sdk::say::error("checker", format_args!("argument {e}"));
            pnmpi_sdk::say::stop_with(2);
        }
    }
}

/// The configuration that `arg` (a key's value, if given) chooses.
pub fn parse(arg: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
    let action = match arg("action").as_deref().map(str::trim) {
        None | Some("report") => Action::Report,
        Some("abort") => Action::Abort,
        Some(other) => return Err(format!("action: `{other}` is neither report nor abort")),
    };
    let output = PathBuf::from(arg("output").unwrap_or_else(|| "pnmpi-checker".into()).trim());
    let timeout = match arg("deadlock_timeout") {
        None => 2.0,
        Some(text) => match text.trim().trim_end_matches('s').parse::<f64>() {
            Ok(t) if t > 0.0 && t.is_finite() => t,
            _ => {
                return Err(format!(
                    "deadlock_timeout: `{text}` is not a positive number of seconds"
                ))
            }
        },
    };
    let eager_limit = match arg("eager_limit") {
        None => EAGER_LIMIT,
        Some(text) => text
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("eager_limit: `{text}` is not a number of bytes (e.g. {EAGER_LIMIT})"))?,
    };
    let sends = match arg("sends").as_deref().map(str::trim) {
        None | Some("eager") => Sends::Eager(eager_limit),
        Some("synchronous") => Sends::Synchronous,
        Some("buffered") => Sends::Buffered,
        Some(other) => {
            return Err(format!(
                "sends: `{other}` is none of eager, synchronous, buffered"
            ))
        }
    };
    let types = match arg("types").as_deref().map(str::trim) {
        None | Some("native") => Types::Native,
        Some("standard") => Types::Standard,
        Some(other) => return Err(format!("types: `{other}` is neither native nor standard")),
    };
    let exit_code = match arg("exit_code") {
        None => 3,
        Some(text) => match text.trim().parse::<i32>() {
            Ok(n) if (1..=255).contains(&n) => n,
            _ => return Err(format!("exit_code: `{text}` is not an exit status from 1 to 255")),
        },
    };
    Ok(Config {
        action,
        output,
        timeout,
        sends,
        types,
        exit_code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<Config, String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(&move |key| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults_and_choices() {
        let c = with(&[]).unwrap();
        assert_eq!(c.action, Action::Report);
        assert_eq!(c.sends, Sends::Eager(EAGER_LIMIT));
        assert!(!c.sends.synchronous(EAGER_LIMIT) && c.sends.synchronous(EAGER_LIMIT + 1));
        assert_eq!(c.exit_code, 3);
        assert_eq!(c.types, Types::Native);
        assert_eq!(with(&[("types", "standard")]).unwrap().types, Types::Standard);
        assert_eq!(
            with(&[("eager_limit", "65536")]).unwrap().sends,
            Sends::Eager(65536)
        );
        assert!(with(&[("sends", "synchronous")]).unwrap().sends.synchronous(0));
        let c = with(&[
            ("action", "abort"),
            ("sends", "buffered"),
            ("deadlock_timeout", "0.5"),
        ])
        .unwrap();
        assert_eq!(c.action, Action::Abort);
        assert!(!c.sends.synchronous(u64::MAX));
        assert_eq!(c.timeout, 0.5);
    }

    #[test]
    fn bad_values_name_their_argument() {
        assert!(with(&[("action", "warn")]).unwrap_err().starts_with("action:"));
        assert!(with(&[("deadlock_timeout", "-1")])
            .unwrap_err()
            .starts_with("deadlock_timeout:"));
        assert!(with(&[("exit_code", "0")]).unwrap_err().starts_with("exit_code:"));
        assert!(with(&[("eager_limit", "4k")])
            .unwrap_err()
            .starts_with("eager_limit:"));
        assert!(with(&[("sends", "eagerly")]).unwrap_err().starts_with("sends:"));
        assert!(with(&[("types", "loose")]).unwrap_err().starts_with("types:"));
    }
}
