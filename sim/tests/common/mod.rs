//! Helpers shared by the simulator's tests: constructed SimGrid
//! time-independent traces, replayed on a machine given as text.

use pnmpi_sim::engine::{replay, Options, Outcome};
use pnmpi_sim::input::simgrid::SimgridOps;
use pnmpi_sim::machine::Machine;
use pnmpi_sim::{model, SimError};
use std::path::PathBuf;

/// Writes one action file per rank and an index; returns the index.
pub fn trace(dir: &tempfile::TempDir, ranks: &[&str]) -> PathBuf {
    let mut index = String::new();
    for (r, body) in ranks.iter().enumerate() {
        let name = format!("rank{r}.txt");
        let text: String = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| format!("{r} {l}\n"))
            .collect();
        std::fs::write(dir.path().join(&name), format!("{r} init\n{text}{r} finalize\n")).unwrap();
        index.push_str(&name);
        index.push('\n');
    }
    let p = dir.path().join("index.txt");
    std::fs::write(&p, index).unwrap();
    p
}

pub const TWO_NODES: &str = "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n";

pub fn run(machine: &str, model_name: &str, ranks: &[&str]) -> Result<Outcome, SimError> {
    run_observed(machine, model_name, ranks, &mut Messages::default())
}

/// Every message a replay delivered: (src, dst, sent, received, bytes,
/// resource wait).
#[derive(Default)]
pub struct Messages(pub Vec<(usize, usize, f64, f64, u64, f64)>);

impl pnmpi_sim::engine::Observer for Messages {
    fn call(&mut self, _: usize, _: &pnmpi_sim::engine::CallSpan) {}
    fn message(&mut self, src: usize, dst: usize, sent: f64, received: f64, bytes: u64, wait: f64) {
        self.0.push((src, dst, sent, received, bytes, wait));
    }
}

/// [`run`], telling `observer` of every call and message.
pub fn run_observed(
    machine: &str,
    model_name: &str,
    ranks: &[&str],
    observer: &mut dyn pnmpi_sim::engine::Observer,
) -> Result<Outcome, SimError> {
    let dir = tempfile::tempdir().unwrap();
    let index = trace(&dir, ranks);
    let m = Machine::parse("test.toml", machine).unwrap_or_else(|e| panic!("{e}"));
    let mut model = model::build(model_name, &m).unwrap();
    let mut src = SimgridOps::open(&index, 1.0)?;
    let opts = Options {
        observer: Some(observer),
        ..Options::default()
    };
    replay(&mut src, &m, model.as_mut(), opts)
}

/// `n` nodes of one core, 1 us and 1 GB/s between them.
pub fn nodes(n: u32) -> String {
    TWO_NODES.replace("nodes = 2", &format!("nodes = {n}"))
}
