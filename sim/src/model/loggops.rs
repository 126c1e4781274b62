//! LogGOPS for traces (`--model loggops`): LogGOPSim's costs
//! ([`LogGopsParams`], one definition for GOAL schedules and traces)
//! on the replay engine's calls, which block as the traced program did.
//!
//! ```text
//! send posted at t:   inject = max(t, nic_free[src]); CPU free at inject + o + (s-1)O
//!                     nic_free[src] = inject + g + (s-1)G
//! its first byte:     ready + L (ready: the end of the send's overhead, inject + o when O = 0)
//! eager (s <= S):     the send completes at its overhead
//! rendezvous:         the data moves once the receive is posted too
//! receive completes:  max(arrival, post) + o + max((s-1)O, (s-1)G)
//! collective:         steps(P) x (2o + L + (s-1)G)
//! ```
//!
//! On a GOAL schedule the same parameters give LogGOPSim's times exactly
//! (`pnmpi sim replay X.goal`); on a trace the receiver's CPU is the
//! replay's (a receive is taken in by the call that completes it).

use super::api::{CollCall, Model, Msg, Transfer};
use super::closed_form::collective_steps;
use super::loggops_params::LogGopsParams;
use crate::machine::{Machine, MachineError};
use crate::units::Ns;

/// The LogGOPS model.
pub struct LogGops {
    machine: Machine,
    p: LogGopsParams,
    nic_free: Vec<Ns>,
}

/// Builds it from `[model.loggops]`.
pub fn build(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    Ok(Box::new(LogGops {
        p: LogGopsParams::of(machine)?,
        machine: machine.clone(),
        nic_free: Vec::new(),
    }))
}

impl Model for LogGops {
    fn name(&self) -> &'static str {
        "loggops"
    }

    fn eager(&self, m: &Msg) -> bool {
        m.bytes <= self.p.S
    }

    fn send_overhead(&mut self, m: &Msg, at: Ns) -> Ns {
        let src = m.src as usize;
        if self.nic_free.len() <= src {
            self.nic_free.resize(src + 1, 0.0);
        }
        let inject = at.max(self.nic_free[src]);
        let (cpu, nic) = self.p.send_costs(m.bytes);
        self.nic_free[src] = inject + nic as Ns;
        inject + cpu as Ns
    }

    fn transfer(&mut self, _m: &Msg, ready: Ns) -> Transfer {
        Transfer {
            start: ready,
            end: ready + self.p.L as Ns,
        }
    }

    fn recv_done(&mut self, m: &Msg, arrived: Ns, posted: Ns) -> Ns {
        arrived.max(posted) + self.p.take_in_costs(m.bytes).0 as Ns
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        // Send overhead and flight (o + L), then the taking in.
        let step = self.p.flight() + self.p.take_in_costs(c.shape.bytes).0;
        ready + collective_steps(&self.machine, c) * step as Ns
    }

    /// Its only state is each sending rank's NIC, updated by that rank's
    /// own sends in their order; every message and collective step takes
    /// at least L.
    fn lookahead(&self) -> Ns {
        self.p.L as Ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::Shape;
    use pnmpi_trace::routine::Coll;

    fn model() -> LogGops {
        let machine = Machine::parse(
            "m.toml",
            "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n\
             [model.loggops]\nL = \"2500ns\"\no = \"1500ns\"\ng = \"1000ns\"\nG = \"6ns\"\nO = \"1ns\"\nS = \"1000B\"\n",
        )
        .unwrap();
        LogGops {
            p: LogGopsParams::of(&machine).unwrap(),
            machine,
            nic_free: Vec::new(),
        }
    }

    #[test]
    fn a_message_costs_o_and_o_per_byte_to_send_l_and_o_with_the_larger_per_byte_to_take_in() {
        let mut m = model();
        let msg = Msg::between(0, 1, 8, |r| r);
        // CPU: o + 7 O; the NIC is busy g + 7 G for the next send.
        assert_eq!(m.send_overhead(&msg, 100.0), 100.0 + 1500.0 + 7.0);
        assert_eq!(m.send_overhead(&msg, 200.0), 100.0 + 1000.0 + 42.0 + 1507.0);
        assert_eq!(m.transfer(&msg, 1607.0).end, 1607.0 + 2500.0);
        // Taken in: o + max(7 O, 7 G).
        assert_eq!(m.recv_done(&msg, 4107.0, 0.0), 4107.0 + 1500.0 + 42.0);
        assert!(m.eager(&msg) && !m.eager(&Msg::between(0, 1, 1001, |r| r)));
        assert_eq!(m.lookahead(), 2500.0);
    }

    #[test]
    fn a_collective_step_is_two_o_l_and_the_bytes() {
        let mut m = model();
        let nodes = [0, 1, 0, 1];
        let c = CollCall {
            shape: Shape {
                coll: Coll::Allreduce,
                size: 4,
                me: 0,
                root: 0,
                bytes: 8,
            },
            nodes: &nodes,
        };
        // Two steps of a binomial tree over 4.
        assert_eq!(m.collective(&c, 0.0), 2.0 * (2.0 * 1500.0 + 2500.0 + 42.0));
    }
}
