//! Every route of pnmpi's network graphs against SimGrid 3.32's: seeded
//! random fat trees, dragonflies, tori and clusters (with backbones and
//! limiters, shared and split-duplex links) of many sizes, each written
//! as a SimGrid `<cluster>` and as the machine file that describes it;
//! the `<cluster>` is also read as `-m platform.xml` reads it, and the
//! machine file written back as a `<cluster>` (what the export's
//! `--machine` writes) is routed by SimGrid alike.
//! `routes.cpp`, built against libsimgrid, prints SimGrid's route and
//! latency for every pair of hosts; each must be ours, link by link.
//! (`PNMPI_ROUTE_CASES=N` runs N platforms of each shape, 10 by default.)

use pnmpi_sim::machine::Machine;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A platform: SimGrid's `<cluster>` attributes and our `[network.topology]`.
struct Case {
    hosts: u32,
    /// The `<cluster>` attributes after id, prefix, radical and speed.
    cluster: String,
    /// The `[network.topology]` keys.
    topology: String,
}

fn routes_program(dir: &Path) -> PathBuf {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "simgrid"])
        .output()
        .expect("pkg-config runs (install pkg-config and libsimgrid-dev)");
    assert!(
        flags.status.success(),
        "pkg-config finds no simgrid: install libsimgrid-dev (scripts/deps.sh --tests)"
    );
    let bin = dir.join("routes");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/simgrid/routes.cpp");
    let out = Command::new("g++")
        .arg("-O1")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .args(String::from_utf8_lossy(&flags.stdout).split_whitespace())
        .output()
        .expect("g++ runs");
    assert!(
        out.status.success(),
        "g++: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// Draws a random platform of one shape.
type Generator = fn(&mut fastrand::Rng) -> Case;

/// One of SimGrid's routes: source, destination, latency (s), link names.
type Route = (u32, u32, f64, Vec<String>);

fn simgrid_routes(bin: &Path, platform: &Path, hosts: u32) -> Vec<Route> {
    let out = Command::new(bin)
        .arg(platform)
        .arg("node-")
        .arg(hosts.to_string())
        .output()
        .expect("routes runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "SimGrid refused {}: {}",
        platform.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let mut num = || w.next().expect("a field").to_owned();
            let (s, d, lat) = (num(), num(), num());
            (
                s.parse().unwrap(),
                d.parse().unwrap(),
                lat.parse().unwrap(),
                w.map(String::from).collect(),
            )
        })
        .collect()
}

/// A link's bandwidth, latency and sharing, in both notations.
fn links(rng: &mut fastrand::Rng, policies: &[&str]) -> (String, String) {
    let bw = rng.u64(1..=100) * 100_000_000;
    let lat = rng.u64(1..=5000);
    let policy = policies[rng.usize(..policies.len())];
    let limiter = rng.bool().then(|| rng.u64(1..=50) * 100_000_000);
    let xml = format!(
        "bw=\"{bw}Bps\" lat=\"{lat}ns\" sharing_policy=\"{policy}\"{}",
        limiter.map_or(String::new(), |l| format!(" limiter_link=\"{l}Bps\""))
    );
    let toml = format!(
        "bandwidth = \"{bw}B/s\"\nlatency = \"{lat}ns\"\nsharing = \"{}\"\n{}",
        policy.to_lowercase(),
        limiter.map_or(String::new(), |l| format!("limiter = \"{l}B/s\"\n"))
    );
    (xml, toml)
}

fn fat_tree(rng: &mut fastrand::Rng) -> Case {
    loop {
        let levels = rng.usize(1..=3);
        let pick =
            |rng: &mut fastrand::Rng, hi: u32| -> Vec<u32> { (0..levels).map(|_| rng.u32(1..=hi)).collect() };
        let (down, up, count) = (pick(rng, 4), pick(rng, 3), pick(rng, 2));
        let hosts: u32 = down.iter().product();
        if !(2..=64).contains(&hosts) {
            continue;
        }
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let params = format!("{levels};{};{};{}", list(&down), list(&up), list(&count));
        // SimGrid names a switch's limiter after its id, which counts down
        // from twice the hosts: more switches than hosts would reuse names.
        let (xml, toml) = links(rng, &["SHARED", "SPLITDUPLEX"]);
        let switches: u32 = (1..=levels)
            .map(|l| up[..l].iter().product::<u32>() * down[l..].iter().product::<u32>())
            .sum();
        if switches > hosts && xml.contains("limiter") {
            continue;
        }
        return Case {
            hosts,
            cluster: format!("{xml} topology=\"FAT_TREE\" topo_parameters=\"{params}\""),
            topology: format!("shape = \"fat_tree\"\ntopology = \"{params}\"\n{toml}"),
        };
    }
}

fn dragonfly(rng: &mut fastrand::Rng) -> Case {
    let groups = rng.u32(1..=3);
    let routers = rng.u32(groups.max(1)..=3);
    let (chassis, nodes) = (rng.u32(1..=3), rng.u32(1..=3));
    let params = format!(
        "{groups},{};{chassis},{};{routers},{};{nodes}",
        rng.u32(1..=3),
        rng.u32(1..=3),
        rng.u32(1..=3)
    );
    let (xml, toml) = links(rng, &["SHARED", "SPLITDUPLEX"]);
    Case {
        hosts: groups * routers * chassis * nodes,
        cluster: format!("{xml} topology=\"DRAGONFLY\" topo_parameters=\"{params}\""),
        topology: format!("shape = \"dragonfly\"\ntopology = \"{params}\"\n{toml}"),
    }
}

fn torus(rng: &mut fastrand::Rng) -> Case {
    loop {
        let dims: Vec<u32> = (0..rng.usize(1..=4)).map(|_| rng.u32(1..=5)).collect();
        let hosts: u32 = dims.iter().product();
        // SimGrid names the links of two dimensions of size 1 alike.
        if !(2..=64).contains(&hosts) || dims.iter().filter(|&&k| k == 1).count() > 1 {
            continue;
        }
        let params = dims.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let (xml, toml) = links(rng, &["SHARED", "SPLITDUPLEX"]);
        return Case {
            hosts,
            cluster: format!("{xml} topology=\"TORUS\" topo_parameters=\"{params}\""),
            topology: format!("shape = \"torus\"\ntopology = \"{params}\"\n{toml}"),
        };
    }
}

fn cluster(rng: &mut fastrand::Rng) -> Case {
    let hosts = rng.u32(2..=24);
    let (mut xml, mut toml) = links(rng, &["SHARED", "SPLITDUPLEX"]);
    toml = format!("shape = \"cluster\"\n{toml}");
    if rng.bool() {
        let (bw, lat) = (rng.u64(1..=100) * 1_000_000_000, rng.u64(0..=3000));
        let policy = ["SHARED", "FATPIPE"][rng.usize(..2)];
        xml += &format!(" bb_bw=\"{bw}Bps\" bb_lat=\"{lat}ns\" bb_sharing_policy=\"{policy}\"");
        toml += &format!(
            "[network.topology.backbone]\nbandwidth = \"{bw}B/s\"\nlatency = \"{lat}ns\"\nsharing = \"{}\"\n",
            policy.to_lowercase()
        );
    }
    Case {
        hosts,
        cluster: xml,
        topology: toml,
    }
}

#[test]
fn every_route_is_simgrids() {
    let dir = tempfile::tempdir().unwrap();
    let bin = routes_program(dir.path());
    let per_shape: usize = std::env::var("PNMPI_ROUTE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let mut rng = fastrand::Rng::with_seed(45);
    let shapes: [(&str, Generator); 4] = [
        ("fat tree", fat_tree),
        ("dragonfly", dragonfly),
        ("torus", torus),
        ("cluster", cluster),
    ];
    let (mut pairs, mut platforms) = (0, 0);
    for (what, make) in shapes {
        for _ in 0..per_shape {
            let case = make(&mut rng);
            let xml = format!(
                "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
                 <platform version=\"4.1\">\n  <cluster id=\"cluster\" prefix=\"node-\" suffix=\"\" radical=\"0-{}\" speed=\"1Gf\" {}/>\n</platform>\n",
                case.hosts - 1,
                case.cluster
            );
            let platform = dir.path().join(format!("p{platforms}.xml"));
            std::fs::write(&platform, &xml).unwrap();
            let toml = format!(
                "[machine]\nnodes = {}\n[network]\nlatency = \"0s\"\nbandwidth = \"1GB/s\"\n[network.topology]\n{}",
                case.hosts, case.topology
            );
            let m = Machine::parse("m.toml", &toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
            let g = m.graph().expect("a graph");
            // The same platform read by `-m platform.xml`.
            let read = Machine::parse("p.xml", &xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
            let from_xml = read.graph().expect("a graph");
            let theirs = simgrid_routes(&bin, &platform, case.hosts);
            assert_eq!(theirs.len() as u32, case.hosts * (case.hosts - 1), "{xml}");
            // The machine written back as a <cluster> (the export's
            // --machine), as SimGrid reads it: the same routes.
            let written = m
                .simgrid_cluster()
                .unwrap_or_else(|e| panic!("{e}\n{toml}"))
                .expect("a topology");
            let back = dir.path().join(format!("w{platforms}.xml"));
            std::fs::write(&back, &written).unwrap();
            assert_eq!(
                simgrid_routes(&bin, &back, case.hosts),
                theirs,
                "{what}: the machine written as\n{written}\nfrom\n{toml}\nroutes otherwise than\n{xml}"
            );
            for (s, d, latency, names) in theirs {
                let mut route = Vec::new();
                g.route(s, d, &mut route);
                let ours: Vec<String> = route.iter().map(|&l| g.name(l)).collect();
                assert_eq!(
                    ours, names,
                    "{what} {s} -> {d}, platform:\n{xml}\nmachine:\n{toml}"
                );
                let mut read_route = Vec::new();
                from_xml.route(s, d, &mut read_route);
                let read: Vec<String> = read_route.iter().map(|&l| from_xml.name(l)).collect();
                assert_eq!(read, names, "{what} {s} -> {d}, read from:\n{xml}");
                assert_eq!(
                    from_xml.latency(s, d),
                    g.latency(s, d),
                    "{what} {s} -> {d}\n{xml}"
                );
                let mine = g.latency(s, d) * 1e-9;
                assert!(
                    (mine - latency).abs() <= 1e-12 * latency.max(1e-9),
                    "{what} {s} -> {d}: latency {mine} s, SimGrid's {latency} s\n{xml}"
                );
                pairs += 1;
            }
            platforms += 1;
        }
    }
    assert!(pairs > 1000, "{pairs} pairs compared");
    eprintln!("{platforms} platforms, {pairs} routes compared with SimGrid's");
}
