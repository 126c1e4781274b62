//! Where the configuration comes from, in LLNL PnMPI's order: `$PNMPI_CONF`,
//! then `./.pnmpi-conf` (or `./pnmpi.toml`), then `$HOME/.pnmpi-conf`.

use crate::error::Error;
use std::path::{Path, PathBuf};

/// The configuration file to use, or `None` when there is none (no modules
/// are loaded then). `PNMPI_CONF` naming a missing file is an error, not a
/// silent run without tools.
pub fn find(conf_env: Option<&str>, cwd: &Path, home: Option<&Path>) -> Result<Option<PathBuf>, Error> {
    if let Some(conf) = conf_env.filter(|c| !c.is_empty()) {
        let path = PathBuf::from(conf);
        if !path.is_file() {
            return Err(Error::Read {
                file: path,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "PNMPI_CONF names no such file"),
            });
        }
        return Ok(Some(path));
    }
    let classic = cwd.join(".pnmpi-conf");
    let toml = cwd.join("pnmpi.toml");
    match (classic.is_file(), toml.is_file()) {
        (true, true) => {
            return Err(Error::Ambiguous {
                first: classic,
                second: toml,
            })
        }
        (true, false) => return Ok(Some(classic)),
        (false, true) => return Ok(Some(toml)),
        (false, false) => {}
    }
    Ok(home.map(|h| h.join(".pnmpi-conf")).filter(|p| p.is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_llnl_order() {
        let cwd = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        assert_eq!(find(None, cwd.path(), Some(home.path())).unwrap(), None);
        std::fs::write(home.path().join(".pnmpi-conf"), "").unwrap();
        assert_eq!(
            find(None, cwd.path(), Some(home.path())).unwrap(),
            Some(home.path().join(".pnmpi-conf"))
        );
        std::fs::write(cwd.path().join(".pnmpi-conf"), "").unwrap();
        assert_eq!(
            find(None, cwd.path(), Some(home.path())).unwrap(),
            Some(cwd.path().join(".pnmpi-conf"))
        );
        let explicit = home.path().join(".pnmpi-conf");
        assert_eq!(find(explicit.to_str(), cwd.path(), None).unwrap(), Some(explicit));
    }

    #[test]
    fn missing_explicit_file_and_two_local_files_are_errors() {
        let cwd = tempfile::tempdir().unwrap();
        let err = find(Some("/nonexistent/conf"), cwd.path(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/conf"), "{err}");
        std::fs::write(cwd.path().join(".pnmpi-conf"), "").unwrap();
        std::fs::write(cwd.path().join("pnmpi.toml"), "").unwrap();
        let err = find(None, cwd.path(), None).unwrap_err().to_string();
        assert!(err.contains("choose with PNMPI_CONF"), "{err}");
    }
}
