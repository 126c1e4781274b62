//! The `--check` report: what a tool wraps and imports, whether it is patched, and whether a
//! given libpnmpi can serve it - as text for people and JSON for scripts.

use std::fmt;

use serde::Serialize;

use crate::elf::{DynImage, DynSymbol};
use crate::error::{exit, PatchError};
use crate::inventory::{EntryPoints, Inventory};
use crate::plan::{FortranPolicy, Plan};

/// How far a tool has been converted to a PnMPI module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Imports `PMPI_` and no `XMPI_`.
    Unpatched,
    /// Imports `XMPI_` and no `PMPI_`.
    Patched,
    /// Imports both, e.g. after a patch that skipped Fortran imports.
    PartiallyPatched,
    /// Imports neither.
    NotAPmpiTool,
}

/// What `--against` found in libpnmpi.
#[derive(Debug, Serialize)]
pub struct AgainstReport {
    pub library: String,
    /// `XMPI_` entry points the patched tool needs that the library does not define.
    pub missing: Vec<String>,
    /// Fortran imports a patch would leave alone because the library lacks their entry point.
    pub fortran_kept: Vec<String>,
}

/// Everything `--check` reports about one tool.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    pub file: String,
    pub class: &'static str,
    pub machine: &'static str,
    pub state: State,
    pub wrappers: Vec<String>,
    pub pmpi_imports: Vec<String>,
    pub fortran_pmpi_imports: Vec<String>,
    pub xmpi_imports: Vec<String>,
    /// Imports a patch would rename now (none when already patched).
    pub would_rename: Vec<String>,
    pub against: Option<AgainstReport>,
    /// Why a patch would be refused, apart from missing entry points.
    pub problem: Option<String>,
}

fn names(symbols: &[&DynSymbol]) -> Vec<String> {
    let mut names: Vec<String> = symbols.iter().map(|s| s.name.text.clone()).collect();
    names.sort();
    names.dedup();
    names
}

impl CheckReport {
    pub fn new(file: String, image: &DynImage, against: Option<&EntryPoints>) -> CheckReport {
        let inventory = Inventory::of(image);
        let unpatched = !inventory.pmpi.is_empty() || !inventory.fortran_pmpi.is_empty();
        let state = match (unpatched, !inventory.xmpi.is_empty()) {
            (true, false) => State::Unpatched,
            (false, true) => State::Patched,
            (true, true) => State::PartiallyPatched,
            (false, false) => State::NotAPmpiTool,
        };
        let policy = against.map_or(FortranPolicy::RenameAll, FortranPolicy::RenameIfDefinedIn);
        let (plan, problem, fortran_missing) = match Plan::new(image, &inventory, policy) {
            Ok(plan) => (plan, None, Vec::new()),
            Err(PatchError::MissingEntryPoints { missing, .. }) => (Plan::default(), None, missing),
            Err(e) => (Plan::default(), Some(format!("{e} — {}", e.hint())), Vec::new()),
        };
        let against = against.map(|library| AgainstReport {
            library: library.library.clone(),
            missing: [inventory.missing_in(library), fortran_missing].concat(),
            fortran_kept: plan.fortran_kept.clone(),
        });
        CheckReport {
            file,
            class: image.class,
            machine: image.machine,
            state,
            wrappers: names(&inventory.wrappers),
            pmpi_imports: names(&inventory.pmpi),
            fortran_pmpi_imports: names(&inventory.fortran_pmpi),
            xmpi_imports: names(&inventory.xmpi),
            would_rename: plan.renames.iter().map(|r| r.from.clone()).collect(),
            against,
            problem,
        }
    }

    /// 0 when a patch would succeed (or is not needed), 3 when libpnmpi lacks entry points,
    /// 1 when the tool cannot be patched at all.
    pub fn exit_code(&self) -> u8 {
        if self.problem.is_some() {
            exit::BAD_INPUT
        } else if self.against.as_ref().is_some_and(|a| !a.missing.is_empty()) {
            exit::MISSING_ENTRY_POINTS
        } else {
            exit::SUCCESS
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report of strings always serializes")
    }
}

impl fmt::Display for CheckReport {
    /// The human-readable report, one fact per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Unpatched => "unpatched (imports PMPI_, no XMPI_)",
            State::Patched => "already patched (imports XMPI_, no PMPI_)",
            State::PartiallyPatched => "partially patched (imports both PMPI_ and XMPI_)",
            State::NotAPmpiTool => "not a PMPI tool (imports neither PMPI_ nor XMPI_)",
        };
        let list = |items: &[String]| {
            if items.is_empty() {
                "-".to_string()
            } else {
                items.join(" ")
            }
        };
        let count = |items: &[String]| format!("({}): {}", items.len(), list(items));
        writeln!(f, "{}: {} {} shared object", self.file, self.class, self.machine)?;
        writeln!(f, "  state: {state}")?;
        writeln!(f, "  MPI wrappers defined {}", count(&self.wrappers))?;
        writeln!(f, "  PMPI imports {}", count(&self.pmpi_imports))?;
        if !self.fortran_pmpi_imports.is_empty() {
            writeln!(f, "  Fortran pmpi imports {}", count(&self.fortran_pmpi_imports))?;
        }
        writeln!(f, "  XMPI imports {}", count(&self.xmpi_imports))?;
        if let Some(against) = &self.against {
            if against.missing.is_empty() {
                writeln!(
                    f,
                    "  against {}: every import has an entry point",
                    against.library
                )?;
            } else {
                writeln!(
                    f,
                    "  against {}: MISSING entry points {}",
                    against.library,
                    count(&against.missing)
                )?;
            }
            if !against.fortran_kept.is_empty() {
                writeln!(
                    f,
                    "  Fortran imports a patch would keep: {}",
                    list(&against.fortran_kept)
                )?;
            }
        }
        match &self.problem {
            Some(problem) => writeln!(f, "  patch: refused: {problem}"),
            None if self.would_rename.is_empty() => writeln!(f, "  patch: nothing to rename"),
            None => writeln!(f, "  patch: would rename {} import(s)", self.would_rename.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_elf::{build, typical_tool, Spec, Strings, Sym};

    #[test]
    fn reports_wrappers_imports_and_state() {
        let (bytes, _) = typical_tool();
        let image = DynImage::parse(&bytes).unwrap();
        let report = CheckReport::new("t.so".into(), &image, None);
        assert_eq!(report.state, State::Unpatched);
        assert_eq!(report.wrappers, ["MPI_Send"]);
        assert_eq!(report.pmpi_imports, ["PMPI_Comm_rank", "PMPI_Send"]);
        assert_eq!(report.exit_code(), exit::SUCCESS);
        let text = report.to_string();
        assert!(text.contains("MPI wrappers defined (1): MPI_Send"), "{text}");
        assert!(text.contains("would rename 2 import(s)"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["state"], "unpatched");
        assert_eq!(json["pmpi_imports"][1], "PMPI_Send");
    }

    #[test]
    fn missing_entry_points_give_exit_3_and_a_list() {
        let (bytes, _) = typical_tool();
        let image = DynImage::parse(&bytes).unwrap();
        let mut s = Strings::new();
        let send = s.add("XMPI_Send");
        let (lib, _) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::export(send)],
            needed: vec![],
        });
        let library = EntryPoints::of("libpnmpi.so".into(), &DynImage::parse(&lib).unwrap());
        let report = CheckReport::new("t.so".into(), &image, Some(&library));
        assert_eq!(report.against.as_ref().unwrap().missing, ["XMPI_Comm_rank"]);
        assert_eq!(report.exit_code(), exit::MISSING_ENTRY_POINTS);
        assert!(report
            .to_string()
            .contains("MISSING entry points (1): XMPI_Comm_rank"));
    }

    #[test]
    fn unpatchable_tool_reports_the_problem_and_exit_1() {
        let mut s = Strings::new();
        let at = s.add("tool_PMPI_Send");
        let (bytes, _) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::import(at + 5), Sym::export(at)],
            needed: vec![],
        });
        let report = CheckReport::new("t.so".into(), &DynImage::parse(&bytes).unwrap(), None);
        assert_eq!(report.exit_code(), exit::BAD_INPUT);
        assert!(report.problem.as_deref().unwrap().contains("tool_PMPI_Send"));
    }
}
