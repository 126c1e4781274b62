//! LogGOPS's parameters (`[model.loggops]`), one definition for the
//! GOAL schedules' engine ([`crate::goal`]) and the traces' model
//! (`--model loggops`), so that both charge a message alike.

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
pub struct LogGopsParams {
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

impl LogGopsParams {
    /// LogGOPSim's defaults (its command line's): L=2500, o=1500, g=1000,
    /// G=6, O=0 ns, S=65535 bytes.
    pub const LOGGOPSIM: LogGopsParams = LogGopsParams {
        L: 2500,
        o: 1500,
        g: 1000,
        G: 6,
        O: 0,
        S: 65535,
    };

    /// From `machine`'s `[model.loggops]` (whole ns: LogGOPSim's times are
    /// integers); `S` defaults to the machine's eager threshold.
    pub fn of(machine: &Machine) -> Result<LogGopsParams, MachineError> {
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
        Ok(LogGopsParams {
            L: whole("L", t.L)?,
            o: whole("o", t.o)?,
            g: whole("g", t.g)?,
            G: whole("G", t.G)?,
            O: whole("O", t.O.unwrap_or(Time(0.0)))?,
            S: t.S.unwrap_or(machine.network.eager_threshold).0,
        })
    }
}

impl LogGopsParams {
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

/// `(s-1) x per_byte`, wrapping as LogGOPSim's unsigned arithmetic does.
#[inline]
fn bytes_times(s: u64, per_byte: u64) -> u64 {
    s.wrapping_sub(1).wrapping_mul(per_byte)
}
