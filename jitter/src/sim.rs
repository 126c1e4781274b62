//! jitSim's simulation: tasks placed in noise timelines compute a work
//! quantum per phase (meeting noise, figure 2), then synchronise in a
//! barrier over a complete k-ary tree (gather to the root, then release,
//! figure 6), whose sends and receives cost CPU time that can meet noise
//! too. The slowest task sets each phase's end; the others wait (figure
//! 3). The slowdown is the run's time over the same run without noise.
//!
//! Tasks are kept as flat arrays and the barrier walks the tree's heap
//! layout twice per phase, so a phase costs O(N): 2^20 tasks x 100 phases
//! take seconds.

use crate::timeline::{Cursor, Timeline};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// Where tasks start in the traces (section 3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// Each task at its own random point of the trace (uniform in time):
    /// nodes' noise is not synchronised.
    Unsync,
    /// Every task at one random point: all noise strikes at once.
    Sync,
    /// Each task at the start of a random high-priority window of a
    /// co-scheduler (windows of `hi + lo` ns from the trace's start): the
    /// co-scheduled noise sits in the low-priority windows, so it strikes
    /// all tasks together; what the co-scheduler did not catch does not.
    Cosched {
        /// High-priority window, ns.
        hi: u64,
        /// Low-priority window, ns.
        lo: u64,
    },
}

impl Start {
    /// Its name, as on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Start::Unsync => "unsync",
            Start::Sync => "sync",
            Start::Cosched { .. } => "cosched",
        }
    }
}

/// One noise trace, ready to simulate on.
#[derive(Clone, Debug)]
pub struct NoiseSource {
    /// Its name in reports (the file).
    pub name: String,
    /// The timeline.
    pub timeline: Timeline,
    /// Where each row's free time starts (the positions "start at row i"
    /// means), ns.
    pub row_starts: Vec<u64>,
}

impl NoiseSource {
    /// From `(jitter, gap)` rows in ns; `None` if no free time.
    pub fn from_rows(name: &str, rows: &[(u64, u64)]) -> Option<NoiseSource> {
        let timeline = Timeline::from_rows(rows)?;
        let mut row_starts = Vec::with_capacity(rows.len());
        let mut at = 0;
        for &(j, g) in rows {
            row_starts.push(at + j);
            at += j + g;
        }
        Some(NoiseSource {
            name: name.to_owned(),
            timeline,
            row_starts,
        })
    }
}

impl NoiseSource {
    /// From `(start, duration)` events in ns; its "rows" start where each
    /// event ends. `None` if no free time.
    pub fn from_events(name: &str, events: &[(u64, u64)]) -> Option<NoiseSource> {
        let timeline = Timeline::from_events(events)?;
        let row_starts = timeline.ends().iter().map(|&e| e % timeline.period()).collect();
        Some(NoiseSource {
            name: name.to_owned(),
            timeline,
            row_starts,
        })
    }
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Params {
    /// Work per compute phase, ns.
    pub quantum: u64,
    /// Phases.
    pub phases: u32,
    /// CPU time of a barrier send, ns (0: free).
    pub send: u64,
    /// CPU time of a barrier receive, ns (0: free).
    pub recv: u64,
    /// Children per tree node (2: the paper's binary tree).
    pub arity: u32,
    /// Random seed: the same seed gives the same answer.
    pub seed: u64,
    /// Explicit starting rows, task i at `start[i % len]` (worked
    /// examples); empty: the mode chooses.
    pub start: Vec<usize>,
}

/// One simulated run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// Tasks.
    pub tasks: u32,
    /// Time of the run with noise, ns.
    pub time_ns: u64,
    /// Time of the same run without noise, ns.
    pub quiet_ns: u64,
    /// (time - quiet) / quiet, %.
    pub slowdown_pct: f64,
    /// Mean wait at the barriers per task and phase, ns (figure 3).
    pub mean_wait_ns: f64,
}

/// The tasks' state, one entry per task.
struct Tasks<'a> {
    sources: &'a [NoiseSource],
    cursor: Vec<Cursor>,
    clock: Vec<u64>,
    /// Gather: when a task's message reaches its parent; release: when
    /// its parent's message reaches it.
    msg: Vec<u64>,
    waited: u64,
}

impl Tasks<'_> {
    /// Task `i` does `work` of CPU.
    #[inline]
    fn work(&mut self, i: usize, work: u64) {
        let tl = &self.sources[i % self.sources.len()].timeline;
        self.clock[i] += tl.work(&mut self.cursor[i], work);
    }

    /// Task `i` waits until `t`.
    #[inline]
    fn wait_until(&mut self, i: usize, t: u64) {
        if t > self.clock[i] {
            let d = t - self.clock[i];
            self.waited += d;
            let tl = &self.sources[i % self.sources.len()].timeline;
            tl.skip(&mut self.cursor[i], d);
            self.clock[i] = t;
        }
    }

    /// One barrier over the k-ary tree in heap order (children of i:
    /// k i + 1 ..= k i + k): children report before their parent reads,
    /// in child order; then the release goes down the same way.
    fn barrier(&mut self, p: &Params) {
        let n = self.clock.len();
        let k = p.arity.max(1) as usize;
        for i in (0..n).rev() {
            let first = k * i + 1;
            for c in first..(first + k).min(n) {
                let at = self.msg[c];
                self.wait_until(i, at);
                self.work(i, p.recv);
            }
            if i > 0 {
                self.work(i, p.send);
                self.msg[i] = self.clock[i];
            }
        }
        for i in 0..n {
            if i > 0 {
                let at = self.msg[i];
                self.wait_until(i, at);
                self.work(i, p.recv);
            }
            let first = k * i + 1;
            for c in first..(first + k).min(n) {
                self.work(i, p.send);
                self.msg[c] = self.clock[i];
            }
        }
    }
}

/// Where each of `tasks` tasks starts in its source (task i in source
/// i mod len), ns into the period: by `mode`, or at rows `start` (task i
/// at `start[i mod len]`) when given.
pub fn placement(sources: &[NoiseSource], tasks: usize, mode: Start, seed: u64, start: &[usize]) -> Vec<u64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let shared: Vec<u64> = sources
        .iter()
        .map(|s| rng.random_range(0..s.timeline.period()))
        .collect();
    (0..tasks)
        .map(|i| {
            let s = &sources[i % sources.len()];
            if !start.is_empty() {
                return s.row_starts[start[i % start.len()] % s.row_starts.len()];
            }
            match mode {
                Start::Unsync => rng.random_range(0..s.timeline.period()),
                Start::Sync => shared[i % sources.len()],
                Start::Cosched { hi, lo } => {
                    let windows = (s.timeline.period() / (hi + lo).max(1)).max(1);
                    rng.random_range(0..windows) * (hi + lo)
                }
            }
        })
        .collect()
}

fn run_phases(sources: &[NoiseSource], start: Vec<Cursor>, p: &Params) -> (u64, u64) {
    let n = start.len();
    let mut t = Tasks {
        sources,
        cursor: start,
        clock: vec![0; n],
        msg: vec![0; n],
        waited: 0,
    };
    for _ in 0..p.phases {
        for i in 0..n {
            t.work(i, p.quantum);
        }
        t.barrier(p);
    }
    (t.clock.iter().copied().max().unwrap_or(0), t.waited)
}

/// Simulates `tasks` tasks for `p.phases` phases on `sources` (task i on
/// source i mod len).
pub fn simulate(sources: &[NoiseSource], tasks: u32, mode: Start, p: &Params) -> Outcome {
    let start = placement(sources, tasks as usize, mode, p.seed, &p.start)
        .into_iter()
        .enumerate()
        .map(|(i, pos)| sources[i % sources.len()].timeline.at(pos))
        .collect();
    let (time, waited) = run_phases(sources, start, p);
    // The same run without noise. Every phase from the second on takes
    // the same time (each ends with the release's fixed pattern after the
    // root's gather), so two phases give all of them.
    let quiet_source = NoiseSource::from_rows("quiet", &[(0, u64::MAX / 4)]).expect("free time");
    let quiet_run = |phases| {
        let q = Params { phases, ..p.clone() };
        run_phases(
            std::slice::from_ref(&quiet_source),
            vec![quiet_source.timeline.at(0); tasks as usize],
            &q,
        )
        .0
    };
    let quiet = match p.phases {
        0 | 1 => quiet_run(p.phases),
        n => {
            let (one, two) = (quiet_run(1), quiet_run(2));
            one + u64::from(n - 1) * (two - one)
        }
    };
    Outcome {
        tasks,
        time_ns: time,
        quiet_ns: quiet,
        slowdown_pct: if quiet > 0 {
            100.0 * (time as f64 - quiet as f64) / quiet as f64
        } else {
            0.0
        },
        mean_wait_ns: waited as f64 / (f64::from(tasks.max(1)) * f64::from(p.phases.max(1))),
    }
}
