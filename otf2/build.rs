//! Generates the bindings of the reference OTF2 library (libotf2, Debian's
//! `libopen-trace-format2-dev`) from its installed `otf2/otf2.h`, and links
//! against it: the format is never written by hand.

use std::path::{Path, PathBuf};

/// Where Debian (and most installs) put the headers; `OTF2_INCLUDE_DIR`
/// overrides it for an install elsewhere (with `OTF2_LIB_DIR`).
const DEFAULT_INCLUDE: &str = "/usr/include";

fn main() {
    for var in ["OTF2_INCLUDE_DIR", "OTF2_LIB_DIR", "LIBCLANG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let include =
        std::env::var_os("OTF2_INCLUDE_DIR").map_or_else(|| PathBuf::from(DEFAULT_INCLUDE), PathBuf::from);
    let header = include.join("otf2/otf2.h");
    if !header.is_file() {
        eprintln!(
            "error: {} not found: install the OTF2 library and headers \
             (Debian: apt-get install libopen-trace-format2-dev; scripts/deps.sh does it), \
             or set OTF2_INCLUDE_DIR and OTF2_LIB_DIR",
            header.display()
        );
        std::process::exit(1);
    }
    println!("cargo:rerun-if-changed={}", header.display());
    let bindings = bindgen::Builder::default()
        .header_contents(
            "wrapper.h",
            "#include <stdio.h>\n#include <stdarg.h>\n#include <otf2/otf2.h>\n",
        )
        .clang_arg(format!("-I{}", include.display()))
        .allowlist_function("OTF2_.*")
        .allowlist_type("OTF2_.*")
        .allowlist_var("OTF2_.*")
        // The error callback formats libotf2's message with its va_list.
        .allowlist_function("vsnprintf")
        .layout_tests(false)
        .generate_comments(false)
        .derive_default(true)
        .prepend_enum_name(false)
        .generate();
    let bindings = match bindings {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: bindgen could not read {}: {e}", header.display());
            std::process::exit(1);
        }
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("ffi.rs"))
        .unwrap_or_else(|e| panic!("cannot write ffi.rs in OUT_DIR: {e}"));
    if let Some(dir) = std::env::var_os("OTF2_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", Path::new(&dir).display());
    }
    println!("cargo:rustc-link-lib=dylib=open-trace-format2");
}
