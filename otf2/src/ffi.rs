//! The raw bindings bindgen generates from `otf2/otf2.h` at build time.
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    clippy::all,
    missing_docs
)]

include!(concat!(env!("OUT_DIR"), "/ffi.rs"));
