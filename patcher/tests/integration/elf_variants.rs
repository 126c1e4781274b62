//! ELF32, versioned imports, Fortran imports and shared strings, built with plain `$CC` from
//! `ptool_min.c` and `fakempi.c` (no MPI needed).

use std::fs;
use std::path::{Path, PathBuf};

use pnmpi_patch::elf::DynImage;

use crate::common::*;

fn build_min(dir: &Path, lib: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["-nostdlib"];
    args.extend_from_slice(extra);
    shared_lib(&cc(), dir, lib, "ptool_min.c", &args)
}

#[test]
fn elf32_tool_is_patched() {
    let dir = tempfile::tempdir().unwrap();
    let tool = build_min(dir.path(), "libmin32.so", &["-m32"]);
    let out = dir.path().join("libmin32.pnmpi.so");
    let run = patcher_expect(&[&tool], 0);
    assert!(
        run.stderr
            .contains("renamed Fortran pmpi_ imports to xmpi_ without --against"),
        "{}",
        run.stderr
    );
    assert_only_renamed(&tool, &out, &["PMPI_Send", "pmpi_send_"], false);
    let check = patcher_expect(&[Path::new("--check"), &out], 0).stdout;
    assert!(check.contains("ELF32 386 shared object"), "{check}");
    assert!(check.contains("state: already patched"), "{check}");
}

#[test]
fn versioned_imports_are_renamed_and_made_global() {
    let dir = tempfile::tempdir().unwrap();
    let map = source("fakempi.map");
    let script = format!("-Wl,--version-script={}", map.display());
    let fakempi = shared_lib(
        &cc(),
        dir.path(),
        "libfakempi.so",
        "fakempi.c",
        &["-nostdlib", &script],
    );
    let d = format!("-L{}", dir.path().display());
    let tool = build_min(dir.path(), "libmin.so", &[&d, "-lfakempi"]);
    assert!(dyn_syms(&tool)
        .iter()
        .any(|l| l.contains("UND PMPI_Send@FAKEMPI_1.0 (2)")));
    let version_strings = |path: &Path| {
        let image = DynImage::parse(&fs::read(path).unwrap()).unwrap();
        let strings = image
            .other_strings
            .into_iter()
            .map(|(what, s)| format!("{what} {}", s.text));
        strings.filter(|s| s.starts_with("version")).collect::<Vec<_>>()
    };
    assert_eq!(
        version_strings(&fakempi),
        [
            "version definition libfakempi.so",
            "version definition FAKEMPI_1.0"
        ]
    );
    assert_eq!(
        version_strings(&tool),
        ["version file libfakempi.so", "version name FAKEMPI_1.0"]
    );
    let out = dir.path().join("libmin.pnmpi.so");
    let run = patcher_expect(&[&tool], 0);
    assert!(
        run.stdout.contains("(2 version requirement(s) set to global)"),
        "{}",
        run.stdout
    );
    assert_only_renamed(&tool, &out, &["PMPI_Send", "pmpi_send_"], true);
}

#[test]
fn fortran_imports_follow_the_against_library() {
    let dir = tempfile::tempdir().unwrap();
    let tool = build_min(dir.path(), "libmin.so", &[]);
    let with = shared_lib(
        &cc(),
        dir.path(),
        "libwith.so",
        "fakempi.c",
        &["-nostdlib", "-DAS_PNMPI"],
    );
    let without = shared_lib(
        &cc(),
        dir.path(),
        "libwithout.so",
        "fakempi.c",
        &["-nostdlib", "-DAS_PNMPI", "-DNO_FORTRAN"],
    );
    let against = Path::new("--against");
    let out = dir.path().join("out.so");
    let o = Path::new("-o");

    let run = patcher_expect(&[against, &with, &tool, o, &out], 0);
    assert!(!run.stderr.contains("Fortran"), "{}", run.stderr);
    assert_only_renamed(&tool, &out, &["PMPI_Send", "pmpi_send_"], false);

    let run = patcher_expect(&[against, &without, &tool, o, &out], 0);
    assert!(
        run.stderr
            .contains("kept Fortran imports with no entry point in libpnmpi"),
        "{}",
        run.stderr
    );
    assert_only_renamed(&tool, &out, &["PMPI_Send"], false);
    let check = patcher_expect(&[Path::new("--check"), against, &without, &out], 0).stdout;
    assert!(check.contains("state: partially patched"), "{check}");
    assert!(
        check.contains("Fortran imports a patch would keep: pmpi_send_"),
        "{check}"
    );
}

#[test]
fn import_stored_inside_an_exported_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tool = build_min(dir.path(), "libclash.so", &["-DCLASH"]);
    let before = listing(dir.path());
    let run = patcher_expect(&[&tool], 1);
    assert_error(
        &run,
        &tool,
        "the name of import PMPI_Send is stored inside defined symbol tool_PMPI_Send",
    );
    assert!(run.stderr.contains("(offset 0x"), "{}", run.stderr);
    assert_eq!(listing(dir.path()), before);
    let check = patcher_expect(&[Path::new("--check"), &tool], 1).stdout;
    assert!(check.contains("patch: refused:"), "{check}");
}
