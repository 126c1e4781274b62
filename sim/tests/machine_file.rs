//! The machine description: the commented example loads, placements are
//! right, and every kind of bad file is an error with the file, the line
//! and the key.

use pnmpi_sim::machine::{Machine, Mapping};
use std::path::Path;

fn example() -> Machine {
    Machine::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("machine.example.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_example_loads_with_its_overrides() {
    let m = example();
    assert_eq!(m.nodes.len(), 4);
    assert_eq!(m.cores(), 8 + 8 + 8 + 4);
    assert_eq!(m.nodes[3].cpu_ratio, 0.5);
    assert_eq!(m.cpu(3, 1000.0), 2000.0);
    assert_eq!(m.cpu(0, 1000.0), 1000.0);
    assert_eq!(m.network.eager_threshold.0, 65536);
    // Step table: 4 GB/s below 64 KiB, 12 GB/s from there.
    assert_eq!(m.network.intra.bandwidth.at(1000).0, 4e9);
    assert_eq!(m.network.intra.bandwidth.at(65536).0, 12e9);
    assert_eq!(m.level(1, 1).latency.at(0).0, 400.0);
    assert_eq!(m.level(0, 1).latency.at(0).0, 1500.0);
    // [model.loggp] is the model's own, read with positions.
    #[derive(serde::Deserialize)]
    #[allow(non_snake_case, dead_code)]
    struct L {
        L: pnmpi_sim::units::Time,
        o: pnmpi_sim::units::Time,
        g: pnmpi_sim::units::Time,
        G: pnmpi_sim::units::Time,
        intra: toml::Value,
    }
    let l: L = m.model_table("loggp").unwrap().unwrap();
    assert_eq!(l.L.0, 1200.0);
    assert!(m.model_table::<L>("pmac").unwrap().is_none());
}

#[test]
fn block_cyclic_and_explicit_placements() {
    let m = example();
    assert_eq!(m.mapping, Mapping::Block);
    let p = m.place(28).unwrap();
    assert_eq!(&p[..9], &[0, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(p[27], 3);
    let e = m.place(29).unwrap_err().to_string();
    assert!(e.contains("29 tasks") && e.contains("28 cores"), "{e}");
    let cyclic = m
        .with_source(m.source().replace("policy = \"block\"", "policy = \"cyclic\""))
        .unwrap();
    assert_eq!(cyclic.place(6).unwrap(), vec![0, 1, 2, 3, 0, 1]);
    // Node 3 has 4 cores: from the 17th task on it is skipped.
    let p = cyclic.place(28).unwrap();
    assert_eq!(p.iter().filter(|&&n| n == 3).count(), 4);
    let explicit = m
        .with_source(m.source().replace("policy = \"block\"", "nodes = [3, 2, 1, 0]"))
        .unwrap();
    assert_eq!(explicit.place(3).unwrap(), vec![3, 2, 1]);
    assert!(explicit
        .place(5)
        .unwrap_err()
        .to_string()
        .contains("lists 4 tasks"));
}

/// Parses `text`, expecting an error at `line` that mentions every `word`.
fn bad(text: &str, line: usize, words: &[&str]) {
    let e = Machine::parse("bad.toml", text).expect_err("must be refused");
    let s = e.to_string();
    assert!(
        s.starts_with(&format!("bad.toml:{line}:")),
        "want line {line}: {s}"
    );
    for w in words {
        assert!(s.contains(w), "want `{w}` in: {s}");
    }
}

const OK: &str = "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n";

#[test]
fn bad_files_name_file_line_and_key() {
    bad(
        &OK.replace("\"1us\"", "\"1 parsec\""),
        4,
        &["unknown time unit", "parsec"],
    );
    bad(&OK.replace("latency", "latncy"), 4, &["latncy"]);
    bad(&OK.replace("nodes = 2", "nodes = 0"), 2, &["nodes", "at least 1"]);
    bad(
        &OK.replace("nodes = 2", "nodes = 2\ncpu_ratio = -1"),
        3,
        &["cpu_ratio"],
    );
    bad(&OK.replace("\"1GB/s\"", "\"1GB\""), 5, &["bandwidth unit"]);
    bad(
        &format!("{OK}[mapping]\npolicy = \"spiral\"\n"),
        6,
        &["[mapping]", "spiral"],
    );
    bad(
        &format!("{OK}[mapping]\nnodes = [0, 5]\n"),
        6,
        &["node 5 does not exist"],
    );
    bad(&format!("{OK}[[node]]\nids = [7]\n"), 6, &["[[node]]", "node 7"]);
    bad(
        &format!("{OK}[collectives.alltoal]\nscaling = \"log\"\n"),
        6,
        &["alltoal", "unknown collective"],
    );
    bad(
        &format!("{OK}[collectives.bcast]\nmode = \"algorithmic\"\nalgorithm = \"magic\"\n"),
        6,
        &["bcast", "magic"],
    );
    bad(
        &format!("{OK}[collectives]\nscaling = \"cubic\"\n"),
        7,
        &["scaling"],
    );
    bad(
        &format!("{OK}[network.intra]\nlatency = [{{ size = 5, value = \"1us\" }}]\nbandwidth = \"1GB/s\"\n"),
        7,
        &["first step must be at size 0"],
    );
    bad(
        "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\n",
        3,
        &["both `latency` and `bandwidth`"],
    );
    // No [network]: refused by the default model, which needs it.
    let m = Machine::parse("bad.toml", "[machine]\nnodes = 1\n").unwrap();
    let e = pnmpi_sim::model::build("simple", &m).err().unwrap().to_string();
    assert!(e.contains("bad.toml") && e.contains("needs [network]"), "{e}");
    let e = Machine::load(Path::new("/nonexistent/m.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/nonexistent/m.toml") && e.contains("cannot read"),
        "{e}"
    );
}

#[test]
fn a_model_that_carries_its_parameters_needs_no_network() {
    let loggops = "[machine]\nnodes = 2\n[model.loggops]\nL = \"2500ns\"\no = \"1500ns\"\ng = \"1000ns\"\nG = \"6ns\"\nO = \"0ns\"\nS = \"65535B\"\n";
    let m = Machine::parse("m.toml", loggops).unwrap();
    let model = pnmpi_sim::model::build("loggops", &m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(model.lookahead(), 2500.0);
    // Every model that times messages with [network] says so, naming the
    // file and the way out.
    for name in ["simple", "loggp", "bus", "inlink", "outlink", "pmac", "bcs"] {
        let e = pnmpi_sim::model::build(name, &m).err().unwrap().to_string();
        assert!(
            e.starts_with("m.toml: ") && e.contains(&format!("the {name} model needs [network]")),
            "{name}: {e}"
        );
    }
    // Without [network], LogGOPS still says which of its own keys is missing.
    let m = Machine::parse("m.toml", &loggops.replace("G = \"6ns\"\n", "")).unwrap();
    let e = pnmpi_sim::model::build("loggops", &m).err().unwrap().to_string();
    assert!(e.contains("m.toml") && e.contains("missing field `G`"), "{e}");
}

#[test]
fn a_model_table_error_names_its_line_and_key() {
    let text = format!("{OK}[model.loggp]\nL = \"2us\"\no = \"1xs\"\ng = \"1us\"\nG = \"1ns\"\n");
    let m = Machine::parse("m.toml", &text).unwrap();
    let e = pnmpi_sim::model::build("loggp", &m).err().unwrap().to_string();
    assert!(
        e.starts_with("m.toml:8:") && e.contains("unknown time unit"),
        "{e}"
    );
    let text = format!("{OK}[model.loggp]\nL = \"2us\"\no = \"1us\"\ng = \"1us\"\n");
    let m = Machine::parse("m.toml", &text).unwrap();
    let e = pnmpi_sim::model::build("loggp", &m).err().unwrap().to_string();
    assert!(e.contains("m.toml") && e.contains("missing field `G`"), "{e}");
}

#[test]
fn a_uniform_machine_keeps_its_parameters_exactly() {
    use pnmpi_sim::units::{Bandwidth, Bytes, Time};
    let m = Machine::uniform_eager(16, Time(5000.0), Bandwidth(1e9), Bytes(4096));
    assert_eq!(m.nodes.len(), 16);
    assert_eq!(m.place(16).unwrap(), (0..16).collect::<Vec<u32>>());
    assert_eq!(m.network.eager_threshold.0, 4096);
    // One level, both ways: 5 us + 1000 B at 1 GB/s = 6000 ns.
    assert_eq!(m.level(0, 1).cost(1000), 6000.0);
    assert_eq!(m.level(3, 3).cost(1000), 6000.0);
    let odd = Machine::uniform_eager(1, Time(0.4), Bandwidth(12.5e9), Bytes(0));
    assert_eq!(odd.level(0, 0).latency.at(0).0, 0.4);
    assert_eq!(odd.level(0, 0).bandwidth.at(0).0, 12.5e9);
    assert_eq!(
        Machine::uniform(4, Time(1.0), Bandwidth(1.0))
            .network
            .eager_threshold
            .0,
        65536
    );
}
