//! The build report: what was generated, and what was left out and why,
//! so that a missing routine is never a mystery.

use crate::{Generated, Skipped};
use std::fmt::Write;

/// Human-readable summary of one generation run.
pub fn render(g: &Generated) -> String {
    let mut out = String::new();
    let i = &g.install;
    let _ = writeln!(out, "pnmpi build report");
    let _ = writeln!(out, "MPI:        {} (found via {})", i.flavor.name(), i.source);
    let _ = writeln!(out, "header:     {}", i.header.display());
    let _ = writeln!(out, "library:    {}", i.library.display());
    let _ = writeln!(
        out,
        "declared:   {} PMPI_ prototypes",
        g.routines.len() + g.skipped.len()
    );
    let _ = writeln!(
        out,
        "generated:  {} routines (MPI_ stub + XMPI_ entry each)",
        g.routines.len()
    );
    let _ = writeln!(out, "skipped:    {}", g.skipped.len());
    for Skipped { name, reason } in &g.skipped {
        let _ = writeln!(out, "  PMPI_{name}: {reason}");
    }
    let _ = writeln!(
        out,
        "note: PMPIX_ extensions and Fortran bindings are not intercepted; calls to them go straight to MPI."
    );
    out
}
