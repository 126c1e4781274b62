//! What a configuration holds, whichever form it was written in: the
//! modules of each stack with their arguments and selections, and how
//! `MPI_Pcontrol` reaches them.

use super::selection::Selection;
use std::path::PathBuf;

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
    /// `routines`, `exclude`, `ranks`, `phases`.
    pub select: Selection,
}

/// How `MPI_Pcontrol` reaches modules (`globalpcontrol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PcontrolMode {
    /// LLNL's default: the level reaches the modules whose `pcontrol` is
    /// on; without a `pcontrol` line, only the first module of a stack.
    #[default]
    Int,
    /// Every module receives it.
    On,
    /// No module receives it; it goes straight to MPI.
    Off,
}

impl PcontrolMode {
    /// Parses a `globalpcontrol` value.
    pub fn parse(value: &str) -> Result<PcontrolMode, String> {
        match value {
            "int" => Ok(PcontrolMode::Int),
            "on" => Ok(PcontrolMode::On),
            "off" => Ok(PcontrolMode::Off),
            "pmpi" | "pnmpi" | "mixed" | "typed" => Err(format!(
                "globalpcontrol `{value}` forwards MPI_Pcontrol's variable arguments, which pnmpi does not \
                 do; use `int` (the default: the level only), `on` or `off`"
            )),
            other => Err(format!("globalpcontrol takes int, on or off, got `{other}`")),
        }
    }
}

/// A parsed configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// The file it came from (empty when no file exists).
    pub file: PathBuf,
    pub modules: Vec<ModuleSpec>,
    /// `globalpcontrol`.
    pub pcontrol_mode: PcontrolMode,
}
