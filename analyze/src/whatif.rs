//! What-if studies through the replay engine: the traced run is
//! replayed as recorded, then changed (a rank's compute faster, the
//! network slower...), on the same machine and model; the prediction is
//! the traced runtime plus the difference of the two replays, so that
//! what the model gets wrong about the run as a whole cancels out.

use crate::path::{Activity, Segment};
use crate::run::Run;
use crate::spec::Change;
use crate::summary::secs;
use crate::AnalyzeError;
use pnmpi_sim::engine::{replay, Options, Outcome};
use pnmpi_sim::input::{Actor, Measured, Op, OpKind, OpSource};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model;
use pnmpi_sim::units::{Bandwidth, Ns, Time};
use pnmpi_trace::routine::{classify, Coll, RoutineKind};
use serde::Serialize;

/// The run's ops, read again, with every actor's bursts (and local
/// calls) scaled: what the engine replays for a what-if.
struct Scaled {
    inner: Box<dyn OpSource>,
    factor: Vec<f64>,
    /// The sites whose calls' bursts scale (a mask by site id), and by how much.
    sites: Option<(Vec<bool>, f64)>,
}

impl OpSource for Scaled {
    fn actors(&self) -> &[Actor] {
        self.inner.actors()
    }

    fn world_size(&self) -> u32 {
        self.inner.world_size()
    }

    fn routines(&self) -> &[String] {
        self.inner.routines()
    }

    fn next(&mut self, actor: usize, op: &mut Op) -> Result<bool, pnmpi_sim::SimError> {
        if !self.inner.next(actor, op)? {
            return Ok(false);
        }
        let mut factor = self.factor[actor];
        if let Some((mask, f)) = &self.sites {
            if mask.get(op.site as usize) == Some(&true) {
                factor *= f;
            }
        }
        op.gap *= factor;
        // A local call (MPI_Wtime...) is CPU time as the analysis counts it.
        if let OpKind::Local = op.kind {
            op.dur *= factor;
        }
        Ok(true)
    }

    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        self.inner.members(comm, rank)
    }

    fn measured(&self) -> Option<Measured> {
        None
    }

    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    fn keep(&mut self, range: std::ops::Range<usize>) {
        self.inner.keep(range);
    }
}

/// The machine and model the replays run on.
pub struct Setup {
    /// The machine (given, or fitted to the trace).
    pub machine: Machine,
    /// The model's name.
    pub model: String,
}

impl Setup {
    /// Replays `run` with `change` applied (none: as recorded).
    fn replay(&self, run: &Run, change: Option<&Change>) -> Result<Outcome, AnalyzeError> {
        let mut factor = vec![1.0; run.actors.len()];
        let mut sites = None;
        let mut machine = self.machine.clone();
        match change {
            None => {}
            Some(Change::Compute { rank, factor: f }) => {
                for (a, x) in factor.iter_mut().enumerate() {
                    if rank.is_none_or(|r| run.actors[a].rank == r) {
                        *x = *f;
                    }
                }
            }
            Some(Change::ComputeSite { site, factor: f }) => {
                let mask = crate::sites::named(run, site).map_err(|why| {
                    AnalyzeError::Spec(format!(
                        "--what-if \"compute site {site} x{f}\": {why}; use `compute rank R xF` or `compute xF`"
                    ))
                })?;
                sites = Some((mask, *f));
            }
            Some(&Change::Latency(f)) => {
                for level in [&mut machine.network.intra, &mut machine.network.inter] {
                    level.latency = level.latency.map(|t| Time(t.0 * f));
                }
            }
            Some(&Change::Bandwidth(f)) => {
                for level in [&mut machine.network.intra, &mut machine.network.inter] {
                    level.bandwidth = level.bandwidth.map(|b| Bandwidth(b.0 * f));
                }
            }
        }
        let mut m = model::build(&self.model, &machine).map_err(|e| {
            if machine.file == "<built-in>" {
                AnalyzeError::Spec(format!(
                    "{e}; the machine fitted to the trace has no model tables: give --machine FILE with one, or use --model simple"
                ))
            } else {
                AnalyzeError::Sim(e.into())
            }
        })?;
        let mut src = Scaled {
            inner: run.ops_again()?,
            factor,
            sites,
        };
        replay(&mut src, &machine, m.as_mut(), Options::default()).map_err(AnalyzeError::Sim)
    }
}

/// How a routine's predicted wait changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitChange {
    /// Routine.
    pub routine: String,
    /// The wait states it shows (Scalasca's names).
    pub pattern: &'static str,
    /// Predicted wait in the run as recorded, s (all ranks).
    pub before_s: f64,
    /// Predicted wait after the change, s.
    pub after_s: f64,
}

/// A what-if's prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The change.
    pub change: String,
    /// Predicted runtime, s.
    pub runtime_s: f64,
    /// Traced runtime minus predicted, s.
    pub gain_s: f64,
    /// Of the traced runtime, %.
    pub gain_percent: f64,
    /// The changed run's replay, s (before the correction by the traced runtime).
    pub replay_s: f64,
    /// Routines whose wait changed, most shrunk first.
    pub waits: Vec<WaitChange>,
}

/// The wait-state family a routine's waits belong to.
fn family(routine: &str) -> &'static str {
    match classify(routine) {
        RoutineKind::Collective {
            op: Coll::Barrier, ..
        } => "Wait at Barrier",
        RoutineKind::Collective {
            op: Coll::Bcast | Coll::Scatter,
            ..
        } => "Late Broadcast",
        RoutineKind::Collective {
            op: Coll::Reduce | Coll::Gather,
            ..
        } => "Early Reduce",
        RoutineKind::Collective { .. } => "Wait at N x N",
        RoutineKind::Send { .. } => "Late Receiver",
        _ => "Late Sender",
    }
}

/// The baseline replay and the studies made against it.
pub struct Study<'r> {
    run: &'r Run,
    setup: Setup,
    traced: Ns,
    base: Outcome,
}

impl<'r> Study<'r> {
    /// Replays `run` as recorded on `setup`.
    pub fn new(run: &'r Run, setup: Setup) -> Result<Study<'r>, AnalyzeError> {
        let base = setup.replay(run, None)?;
        Ok(Study {
            traced: run.runtime(),
            run,
            setup,
            base,
        })
    }

    /// The replay of the run as recorded, s.
    pub fn baseline_s(&self) -> f64 {
        secs(self.base.runtime)
    }

    /// The machine's and model's names.
    pub fn setup(&self) -> (&str, &str) {
        (&self.setup.machine.name, &self.setup.model)
    }

    /// Predicts `change`.
    pub fn predict(&self, change: &Change) -> Result<Prediction, AnalyzeError> {
        let out = self.setup.replay(self.run, Some(change))?;
        let predicted = self.traced + out.runtime - self.base.runtime;
        let mut waits: Vec<WaitChange> = self
            .base
            .stats
            .routines
            .iter()
            .zip(&out.stats.routines)
            .zip(&self.run.routines)
            .filter(|((b, a), _)| (b.wait - a.wait).abs() > 1e3)
            .map(|((b, a), name)| WaitChange {
                routine: name.clone(),
                pattern: family(name),
                before_s: secs(b.wait),
                after_s: secs(a.wait),
            })
            .collect();
        waits.sort_by(|x, y| (x.after_s - x.before_s).total_cmp(&(y.after_s - y.before_s)));
        let gain = self.traced - predicted;
        Ok(Prediction {
            change: change.to_string(),
            runtime_s: secs(predicted),
            gain_s: secs(gain),
            gain_percent: 100.0 * gain / self.traced.max(1.0),
            replay_s: secs(out.runtime),
            waits,
        })
    }

    /// The `n` changes with the largest predicted gain among: each rank
    /// and each call site on the critical path computing `factor` times
    /// as long (the ranks, and the sites, with the most compute on it, up
    /// to 2n of each; a site's compute is the bursts before its calls),
    /// every rank doing so, latency halved and bandwidth doubled.
    pub fn opportunities(
        &self,
        path: &[Segment],
        n: usize,
        factor: f64,
    ) -> Result<Vec<Prediction>, AnalyzeError> {
        let mut on_path = vec![0.0; self.run.world_size as usize];
        for s in path {
            if let Activity::Compute { .. } = s.what {
                if let Some(t) = on_path.get_mut(self.run.rank(s.actor) as usize) {
                    *t += s.len();
                }
            }
        }
        let mut ranks: Vec<u32> = (0..self.run.world_size)
            .filter(|&r| on_path[r as usize] > 0.0)
            .collect();
        ranks.sort_by(|a, b| on_path[*b as usize].total_cmp(&on_path[*a as usize]));
        ranks.truncate(2 * n);
        let mut changes: Vec<Change> = ranks
            .into_iter()
            .map(|r| Change::Compute {
                rank: Some(r),
                factor,
            })
            .collect();
        changes.extend(
            crate::sites::on_path(self.run, path, 2 * n)
                .into_iter()
                .map(|site| Change::ComputeSite { site, factor }),
        );
        changes.extend([
            Change::Compute { rank: None, factor },
            Change::Latency(0.5),
            Change::Bandwidth(2.0),
        ]);
        let mut out = changes
            .iter()
            .map(|c| self.predict(c))
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by(|a, b| b.gain_s.total_cmp(&a.gain_s));
        out.truncate(n);
        Ok(out)
    }
}

/// A machine fitted to the trace: one node per rank, the latency and
/// bandwidth of its fastest matched messages (see `fit.rs`).
pub fn fit(run: &Run) -> Machine {
    run.fit.machine(run.world_size)
}
