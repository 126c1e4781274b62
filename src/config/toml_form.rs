//! The TOML form of the configuration; `pnmpi.toml` in the repository is
//! its documented example. It says the same things as the classic form:
//!
//! ```toml
//! globalpcontrol = "int"          # optional
//!
//! [[module]]
//! name = "tracer"                 # bare name or path
//! stack = "default"               # optional
//! pcontrol = true                 # optional
//! arguments = { outdir = "trace" } # optional
//! ```

use super::{Config, ModuleSpec, DEFAULT_STACK};
use crate::error::Error;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    globalpcontrol: Option<String>,
    #[serde(default)]
    module: Vec<Module>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Module {
    name: String,
    stack: Option<String>,
    pcontrol: Option<bool>,
    #[serde(default)]
    arguments: BTreeMap<String, toml::Value>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Renders an argument value the way the classic form would hold it.
fn as_argument(value: toml::Value) -> String {
    match value {
        toml::Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Parses the TOML form. `file` is only used in error messages.
pub fn parse(text: &str, file: &Path) -> Result<Config, Error> {
    let parsed: File = toml::from_str(text).map_err(|e| Error::Toml {
        file: file.to_path_buf(),
        msg: e.to_string().trim_end().to_string(),
    })?;
    // serde does not keep spans; find each entry's line for later messages.
    let mut starts = text.match_indices("[[module]]").map(|(o, _)| line_of(text, o));
    let modules = parsed
        .module
        .into_iter()
        .map(|m| ModuleSpec {
            name: m.name,
            line: starts.next().unwrap_or(0),
            stack: m.stack.unwrap_or_else(|| DEFAULT_STACK.to_string()),
            arguments: m
                .arguments
                .into_iter()
                .map(|(k, v)| (k, as_argument(v)))
                .collect(),
            pcontrol: m.pcontrol,
        })
        .collect();
    Ok(Config {
        file: file.to_path_buf(),
        modules,
        global_pcontrol: parsed.globalpcontrol,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_modules_with_arguments_and_lines() {
        let text = "globalpcontrol = \"int\"\n\n[[module]]\nname = \"a\"\narguments = { out = \"x\", n = 3 }\n\n[[module]]\nname = \"b\"\nstack = \"B\"\npcontrol = false\n";
        let c = parse(text, Path::new("p.toml")).unwrap();
        assert_eq!(c.modules.len(), 2);
        assert_eq!(c.modules[0].line, 3);
        assert_eq!(
            c.modules[0].arguments,
            [("n".into(), "3".into()), ("out".into(), "x".into())]
        );
        assert_eq!(c.modules[1].stack, "B");
        assert_eq!(c.modules[1].pcontrol, Some(false));
        assert_eq!(c.global_pcontrol.as_deref(), Some("int"));
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
