//! Runs bindgen on the native `mpi.h`, keeping the `PMPI_` prototypes and the
//! types they use.

use crate::error::{Error, Result};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Macros that keep the C++ bindings and MPICH's type-tag attributes out of
/// the parse; both only add noise that bindgen cannot use.
const DEFINES: &[&str] = &[
    "-DMPICH_NO_ATTR_TYPE_TAGS",
    "-DOMPI_SKIP_MPICXX=1",
    "-DMPICH_SKIP_MPICXX",
];

/// The macro that shows the MPI-1 routines MPI-3 removed, which Open MPI
/// 4.1 still exports but hides in `mpi.h` unless asked (LLNL PnMPI builds
/// its modules that way: its `datatype` module calls `XMPI_Type_hvector`).
pub const COMPAT: &str = "OMPI_OMIT_MPI1_COMPAT_DECLS";

/// The integer macros read here, where bindgen evaluates them, rather
/// than from `constants.c`: as constants, a wrapper's test of them (a
/// receive's wildcards, a call's success) loads nothing.
pub const INT_MACROS: &str = "MPI_(ANY_SOURCE|ANY_TAG|SUCCESS)";

/// Returns bindgen's Rust source for every `PMPI_` function in `header`
/// and the [`INT_MACROS`] (as `i32`); with `compat`, the functions hidden
/// behind [`COMPAT`] too.
pub fn bindings(header: &Path, include_dirs: &[PathBuf], compat: bool) -> Result<String> {
    let builder = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_args(include_dirs.iter().map(|d| format!("-I{}", d.display())))
        .clang_args(DEFINES.iter().copied())
        .clang_args(compat.then(|| format!("-D{COMPAT}=0")))
        .allowlist_function("PMPI_.*")
        .allowlist_var(INT_MACROS)
        .default_macro_constant_type(bindgen::MacroTypeVariation::Signed)
        // `core` types, so that mpi-sys and the modules built on it can be
        // `no_std` (a compact module maps 16 KiB instead of std's 380).
        .use_core()
        .layout_tests(false)
        .generate_comments(false)
        .derive_default(true);
    // bindgen panics (rather than erring) when it cannot load libclang.
    let generated = catch_unwind(AssertUnwindSafe(|| builder.generate())).map_err(|panic| {
        let detail = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "bindgen panicked".to_string());
        Error::NoLibclang { detail }
    })?;
    let bindings = generated.map_err(|e| Error::Bindgen {
        header: header.to_path_buf(),
        detail: e.to_string(),
    })?;
    Ok(bindings.to_string())
}
