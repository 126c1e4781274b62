//! `pnmpi sim replay` against SimGrid's `smpirun -replay` on the same
//! exported trace of real programs traced under real mpirun: the export's
//! `machine.toml` and `platform.xml` describe one platform, its
//! README.txt gives the smpirun command, and the two simulated times agree
//! (docs/sim-simgrid.md).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pnmpi() -> PathBuf {
    target_dir().join("pnmpi")
}

/// Traces `np` ranks of `program args` and exports the trace for SimGrid;
/// returns the case (which owns the folders) and the export folder.
fn exported(program_name: &str, np: usize, args: &[&str]) -> (Case, PathBuf) {
    let (case, trace) = traced(program_name, np, args);
    let export = export(&trace);
    (case, export)
}

/// Exports the tracer folder `trace` for SimGrid, beside it; the export
/// folder.
fn export(trace: &Path) -> PathBuf {
    let export = trace.with_file_name("simgrid");
    let out = Command::new(pnmpi())
        .args(["trace", "export", "--format", "simgrid"])
        .arg(trace)
        .arg("-o")
        .arg(&export)
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // MPI-1 to MPI-3 point-to-point and collectives on intracommunicators
    // are written exactly: nothing approximated.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("approximated"), "{stdout}");
    export
}

/// SimGrid's simulated time, by the README's own smpirun line.
fn smpirun(export: &Path) -> f64 {
    let readme = std::fs::read_to_string(export.join("README.txt")).expect("README.txt");
    let line = readme
        .lines()
        .find(|l| l.starts_with("smpirun "))
        .unwrap_or_else(|| panic!("no smpirun line in README.txt:\n{readme}"));
    let out = Command::new("timeout")
        .arg("120")
        .args(line.split_whitespace())
        .current_dir(export)
        .output()
        .expect("timeout runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{line} failed:\n{text}");
    assert!(!text.contains("Deadlock"), "{text}");
    let t = text
        .lines()
        .find_map(|l| l.split("Simulation time ").nth(1))
        .unwrap_or_else(|| panic!("no simulated time in:\n{text}"));
    t.trim().parse().expect("a time in seconds")
}

/// pnmpi's prediction of the same export on its machine.toml.
fn pnmpi_replay(export: &Path) -> f64 {
    replay_on(export, "machine.toml")
}

/// pnmpi's prediction of `export` on `machine` (a file of the export
/// folder), with the model the machine names or the default.
fn replay_on(export: &Path, machine: &str) -> f64 {
    let json = export.join("pnmpi.json");
    let out = Command::new(pnmpi())
        .args(["sim", "replay", "index.txt", "-m", machine, "--json"])
        .arg(&json)
        .current_dir(export)
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("JSON");
    report["runtime_s"].as_f64().expect("runtime_s")
}

/// The two agree within `tolerance` (a fraction), or within the 0.5 us
/// that smpirun's 6-decimal print can hide.
fn agree(program_name: &str, np: usize, args: &[&str], tolerance: f64) {
    let (_case, export) = exported(program_name, np, args);
    agree_on(program_name, &export, tolerance);
}

/// smpirun and pnmpi sim agree on `export`, a run of `what`.
fn agree_on(what: &str, export: &Path, tolerance: f64) {
    let sg = smpirun(export);
    within(what, sg, pnmpi_replay(export), tolerance);
    // Not a trivially short run: the figure checks something.
    assert!(sg > 1e-4, "{what}: {sg} s");
}

/// `ours` is within `tolerance` (a fraction) of smpirun's `sg`, or within
/// the 0.5 us that smpirun's 6-decimal print can hide.
fn within(what: &str, sg: f64, ours: f64, tolerance: f64) {
    let diff = (ours - sg).abs();
    eprintln!("{what}: smpirun {sg} s, pnmpi sim {ours} s");
    assert!(
        diff <= tolerance * sg || diff <= 0.5e-6,
        "{what}: smpirun {sg} s, pnmpi sim {ours} s: {:.3} % apart",
        100.0 * diff / sg
    );
}

#[test]
fn blocking_pingpong_agrees_within_a_tenth_of_a_percent() {
    agree("pingpong", 2, &["2000", "1000"], 0.001);
}

#[test]
fn large_rendezvous_messages_agree_within_a_tenth_of_a_percent() {
    agree("pingpong", 2, &["200", "1000000"], 0.001);
}

#[test]
fn wildcards_and_split_communicator_collectives_agree_within_one_percent() {
    // Nonblocking ring, wildcard receives, collectives on a split
    // communicator and on MPI_COMM_WORLD, a nonblocking allreduce.
    agree("tracecheck", 4, &[], 0.01);
}

#[test]
fn nonblocking_stencil_with_world_allreduce_agrees_within_one_percent() {
    agree("stencil", 4, &["64", "50", "10"], 0.01);
}

/// The ring halo exchange of `halo.c` (imbalanced compute, Irecv, Irecv,
/// Isend, Isend, Waitall) at `bytes`, on both sides of the eager
/// threshold: SimGrid sends 64 KiB and more by rendezvous.
fn halo(bytes: &str, collectives: bool, tolerance: f64) {
    let with = if collectives { "1" } else { "0" };
    agree("halo", 4, &[bytes, "40", "100", with], tolerance);
}

#[test]
fn halo_exchange_agrees_within_a_tenth_of_a_percent_at_every_size() {
    for bytes in ["8192", "65528", "65536", "131072", "1048576"] {
        halo(bytes, false, 0.001);
    }
}

#[test]
fn halo_exchange_with_allreduce_and_split_bcast_agrees_within_one_percent() {
    for bytes in ["8192", "65536", "131072", "1048576"] {
        halo(bytes, true, 0.01);
    }
}

/// Messages to self, eager and rendezvous, nonblocking, `MPI_Sendrecv`
/// and blocking, among ring messages: both simulators charge a copy in
/// memory (the platform's loopback route, machine.toml's
/// `[network.intra]`), and agree.
#[test]
fn messages_to_self_agree_within_a_tenth_of_a_percent() {
    for bytes in ["1000", "100000", "2000000"] {
        agree("selfsend", 3, &[bytes, "20"], 0.001);
    }
}

/// The NAS-like kernels (c-tests/nas), C, at 4 ranks: CG's transpose
/// partner and MG's single z-plane are messages to self.
#[test]
fn nas_like_kernels_agree_within_a_tenth_of_a_percent() {
    for kernel in ["cg", "mg", "ft", "is", "lu", "ep"] {
        let (_case, trace) = traced_exe(&nas_kernel(kernel), 4, &[]);
        agree_on(kernel, &export(&trace), 0.001);
    }
}

/// Every kind of point-to-point request (persistent receives with
/// `MPI_ANY_TAG` and `MPI_ANY_SOURCE` matched by every send mode,
/// persistent sends, `MPI_Sendrecv_replace`, matched probes, a cancelled
/// receive, a polled `MPI_Issend`), at an eager and a rendezvous size:
/// smpirun agrees with the replay of the export, and the trace itself
/// replays without a deadlock. SimGrid's action format has plain sends
/// only, while the trace keeps each send's mode, which its replay honours
/// (`kernel::p2p::Mode::of`, as vtime and virtual ranks do): so the trace
/// of the same program with every send in standard mode must replay as
/// smpirun does.
#[test]
fn every_request_kind_replays_as_it_ran_at_eager_and_rendezvous_sizes() {
    for bytes in ["1024", "1000000"] {
        for modes in ["every", "standard"] {
            let (case, export) = exported("reqkinds", 4, &[bytes, modes]);
            let sg = smpirun(&export);
            within(
                &format!("reqkinds {bytes} B, {modes} mode, its export"),
                sg,
                pnmpi_replay(&export),
                0.001,
            );
            assert!(sg > 1e-4, "{sg} s");
            let out = Command::new(pnmpi())
                .args(["sim", "replay", "trace", "-m"])
                .arg(export.join("machine.toml"))
                .args(["--json", "trace.json"])
                .current_dir(case.dir())
                .output()
                .expect("pnmpi runs");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            if modes == "standard" {
                let report: serde_json::Value = serde_json::from_str(
                    &std::fs::read_to_string(case.dir().join("trace.json")).expect("json"),
                )
                .expect("JSON");
                let traced = report["runtime_s"].as_f64().expect("runtime_s");
                within(&format!("reqkinds {bytes} B, its trace"), sg, traced, 0.001);
            }
        }
    }
}

/// How many random programs each random cross-check runs:
/// `PNMPI_SIMGRID_CASES` (CI keeps the default small).
fn random_cases() -> u64 {
    std::env::var("PNMPI_SIMGRID_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
}

/// `randmix.c` with `cases` seeds in `mode` at 3 and 4 ranks: random
/// sizes up to 4 MiB, blocking and nonblocking sends in every mode,
/// persistent requests, Waitall, Waitany, Test, wildcard and persistent
/// wildcard receives, matched probes, cancelled receives, and in the
/// collective modes every collective on world and split communicators:
/// none replays to a deadlock, and each agrees with smpirun.
fn random(mode: &str, tolerance: f64) {
    for seed in 1..=random_cases() {
        let np = 3 + (seed as usize % 2);
        agree("randmix", np, &[&seed.to_string(), "60", mode], tolerance);
    }
}

#[test]
fn random_point_to_point_programs_agree_within_a_tenth_of_a_percent() {
    random("p2p", 0.001);
}

#[test]
fn random_programs_with_collectives_agree_within_one_percent() {
    random("coll", 0.01);
}

/// `randmix` with every collective, the `v` ones included.
#[test]
fn random_programs_with_v_collectives_agree_within_one_percent() {
    random("all", 0.01);
}

#[test]
fn unequal_v_collectives_and_ialltoallv_agree_within_one_percent() {
    // NAS IS-style MPI_Alltoallv with unequal counts, MPI_Allgatherv,
    // MPI_Gatherv, MPI_Scatterv, MPI_Reduce_scatter, MPI_Ialltoallv.
    agree("vcoll", 4, &["6", "3000"], 0.01);
}

#[test]
fn v_actions_carry_the_counts_each_rank_sent() {
    let (_case, export) = exported("vcoll", 4, &["2", "1000"]);
    let r0 = std::fs::read_to_string(export.join("rank-00000.txt")).expect("rank 0's actions");
    for action in ["alltoallv", "allgatherv", "gatherv", "scatterv"] {
        let lines: Vec<&str> = r0
            .lines()
            .filter(|l| l.split(' ').nth(1) == Some(action))
            .collect();
        assert_eq!(lines.len(), 2, "{action}: {lines:?}");
    }
    // vcoll.c's keys_for(0, j, 0, 1000) ints to rank j in iteration 0.
    let keys = |from: u32, to: u32, it: u32, keys: u32| {
        keys / 2 + ((from * 7 + to * 13 + it * 5).wrapping_mul(2654435761) % keys)
    };
    let want: Vec<String> = (0..4).map(|j| (4 * keys(0, j, 0, 1000)).to_string()).collect();
    let first = r0.lines().find(|l| l.starts_with("0 alltoallv ")).unwrap();
    let words: Vec<&str> = first.split(' ').collect();
    assert_eq!(
        words[3..7],
        want.iter().map(String::as_str).collect::<Vec<_>>()[..],
        "{first}"
    );
    // The Ialltoallv is messages posted at the call, awaited at MPI_Wait.
    assert!(r0.lines().any(|l| l.starts_with("0 isend ")), "{r0}");
}

/// `export --format simgrid --machine m.toml` on a tapered fat tree:
/// platform.xml is the machine's `<cluster>`, the host file its
/// placement (ranks 0 and 1 on nodes in two leaves, 4 links apart), and
/// machine.toml the machine itself. A ping-pong has one message in flight
/// at a time, so no link is shared: smpirun on the written platform and
/// `pnmpi sim replay -m machine.toml` agree, latency of the route and all.
#[test]
fn a_ping_pong_exported_for_a_fat_tree_agrees_with_smpirun_on_its_cluster() {
    let (case, trace) = traced("pingpong", 2, &["200", "100000"]);
    let m = case.dir().join("m.toml");
    std::fs::write(
        &m,
        "[machine]\nname = \"tapered fat tree\"\nnodes = 16\ncores_per_node = 1\n\
         [mapping]\nnodes = [0, 13]\n\
         [network]\nlatency = \"0us\"\nbandwidth = \"10GB/s\"\neager_threshold = \"65535B\"\nenvelope = \"16B\"\n\
         [network.intra]\nlatency = \"0us\"\nbandwidth = \"20GB/s\"\n\
         [network.topology]\nshape = \"fat_tree\"\ntopology = \"2;4,4;1,2;1,1\"\n\
         bandwidth = \"10GB/s\"\nlatency = \"2.5us\"\nsharing = \"shared\"\n\
         [collectives]\nmode = \"algorithmic\"\n",
    )
    .unwrap();
    let export = trace.with_file_name("simgrid-fat-tree");
    let out = Command::new(pnmpi())
        .args(["trace", "export", "--format", "simgrid", "--machine"])
        .arg(&m)
        .arg(&trace)
        .arg("-o")
        .arg(&export)
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let platform = std::fs::read_to_string(export.join("platform.xml")).unwrap();
    assert!(
        platform.contains("topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,2;1,1\""),
        "{platform}"
    );
    let hosts = std::fs::read_to_string(export.join("hostfile.txt")).unwrap();
    assert_eq!(hosts, "node-0\nnode-13\n");
    assert_eq!(
        std::fs::read_to_string(export.join("machine.toml")).unwrap(),
        std::fs::read_to_string(&m).unwrap()
    );
    let sg = smpirun(&export);
    within("ping-pong on a fat tree", sg, pnmpi_replay(&export), 0.001);
    // The route's four links count: 200 round trips of 2 messages, each
    // at least 10 us of latency.
    assert!(sg > 200.0 * 2.0 * 10e-6, "{sg} s");
}

/// `--machine` needs a network of links, and only the SimGrid export
/// takes one: both are errors that say so.
#[test]
fn the_export_refuses_a_machine_it_cannot_write_as_a_cluster() {
    let (case, trace) = traced("pingpong", 2, &["2", "8"]);
    let flat = case.dir().join("flat.toml");
    std::fs::write(
        &flat,
        "[machine]\nnodes = 2\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n",
    )
    .unwrap();
    let ring = case.dir().join("ring.toml");
    std::fs::write(
        &ring,
        "[machine]\nnodes = 4\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n\
         [network.topology]\nshape = \"ring\"\nhop_latency = \"100ns\"\n",
    )
    .unwrap();
    for (m, format, said) in [
        (&flat, "simgrid", "no [network.topology] of links"),
        (&ring, "simgrid", "xSim's"),
        (&ring, "chrome", "--machine gives the simgrid export its platform"),
    ] {
        let out = Command::new(pnmpi())
            .args(["trace", "export", "--format", format, "--machine"])
            .arg(m)
            .arg(&trace)
            .arg("-o")
            .arg(case.dir().join("out"))
            .output()
            .expect("pnmpi runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(said),
            "{format} {}: {err}",
            m.display()
        );
    }
}

/// How far the cm02 replay may be from smpirun on shared links: 0.1 %.
/// Seen: at most 0.02 % over 90 random traces on random shapes, the
/// NAS-like kernels on each shape and three series of `a2a.c` on five
/// platforms (docs/sim.md, "cm02", says where ties could still part them).
const SHARED_TOLERANCE: f64 = 0.001;

/// A SimGrid platform of 16 hosts of 1 Gflop/s in one `<cluster>` of
/// private links of 10 GB/s and 2.5 us (a2a.c's machine), its loopback the
/// export's memory copy, with `attrs` (a backbone or a topology).
fn shared_cluster(attrs: &str) -> String {
    format!(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
         <platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-15\" \
         speed=\"1Gf\" bw=\"10GBps\" lat=\"2.5us\" loopback_bw=\"20GBps\" loopback_lat=\"0us\" {attrs}/>\n\
         </platform>\n"
    )
}

/// `a2a.c` at 16 ranks (alltoall of 64 KiB a pair, 1 MiB exchanges 4 and
/// 8 ranks away, an allreduce; 3 iterations), exported: on a cluster with
/// a backbone, a full and a 2:1 tapered fat tree, a torus and a dragonfly, smpirun
/// with the export's options and `pnmpi sim replay -m platform.xml`
/// (whose model is then cm02: flows sharing the links) agree (within
/// [`SHARED_TOLERANCE`], mostly 0.01 %), and the sharing shows: every
/// platform is slower than the export's private links.
#[test]
fn a2a_on_shared_links_agrees_with_smpirun_on_five_platforms() {
    let (_case, export) = exported("a2a", 16, &[]);
    let private = smpirun(&export);
    within("a2a on private links", private, pnmpi_replay(&export), 0.001);
    for (what, attrs) in [
        ("a cluster with a backbone", "bb_bw=\"20GBps\" bb_lat=\"1us\""),
        (
            "a full fat tree",
            "topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,4;1,1\"",
        ),
        (
            "a 2:1 tapered fat tree",
            "topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,2;1,1\"",
        ),
        ("a 4x4 torus", "topology=\"TORUS\" topo_parameters=\"4,4\""),
        (
            "a dragonfly",
            "topology=\"DRAGONFLY\" topo_parameters=\"2,1;2,1;2,1;2\"",
        ),
    ] {
        std::fs::write(export.join("platform.xml"), shared_cluster(attrs)).unwrap();
        let sg = smpirun(&export);
        within(
            &format!("a2a on {what}"),
            sg,
            replay_on(&export, "platform.xml"),
            SHARED_TOLERANCE,
        );
        // Sharing only slows; by how much depends on the traced run's
        // compute (a loaded machine's trace is mostly compute).
        assert!(
            sg > private,
            "a2a on {what}: {sg} s, on private links {private} s"
        );
    }
}

/// The tapered fat tree as a machine.toml (`[machine] model = "cm02"`),
/// exported with `--machine`: smpirun on the cluster the export writes
/// and the replay on the machine agree.
#[test]
fn a2a_on_a_tapered_fat_tree_machine_agrees_with_smpirun() {
    let (case, trace) = traced("a2a", 16, &[]);
    let m = case.dir().join("m.toml");
    std::fs::write(
        &m,
        "[machine]\nname = \"tapered fat tree\"\nmodel = \"cm02\"\nnodes = 16\ncores_per_node = 1\n\
         [network]\nlatency = \"0us\"\nbandwidth = \"10GB/s\"\neager_threshold = \"65535B\"\nenvelope = \"16B\"\n\
         [network.intra]\nlatency = \"0us\"\nbandwidth = \"20GB/s\"\n\
         [network.topology]\nshape = \"fat_tree\"\ntopology = \"2;4,4;1,2;1,1\"\n\
         bandwidth = \"10GB/s\"\nlatency = \"2.5us\"\nsharing = \"splitduplex\"\n\
         [collectives]\nmode = \"algorithmic\"\n",
    )
    .unwrap();
    let export = export_for(&case, &trace, &m, "simgrid-a2a");
    let sg = smpirun(&export);
    within(
        "a2a on a tapered fat tree machine",
        sg,
        pnmpi_replay(&export),
        SHARED_TOLERANCE,
    );
}

/// Exports `trace` for SimGrid with `--machine m` into `name` beside it.
fn export_for(case: &Case, trace: &Path, m: &Path, name: &str) -> PathBuf {
    let export = case.dir().join(name);
    let out = Command::new(pnmpi())
        .args(["trace", "export", "--format", "simgrid", "--machine"])
        .arg(m)
        .arg(trace)
        .arg("-o")
        .arg(&export)
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    export
}

/// A random shared-link `[network.topology]` of at least `hosts` hosts:
/// a fat tree, a dragonfly or a torus (by `kind`), its links of random
/// bandwidth, latency and sharing.
fn random_topology(rng: &mut fastrand::Rng, kind: usize, hosts: u32) -> (u32, String) {
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let (nodes, shape, params) = loop {
        let (nodes, shape, params) = match kind % 3 {
            0 => {
                let down = [rng.u32(2..=4), rng.u32(2..=4)];
                let up = [1, rng.u32(1..=3)];
                let count = [1, rng.u32(1..=2)];
                let params = format!("2;{};{};{}", list(&down), list(&up), list(&count));
                (down[0] * down[1], "fat_tree", params)
            }
            1 => {
                // SimGrid needs at least as many routers a chassis as groups.
                let g = rng.u32(2..=3);
                let (c, r, n) = (rng.u32(1..=2), rng.u32(g..=3), rng.u32(1..=2));
                let params = format!(
                    "{g},{};{c},{};{r},{};{n}",
                    rng.u32(1..=2),
                    rng.u32(1..=2),
                    rng.u32(1..=2)
                );
                (g * c * r * n, "dragonfly", params)
            }
            _ => {
                let dims = [rng.u32(2..=4), rng.u32(2..=4)];
                (dims[0] * dims[1], "torus", list(&dims))
            }
        };
        if nodes >= hosts {
            break (nodes, shape, params);
        }
    };
    let bw = rng.u64(1..=20) * 1_000_000_000;
    let lat = rng.u64(100..=5000);
    let sharing = ["shared", "splitduplex"][rng.usize(..2)];
    (
        nodes,
        format!(
            "[network.topology]\nshape = \"{shape}\"\ntopology = \"{params}\"\n\
             bandwidth = \"{bw}B/s\"\nlatency = \"{lat}ns\"\nsharing = \"{sharing}\"\n"
        ),
    )
}

/// A cm02 machine.toml `name` in `case` on a random shape of `kind`
/// ([`random_topology`]) with `np` ranks on random hosts: its path and
/// its topology's lines.
fn random_machine(
    case: &Case,
    name: &str,
    rng: &mut fastrand::Rng,
    kind: usize,
    np: usize,
) -> (PathBuf, String) {
    let (nodes, topology) = random_topology(rng, kind, np as u32);
    let mut hosts: Vec<u32> = (0..nodes).collect();
    rng.shuffle(&mut hosts);
    let m = case.dir().join(name);
    std::fs::write(
        &m,
        format!(
            "[machine]\nmodel = \"cm02\"\nnodes = {nodes}\ncores_per_node = 1\n\
             [mapping]\nnodes = [{}]\n\
             [network]\nlatency = \"0us\"\nbandwidth = \"1GB/s\"\neager_threshold = \"65535B\"\nenvelope = \"16B\"\n\
             [network.intra]\nlatency = \"0us\"\nbandwidth = \"20GB/s\"\n{topology}\
             [collectives]\nmode = \"algorithmic\"\n",
            hosts[..np].iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    )
    .unwrap();
    (m, topology)
}

/// `randmix.c` (random sizes on both sides of the eager threshold,
/// wildcard receives, every send mode, in `mode`'s collectives) on a
/// random fat tree, dragonfly and torus with its ranks on random hosts,
/// exported with `--machine`: smpirun and the cm02 replay agree.
fn random_shared(mode: &str, tolerance: f64) {
    for seed in 1..=random_cases().max(3) {
        let mut rng = fastrand::Rng::with_seed(seed * 7919);
        let np = 3 + (seed as usize % 2);
        let (case, trace) = traced("randmix", np, &[&seed.to_string(), "60", mode]);
        let (m, topology) = random_machine(&case, "m.toml", &mut rng, seed as usize, np);
        let export = export_for(&case, &trace, &m, "simgrid-shared");
        let sg = smpirun(&export);
        let what = format!(
            "randmix {seed} {mode} on {}",
            topology.lines().nth(2).unwrap_or("")
        );
        within(&what, sg, pnmpi_replay(&export), tolerance);
    }
}

/// The NAS-like kernels (c-tests/nas, C, 4 ranks) on a random fat tree,
/// dragonfly and torus each, their ranks on random hosts, exported with
/// `--machine`: smpirun and the cm02 replay agree within 0.1 % (seen:
/// under 0.02 %, near smpirun's printed precision).
#[test]
fn nas_like_kernels_on_each_shared_link_shape_agree_within_a_tenth_of_a_percent() {
    let mut worst: f64 = 0.0;
    for (k, kernel) in ["cg", "mg", "ft", "is", "lu", "ep"].into_iter().enumerate() {
        let (case, trace) = traced_exe(&nas_kernel(kernel), 4, &[]);
        for kind in 0..3 {
            let mut rng = fastrand::Rng::with_seed(1 + (k * 3 + kind) as u64);
            let (m, topology) = random_machine(&case, &format!("m{kind}.toml"), &mut rng, kind, 4);
            let export = export_for(&case, &trace, &m, &format!("simgrid-{kind}"));
            let (sg, ours) = (smpirun(&export), pnmpi_replay(&export));
            let what = format!("{kernel} on {}", topology.lines().nth(2).unwrap_or(""));
            worst = worst.max((ours - sg).abs() / sg);
            within(&what, sg, ours, 0.001);
        }
    }
    eprintln!(
        "NAS-like kernels on shared links: at most {:.4} % from smpirun",
        100.0 * worst
    );
}

#[test]
fn random_point_to_point_programs_on_random_shared_links_agree() {
    random_shared("p2p", SHARED_TOLERANCE);
}

#[test]
fn random_programs_with_v_collectives_on_random_shared_links_agree() {
    random_shared("all", SHARED_TOLERANCE);
}
