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

mod bcs;
mod contention;
mod loggops;
mod loggp;
pub mod pmac;
mod simple;

use crate::kernel::coll::shape::Shape;
use crate::machine::{Machine, MachineError};
use crate::units::Ns;

/// A message between two tasks, as a model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Msg {
    /// World rank of the sender.
    pub src: u32,
    /// World rank of the receiver.
    pub dst: u32,
    /// Node of the sender.
    pub src_node: u32,
    /// Node of the receiver.
    pub dst_node: u32,
    /// Payload size.
    pub bytes: u64,
}

impl Msg {
    /// `bytes` from world rank `src` to `dst`, their nodes given by
    /// `node` (the replay's mapping, or vtime's).
    pub fn between(src: u32, dst: u32, bytes: u64, node: impl Fn(u32) -> u32) -> Msg {
        Msg {
            src,
            dst,
            src_node: node(src),
            dst_node: node(dst),
            bytes,
        }
    }
}

/// When a message's transfer held the network.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    /// Resources granted: the wait for resources is `start - ready`.
    pub start: Ns,
    /// The last byte arrived at the receiver.
    pub end: Ns,
}

/// A collective call, once every member has entered it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollCall<'a> {
    /// The collective and its sizes (`me` and `root` are unused here).
    pub shape: Shape,
    /// Nodes of the members, in communicator order.
    pub nodes: &'a [u32],
}

/// A communication model. `Send`, so that a process-wide model (the
/// `vtime` module's, behind a lock) may be used from whichever thread
/// calls MPI.
pub trait Model: Send {
    /// The name users give with `--model`.
    fn name(&self) -> &'static str;

    /// Whether `m` is sent eagerly (the sender does not wait for the
    /// receive), or with a rendezvous.
    fn eager(&self, m: &Msg) -> bool;

    /// The sender posts `m` at `at`; returns when its CPU is free again
    /// (after the send overhead). An eager message is ready to move then.
    fn send_overhead(&mut self, _m: &Msg, at: Ns) -> Ns {
        at
    }

    /// A rendezvous whose send was posted (overhead done) at `send` and
    /// whose receive was posted at `recv`: when the data may start moving.
    fn rendezvous_ready(&mut self, _m: &Msg, send: Ns, recv: Ns) -> Ns {
        send.max(recv)
    }

    /// Moves `m`, ready at `ready`.
    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer;

    /// When the receive completes, its data having arrived at `arrived`
    /// and the receive having been posted at `posted`.
    fn recv_done(&mut self, _m: &Msg, arrived: Ns, posted: Ns) -> Ns {
        arrived.max(posted)
    }

    /// The closed-form time of a collective whose last member entered at
    /// `ready`: when it completes on every member.
    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns;

    /// When a call that completed at `t` returns to the application (a
    /// globally strobed runtime returns at the next strobe).
    fn resume(&self, t: Ns) -> Ns {
        t
    }

    /// Whether [`resume`](Self::resume) returns its argument: a wait then
    /// ends at the same time whether it blocks before its requests
    /// complete or finds them complete, so the engine may run it before
    /// earlier events of other ranks (a parallel replay saves a window).
    fn resumes_at_once(&self) -> bool {
        true
    }

    /// For a parallel replay: a lower bound, ns, of every message's
    /// transfer (`end - ready`) and of every collective of two or more
    /// members (`collective(..) - ready`), offered only by models whose
    /// answers do not depend on the order of calls across ranks (no
    /// state, or state per sending rank). 0, the default, means the model
    /// cannot replay in parallel and give the serial answer.
    fn lookahead(&self) -> Ns {
        0.0
    }
}

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
];

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

/// How many point-to-point message times the analytic form of collective
/// `c` takes: 1, P-1 or ceil(log2 P), from the machine's `[collectives]`
/// (an algorithmic choice never reaches a model; log is the fallback).
pub fn collective_steps(machine: &Machine, c: &CollCall<'_>) -> f64 {
    use crate::machine::{CollChoice, Scaling};
    let p = c.shape.size;
    if p <= 1 {
        return 0.0;
    }
    let scaling = match machine.collective(c.shape.coll) {
        CollChoice::Analytic(s) => *s,
        CollChoice::Algorithmic(_) => Scaling::Log,
    };
    match scaling {
        Scaling::Constant => 1.0,
        Scaling::Linear => f64::from(p - 1),
        Scaling::Log => f64::from(crate::kernel::coll::shape::log2_ceil(p)),
    }
}

/// PSINS's simple analytic collective time: [`collective_steps`] messages
/// of the call's size at the level its members span.
pub fn simple_collective(machine: &Machine, c: &CollCall<'_>) -> Ns {
    let level = if within_one_node(c) {
        &machine.network.intra
    } else {
        &machine.network.inter
    };
    collective_steps(machine, c) * level.cost_on_wire(c.shape.bytes, machine.network.envelope.0)
}

/// Whether a collective's members all sit on one node (its messages
/// then stay within the node).
pub fn within_one_node(c: &CollCall<'_>) -> bool {
    c.nodes.iter().all(|&n| n == c.nodes[0])
}
