//! The user's choice of modules: where it is looked up, and the two forms it
//! can take (the classic LLNL `.pnmpi-conf` lines, or TOML).

mod classic;
mod lookup;
mod selection;
mod spec;
mod toml_form;

pub use lookup::find;
pub use selection::INITIAL_PHASE;
pub use spec::{Config, ModuleSpec, PcontrolMode, DEFAULT_STACK};

use crate::error::Error;
use std::path::{Path, PathBuf};

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
