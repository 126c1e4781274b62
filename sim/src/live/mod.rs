//! What a live run on a model shares with the replay: its arguments
//! ([`target`]) and its report ([`report`]). The `vtime` module (one
//! process per rank) and `libvranks` (many virtual ranks per process)
//! both read and write these, so their runs are set up and reported alike.

pub mod report;
pub mod target;
