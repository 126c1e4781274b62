//! libvranks: runs an unmodified MPI application as many *virtual ranks*
//! per process, on vtime's virtual clock, as xSim does (Böhm and
//! Engelmann, "xSim: The Extreme-Scale Simulator").
//!
//! `pnmpi run --vranks N` preloads this library. It wraps
//! `__libc_start_main` ([`start`]) to get the program's `main`, starts
//! the native MPI once, and runs `main` N times, each in its own stackful
//! context ([`engine`], corosensei; stacks from [`stack`]) with its own
//! copy of the program's globals ([`globals`]). The MPI routines the
//! program calls are this library's ([`api`]): point-to-point in virtual
//! time order ([`p2p`]), collectives as rendezvous timed by the shared
//! models ([`coll`]), virtual communicators and groups ([`comm`]); the
//! native MPI only packs data and reduces it. At the end, vtime's report
//! covers the N ranks ([`report`]). Under `mpirun -np P` the ranks are
//! spread over the P processes in blocks, and a conservative time-window
//! protocol over the native MPI keeps their engines in step ([`dist`]).
//!
//! The design, its measured costs and its limits: docs/vtime.md,
//! "Virtual ranks".

mod api;
mod coll;
mod comm;
mod dist;
mod dtype;
mod engine;
mod fortran;
mod globals;
mod handles;
mod options;
mod overflow;
mod p2p;
mod report;
mod stack;
mod start;
mod trace;
