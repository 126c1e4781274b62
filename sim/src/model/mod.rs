//! Communication models: the black box PSINS puts between the engine and
//! the machine. The engine knows *when* a message may move (its sender
//! posted it; for a rendezvous, its receiver too) and asks the model
//! *how long* it takes, when resources allow it to start, and what the
//! CPU overheads are. A model may keep state (buses in use, messages in
//! flight); the engine calls it in nondecreasing simulated time, except
//! for receives posted with a wildcard, which are matched when their
//! completion names the source.
//!
//! To add a model: write a type implementing [`Model`] in a file of this
//! folder, read its parameters from `[model.NAME]` with
//! [`Machine::model_table`], and add one line to [`MODELS`]. The engine
//! never names a model. `docs/sim.md` walks through an example.

mod api;
mod bcs;
mod closed_form;
mod cm02;
mod contention;
mod loggops;
mod loggops_params;
mod loggp;
pub mod pmac;
mod simple;

pub use api::{CollCall, Model, Msg, Transfer};
pub use closed_form::{collective_steps, simple_collective, within_one_node};
pub use loggops_params::LogGopsParams;

use crate::machine::{Machine, MachineError};

/// A model's constructor: from the machine, or an error naming the
/// missing or bad parameter.
type Build = fn(&Machine) -> Result<Box<dyn Model>, MachineError>;

/// Every model, by name. The first is the default.
pub const MODELS: &[(&str, &str, Build)] = &[
    (
        "simple",
        "PSINS simple: latency + bytes/bandwidth, infinite resources (the lower bound)",
        simple::build,
    ),
    (
        "loggp",
        "LogGP: L, o, g, G from [model.loggp], eager below the threshold, rendezvous above",
        loggp::build,
    ),
    (
        "loggops",
        "LogGOPS: LogGOPSim's L, o, g, G, O, S from [model.loggops]; GOAL schedules run under it with LogGOPSim's rules",
        loggops::build,
    ),
    (
        "bus",
        "PSINS contention, bus-only: [network] buses shared by messages between nodes",
        contention::build_bus,
    ),
    (
        "inlink",
        "PSINS contention, incoming-link-only: links_in per receiving node",
        contention::build_in,
    ),
    (
        "outlink",
        "PSINS contention, outgoing-link-only: links_out per sending node",
        contention::build_out,
    ),
    (
        "pmac",
        "PSINS PMaC: bandwidth divided by the load on links and buses; fitted collective curves from [model.pmac]",
        pmac::build,
    ),
    (
        "bcs",
        "BCS-MPI: globally strobed time slices of [model.bcs] time_slice, 1.5 slices per blocking call",
        bcs::build,
    ),
    (
        "cm02",
        "SimGrid's CM02: messages as flows sharing the links of [network.topology] by max-min fairness (smpirun's answer with the export's options)",
        cm02::build,
    ),
];

/// Why a simulator that times each message when it is sent, and never
/// steps the flows of a model whose messages share links, cannot run
/// `model`, `because` of what it is: `None` when it can (every model
/// without flows). `pnmpi sim replay` of a trace and virtual ranks step
/// them.
pub fn unshared(model: &mut dyn Model, because: &str) -> Option<String> {
    model.flows().is_some().then(|| {
        format!(
            "the {} model shares the network's links among the messages of every rank, and {because}: \
             run the ranks as virtual ranks (`pnmpi run --vranks N`) or trace the run and replay the trace with \
             `pnmpi sim replay`, whose engines step the flows, or give another model",
            model.name()
        )
    })
}

/// Builds model `name` for `machine`.
pub fn build(name: &str, machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    match MODELS.iter().find(|(n, _, _)| *n == name) {
        Some((_, _, b)) => b(machine),
        None => Err(MachineError {
            file: "--model".into(),
            line: None,
            what: format!(
                "unknown model `{name}`; use one of {}",
                MODELS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}
