//! The LogGOPS model (Hoefler, Schneider, Lumsdaine: "LogGOPSim", HPDC
//! 2010), with LogGOPSim's rules, for GOAL schedules. Each rank has CPUs
//! and NICs as separate resources, all times in integer ns:
//!
//! ```text
//! send of s bytes at t:   CPU busy until t + o + (s-1) O; NIC until t + g + (s-1) G
//!                         its first byte reaches the receiver at t + o + L
//! message taken in at t:  CPU busy until t + o + max((s-1) O, (s-1) G); NIC until t + g + (s-1) G
//! computation of c ns:    CPU busy until t + c
//! s <= S: eager (the send ends as it starts); s > S: ends when matched
//! ```
//!
//! So a dissemination of 8-byte messages takes rounds x (2o + L + 7G).
//! `[model.loggops]` gives `L`, `o`, `g`, `G`, `O` (per byte) and `S`;
//! the arithmetic is LogGOPSim's, unsigned and wrapping (a 0-byte message's
//! `(s-1)` is 2^64 - 1 there too).

use super::engine::DagModel;
use crate::machine::{Machine, MachineError};
use crate::units::{Bytes, Time};
use serde::Deserialize;

/// `[model.loggops]`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct Table {
    L: Time,
    o: Time,
    g: Time,
    G: Time,
    #[serde(default)]
    O: Option<Time>,
    #[serde(default)]
    S: Option<Bytes>,
}

/// The parameters, in ns (`G` and `O` per byte) and bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_snake_case)]
pub struct Params {
    /// Wire latency.
    pub L: u64,
    /// CPU overhead of a message, each side.
    pub o: u64,
    /// NIC gap between messages.
    pub g: u64,
    /// NIC time per byte.
    pub G: u64,
    /// CPU time per byte.
    pub O: u64,
    /// The largest eager message.
    pub S: u64,
}

impl Params {
    /// LogGOPSim's defaults (its command line's): L=2500, o=1500, g=1000,
    /// G=6, O=0 ns, S=65535 bytes.
    pub const LOGGOPSIM: Params = Params {
        L: 2500,
        o: 1500,
        g: 1000,
        G: 6,
        O: 0,
        S: 65535,
    };

    /// From `machine`'s `[model.loggops]` (whole ns: LogGOPSim's times are
    /// integers); `S` defaults to the machine's eager threshold.
    pub fn of(machine: &Machine) -> Result<Params, MachineError> {
        let bad = |what: String| MachineError {
            file: machine.file.clone(),
            line: None,
            what,
        };
        let t: Table = machine.model_table("loggops")?.ok_or_else(|| {
            bad("the loggops model needs a [model.loggops] table with L, o, g and G, and optionally O and S (e.g. L = \"2.5us\", o = \"1.5us\", g = \"1us\", G = \"6ns\", O = \"0ns\", S = \"65535B\")".into())
        })?;
        let whole = |name: &str, v: Time| -> Result<u64, MachineError> {
            if v.0 >= 0.0 && v.0.fract() == 0.0 && v.0 < 1e18 {
                Ok(v.0 as u64)
            } else {
                Err(bad(format!(
                    "[model.loggops] {name} = {} ns: LogGOPS times are whole ns, at least 0",
                    v.0
                )))
            }
        };
        Ok(Params {
            L: whole("L", t.L)?,
            o: whole("o", t.o)?,
            g: whole("g", t.g)?,
            G: whole("G", t.G)?,
            O: whole("O", t.O.unwrap_or(Time(0.0)))?,
            S: t.S.unwrap_or(machine.network.eager_threshold).0,
        })
    }
}

impl Params {
    /// The CPU and NIC time a send of `s` bytes occupies from its start:
    /// o + (s-1)O and g + (s-1)G.
    #[inline]
    pub fn send_costs(&self, s: u64) -> (u64, u64) {
        (
            self.o.wrapping_add(bytes_times(s, self.O)),
            self.g.wrapping_add(bytes_times(s, self.G)),
        )
    }

    /// The CPU and NIC time taking in a message of `s` bytes occupies:
    /// o + max((s-1)O, (s-1)G) and g + (s-1)G.
    #[inline]
    pub fn take_in_costs(&self, s: u64) -> (u64, u64) {
        let busy = bytes_times(s, self.O).max(bytes_times(s, self.G));
        (
            self.o.wrapping_add(busy),
            self.g.wrapping_add(bytes_times(s, self.G)),
        )
    }

    /// From a send's start to its first byte at the receiver: o + L.
    #[inline]
    pub fn flight(&self) -> u64 {
        self.o.wrapping_add(self.L)
    }
}

/// The model's state: per rank and CPU, when the CPU is free; per rank
/// and NIC, when it may send and receive again.
pub struct LogGops {
    p: Params,
    cpus: usize,
    nics: usize,
    cpu: Vec<u64>,
    nic_send: Vec<u64>,
    nic_recv: Vec<u64>,
}

impl LogGops {
    /// For `ranks` ranks of `cpus` CPUs and `nics` NICs.
    pub fn new(p: Params, ranks: u32, cpus: u8, nics: u8) -> LogGops {
        let (cpus, nics) = (usize::from(cpus.max(1)), usize::from(nics.max(1)));
        LogGops {
            p,
            cpus,
            nics,
            cpu: vec![0; ranks as usize * cpus],
            nic_send: vec![0; ranks as usize * nics],
            nic_recv: vec![0; ranks as usize * nics],
        }
    }

    #[inline]
    fn c(&self, host: u32, cpu: u8) -> usize {
        host as usize * self.cpus + usize::from(cpu)
    }

    #[inline]
    fn n(&self, host: u32, nic: u8) -> usize {
        host as usize * self.nics + usize::from(nic)
    }
}

/// `(s-1) x per_byte`, wrapping as LogGOPSim's unsigned arithmetic does.
#[inline]
fn bytes_times(s: u64, per_byte: u64) -> u64 {
    s.wrapping_sub(1).wrapping_mul(per_byte)
}

impl DagModel for LogGops {
    #[inline]
    fn cpu_free(&self, host: u32, cpu: u8) -> u64 {
        self.cpu[self.c(host, cpu)]
    }

    #[inline]
    fn send_free(&self, host: u32, cpu: u8, nic: u8) -> u64 {
        self.cpu[self.c(host, cpu)].max(self.nic_send[self.n(host, nic)])
    }

    #[inline]
    fn recv_free(&self, host: u32, cpu: u8, nic: u8) -> u64 {
        self.cpu[self.c(host, cpu)].max(self.nic_recv[self.n(host, nic)])
    }

    #[inline]
    fn calc(&mut self, host: u32, cpu: u8, t: u64, ns: u64) {
        let c = self.c(host, cpu);
        self.cpu[c] = t.wrapping_add(ns);
    }

    #[inline]
    fn send(&mut self, host: u32, cpu: u8, nic: u8, t: u64, size: u64) -> u64 {
        let (c, n) = (self.c(host, cpu), self.n(host, nic));
        let (cpu_busy, nic_busy) = self.p.send_costs(size);
        self.cpu[c] = t.wrapping_add(cpu_busy);
        self.nic_send[n] = t.wrapping_add(nic_busy);
        t.wrapping_add(self.p.flight())
    }

    #[inline]
    fn eager(&self, size: u64) -> bool {
        size <= self.p.S
    }

    #[inline]
    fn take_in(&mut self, host: u32, cpu: u8, nic: u8, t: u64, size: u64) {
        let (c, n) = (self.c(host, cpu), self.n(host, nic));
        let (cpu_busy, nic_busy) = self.p.take_in_costs(size);
        self.cpu[c] = t.wrapping_add(cpu_busy);
        self.nic_recv[n] = t.wrapping_add(nic_busy);
    }

    #[inline]
    fn matched(&mut self, host: u32, cpu: u8, nic: u8, t: u64) {
        let (c, n) = (self.c(host, cpu), self.n(host, nic));
        self.cpu[c] = self.cpu[c].max(t);
        self.nic_send[n] = self.nic_send[n].max(t);
    }

    fn finish(&self, host: u32) -> u64 {
        let c = self.c(host, 0);
        self.cpu[c..c + self.cpus].iter().copied().max().unwrap_or(0)
    }
}
