//! The TOML form of the configuration; `pnmpi.toml` in the repository is
//! its documented example. It says the same things as the classic form:
//!
//! ```toml
//! globalpcontrol = "int"          # optional: int, on or off
//!
//! [[module]]
//! name = "tracer"                 # bare name or path
//! stack = "default"               # optional
//! pcontrol = true                 # optional
//! arguments = { outdir = "trace" } # optional
//! routines = ["MPI_Send"]         # optional
//! exclude = ["MPI_Comm_*"]        # optional
//! ranks = "0,4-7"                 # optional
//! phases = "2-3"                  # optional
//! ```

use super::selection::{IntSet, Routines, Selection};
use super::spec::{Config, ModuleSpec, PcontrolMode, DEFAULT_STACK};
use crate::error::Error;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    globalpcontrol: Option<String>,
    #[serde(default)]
    module: Vec<ModuleTable>,
}

/// One `[[module]]` table, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleTable {
    name: String,
    stack: Option<String>,
    pcontrol: Option<bool>,
    #[serde(default)]
    arguments: BTreeMap<String, toml::Value>,
    #[serde(default)]
    routines: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    ranks: Option<toml::Value>,
    phases: Option<toml::Value>,
}

impl ModuleTable {
    /// The selection options, checked.
    fn selection(&self) -> Result<Selection, String> {
        let set = |v: &Option<toml::Value>| v.clone().map(|v| IntSet::parse(&as_argument(v))).transpose();
        let mut select = Selection {
            ranks: set(&self.ranks)?,
            phases: set(&self.phases)?,
            ..Selection::default()
        };
        select.add_routines(Routines::parse(self.routines.iter().map(String::as_str))?);
        select.add_exclude(Routines::parse(self.exclude.iter().map(String::as_str))?);
        Ok(select)
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Renders a value the way the classic form would hold it.
fn as_argument(value: toml::Value) -> String {
    match value {
        toml::Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Parses the TOML form. `file` is only used in error messages.
pub fn parse(text: &str, file: &Path) -> Result<Config, Error> {
    let toml_err = |msg: String| Error::Toml {
        file: file.to_path_buf(),
        msg,
    };
    let parsed: File = toml::from_str(text).map_err(|e| toml_err(e.to_string().trim_end().to_string()))?;
    // serde does not keep spans; find each entry's line for later messages.
    let mut starts = text.match_indices("[[module]]").map(|(o, _)| line_of(text, o));
    let mut modules = Vec::new();
    for m in parsed.module {
        let line = starts.next().unwrap_or(0);
        let select = m
            .selection()
            .map_err(|msg| toml_err(format!("line {line}: {msg}")))?;
        modules.push(ModuleSpec {
            name: m.name,
            line,
            stack: m.stack.unwrap_or_else(|| DEFAULT_STACK.to_string()),
            arguments: m
                .arguments
                .into_iter()
                .map(|(k, v)| (k, as_argument(v)))
                .collect(),
            pcontrol: m.pcontrol,
            select,
        });
    }
    let pcontrol_mode = parsed
        .globalpcontrol
        .as_deref()
        .map(PcontrolMode::parse)
        .transpose()
        .map_err(toml_err)?
        .unwrap_or_default();
    Ok(Config {
        file: file.to_path_buf(),
        modules,
        pcontrol_mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_modules_with_arguments_selection_and_lines() {
        let text =
            "globalpcontrol = \"off\"\n\n[[module]]\nname = \"a\"\narguments = { out = \"x\", n = 3 }\n\n\
                    [[module]]\nname = \"b\"\nstack = \"B\"\npcontrol = false\nroutines = [\"MPI_Send\"]\n\
                    ranks = \"0-1\"\nphases = 2\n";
        let c = parse(text, Path::new("p.toml")).unwrap();
        assert_eq!(c.modules.len(), 2);
        assert_eq!(c.modules[0].line, 3);
        assert_eq!(
            c.modules[0].arguments,
            [("n".into(), "3".into()), ("out".into(), "x".into())]
        );
        assert_eq!(c.modules[1].stack, "B");
        assert_eq!(c.modules[1].pcontrol, Some(false));
        assert_eq!(c.pcontrol_mode, PcontrolMode::Off);
        let sel = &c.modules[1].select;
        assert!(sel.covers("MPI_Send") && !sel.covers("MPI_Recv"));
        assert!(sel.active(1, 2) && !sel.active(2, 2) && !sel.active(1, 1));
    }

    #[test]
    fn bad_selection_names_the_entry_line() {
        let text = "[[module]]\nname = \"a\"\n\n[[module]]\nname = \"b\"\nroutines = [\"MPI_Sned\"]\n";
        let err = parse(text, Path::new("p.toml")).unwrap_err().to_string();
        assert!(
            err.starts_with("p.toml: line 4: `MPI_Sned` matches no MPI routine"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let err = parse("[[module]]\nname = \"a\"\nstak = \"B\"\n", Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("p.toml: "), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("stak"), "{err}");
    }
}
