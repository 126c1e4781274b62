//! Building C tools, running `pnmpi-patch` and reading `readelf` output for the tests.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use goblin::elf::Elf;

/// The MPI compiler wrapper under test: `$MPICC`, default `mpicc`.
pub fn mpicc() -> String {
    env::var("MPICC").unwrap_or_else(|_| "mpicc".into())
}

/// The plain C compiler for tools that need no MPI: `$CC`, default `cc`.
pub fn cc() -> String {
    env::var("CC").unwrap_or_else(|_| "cc".into())
}

pub fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../c-tests/tools")
        .join(name)
}

/// Runs `compiler args...`, failing the test with the compiler's output if it fails.
pub fn compile(compiler: &str, args: &[&str]) {
    let out = Command::new(compiler)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds `c-tests/tools/<source>` as a shared object `<dir>/<lib>` with `compiler`.
pub fn shared_lib(compiler: &str, dir: &Path, lib: &str, source_name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(lib);
    let src = source(source_name);
    let mut args = vec![
        "-shared",
        "-fPIC",
        "-o",
        out.to_str().unwrap(),
        src.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    compile(compiler, &args);
    out
}

/// The ptool PMPI tool built with `$MPICC`.
pub fn ptool(dir: &Path) -> PathBuf {
    shared_lib(&mpicc(), dir, "libptool.so", "ptool.c", &[])
}

/// The result of one `pnmpi-patch` run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn patcher(args: &[&Path]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_pnmpi-patch"))
        .args(args)
        .output()
        .expect("run pnmpi-patch");
    let run = Run {
        code: out.status.code().expect("pnmpi-patch exited by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "pnmpi-patch panicked:\n{}",
        run.stderr
    );
    run
}

/// Runs pnmpi-patch expecting `code`, and returns the run for further checks.
pub fn patcher_expect(args: &[&Path], code: i32) -> Run {
    let run = patcher(args);
    assert_eq!(
        run.code, code,
        "pnmpi-patch {args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run
}

/// Asserts a failed run printed one error line naming `file` and containing `what`.
pub fn assert_error(run: &Run, file: &Path, what: &str) {
    let prefix = format!("pnmpi-patch: error: {}: ", file.display());
    assert!(
        run.stderr.starts_with(&prefix) && run.stderr.contains(what) && run.stderr.contains(" — "),
        "expected an error about {} containing {what:?}, got:\n{}",
        file.display(),
        run.stderr
    );
}

/// `readelf --dyn-syms -W` lines of the symbol table rows.
pub fn dyn_syms(path: &Path) -> Vec<String> {
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W"])
        .arg(path)
        .output()
        .expect("run readelf");
    assert!(out.status.success(), "readelf failed on {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

/// Asserts `after` is `before` with exactly the imports named in `renamed` turned from
/// `PMPI_`/`pmpi_` into `XMPI_`/`xmpi_` and nothing else changed (version suffixes of the renamed
/// imports may disappear when `versions_dropped`).
pub fn assert_only_renamed(before: &Path, after: &Path, renamed: &[&str], versions_dropped: bool) {
    let (old, new) = (dyn_syms(before), dyn_syms(after));
    assert_eq!(old.len(), new.len());
    let mut seen = Vec::new();
    for (o, n) in old.iter().zip(&new) {
        if o == n {
            continue;
        }
        assert!(o.contains(" UND "), "a defined symbol changed:\n{o}\n{n}");
        let name_at = o.rfind(" UND ").unwrap() + 5;
        let name = o[name_at..].split_whitespace().next().unwrap();
        let bare = name.split('@').next().unwrap();
        let expected_name = format!("{}{}", if bare.starts_with('P') { "X" } else { "x" }, &bare[1..]);
        let expected = if versions_dropped {
            format!("{}{expected_name}", &o[..name_at])
        } else {
            o.replacen(bare, &expected_name, 1)
        };
        assert_eq!(n.trim_end(), expected, "unexpected change of {name}");
        seen.push(bare.to_string());
    }
    seen.sort();
    let mut want: Vec<String> = renamed.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(seen, want, "renamed imports");
}

/// Bytes of the named section, via goblin.
pub fn section(path: &Path, name: &str) -> Vec<u8> {
    let bytes = fs::read(path).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let sh = elf
        .section_headers
        .iter()
        .find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(name))
        .unwrap_or_else(|| panic!("{} has no {name}", path.display()));
    bytes[sh.sh_offset as usize..(sh.sh_offset + sh.sh_size) as usize].to_vec()
}

/// File names in `dir`, sorted, to prove no output or temporary file was left behind.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
