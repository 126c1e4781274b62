//! Finds the native MPI the way its users do: through the compiler wrapper
//! (`MPICC`), falling back to pkg-config.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which MPI implementation a build targets; tests and reports use it to
/// pick the right launcher and expectations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    OpenMpi,
    Mpich,
}

impl Flavor {
    /// The short name used in folder names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::OpenMpi => "openmpi",
            Flavor::Mpich => "mpich",
        }
    }
}

/// Everything the build needs to know about one MPI installation.
#[derive(Debug, Clone)]
pub struct MpiInstall {
    pub flavor: Flavor,
    /// The `mpi.h` that bindgen reads.
    pub header: PathBuf,
    pub include_dirs: Vec<PathBuf>,
    pub lib_dirs: Vec<PathBuf>,
    /// Library names as given to `-l` (e.g. `mpi`, `mpich`).
    pub libs: Vec<String>,
    /// The shared object that exports the `PMPI_` symbols.
    pub library: PathBuf,
    /// Where the flags came from, for the build report.
    pub source: String,
}

/// Flags split out of a wrapper's or pkg-config's command line.
#[derive(Debug, Default, PartialEq)]
pub struct Flags {
    pub include_dirs: Vec<PathBuf>,
    pub lib_dirs: Vec<PathBuf>,
    pub libs: Vec<String>,
}

/// Splits `-I`, `-L` and `-l` out of a compiler command line; everything
/// else (the compiler name, `-Wl,...`, `-pthread`) does not matter here.
pub fn parse_flags(line: &str) -> Flags {
    let mut flags = Flags::default();
    for word in line.split_whitespace() {
        if let Some(dir) = word.strip_prefix("-I") {
            flags.include_dirs.push(PathBuf::from(dir));
        } else if let Some(dir) = word.strip_prefix("-L") {
            flags.lib_dirs.push(PathBuf::from(dir));
        } else if let Some(lib) = word.strip_prefix("-l") {
            flags.libs.push(lib.to_string());
        }
    }
    flags
}

fn run(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Asks the compiler wrapper for its flags: Open MPI answers `-showme:*`,
/// MPICH answers `-show`.
fn from_wrapper(mpicc: &str) -> Option<(Flags, String)> {
    if let (Some(compile), Some(link)) = (run(mpicc, &["-showme:compile"]), run(mpicc, &["-showme:link"])) {
        return Some((
            parse_flags(&format!("{compile} {link}")),
            format!("{mpicc} -showme"),
        ));
    }
    run(mpicc, &["-show"]).map(|line| (parse_flags(&line), format!("{mpicc} -show")))
}

fn from_pkg_config(name: &str) -> Option<(Flags, String)> {
    let line = run("pkg-config", &["--cflags", "--libs", name])?;
    Some((parse_flags(&line), format!("pkg-config {name}")))
}

/// Default folders the system linker and compiler search without flags.
const SYSTEM_LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib",
];
const SYSTEM_INCLUDE_DIRS: &[&str] = &["/usr/include", "/usr/local/include"];

fn first_existing<'a>(dirs: impl Iterator<Item = &'a Path>, file: &str) -> Option<PathBuf> {
    dirs.map(|d| d.join(file)).find(|p| p.exists())
}

/// Finds MPI from `MPICC` (default `mpicc`), then from pkg-config
/// (`MPI_PKG_CONFIG`, then `ompi-c`, then `mpich`).
pub fn locate() -> Result<MpiInstall> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    let mut tried = vec![format!("compiler wrapper `{mpicc}`")];
    let mut pkg_names: Vec<String> = std::env::var("MPI_PKG_CONFIG").into_iter().collect();
    pkg_names.extend(["ompi-c".to_string(), "mpich".to_string()]);
    let found = from_wrapper(&mpicc).or_else(|| {
        pkg_names.iter().find_map(|name| {
            tried.push(format!("pkg-config `{name}`"));
            from_pkg_config(name)
        })
    });
    let Some((flags, source)) = found else {
        return Err(Error::NoMpi {
            detail: format!("tried {}", tried.join(", ")),
        });
    };
    install_from_flags(flags, source)
}

/// Turns a set of flags into a full description: the header, the library
/// file, and the flavor (read from the header, which cannot lie about it).
pub fn install_from_flags(flags: Flags, source: String) -> Result<MpiInstall> {
    let include_search = flags
        .include_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain(SYSTEM_INCLUDE_DIRS.iter().map(Path::new));
    let header = first_existing(include_search, "mpi.h").ok_or_else(|| Error::NoMpi {
        detail: format!(
            "{source} names no folder holding mpi.h (searched {:?})",
            flags.include_dirs
        ),
    })?;
    let text = std::fs::read_to_string(&header).map_err(|e| Error::NoMpi {
        detail: format!("cannot read {}: {e}", header.display()),
    })?;
    let flavor = if text.contains("OPEN_MPI") {
        Flavor::OpenMpi
    } else if text.contains("MPICH") {
        Flavor::Mpich
    } else {
        return Err(Error::NoMpi {
            detail: format!("{} is neither Open MPI's nor MPICH's mpi.h", header.display()),
        });
    };
    let lib_search: Vec<&Path> = flags
        .lib_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain(SYSTEM_LIB_DIRS.iter().map(Path::new))
        .collect();
    let library = flags
        .libs
        .iter()
        .filter(|l| l.starts_with("mpi"))
        .find_map(|l| first_existing(lib_search.iter().copied(), &format!("lib{l}.so")))
        .ok_or_else(|| Error::NoMpi {
            detail: format!(
                "{source} links {:?}, but no lib<name>.so of them was found in {:?}",
                flags.libs, lib_search
            ),
        })?;
    Ok(MpiInstall {
        flavor,
        header,
        include_dirs: flags.include_dirs,
        lib_dirs: flags.lib_dirs,
        libs: flags.libs,
        library,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_mpich_show_line() {
        let f = parse_flags(
            "gcc -Wl,-z,relro -I/usr/include/x86_64-linux-gnu/mpich -L/usr/lib/x86_64-linux-gnu -lmpich",
        );
        assert_eq!(
            f.include_dirs,
            vec![PathBuf::from("/usr/include/x86_64-linux-gnu/mpich")]
        );
        assert_eq!(f.lib_dirs, vec![PathBuf::from("/usr/lib/x86_64-linux-gnu")]);
        assert_eq!(f.libs, vec!["mpich".to_string()]);
    }

    #[test]
    fn splits_open_mpi_showme_lines() {
        let f = parse_flags("-I/a -I/a/openmpi -pthread -L/b -lmpi");
        assert_eq!(f.include_dirs.len(), 2);
        assert_eq!(f.libs, vec!["mpi".to_string()]);
    }

    #[test]
    fn reads_flavor_from_fake_headers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mpi-headers");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("libmpich.so"), b"").unwrap();
        let flags = Flags {
            include_dirs: vec![root.join("mpich-like")],
            lib_dirs: vec![dir.path().to_path_buf()],
            libs: vec!["mpich".into()],
        };
        let install = install_from_flags(flags, "test".into()).unwrap();
        assert_eq!(install.flavor, Flavor::Mpich);
        assert_eq!(install.library, dir.path().join("libmpich.so"));
    }

    #[test]
    fn missing_library_names_the_search() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mpi-headers");
        let flags = Flags {
            include_dirs: vec![root.join("ompi-like")],
            lib_dirs: vec![],
            libs: vec!["mpi_does_not_exist".into()],
        };
        let err = install_from_flags(flags, "test".into()).unwrap_err().to_string();
        assert!(err.contains("mpi_does_not_exist"), "{err}");
        assert!(err.contains("apt-get install"), "{err}");
    }
}
