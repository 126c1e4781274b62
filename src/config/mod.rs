//! The user's choice of modules: where it is looked up, and the two forms it
//! can take (the classic LLNL `.pnmpi-conf` lines, or TOML).

mod classic;
mod lookup;
mod toml_form;

pub use lookup::find;

use crate::error::Error;
use std::path::{Path, PathBuf};

/// The stack that application calls enter.
pub const DEFAULT_STACK: &str = "default";

/// One `module` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSpec {
    /// As written: a bare name, or a path.
    pub name: String,
    /// Line of the entry in the configuration file, for error messages.
    pub line: usize,
    /// The stack the module belongs to.
    pub stack: String,
    /// `argument KEY VALUE` pairs, in order.
    pub arguments: Vec<(String, String)>,
    /// `pcontrol on|off`, if given.
    pub pcontrol: Option<bool>,
}

/// A parsed configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// The file it came from (empty when no file exists).
    pub file: PathBuf,
    pub modules: Vec<ModuleSpec>,
    /// `globalpcontrol ...`, kept verbatim.
    pub global_pcontrol: Option<String>,
}

/// Reads `file`, choosing the form by its extension (`.toml`) or content.
pub fn load(file: &Path) -> Result<Config, Error> {
    let text = std::fs::read_to_string(file).map_err(|source| Error::Read {
        file: file.to_path_buf(),
        source,
    })?;
    let is_toml = file.extension().is_some_and(|e| e == "toml");
    let mut config = if is_toml {
        toml_form::parse(&text, file)?
    } else {
        classic::parse(&text, file)?
    };
    config.file = PathBuf::from(file);
    Ok(config)
}
