//! The arguments of a live run on a model (the `vtime` module's
//! `argument KEY VALUE` lines, which `pnmpi run --vranks` reads too):
//! the target machine, the model and the CPU factor, checked before MPI
//! starts so that a bad value stops the run naming the argument.
//!
//! | key | meaning | default |
//! |---|---|---|
//! | `machine` | a machine file (`sim/machine.example.toml`), shared with `pnmpi sim` | none |
//! | `latency`, `bandwidth` | a uniform network instead of a machine file (`5us`, `10GB/s`) | none |
//! | `eager` | with them: the eager/rendezvous threshold (`64KiB`) | 64 KiB |
//! | `model` | as `pnmpi sim replay --model`: vtime takes `simple` or `loggp` ([`View::PerRank`]), virtual ranks every model ([`View::Global`]) | `simple` |
//! | `cpu_factor` | target CPU time per CPU second measured here | 1 |
//! | `report` | the JSON report rank 0 writes | `vtime-report.json` |

use crate::machine::Machine;
use crate::units::{parse_bandwidth, parse_bytes, parse_time, Bandwidth, Bytes, Time};
use std::path::PathBuf;

/// The models whose answers depend only on the two ends of a message, so
/// that each rank can evaluate them alone, exactly as the replay does.
pub const MODELS: [&str; 2] = ["simple", "loggp"];

/// What the simulator that reads the arguments sees of the messages in
/// flight: which models it can evaluate as the replay does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// One real process per rank (vtime): each rank sees only its own
    /// messages, so a model whose state spans ranks (contention, PMaC,
    /// BCS's strobes) would answer differently in every rank. [`MODELS`]
    /// only.
    PerRank,
    /// One engine sees every message, in virtual-time order (virtual
    /// ranks, also when spread over processes): every model.
    Global,
}

/// Where the target network comes from.
#[derive(Clone, Debug)]
pub enum Target {
    /// A machine file, loaded and validated.
    File(Box<Machine>),
    /// `latency`, `bandwidth` and `eager`: one level, one rank per node.
    Uniform {
        /// End-to-end latency of a message.
        latency: Time,
        /// Bandwidth.
        bandwidth: Bandwidth,
        /// Largest eager message.
        eager: Bytes,
    },
}

/// Everything the arguments choose.
#[derive(Clone, Debug)]
pub struct Config {
    /// The target machine.
    pub target: Target,
    /// The communication model's name.
    pub model: String,
    /// Scale of the measured CPU time (`cpu_factor`).
    pub cpu_factor: f64,
    /// The JSON report's path.
    pub report: PathBuf,
}

impl Config {
    /// The machine for a run of `ranks` ranks.
    pub fn machine(&self, ranks: u32) -> Machine {
        match &self.target {
            Target::File(m) => (**m).clone(),
            Target::Uniform {
                latency,
                bandwidth,
                eager,
            } => Machine::uniform_eager(ranks, *latency, *bandwidth, *eager),
        }
    }

    /// What the report and the table call the machine.
    pub fn machine_name(&self) -> String {
        match &self.target {
            Target::File(m) => m.name.clone(),
            Target::Uniform {
                latency,
                bandwidth,
                eager,
            } => format!(
                "uniform: latency {} ns, bandwidth {} B/s, eager up to {} B",
                latency.0, bandwidth.0, eager.0
            ),
        }
    }
}

/// The configuration from `arg` (the services' `GetArgumentSelf`).
/// `view` says which models the reader can evaluate.
pub fn read(arg: impl Fn(&str) -> Option<String>, view: View) -> Result<Config, String> {
    let get = |key: &str| arg(key).map(|v| v.trim().to_owned());
    let cpu_factor = match get("cpu_factor") {
        None => 1.0,
        Some(text) => match text.parse::<f64>() {
            Ok(f) if f.is_finite() && f >= 0.0 => f,
            _ => {
                return Err(format!(
                    "argument cpu_factor: `{text}` is not a factor such as 1, 0.5 or 2 (target CPU seconds per second measured here)"
                ))
            }
        },
    };
    let latency = get("latency")
        .map(|t| parse_time(&t).map_err(|e| format!("argument latency: {e}")))
        .transpose()?;
    let bandwidth = get("bandwidth")
        .map(|t| parse_bandwidth(&t).map_err(|e| format!("argument bandwidth: {e}")))
        .transpose()?;
    let eager = get("eager")
        .map(|t| parse_bytes(&t).map_err(|e| format!("argument eager: {e}")))
        .transpose()?;
    let target = match get("machine") {
        Some(file) => {
            if latency.is_some() || bandwidth.is_some() || eager.is_some() {
                return Err(format!(
                    "argument machine {file}: give either a machine file or latency and bandwidth (and eager), not both"
                ));
            }
            if file.is_empty() {
                return Err("argument machine: give the machine file's path".into());
            }
            Target::File(Box::new(
                Machine::load(&PathBuf::from(&file)).map_err(|e| format!("machine {e}"))?,
            ))
        }
        None => match (latency, bandwidth) {
            (Some(latency), Some(bandwidth)) => Target::Uniform {
                latency,
                bandwidth,
                eager: eager.unwrap_or(Bytes(65536)),
            },
            (None, None) => {
                return Err(
                    "no target machine: give `argument machine FILE`, or `argument latency 5us` and `argument bandwidth 10GB/s`"
                        .into(),
                )
            }
            (Some(_), None) => return Err("argument latency without bandwidth: give both".into()),
            (None, Some(_)) => return Err("argument bandwidth without latency: give both".into()),
        },
    };
    let model = get("model").unwrap_or_else(|| "simple".into());
    let known = crate::model::MODELS.iter().any(|(n, _, _)| *n == model);
    let offered = match view {
        View::PerRank => MODELS.contains(&model.as_str()),
        View::Global => known,
    };
    if !offered {
        return Err(if known {
            format!(
                "argument model: `{model}` needs a global view of the messages in flight, which a rank of a real run \
                 does not have; vtime offers {} (run the program with `pnmpi run --vranks N`, whose one engine sees \
                 every message, or use `pnmpi sim replay --model {model}` on a trace)",
                MODELS.join(", ")
            )
        } else {
            let names: Vec<&str> = match view {
                View::PerRank => MODELS.to_vec(),
                View::Global => crate::model::MODELS.iter().map(|m| m.0).collect(),
            };
            format!(
                "argument model: unknown model `{model}`; use one of {}",
                names.join(", ")
            )
        });
    }
    let config = Config {
        target,
        model,
        cpu_factor,
        report: PathBuf::from(get("report").unwrap_or_else(|| "vtime-report.json".into())),
    };
    // The model's own parameters ([model.loggp]) are checked now too.
    if let Err(e) = crate::model::build(&config.model, &config.machine(1)) {
        return Err(match &config.target {
            Target::File(_) => format!("machine {e}"),
            Target::Uniform { .. } => format!(
                "argument model {}: {} (give `argument machine FILE` with its table)",
                config.model, e.what
            ),
        });
    }
    Ok(config)
}
