//! Sorts a shared object's dynamic symbols into the groups PnMPI cares about: the MPI wrappers a
//! tool defines, the PMPI routines it imports, and the XMPI entry points it already imports (or,
//! for libpnmpi itself, defines).

use std::collections::BTreeSet;

use crate::elf::{DynImage, DynSymbol};

/// The name a PMPI import gets after patching: `PMPI_X` -> `XMPI_X`, Fortran `pmpi_x_` ->
/// `xmpi_x_`. `None` for names that are not PMPI routines.
pub fn renamed(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_prefix("PMPI_") {
        Some(format!("XMPI_{rest}"))
    } else {
        name.strip_prefix("pmpi_").map(|rest| format!("xmpi_{rest}"))
    }
}

/// Whether an undefined symbol is a Fortran-style PMPI import: `pmpi_x_`
/// in any of the compilers' lower-case manglings, or the upper-case one
/// (`PMPI_INIT`, as ReMPI's Fortran wrappers import). A C routine's name
/// always has a lower-case letter after `PMPI_` (`PMPI_Init`, `PMPI_T_init_thread`).
fn is_fortran_pmpi(name: &str) -> bool {
    name.starts_with("pmpi_")
        || name
            .strip_prefix("PMPI_")
            .is_some_and(|rest| !rest.is_empty() && !rest.bytes().any(|b| b.is_ascii_lowercase()))
}

/// The dynamic symbols of a tool, grouped by their role in PMPI interposition.
#[derive(Debug)]
pub struct Inventory<'a> {
    /// Defined `MPI_*` / `mpi_*` symbols: the wrappers the tool interposes.
    pub wrappers: Vec<&'a DynSymbol>,
    /// Undefined `PMPI_*` C symbols: calls down to MPI that patching redirects.
    pub pmpi: Vec<&'a DynSymbol>,
    /// Undefined Fortran-style PMPI symbols (`pmpi_*`, `PMPI_UPPER`): calls
    /// down to MPI's Fortran bindings.
    pub fortran_pmpi: Vec<&'a DynSymbol>,
    /// Undefined `XMPI_*` / `xmpi_*` symbols: calls that already go to PnMPI.
    pub xmpi: Vec<&'a DynSymbol>,
    /// The tool defines `PMPI_*` itself, i.e. it contains an MPI library.
    pub defines_pmpi: bool,
}

impl<'a> Inventory<'a> {
    pub fn of(image: &'a DynImage) -> Inventory<'a> {
        let named = |defined: bool, prefixes: &'static [&'static str]| {
            image
                .symbols
                .iter()
                .filter(move |s| s.defined == defined && prefixes.iter().any(|p| s.name.text.starts_with(p)))
        };
        Inventory {
            wrappers: named(true, &["MPI_", "mpi_"]).collect(),
            pmpi: named(false, &["PMPI_"])
                .filter(|s| !is_fortran_pmpi(&s.name.text))
                .collect(),
            fortran_pmpi: named(false, &["pmpi_", "PMPI_"])
                .filter(|s| is_fortran_pmpi(&s.name.text))
                .collect(),
            xmpi: named(false, &["XMPI_", "xmpi_"]).collect(),
            defines_pmpi: named(true, &["PMPI_", "pmpi_"]).next().is_some(),
        }
    }

    /// `XMPI_` entry points the tool needs, once patched, that `library` does not define.
    /// Fortran imports are left out: they are renamed only where an entry point exists.
    pub fn missing_in(&self, library: &EntryPoints) -> Vec<String> {
        let needed = self
            .pmpi
            .iter()
            .filter_map(|s| renamed(&s.name.text))
            .chain(self.xmpi.iter().map(|s| s.name.text.clone()));
        let missing: BTreeSet<String> = needed.filter(|n| !library.defines(n)).collect();
        missing.into_iter().collect()
    }
}

/// The symbols a libpnmpi defines, to tell which imports a patched tool can resolve.
#[derive(Debug)]
pub struct EntryPoints {
    /// How the library was named on the command line, for messages.
    pub library: String,
    names: BTreeSet<String>,
}

impl EntryPoints {
    pub fn of(library: String, image: &DynImage) -> EntryPoints {
        let names = image
            .symbols
            .iter()
            .filter(|s| s.defined)
            .map(|s| s.name.text.clone())
            .collect();
        EntryPoints { library, names }
    }

    pub fn defines(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_c_and_fortran_names_only() {
        assert_eq!(renamed("PMPI_Send").as_deref(), Some("XMPI_Send"));
        assert_eq!(renamed("pmpi_send_").as_deref(), Some("xmpi_send_"));
        assert_eq!(renamed("PMPI_SEND").as_deref(), Some("XMPI_SEND"));
        assert_eq!(renamed("MPI_Send"), None);
        assert_eq!(renamed("XMPI_Send"), None);
        assert_eq!(renamed("PMPIX_Foo"), None);
        assert_eq!(renamed("Pmpi_send"), None);
    }

    #[test]
    fn upper_case_pmpi_names_are_fortran() {
        for f in [
            "pmpi_send_",
            "pmpi_send",
            "pmpi_send__",
            "PMPI_INIT",
            "PMPI_INIT_THREAD",
        ] {
            assert!(is_fortran_pmpi(f), "{f}");
        }
        for c in ["PMPI_Init", "PMPI_T_init_thread", "PMPI_Wtime", "PMPI_"] {
            assert!(!is_fortran_pmpi(c), "{c}");
        }
    }
}
