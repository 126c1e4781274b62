//! BCS-MPI's globally strobed execution (Fernandez, Petrini, Frachtenberg):
//! time is cut into slices of `[model.bcs] time_slice`; a global strobe
//! starts each. Communication posted during slice i is scheduled at the
//! next strobe and performed in slice i+1, chunked over several slices if
//! it does not fit in one; a blocking call resumes at the start of slice
//! i+2 (1.5 slices per blocking call on average). Nonblocking calls
//! overlap with computation: only their wait blocks. Collectives run in
//! the slice's microphases (barrier and broadcast, then reduce): entered
//! by every member in slice i, done at the end of slice i+1 (or later if
//! their data needs more slices).
//!
//! ```text
//! slice(t)  = floor(t / S)
//! k(m)      = max(1, ceil((latency + s / bandwidth) / S))     slices the data needs
//! transfer  : ready = max(send posted, receive posted)        (all messages are scheduled)
//!             start = (slice(ready) + 1) S;  end = start + k S
//! collective: end = (slice(last entry) + 1 + k) S, k from the simple model's collective time
//! resume(t) = ceil(t / S) S
//! ```

use super::api::{CollCall, Model, Msg, Transfer};
use crate::machine::{Machine, MachineError};
use crate::units::{Ns, Time};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    time_slice: Time,
}

/// The BCS model.
pub struct Bcs {
    machine: Machine,
    slice: Ns,
}

/// Builds it from `[model.bcs]`.
pub fn build(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    machine.require_network("bcs")?;
    let p: Params = machine.model_table("bcs")?.ok_or_else(|| MachineError {
        file: machine.file.clone(),
        line: None,
        what: "the bcs model needs a [model.bcs] table with time_slice (e.g. time_slice = \"500us\")".into(),
    })?;
    if p.time_slice.0 <= 0.0 {
        return Err(MachineError {
            file: machine.file.clone(),
            line: None,
            what: "[model.bcs] time_slice must be above 0".into(),
        });
    }
    Ok(Box::new(Bcs {
        machine: machine.clone(),
        slice: p.time_slice.0,
    }))
}

impl Bcs {
    /// The strobe that starts the slice after the one holding `t`.
    fn next_strobe(&self, t: Ns) -> Ns {
        ((t / self.slice).floor() + 1.0) * self.slice
    }

    /// Slices needed to move `cost` ns of data.
    fn slices(&self, cost: Ns) -> f64 {
        (cost / self.slice).ceil().max(1.0)
    }
}

impl Model for Bcs {
    fn name(&self) -> &'static str {
        "bcs"
    }

    /// Every message is scheduled globally: none leaves before the strobe.
    fn eager(&self, _m: &Msg) -> bool {
        false
    }

    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer {
        let cost = self.machine.p2p_cost(m.src_node, m.dst_node, m.bytes);
        let start = self.next_strobe(ready);
        Transfer {
            start,
            end: start + self.slices(cost) * self.slice,
        }
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        let data = super::closed_form::simple_collective(&self.machine, c);
        self.next_strobe(ready) + self.slices(data) * self.slice
    }

    fn resume(&self, t: Ns) -> Ns {
        (t / self.slice).ceil() * self.slice
    }

    fn resumes_at_once(&self) -> bool {
        false
    }
}
