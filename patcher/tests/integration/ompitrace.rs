//! Open MPI's own PMPI tool, libompitrace, whose MPI_ names are tails of its PMPI_ names.

use std::path::Path;

use crate::common::*;

const OMPITRACE: &str = "/usr/lib/x86_64-linux-gnu/libompitrace.so.40";

#[test]
fn libompitrace_patches_cleanly_and_keeps_its_20_wrappers() {
    let input = Path::new(OMPITRACE);
    if !input.exists() {
        println!("note: {OMPITRACE} does not exist (Open MPI not installed); test not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("libompitrace.pnmpi.so");
    let run = patcher_expect(&[input, Path::new("-o"), &out], 0);
    assert!(run.stdout.contains("renamed 25 PMPI import(s)"), "{}", run.stdout);

    let imports: Vec<String> = dyn_syms(input)
        .iter()
        .filter(|l| l.contains(" UND PMPI_"))
        .map(|l| l.split_whitespace().last().unwrap().to_string())
        .collect();
    assert_eq!(imports.len(), 25);
    let imports: Vec<&str> = imports.iter().map(String::as_str).collect();
    assert_only_renamed(input, &out, &imports, false);

    let wrappers = dyn_syms(&out)
        .iter()
        .filter(|l| !l.contains(" UND ") && l.split_whitespace().last().unwrap().starts_with("MPI_"))
        .count();
    assert_eq!(wrappers, 20);
    let check = patcher_expect(&[Path::new("--check"), &out], 0).stdout;
    assert!(check.contains("MPI wrappers defined (20)"), "{check}");
    assert!(check.contains("XMPI imports (25)"), "{check}");
}
