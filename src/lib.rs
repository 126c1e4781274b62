//! libpnmpi: exports every MPI routine of the native MPI and chains the
//! modules named in the configuration in front of it (see README.md).

mod binding;
mod caller;
mod chain;
mod config;
mod dispatch;
mod entry;
mod error;
mod fortran;
mod level;
mod loader;
mod print;
mod services;
mod startup;
mod stubs;
mod unavailable;
mod vranks;
