//! LogGOPSim's world: GOAL schedules (its input format, [`mod@parse`]), run by
//! a schedule engine with LogGOPSim's event order ([`engine`]) on the
//! LogGOPS model ([`loggops`]), so that `pnmpi sim replay X.goal` gives
//! LogGOPSim's times on its own schedules; and GOAL written from our
//! traces (`pnmpi trace export --format goal`, [`export`]).

mod cxx_sort;
mod edges;
pub mod engine;
pub mod export;
mod fast;
mod labels;
mod lex;
pub mod loggops;
pub mod parse;
mod split;
mod stmt;

pub use engine::{run, DagModel, Outcome};
pub use loggops::LogGops;
pub use parse::{is_goal, parse, Schedule};
pub use split::parse_file;

#[cfg(test)]
mod tests;
