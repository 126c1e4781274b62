//! The target the ranks run on: the machine, where each rank runs, the
//! communication model (with its state, which the messages of every rank
//! share) and the CPU factor. Every time is the kernel's
//! ([`pnmpi_sim::kernel`]); this only holds what it needs.

use pnmpi_sim::kernel::coll::{closed_form, Shape};
use pnmpi_sim::kernel::CpuCharge;
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model::{Model, Msg};
use pnmpi_sim::units::Ns;

/// The machine, the mapping, the model and the CPU factor.
pub struct Timing {
    model: Box<dyn Model>,
    machine: Machine,
    node_of: Vec<u32>,
    /// How the CPU time measured here is charged (factor, clock reads).
    charge: CpuCharge,
    /// The model's lookahead: a rendezvous envelope arrives this long
    /// after its send is posted.
    lookahead: Ns,
}

impl Timing {
    /// `model` on `machine`, ranks on `node_of`.
    pub fn new(model: Box<dyn Model>, machine: Machine, node_of: Vec<u32>, cpu_factor: f64) -> Timing {
        let lookahead = model.lookahead();
        Timing {
            model,
            machine,
            node_of,
            charge: CpuCharge {
                factor: cpu_factor,
                bias: pnmpi_sdk::clock::thread_cpu_read_cost(),
            },
            lookahead,
        }
    }

    /// The model, to time a message or a collective.
    pub fn model(&mut self) -> &mut dyn Model {
        &mut *self.model
    }

    /// The machine.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// World rank `r`'s node.
    pub fn node(&self, r: u32) -> u32 {
        self.node_of[r as usize]
    }

    /// `bytes` from world rank `src` to `dst`, as the model sees them.
    pub fn msg(&self, src: u32, dst: u32, bytes: u64) -> Msg {
        Msg::between(src, dst, bytes, |r| self.node_of[r as usize])
    }

    /// The kernel's closed-form time of collective `shape` whose last member
    /// entered at `latest`, its members on `nodes` (`None`: the world's).
    pub fn collective(&mut self, shape: Shape, nodes: Option<&[u32]>, latest: Ns) -> Ns {
        let nodes = nodes.unwrap_or(&self.node_of);
        closed_form(&mut *self.model, shape, nodes, latest)
    }

    /// The model's lookahead (its least latency between two ranks).
    pub fn lookahead(&self) -> Ns {
        self.lookahead
    }

    /// The CPU factor (0: compute ignored).
    pub fn cpu_factor(&self) -> f64 {
        self.charge.factor
    }

    /// The target time of `used` ns of CPU measured here on world rank
    /// `r`'s node, less what the two clock reads around it cost.
    pub fn compute(&self, r: u32, used: u64) -> Ns {
        self.charge
            .target(&self.machine, self.node(r), self.charge.net(used))
    }
}
