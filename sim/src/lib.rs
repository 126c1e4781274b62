//! Simulation of MPI runs on a model of another machine: the machine
//! description, the network and collective models, and the trace-driven
//! replay engine behind `pnmpi sim` (PSINS's simulator). The jitter
//! simulator and the `vtime` module use the same machine and models, so
//! the same parameters give the same answer in all three.

pub mod coll;
pub mod machine;
pub mod units;
