//! The pnmpi trace format and its tools: what the `tracer` module writes,
//! and what `pnmpi trace`, `pnmpi sim` and the OTF2 crate read.
//!
//! The `tracer` module writes one [rank file](rank) per MPI rank while the
//! application runs ([`rank_writer`]); [`merge`] consolidates them into one
//! compact merged trace (`.pnt`, [`stream`]). Both are read streamed, an
//! event at a time, through one trait ([`source::StreamedTrace`]: a
//! [`folder::FolderReader`] over a tracer folder, a
//! [`stream::MergedReader`] over a `.pnt`), so that a trace larger than
//! memory can be summarised ([`stats`]), listed ([`dump`]), exported to
//! the Chrome/Perfetto JSON format ([`chrome`]) or to SimGrid's
//! time-independent replay format ([`simgrid`]), and replayed by
//! `pnmpi-sim`; `pnmpi-otf2` exports and reads OTF2 through the same
//! trait. `docs/trace-format.md` specifies the bytes.
//!
//! This crate has no MPI dependency, so that traces can be read anywhere,
//! and every decoder returns an error naming the file and byte offset of
//! bad input rather than panicking.

pub mod chrome;
pub mod civil;
pub mod container;
pub mod counts;
mod divisor;
pub mod dump;
pub mod error;
pub mod fields;
pub mod folder;
mod frame;
mod history;
mod live_requests;
pub mod merge;
pub mod messages;
mod pnt_index;
pub mod rank;
pub mod rank_reader;
pub mod rank_writer;
mod read_ahead;
pub mod repeats;
pub mod rma;
pub mod rma_stats;
pub mod routine;
pub mod simgrid;
pub mod sites;
pub mod source;
pub mod stats;
pub mod stream;
pub mod trace;
pub mod varint;

pub use error::{Error, Result};
pub use trace::Trace;
