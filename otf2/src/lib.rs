//! OTF2, the trace format of Score-P, Vampir and Scalasca, in and out of
//! pnmpi traces, through the reference library (libotf2, bound with
//! bindgen at build time: the format is never written by hand).
//!
//! - [`export::export`] writes a pnmpi trace as an OTF2 archive
//!   (`pnmpi trace export --format otf2`), and [`export::export_marked`]
//!   with the analysis's wait states and critical path as metrics;
//! - [`import::Otf2Trace`] reads any OTF2 archive as a pnmpi
//!   [`StreamedTrace`](pnmpi_trace::source::StreamedTrace), so that
//!   `pnmpi sim replay`, `trace stats` and the exports read it.
//!
//! - [`open()`] tells which trace a path holds (OTF2, a tracer folder, a
//!   merged `.pnt`) and opens it: every command reads its input there.
//!
//! All `unsafe` code of the crate is in [`writer`], the reader, the
//! callbacks and the error capture: the rest is safe.

mod assembler;
mod callbacks;
mod defs;
pub mod export;
pub mod ffi;
pub mod import;
mod metrics;
pub mod names;
pub mod open;
mod reader;
mod rma_export;
mod rma_import;
mod status;
mod unusable;
mod user;
pub mod writer;

pub use export::{export, export_marked, Exported};
pub use import::{is_otf2, Otf2Trace};
pub use open::{open, Opened};
