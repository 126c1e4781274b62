//! Turns a binary PMPI tool into a PnMPI module.
//!
//! A PMPI tool defines `MPI_X` wrappers that call `PMPI_X`. Under PnMPI a module must call the
//! next layer through `XMPI_X` instead, so the tool's undefined dynamic `PMPI_X` symbols are
//! renamed to `XMPI_X` by changing the first byte of each name in `.dynstr` (plus its
//! `.gnu.version` entry when it required a version). Nothing else in the file moves: string
//! constants, code and defined symbols keep their bytes.

pub mod elf;
pub mod error;
pub mod inventory;
pub mod naming;
pub mod plan;
pub mod rename;
pub mod report;
#[cfg(test)]
mod test_elf;
pub mod write;

use elf::DynImage;
use error::PatchError;
use inventory::{EntryPoints, Inventory};
use plan::{FortranPolicy, Plan};

/// The result of patching an image in memory.
#[derive(Debug)]
pub struct Patched {
    pub plan: Plan,
    /// The patched file; equal to the input when the plan is a no-op.
    pub output: Vec<u8>,
}

/// Parses, plans, applies and verifies the rename of `input`'s PMPI imports.
///
/// With `against`, refuses when libpnmpi lacks an entry point the patched tool would import,
/// because such a module fails to load far from where the mistake is made.
pub fn patch(input: &[u8], against: Option<&EntryPoints>) -> Result<Patched, PatchError> {
    let image = DynImage::parse(input)?;
    let inventory = Inventory::of(&image);
    let fortran = match against {
        Some(library) => {
            let missing = inventory.missing_in(library);
            if !missing.is_empty() {
                return Err(PatchError::MissingEntryPoints {
                    library: library.library.clone(),
                    missing,
                });
            }
            FortranPolicy::RenameIfDefinedIn(library)
        }
        None => FortranPolicy::RenameAll,
    };
    let plan = Plan::new(&image, &inventory, fortran)?;
    let output = rename::apply(input, &plan);
    rename::verify(&image, &output, &plan)?;
    Ok(Patched { plan, output })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_elf::{build, typical_tool, Spec, Strings, Sym};

    #[test]
    fn patching_twice_is_idempotent() {
        let (bytes, _) = typical_tool();
        let once = patch(&bytes, None).unwrap();
        assert_eq!(once.plan.renames.len(), 2);
        let twice = patch(&once.output, None).unwrap();
        assert!(twice.plan.is_noop());
        assert_eq!(twice.output, once.output);
    }

    #[test]
    fn refuses_with_the_missing_list_when_the_library_lacks_entry_points() {
        let (bytes, _) = typical_tool();
        let mut s = Strings::new();
        let syms = vec![Sym::export(s.add("XMPI_Send"))];
        let (lib, _) = build(&Spec {
            dynstr: s.0,
            syms,
            needed: vec![],
        });
        let library = EntryPoints::of("libpnmpi.so".into(), &DynImage::parse(&lib).unwrap());
        let err = patch(&bytes, Some(&library)).unwrap_err();
        assert_eq!(err.exit_code(), error::exit::MISSING_ENTRY_POINTS);
        assert_eq!(
            err.to_string(),
            "libpnmpi.so has no entry point for 1 import(s): XMPI_Comm_rank"
        );
    }
}
