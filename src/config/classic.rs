//! The classic line format of LLNL PnMPI's `.pnmpi-conf`:
//!
//! ```text
//! # comment
//! module NAME
//! argument KEY VALUE...
//! pcontrol on|off
//! routines MPI_Send MPI_*recv    (only these routines)
//! exclude MPI_Comm_*             (never these)
//! ranks 0,4-7                    (only on these world ranks)
//! phases 2-3                     (only while the last MPI_Pcontrol level is in the set)
//! stack NAME
//! globalpcontrol int|on|off
//! ```
//!
//! Unlike LLNL, an unknown command or a misplaced one is an error, never
//! skipped.

use super::selection::{IntSet, Routines};
use super::spec::{Config, ModuleSpec, PcontrolMode, DEFAULT_STACK};
use crate::error::Error;
use std::path::Path;

const COMMANDS: &str = "module, argument, pcontrol, routines, exclude, ranks, phases, stack, globalpcontrol";

/// Drops a comment: `#` at the start of a word up to the end of the line.
fn strip_comment(line: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && prev_space {
            return &line[..i];
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// Parses the classic form. `file` is only used in error messages.
pub fn parse(text: &str, file: &Path) -> Result<Config, Error> {
    let mut config = Config::default();
    let mut stack = DEFAULT_STACK.to_string();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |msg: String| Error::Syntax {
            file: file.to_path_buf(),
            line,
            msg,
        };
        let content = strip_comment(raw).trim();
        let (command, rest) = content.split_once(char::is_whitespace).unwrap_or((content, ""));
        let rest = rest.trim();
        match command {
            "" => {}
            "module" => {
                if rest.is_empty() || rest.contains(char::is_whitespace) {
                    return Err(err(format!(
                        "`module` takes exactly one name or path, got `{rest}`"
                    )));
                }
                config.modules.push(ModuleSpec {
                    name: rest.to_string(),
                    line,
                    stack: stack.clone(),
                    arguments: Vec::new(),
                    pcontrol: None,
                    select: Default::default(),
                });
            }
            "argument" => {
                let (key, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                if key.is_empty() {
                    return Err(err("`argument` needs a key: `argument KEY VALUE`".into()));
                }
                let Some(module) = config.modules.last_mut() else {
                    return Err(err(
                        "`argument` before any `module`; arguments belong to the module above them".into(),
                    ));
                };
                module.arguments.push((key.to_string(), value.trim().to_string()));
            }
            "pcontrol" => {
                let on = match rest {
                    "on" => true,
                    "off" => false,
                    _ => return Err(err(format!("`pcontrol` takes `on` or `off`, got `{rest}`"))),
                };
                let Some(module) = config.modules.last_mut() else {
                    return Err(err(
                        "`pcontrol` before any `module`; it applies to the module above it".into(),
                    ));
                };
                module.pcontrol = Some(on);
            }
            "stack" => {
                if rest.is_empty() || rest.contains(char::is_whitespace) {
                    return Err(err(format!("`stack` takes exactly one name, got `{rest}`")));
                }
                stack = rest.to_string();
            }
            "globalpcontrol" => config.pcontrol_mode = PcontrolMode::parse(rest).map_err(err)?,
            "routines" | "exclude" | "ranks" | "phases" => {
                let Some(module) = config.modules.last_mut() else {
                    return Err(err(format!(
                        "`{command}` before any `module`; it applies to the module above it"
                    )));
                };
                if rest.is_empty() {
                    return Err(err(format!("`{command}` needs a value")));
                }
                let select = &mut module.select;
                match command {
                    "routines" => select.add_routines(Routines::parse(rest.split_whitespace()).map_err(err)?),
                    "exclude" => select.add_exclude(Routines::parse(rest.split_whitespace()).map_err(err)?),
                    "ranks" => select.ranks = Some(IntSet::parse(rest).map_err(err)?),
                    _ => select.phases = Some(IntSet::parse(rest).map_err(err)?),
                }
            }
            other => {
                return Err(err(format!(
                    "unknown command `{other}`; expected one of {COMMANDS}"
                )))
            }
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Config {
        parse(text, Path::new("conf")).unwrap()
    }

    fn parse_err(text: &str) -> String {
        parse(text, Path::new("conf")).unwrap_err().to_string()
    }

    #[test]
    fn reads_the_papers_example() {
        let c = parse_ok("#Combine MPI tracing and profiling\n\n#tracer first\nmodule tautrace\n\n#profiler second\nmodule libmpip\n");
        let names: Vec<_> = c.modules.iter().map(|m| (m.name.as_str(), m.line)).collect();
        assert_eq!(names, [("tautrace", 4), ("libmpip", 7)]);
        assert!(c.modules.iter().all(|m| m.stack == DEFAULT_STACK));
    }

    #[test]
    fn arguments_pcontrol_and_stacks_attach_to_the_right_module() {
        let c = parse_ok(
            "module a\nargument out dir with spaces  # comment\nargument k v#notacomment\npcontrol off\nstack B\nmodule b\nglobalpcontrol on\n",
        );
        assert_eq!(
            c.modules[0].arguments,
            [
                ("out".into(), "dir with spaces".into()),
                ("k".into(), "v#notacomment".into())
            ]
        );
        assert_eq!(c.modules[0].pcontrol, Some(false));
        assert_eq!(c.modules[1].stack, "B");
        assert_eq!(c.pcontrol_mode, PcontrolMode::On);
    }

    #[test]
    fn selection_commands_attach_to_the_module_above() {
        let c = parse_ok(
            "module a\nroutines MPI_Send\nroutines MPI_Recv\nexclude MPI_Recv\nranks 0,2-3\nphases 2\n",
        );
        let sel = &c.modules[0].select;
        assert!(sel.covers("MPI_Send") && !sel.covers("MPI_Recv") && !sel.covers("MPI_Barrier"));
        assert!(sel.active(2, 2) && !sel.active(1, 2) && !sel.active(0, 1));
    }

    #[test]
    fn errors_name_the_line_and_the_fix() {
        assert_eq!(
            parse_err("module a\nmodul b\n"),
            "conf:2: unknown command `modul`; expected one of module, argument, pcontrol, routines, exclude, \
             ranks, phases, stack, globalpcontrol"
        );
        assert!(parse_err("globalpcontrol pmpi\n").starts_with("conf:1: globalpcontrol `pmpi` forwards"));
        assert!(parse_err("ranks 1\n").starts_with("conf:1: `ranks` before any `module`"));
        assert!(parse_err("module a\nroutines MPI_Sned\n")
            .starts_with("conf:2: `MPI_Sned` matches no MPI routine"));
        assert!(parse_err("module a\nphases 3-1\n").starts_with("conf:2: range `3-1`"));
        assert!(parse_err("argument k v\n").starts_with("conf:1: `argument` before any `module`"));
        assert!(parse_err("module a\npcontrol maybe\n").starts_with("conf:2: `pcontrol` takes `on` or `off`"));
        assert!(parse_err("pcontrol on\n").starts_with("conf:1: `pcontrol` before any `module`"));
        assert!(parse_err("module\n").starts_with("conf:1: `module` takes exactly one"));
        assert!(parse_err("module a b\n").starts_with("conf:1: `module` takes exactly one"));
        assert!(parse_err("stack\n").starts_with("conf:1: `stack` takes exactly one"));
    }
}
