//! The raw bindings bindgen generates from `otf2/otf2.h` at build time
//! (generated code: its layout tests' unsafe blocks carry no comments).
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    missing_docs
)]

include!(concat!(env!("OUT_DIR"), "/ffi.rs"));
