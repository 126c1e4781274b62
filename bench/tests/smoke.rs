//! Runs `pnmpi-bench suite` and the default mode with tiny sizes, so that
//! CI notices when the benchmark code, its C programs or its plots break.
//! The numbers are meaningless at these sizes; only the plumbing is checked.
//!
//! Needs the workspace built first (libpnmpi.so next to the bench
//! executable), as `scripts/test.sh` does; the bench builds the compact
//! empty module itself.

use std::path::Path;
use std::process::Command;

fn bench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pnmpi-bench"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("pnmpi-bench starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_suite_runs_every_part_and_writes_csv_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("suite.csv");
    let plots = dir.path().join("plots");
    let stdout = run(bench().args([
        "suite",
        "--rounds",
        "1",
        "--calls",
        "2000",
        "--layers",
        "0,1,2",
        "--pingpong-layers",
        "0,1",
        "--trips",
        "100",
        "--init-layers",
        "0,2",
        "--delay-layers",
        "1",
        "--delay-trips",
        "20",
        "--bandwidth-bytes",
        "65536",
        "--bandwidth-trips",
        "20",
        "--memory-layers",
        "0,1,4",
        "--csv",
        csv.to_str().unwrap(),
        "--plots",
        plots.to_str().unwrap(),
    ]));
    for title in [
        "overhead (",
        "ping-pong latency (",
        "MPI_Init time (",
        "delay layers (",
        "bandwidth (",
        "heap (",
        "link-stack table (",
        "figures against the bars",
        "pnmpi, 2 distinct",
    ] {
        assert!(stdout.contains(title), "no `{title}` in:\n{stdout}");
    }
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("part,mpi,launch,setup,layers,metric,"), "{csv}");
    for part in ["overhead", "pingpong", "init", "delay", "bandwidth", "memory"] {
        assert!(
            csv.lines().any(|l| l.starts_with(&format!("{part},"))),
            "no {part} rows in:\n{csv}"
        );
    }
    // The table model is exact up to malloc's bookkeeping even at this size.
    assert!(
        csv.lines()
            .any(|l| l.contains("table: measured vs model") && l.ends_with(",true")),
        "{csv}"
    );
    for svg in [
        "fig4-pingpong-latency.svg",
        "fig5-init-time.svg",
        "fig6-delay-layers.svg",
        "overhead-per-call.svg",
        "overhead-per-layer.svg",
        "memory.svg",
    ] {
        let text = std::fs::read_to_string(plots.join(svg)).unwrap();
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{svg}"
        );
    }
    assert_no_temporary_files(&plots);
}

#[test]
fn the_default_mode_still_measures_comm_rank() {
    let stdout = run(bench().args([
        "--layers",
        "0,1",
        "--rounds",
        "1",
        "--calls",
        "2000",
        "--send-only",
    ]));
    assert!(stdout.contains("alpha (0 modules - native)"), "{stdout}");
    assert!(stdout.contains("restricted to MPI_Send"), "{stdout}");
}

/// Plots are written through a temporary file and a rename.
fn assert_no_temporary_files(dir: &Path) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".svg")), "{names:?}");
    assert_eq!(names.len(), 6, "{names:?}");
}
