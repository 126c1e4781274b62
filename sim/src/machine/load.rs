//! Reading a machine: a TOML file or a SimGrid platform, validated into a
//! [`Machine`], and the uniform machines that tests and `vtime`'s keys
//! describe.

use super::error::{toml_error, MachineError};
use super::{platform, schema, Machine};
use crate::units::{Bandwidth, Bytes, Time};
use std::path::Path;

impl Machine {
    /// Reads and validates a machine file.
    pub fn load(path: &Path) -> Result<Machine, MachineError> {
        let file = path.display().to_string();
        let source = std::fs::read_to_string(path).map_err(|e| MachineError {
            file: file.clone(),
            line: None,
            what: format!("cannot read it: {e}"),
        })?;
        Machine::parse(&file, &source)
    }

    /// Parses a machine description from text; `file` names it in errors.
    /// A SimGrid platform (XML) is read as the machine it describes.
    pub fn parse(file: &str, source: &str) -> Result<Machine, MachineError> {
        if platform::is_platform(source) {
            let (toml, line) = platform::to_toml(source).map_err(|(line, what)| MachineError {
                file: file.to_owned(),
                line: Some(line),
                what,
            })?;
            return Machine::parse(file, &toml).map_err(|e| MachineError {
                line: Some(line),
                ..e
            });
        }
        let raw: schema::File = toml::from_str(source).map_err(|e| toml_error(file, source, &e))?;
        raw.validate(file, source)
    }

    /// A machine of `ranks` single-core nodes with one latency and
    /// bandwidth, for tests and for `vtime`'s `latency`/`bandwidth` keys.
    pub fn uniform(ranks: u32, latency: Time, bandwidth: Bandwidth) -> Machine {
        Machine::uniform_eager(ranks, latency, bandwidth, Bytes(65536))
    }

    /// [`Machine::uniform`] with an eager/rendezvous threshold: what
    /// `vtime`'s `latency`, `bandwidth` and `eager` arguments describe.
    /// Times and sizes come from [`crate::units`]' parsers, so they are
    /// finite and non-negative (and the bandwidth positive).
    pub fn uniform_eager(ranks: u32, latency: Time, bandwidth: Bandwidth, eager: Bytes) -> Machine {
        let src = format!(
            "[machine]\nnodes = {}\ncores_per_node = 1\n[network]\nlatency = {:?}\nbandwidth = {:?}\neager_threshold = {:?}\n",
            ranks.max(1),
            format!("{}ns", latency.0),
            format!("{}B/s", bandwidth.0),
            format!("{}B", eager.0)
        );
        Machine::parse("<built-in>", &src).expect("a uniform machine is valid")
    }

    /// The machine's text with `key = value` lines appended to `[table]`:
    /// re-parsed, so the result is validated like a file.
    pub fn with_source(&self, source: String) -> Result<Machine, MachineError> {
        Machine::parse(&self.file, &source)
    }
}
