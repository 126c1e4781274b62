//! Runs the whole generator on the imitation headers in `mpi-headers/`,
//! against tiny shared objects built here with the system C compiler.

use std::path::{Path, PathBuf};
use std::process::Command;
use stubgen::{generate, install_from_flags, Flags, Flavor};

fn headers(which: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mpi-headers")
        .join(which)
}

/// Builds `lib<name>.so` in `dir` defining `PMPI_<f>` for each of `funcs`.
fn fake_library(dir: &Path, name: &str, funcs: &[&str]) {
    let src: String = funcs
        .iter()
        .map(|f| format!("void PMPI_{f}(void) {{}}\n"))
        .collect();
    let c = dir.join("lib.c");
    std::fs::write(&c, src).unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join(format!("lib{name}.so")))
        .arg(&c)
        .status()
        .expect("cc runs");
    assert!(status.success());
}

fn generated(which: &str, lib: &str, exported: &[&str]) -> stubgen::Generated {
    let dir = tempfile::tempdir().unwrap();
    fake_library(dir.path(), lib, exported);
    let flags = Flags {
        include_dirs: vec![headers(which)],
        lib_dirs: vec![dir.path().to_path_buf()],
        libs: vec![lib.to_string()],
    };
    let install = install_from_flags(flags, "test".into()).unwrap();
    generate(install, "crate::ffi").unwrap()
}

fn names(g: &stubgen::Generated) -> Vec<&str> {
    g.routines.iter().map(|r| r.name.as_str()).collect()
}

#[test]
fn ompi_like_header_yields_every_prototype() {
    let all = [
        "Aint_add",
        "Alltoallw",
        "Attr_get",
        "Comm_create_keyval",
        "Get_count",
        "Pcontrol",
        "Send",
        "Waitall",
        "Wtime",
    ];
    let g = generated("ompi-like", "mpi", &all);
    assert_eq!(g.install.flavor, Flavor::OpenMpi);
    assert_eq!(names(&g), all);
    assert!(g.skipped.is_empty());
    let by = |n: &str| g.routines.iter().find(|r| r.name == n).unwrap();
    assert!(by("Pcontrol").variadic);
    assert_eq!(by("Wtime").ret, "f64");
    assert_eq!(by("Aint_add").ret.replace(' ', ""), "crate::ffi::MPI_Aint");
    // `const int sendcounts[]` decays to a pointer.
    assert_eq!(
        by("Alltoallw").params[1].replace(' ', ""),
        "*const::core::ffi::c_int"
    );
    assert_eq!(by("Alltoallw").params.len(), 9);
    // Function-pointer typedef parameters keep the typedef's name.
    assert!(by("Comm_create_keyval").params[0].contains("MPI_Comm_copy_attr_function"));
    // The generated table compiles as Rust source.
    syn::parse_file(&g.table()).unwrap();
    syn::parse_file(&g.ffi).unwrap();
}

#[test]
fn mpich_like_header_skips_unexported_and_ignores_qmpi_and_mpix() {
    let exported = [
        "Op_create",
        "Pcontrol",
        "Send",
        "Send_c",
        "T_enum_get_info",
        "T_init_thread",
        "Wtime",
    ];
    let g = generated("mpich-like", "mpich", &exported);
    assert_eq!(g.install.flavor, Flavor::Mpich);
    assert_eq!(names(&g), exported);
    assert_eq!(g.skipped.len(), 1);
    assert_eq!(g.skipped[0].name, "Status_f082f");
    assert!(g.skipped[0].reason.contains("not exported"));
    let report = g.report();
    assert!(
        report.contains("PMPI_Status_f082f: declared in mpi.h but not exported"),
        "{report}"
    );
    assert!(report.contains("generated:  7 routines"), "{report}");
    assert!(!g.table().contains("QMPI_"));
    assert!(!g.table().contains("PMPIX_"));
}
