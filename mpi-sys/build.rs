//! Generates the bindings and routine table for the MPI selected by
//! `MPICC` (or pkg-config), and links against its library.

use std::path::PathBuf;

fn main() {
    for var in ["MPICC", "MPI_PKG_CONFIG", "LIBCLANG_PATH", "PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let result = stubgen::locate().and_then(|install| stubgen::generate(install, "::pnmpi_mpi_sys::ffi"));
    let generated = match result {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let write = |name: &str, text: &str| {
        std::fs::write(out.join(name), text).unwrap_or_else(|e| panic!("cannot write {name} in OUT_DIR: {e}"))
    };
    write("ffi.rs", &generated.ffi);
    write("routines.rs", &generated.table());
    write("pnmpi-build-report.txt", &generated.report());
    write("xmpi.h", &generated.xmpi_header());
    let install = &generated.install;
    println!("cargo:rerun-if-changed=src/constants.c");
    cc::Build::new()
        .file("src/constants.c")
        .includes(&install.include_dirs)
        .define("OMPI_SKIP_MPICXX", "1")
        .define("MPICH_SKIP_MPICXX", None)
        .warnings(true)
        .compile("pnmpi_mpi_constants");
    println!("cargo:rerun-if-changed={}", install.header.display());
    let lib_dir = install.library.parent().expect("a library file has a folder");
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    for dir in &install.lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    for lib in &install.libs {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
    // Passed to dependents' build scripts as DEP_MPI_*.
    println!("cargo:flavor={}", install.flavor.name());
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:report={}", out.join("pnmpi-build-report.txt").display());
    println!("cargo:xmpi_header={}", out.join("xmpi.h").display());
}
