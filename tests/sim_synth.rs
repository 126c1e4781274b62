//! `pnmpi sim synth`: every motif writes a `.pnt` that replays, its
//! tracer-folder form merges into the same trace and predicts the same
//! time, the analytic halo time is what the model says, and bad
//! arguments are clear errors.

use crate::common;
use common::*;
use std::path::Path;

fn runtime(dir: &Path, trace: &str) -> f64 {
    succeeded(pnmpi_cli(
        &["sim", "replay", trace, "-m", "m.toml", "--json", "r.json"],
        dir,
    ));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    v["runtime_s"].as_f64().expect("runtime_s")
}

const MACHINE: &str = "[machine]\nnodes = 64\n[network]\nlatency = \"2us\"\nbandwidth = \"1GB/s\"\neager_threshold = \"4KiB\"\n";

#[test]
fn every_motif_replays_and_its_folder_is_the_same_trace() {
    let case = Case::new();
    let dir = case.dir();
    case.write("m.toml", MACHINE);
    for motif in [
        "halo2d",
        "halo3d",
        "allreduce",
        "alltoall",
        "bcast",
        "sweep3d",
        "random",
        "incast",
    ] {
        let common = [
            "--ranks",
            "12",
            "--iterations",
            "6",
            "--bytes",
            "16KiB",
            "--compute",
            "50us",
            "--allreduce-every",
            "2",
        ];
        let pnt = format!("{motif}.pnt");
        let folder = format!("{motif}-folder");
        let merged = format!("{motif}-merged.pnt");
        succeeded(pnmpi_cli(
            &[&["sim", "synth", motif], &common[..], &["-o", &pnt]].concat(),
            dir,
        ));
        succeeded(pnmpi_cli(
            &[
                &["sim", "synth", motif],
                &common[..],
                &["--folder", "-o", &folder],
            ]
            .concat(),
            dir,
        ));
        succeeded(pnmpi_cli(&["trace", "merge", &folder, "-o", &merged], dir));
        let dump = |t: &str| succeeded(pnmpi_cli(&["trace", "dump", t], dir));
        assert_eq!(
            dump(&pnt),
            dump(&merged),
            "{motif}: the folder merges into another trace"
        );
        let (a, b) = (runtime(dir, &pnt), runtime(dir, &folder));
        assert_eq!(a, b, "{motif}");
        // Six iterations of 50 us of compute at the least.
        assert!(a >= 300e-6, "{motif}: {a} s");
        let stats = succeeded(pnmpi_cli(&["trace", "stats", &pnt], dir));
        assert!(stats.contains("MPI_"), "{motif}: {stats}");
    }
}

/// A 4-rank 2-D halo on a 2x2 periodic grid, compute-free: each
/// iteration's exchange is one eager message time, 2 us + 1 KiB / 1 GB/s.
#[test]
fn a_compute_free_halo_costs_one_message_per_iteration() {
    let case = Case::new();
    let dir = case.dir();
    case.write("m.toml", MACHINE);
    synth(
        dir,
        "halo2d",
        4,
        10,
        &["--bytes", "1000B", "--compute", "0us"],
        "h.pnt",
    );
    let t = runtime(dir, "h.pnt");
    let want = 10.0 * (2e-6 + 1000.0 / 1e9);
    assert!((t - want).abs() < 1e-12, "{t} s, want {want} s");
}

#[test]
fn bad_motifs_and_sizes_are_clear_errors() {
    let case = Case::new();
    let dir = case.dir();
    let out = pnmpi_cli(&["sim", "synth", "halo4d", "--ranks", "4", "-o", "x.pnt"], dir);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown motif `halo4d`") && err.contains("sweep3d"),
        "{err}"
    );
    let out = pnmpi_cli(
        &[
            "sim", "synth", "halo2d", "--ranks", "4", "--bytes", "lots", "-o", "x.pnt",
        ],
        dir,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bytes lots"));
    assert!(!dir.join("x.pnt").exists() && !dir.join("x.pnt.part").exists());
}
