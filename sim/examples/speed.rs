//! Engine speed on a synthetic stencil, without any trace decoding:
//! `cargo run --release -p pnmpi-sim --example speed -- [RANKS [ITERATIONS [MODEL]]]`
//! (default 1024 200; MODEL 1 is loggp, else simple).
use pnmpi_sim::engine::{replay, Options};
use pnmpi_sim::input::synth::{Stencil, StencilOps};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model;

fn main() {
    let args: Vec<u64> = match std::env::args().skip(1).map(|a| a.parse()).collect() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("usage: speed [RANKS [ITERATIONS [MODEL]]]: {e}");
            std::process::exit(2);
        }
    };
    let s = Stencil {
        ranks: args.first().map_or(1024, |&r| r as u32),
        iterations: args.get(1).copied().unwrap_or(200),
        bytes: 8192,
        compute_ns: 100_000,
        allreduce_every: 10,
    };
    let m = Machine::parse("m", &format!("[machine]\nnodes = {}\ncores_per_node = 16\n[network]\nlatency = \"1us\"\nbandwidth = \"10GB/s\"\n", s.ranks / 16 + 1)).unwrap();
    let mut model = model::build(
        args.get(2)
            .map_or("simple", |&x| if x == 1 { "loggp" } else { "simple" }),
        &m,
    )
    .unwrap();
    let mut src = StencilOps::new(s);
    let t = std::time::Instant::now();
    let out = replay(&mut src, &m, model.as_mut(), Options::default()).unwrap();
    let el = t.elapsed().as_secs_f64();
    println!(
        "{} events in {:.3} s: {:.2} M events/s; runtime {:.6} s; messages {}; peak in flight {}",
        out.stats.events,
        el,
        out.stats.events as f64 / el / 1e6,
        out.runtime / 1e9,
        out.stats.messages,
        out.stats.peak_in_flight
    );
}
