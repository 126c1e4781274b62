//! Build-time generator for pnmpi: finds the native MPI, reads every `PMPI_`
//! prototype from its `mpi.h` with bindgen, keeps those the library really
//! exports, and emits the routine table that libpnmpi and modules build on.

mod bind;
mod emit;
mod error;
mod exports;
mod locate;
mod parse;
mod report;

pub use error::{Error, Result};
pub use locate::{install_from_flags, locate, parse_flags, Flags, Flavor, MpiInstall};
pub use parse::Routine;

use std::collections::BTreeSet;
use std::path::Path;

/// A routine declared in the header but left out, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// Everything one generation run produced.
#[derive(Debug)]
pub struct Generated {
    pub install: MpiInstall,
    /// bindgen's output: the types and `PMPI_` declarations.
    pub ffi: String,
    pub routines: Vec<Routine>,
    pub skipped: Vec<Skipped>,
    /// The routines `mpi.h` declares only when asked for the removed MPI-1
    /// ones ([`bind::COMPAT`]): `xmpi.h` declares them under the same
    /// condition.
    pub hidden: BTreeSet<String>,
}

impl Generated {
    /// Source of the routine table (see [`emit::table`]).
    pub fn table(&self) -> String {
        let unexported: Vec<&str> = self.skipped.iter().map(|s| s.name.as_str()).collect();
        emit::table(&self.routines, &unexported, self.install.flavor.name())
    }

    /// The `xmpi.h` header for C modules (see [`emit::xmpi_header`]).
    pub fn xmpi_header(&self) -> String {
        emit::xmpi_header(&self.routines, &self.hidden, self.install.flavor.name())
    }

    /// The build report text.
    pub fn report(&self) -> String {
        report::render(self)
    }
}

/// Runs the whole pipeline for `install`. `type_prefix` is the module path
/// under which the caller will place the bindgen output (e.g.
/// `::pnmpi_mpi_sys::ffi`).
pub fn generate(install: MpiInstall, type_prefix: &str) -> Result<Generated> {
    let ffi = bind::bindings(&install.header, &install.include_dirs, true)?;
    let declared = parse::routines(&ffi, &install.header, type_prefix)?;
    let visible: BTreeSet<String> = parse::routines(
        &bind::bindings(&install.header, &install.include_dirs, false)?,
        &install.header,
        type_prefix,
    )?
    .into_iter()
    .map(|r| r.name)
    .collect();
    let hidden = declared
        .iter()
        .filter(|r| !visible.contains(&r.name))
        .map(|r| r.name.clone())
        .collect();
    if declared.is_empty() {
        return Err(Error::NoRoutines {
            what: "bindgen".into(),
            header: install.header.clone(),
        });
    }
    let exported = exports::exported_pmpi(&install.library)?;
    let (routines, skipped) = filter_exported(declared, |name| exported.contains(name), &install.library);
    Ok(Generated {
        install,
        ffi,
        routines,
        skipped,
        hidden,
    })
}

/// Splits `declared` into the routines the library exports and the rest.
fn filter_exported(
    declared: Vec<Routine>,
    is_exported: impl Fn(&str) -> bool,
    library: &Path,
) -> (Vec<Routine>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let routines = declared
        .into_iter()
        .filter(|r| {
            let keep = is_exported(&r.name);
            if !keep {
                skipped.push(Skipped {
                    name: r.name.clone(),
                    reason: format!("declared in mpi.h but not exported by {}", library.display()),
                });
            }
            keep
        })
        .collect();
    (routines, skipped)
}
