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
use crate::model::LogGopsParams;

/// The model's state: per rank and CPU, when the CPU is free; per rank
/// and NIC, when it may send and receive again.
pub struct LogGops {
    p: LogGopsParams,
    cpus: usize,
    nics: usize,
    cpu: Vec<u64>,
    nic_send: Vec<u64>,
    nic_recv: Vec<u64>,
}

impl LogGops {
    /// For `ranks` ranks of `cpus` CPUs and `nics` NICs.
    pub fn new(p: LogGopsParams, ranks: u32, cpus: u8, nics: u8) -> LogGops {
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
