//! Why a tool could not be checked or patched, phrased for the person who has to act on it.

use std::io;

use thiserror::Error;

/// Exit codes of `pnmpi-patch`, kept in one place so the CLI, the README and the tests agree.
pub mod exit {
    /// Patched, checked clean, or already patched (nothing to do).
    pub const SUCCESS: u8 = 0;
    /// The input cannot be patched: unreadable, not ELF, corrupt, not a PMPI tool, or unsafe
    /// to edit.
    pub const BAD_INPUT: u8 = 1;
    /// Command-line usage error (reported by clap).
    pub const USAGE: u8 = 2;
    /// libpnmpi (given with `--against`) lacks `XMPI_` entry points the tool needs.
    pub const MISSING_ENTRY_POINTS: u8 = 3;
    /// The output file could not be written.
    pub const OUTPUT: u8 = 4;
}

/// Everything that stops a check or a patch.
///
/// Each variant carries enough to print one self-contained line: what is wrong, where in the
/// file (when a byte offset helps) and what the user can do about it, plus an exit code that
/// scripts can branch on.
#[derive(Debug, Error)]
pub enum PatchError {
    #[error("cannot read the file: {0}")]
    Read(io::Error),

    #[error("not an ELF file: it starts with {found} instead of 7f 45 4c 46 (\"\\x7fELF\")")]
    NotElf { found: String },

    #[error("this is a static archive (it starts with \"!<arch>\"), not a shared object")]
    StaticArchive,

    #[error("this is a relocatable object file (ET_REL), not a shared object")]
    ObjectFile,

    #[error("this is {kind}, not a shared object (ET_DYN)")]
    NotSharedObject { kind: String },

    #[error("unsupported ELF: {what}")]
    Unsupported { what: String },

    #[error("corrupt or truncated ELF: {what}")]
    Corrupt { what: String, offset: Option<usize> },

    #[error("no dynamic symbol table: {what}")]
    NoDynamicSymbols { what: String },

    #[error("imports no PMPI_ routine{}", if *.defines_pmpi {
        ": it defines PMPI_ symbols itself, so MPI is statically linked into it"
    } else {
        ", so it is not a PMPI tool"
    })]
    NotPmpiTool { defines_pmpi: bool },

    #[error("the name of import {import} is stored inside {other}, which renaming would change")]
    SharedString {
        import: String,
        other: String,
        offset: usize,
    },

    #[error("{library} has no entry point for {} import(s): {}", .missing.len(),
        .missing.join(", "))]
    MissingEntryPoints { library: String, missing: Vec<String> },

    #[error("the output path is a directory")]
    OutputIsDirectory,

    #[error("cannot write the output: {0}")]
    Write(io::Error),

    #[error("the patched image does not re-read as planned: {what}")]
    Verification { what: String },
}

impl PatchError {
    /// The process exit code that stands for this failure (see [`exit`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            PatchError::MissingEntryPoints { .. } => exit::MISSING_ENTRY_POINTS,
            PatchError::OutputIsDirectory | PatchError::Write(_) => exit::OUTPUT,
            _ => exit::BAD_INPUT,
        }
    }

    /// The file offset the problem was found at, when there is one worth quoting.
    pub fn offset(&self) -> Option<usize> {
        match self {
            PatchError::NotElf { .. } | PatchError::StaticArchive => Some(0),
            PatchError::Corrupt { offset, .. } => *offset,
            PatchError::SharedString { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// What the user can do next.
    pub fn hint(&self) -> String {
        let text = match self {
            PatchError::Read(_) => "check the path and its permissions",
            PatchError::NotElf { .. } => "give the tool's shared object (.so), not a script or source file",
            PatchError::StaticArchive => {
                "link it into a shared object first, e.g. `gcc -shared -o libtool.so \
                 -Wl,--whole-archive libtool.a -Wl,--no-whole-archive`"
            }
            PatchError::ObjectFile => {
                "link it into a shared object first, e.g. `gcc -shared -o libtool.so tool.o`"
            }
            PatchError::NotSharedObject { .. } => {
                "only shared objects can be loaded as PnMPI modules; \
                 build the tool with `mpicc -shared -fPIC`"
            }
            PatchError::Unsupported { .. } => {
                "pnmpi-patch handles little-endian x86-64, AArch64, RISC-V, i386 and ARM \
                 shared objects"
            }
            PatchError::Corrupt { .. } => "the file is damaged; rebuild or re-copy the tool",
            PatchError::NoDynamicSymbols { .. } => {
                "build the tool as a dynamically linked shared object (`mpicc -shared -fPIC`)"
            }
            PatchError::NotPmpiTool { defines_pmpi: true } => {
                "rebuild the tool as a shared object that calls PMPI_ routines from the MPI \
                 library instead of containing them"
            }
            PatchError::NotPmpiTool { defines_pmpi: false } => {
                "a tool needs no patching if it never calls PMPI_ routines; \
                 PnMPI native modules already call XMPI_"
            }
            PatchError::SharedString { other, .. } => {
                return format!(
                    "rebuild the tool so that no other dynamic string holds the import's name \
                     (e.g. make {other} static or hidden), then patch again"
                );
            }
            PatchError::MissingEntryPoints { .. } => {
                "use a libpnmpi built against the same MPI as the tool, \
                 or drop the tool's calls to these routines"
            }
            PatchError::OutputIsDirectory => "name a file with -o, e.g. -o DIR/libtool.pnmpi.so",
            PatchError::Write(_) => "check that the output's directory exists and is writable",
            PatchError::Verification { .. } => "nothing was written; please report this with the input file",
        };
        text.to_string()
    }
}
