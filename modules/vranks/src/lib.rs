//! libvranks: runs an unmodified MPI application as many *virtual ranks*
//! per process, on vtime's virtual clock, as xSim does (Böhm and
//! Engelmann, "xSim: The Extreme-Scale Simulator").
//!
//! `pnmpi run --vranks N` preloads this library. It wraps
//! `__libc_start_main` ([`start`]) to get the program's `main`, starts
//! the native MPI once, and runs `main` N times, each in its own stackful
//! context with its own copy of the program's globals ([`globals`]).
//!
//! The layers, bottom first, each owning its state and using only those
//! below it (`tests/layers.rs` checks it):
//! - [`sched`], the scheduler of contexts (corosensei; stacks from
//!   [`stack`]), which knows nothing of messages;
//! - [`p2p`], point-to-point in virtual time order, and its requests;
//! - [`coll`], collectives as rendezvous timed by the shared models, on
//!   virtual communicators and groups ([`comm`]);
//! - [`dist`], the spread over the P processes of `mpirun -np P`: blocks
//!   of ranks whose engines a conservative time-window protocol keeps in
//!   step;
//! - [`trace`], the tracer, an observer;
//! - [`engine`], the layers composed and lent one step at a time;
//! - [`report`], vtime's report for the N ranks;
//! - [`api`], the MPI routines the program calls (the native MPI only
//!   packs data and reduces it), and [`fortran`], their Fortran binding;
//! - [`start`], which reaches `main` and runs it all.
//!
//! Leaves any layer may use: [`timing`] (the target and its model),
//! [`cart`] (Cartesian maps), [`windows`] (one-sided windows, their
//! epochs and locks), [`one_sided`] (what an operation does at its
//! target, and what crosses processes for it), [`handles`], [`dtype`], [`globals`],
//! [`stack`], [`overflow`] and [`options`].
//!
//! The design, its measured costs and its limits: docs/vranks.md.

mod api;
mod cart;
mod coll;
mod comm;
mod dist;
mod dtype;
mod engine;
mod fortran;
mod globals;
mod handles;
mod one_sided;
mod options;
mod overflow;
mod p2p;
mod report;
mod sched;
mod stack;
mod start;
mod timing;
mod trace;
mod windows;
