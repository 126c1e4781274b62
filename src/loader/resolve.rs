//! Turns a `module NAME` entry into a file, searching `PNMPI_LIB_PATH` and
//! then the install's module folder, as LLNL PnMPI does.

use crate::config::ModuleSpec;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// The folders searched for modules, in order.
pub fn search_dirs(lib_path: Option<&str>, install_dir: Option<PathBuf>) -> Vec<PathBuf> {
    lib_path
        .unwrap_or("")
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .chain(install_dir)
        .collect()
}

/// File names tried in each folder for `name`: the name itself if it
/// already looks like a shared object, else `NAME.so` and `libNAME.so`.
fn candidates(name: &str) -> Vec<String> {
    if name.ends_with(".so") || name.contains(".so.") {
        vec![name.to_string()]
    } else {
        vec![format!("{name}.so"), format!("lib{name}.so")]
    }
}

/// Finds the file for `spec`; a name with a `/` is a path and is not searched.
pub fn resolve(spec: &ModuleSpec, config_file: &Path, dirs: &[PathBuf]) -> Result<PathBuf, Error> {
    if spec.name.contains('/') {
        let path = PathBuf::from(&spec.name);
        if path.is_file() {
            return Ok(path);
        }
        return Err(Error::NotFound {
            file: config_file.to_path_buf(),
            line: spec.line,
            name: spec.name.clone(),
            tried: "the path as given".into(),
            searched: vec![path],
        });
    }
    let names = candidates(&spec.name);
    dirs.iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::NotFound {
            file: config_file.to_path_buf(),
            line: spec.line,
            name: spec.name.clone(),
            tried: names.join(" and "),
            searched: dirs.to_vec(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ModuleSpec {
        ModuleSpec {
            name: name.into(),
            line: 7,
            stack: "default".into(),
            arguments: vec![],
            pcontrol: None,
            select: Default::default(),
        }
    }

    #[test]
    fn lib_path_comes_before_the_install_folder() {
        let dirs = search_dirs(Some("/a::/b"), Some(PathBuf::from("/inst")));
        assert_eq!(
            dirs,
            [PathBuf::from("/a"), PathBuf::from("/b"), PathBuf::from("/inst")]
        );
    }

    #[test]
    fn finds_name_so_then_libname_so_in_order() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(b.path().join("libtool.so"), b"").unwrap();
        let dirs = vec![a.path().to_path_buf(), b.path().to_path_buf()];
        assert_eq!(
            resolve(&spec("tool"), Path::new("c"), &dirs).unwrap(),
            b.path().join("libtool.so")
        );
        std::fs::write(a.path().join("tool.so"), b"").unwrap();
        assert_eq!(
            resolve(&spec("tool"), Path::new("c"), &dirs).unwrap(),
            a.path().join("tool.so")
        );
    }

    #[test]
    fn not_found_lists_the_folders_and_names() {
        let err = resolve(
            &spec("nope"),
            Path::new("/x/.pnmpi-conf"),
            &[PathBuf::from("/d1"), PathBuf::from("/d2")],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "/x/.pnmpi-conf:7: module `nope` not found; tried nope.so and libnope.so in: /d1, /d2"
            ),
            "{err}"
        );
        assert!(err.contains("PNMPI_LIB_PATH"), "{err}");
    }
}
