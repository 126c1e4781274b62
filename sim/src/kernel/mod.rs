//! The timing kernel: the rules that turn what a rank did into virtual
//! time, in one place for the three simulators, so that they give one answer. `pnmpi sim
//! replay` (the engine), the `vtime` module (one real process per rank)
//! and virtual ranks call these functions, and none of them computes a
//! point-to-point time or a CPU charge on its own: a rule written twice
//! drifts, and then one program gets different answers in different
//! modes.
//!
//! What the kernel owns: the point-to-point rule ([`p2p`]: when a
//! send's CPU is free, eager or rendezvous, when the data moves, when
//! each side completes), the collective rule ([`coll`]: what each member
//! brings, the closed form, the algorithms' messages), the one-sided
//! rule ([`rma`]: when a put, get or accumulate frees the origin and
//! completes), CPU charging
//! ([`cpu`]) and the agreement between the time windows of a run spread
//! over processes ([`window`]). Models stay behind [`crate::model::Model`]; the kernel
//! never names one.

pub mod coll;
pub mod p2p;
pub mod rma;
pub mod window;

use crate::machine::Machine;
use crate::units::Ns;

/// Target time of `used` ns of CPU measured (or recorded) on the host,
/// on `node` of `machine`: scaled by `cpu_factor` (target CPU time per
/// host CPU second), then divided by the node's `cpu_ratio`. The replay
/// charges a trace's gaps with `cpu_factor` 1; vtime and virtual ranks
/// the CPU time they measure with their configured factor. One formula,
/// so the same gap costs the same in every mode, to the bit.
pub fn cpu(machine: &Machine, node: u32, used: Ns, cpu_factor: f64) -> Ns {
    machine.cpu(node, used * cpu_factor)
}

/// How vtime and virtual ranks charge the CPU time they measure on the
/// host between two MPI calls: less what the two clock reads bounding
/// the interval cost (they are the module's, not the application's),
/// then by [`cpu`] with the configured factor. One place, so that both
/// modes charge one interval alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuCharge {
    /// Target CPU time per host CPU second (0: compute ignored).
    pub factor: f64,
    /// CPU ns the two clock reads add to an interval.
    pub bias: u64,
}

impl CpuCharge {
    /// The application's part of an interval of `used` CPU ns measured
    /// between two clock reads.
    pub fn net(&self, used: u64) -> u64 {
        used.saturating_sub(self.bias)
    }

    /// Target time of `net` application CPU ns ([`CpuCharge::net`]) on
    /// `node` of `machine`.
    pub fn target(&self, machine: &Machine, node: u32, net: u64) -> Ns {
        cpu(machine, node, net as f64, self.factor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_scales_by_the_factor_then_divides_by_the_nodes_ratio() {
        let m = Machine::parse(
            "m.toml",
            "[machine]\nnodes = 2\ncpu_ratio = 4\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n",
        )
        .expect("a machine");
        assert_eq!(cpu(&m, 1, 1000.0, 2.0), 500.0);
        assert_eq!(cpu(&m, 0, 1000.0, 0.0), 0.0);
        // The replay charges a trace's gaps with factor 1: the gap over the ratio.
        assert_eq!(cpu(&m, 0, 3.0, 1.0), m.cpu(0, 3.0));
    }

    #[test]
    fn a_measured_interval_loses_its_clock_reads_then_is_charged_as_any_cpu() {
        let m = Machine::parse(
            "m.toml",
            "[machine]\nnodes = 2\ncpu_ratio = 4\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n",
        )
        .expect("a machine");
        let c = CpuCharge {
            factor: 2.0,
            bias: 40,
        };
        assert_eq!(c.net(1040), 1000);
        assert_eq!(c.net(30), 0, "an interval shorter than the reads is none");
        assert_eq!(c.target(&m, 1, c.net(1040)), cpu(&m, 1, 1000.0, 2.0));
    }
}
