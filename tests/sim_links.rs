//! `pnmpi sim replay --links` on a 2:1 tapered fat tree (16 hosts, 4 a
//! leaf, 2 uplinks a leaf): the report names the leaves' uplinks as the
//! busiest, every link carries the bytes of the messages routed over it,
//! no link is busy longer than the run, and sharing slows the run
//! against private links where flows share, and only there.

use crate::common;
use common::*;
use serde_json::Value;

/// The tapered fat tree, as the SimGrid cross-checks describe it.
const MACHINE: &str =
    "[machine]\nname = \"tapered fat tree\"\nmodel = \"cm02\"\nnodes = 16\ncores_per_node = 1\n\
     [network]\nlatency = \"0us\"\nbandwidth = \"10GB/s\"\neager_threshold = \"65535B\"\nenvelope = \"16B\"\n\
     [network.intra]\nlatency = \"0us\"\nbandwidth = \"20GB/s\"\n\
     [network.topology]\nshape = \"fat_tree\"\ntopology = \"2;4,4;1,2;1,1\"\n\
     bandwidth = \"10GB/s\"\nlatency = \"2.5us\"\nsharing = \"splitduplex\"\n";

/// Each message's bytes on the wire beside its payload (the envelope).
const ENVELOPE: f64 = 16.0;

/// Bytes every rank sends to the rank 4 hosts on (the next leaf), and to
/// its neighbour on its own leaf.
const ACROSS: u64 = 1 << 20;
const WITHIN: u64 = 256 << 10;

/// A SimGrid action trace of 16 ranks, each sending `sends` (to, bytes)
/// and receiving what the others send it, all at once.
fn trace(case: &Case, sends: &dyn Fn(u32) -> Vec<(u32, u64)>) {
    let index: String = (0..16).map(|r| format!("r{r}.txt\n")).collect();
    case.write("index.txt", &index);
    for r in 0..16u32 {
        let mut text = format!("{r} init\n");
        for from in 0..16u32 {
            for (to, bytes) in sends(from) {
                if to == r {
                    text += &format!("{r} irecv {from} 0 {bytes}\n");
                }
            }
        }
        for (to, bytes) in sends(r) {
            text += &format!("{r} isend {to} 0 {bytes}\n");
        }
        text += &format!("{r} waitall\n{r} finalize\n");
        case.write(&format!("r{r}.txt"), &text);
    }
}

/// `--links 16 --json`: the text report and the JSON's `links`.
fn links(case: &Case, more: &[&str]) -> (String, Value, f64) {
    let args = [
        &[
            "sim",
            "replay",
            "index.txt",
            "-m",
            "m.toml",
            "--links",
            "16",
            "--json",
            "o.json",
        ],
        more,
    ]
    .concat();
    let text = succeeded(pnmpi_cli(&args, case.dir()));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(case.dir().join("o.json")).unwrap()).unwrap();
    let runtime = json["runtime_s"].as_f64().unwrap();
    (text, json["links"].clone(), runtime)
}

/// A host's link to its leaf switch (SimGrid's `link_from_HOST_...`).
fn host_link(name: &str) -> Option<u32> {
    let host: u32 = name.strip_prefix("link_from_")?.split('_').next()?.parse().ok()?;
    (host < 16).then_some(host)
}

#[test]
fn the_uplinks_of_a_tapered_fat_tree_are_the_busiest_and_sharing_them_slows_the_run() {
    let case = Case::new();
    case.write("m.toml", MACHINE);
    let sends = |r: u32| vec![((r + 4) % 16, ACROSS), (r ^ 1, WITHIN)];
    trace(&case, &sends);
    let (text, l, runtime) = links(&case, &["--links-svg", "links.svg"]);
    assert!(
        text.contains("busiest links (16 of ") && text.contains("sharing against private links"),
        "{text}"
    );

    // The 16 busiest: the leaves' 8 uplinks, each way (a leaf's 4
    // messages to the next leaf over its 2 uplinks), none a host's link.
    let busiest = l["busiest"].as_array().unwrap();
    assert_eq!(busiest.len(), 16);
    for b in busiest {
        let name = b["name"].as_str().unwrap();
        assert!(host_link(name).is_none(), "{name} among the busiest:\n{text}");
        assert!(text.contains(name), "{name} not in the text:\n{text}");
    }
    // By level: the hosts' links (16 each way) and the leaves' uplinks
    // (8 each way), these the busiest of the two, drawn by level.
    let levels = l["levels"].as_array().unwrap();
    let tier = |i: usize, key: &str| levels[i][key].clone();
    assert_eq!(levels.len(), 2, "{l}");
    assert_eq!(
        (tier(0, "level"), tier(1, "level")),
        ("level 1".into(), "level 2".into())
    );
    assert_eq!((tier(0, "links"), tier(0, "used")), (32.into(), 32.into()));
    assert_eq!((tier(1, "links"), tier(1, "used")), (16.into(), 16.into()));
    let (max1, max2) = (
        tier(0, "max_utilisation_pct").as_f64().unwrap(),
        tier(1, "max_utilisation_pct").as_f64().unwrap(),
    );
    assert!(
        max2 > max1,
        "the uplinks are the busier level: {max2} against {max1}"
    );
    assert_eq!(
        tier(1, "busiest")[0],
        busiest[0],
        "the network's busiest is level 2's"
    );
    assert!(
        text.contains("links by level") && text.contains("level 2"),
        "{text}"
    );
    let svg = std::fs::read_to_string(case.dir().join("links.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("level 1 (32 links)") && svg.contains("level 2 (16 links)")
    );

    // Bytes: a host's link carries what it sends up and what it receives
    // down; every message across leaves crosses one uplink up and one
    // down, two of them on each (the fat tree routes by the destination).
    let wire = |b: u64| b as f64 + ENVELOPE;
    let all = l["all"].as_array().unwrap();
    let (mut up, mut down) = (0.0, 0.0);
    for link in all {
        let name = link["name"].as_str().unwrap();
        let bytes = link["bytes"].as_f64().unwrap();
        let busy = link["busy_s"].as_f64().unwrap();
        assert!(
            busy > 0.0 && busy <= runtime,
            "{name}: busy {busy} s in a run of {runtime} s"
        );
        if host_link(name).is_some() {
            assert_eq!(bytes, wire(ACROSS) + wire(WITHIN), "{name}");
        } else {
            assert_eq!(bytes, 2.0 * wire(ACROSS), "{name}");
            *if name.ends_with("_UP") { &mut up } else { &mut down } += bytes;
        }
    }
    assert_eq!((up, down), (16.0 * wire(ACROSS), 16.0 * wire(ACROSS)));
    assert_eq!(tier(1, "bytes").as_f64().unwrap(), up + down);
    assert_eq!(all.len(), 48, "16 hosts' and 8 uplinks' links, each way");

    // Two messages share each uplink: the run and every rank end later
    // than on private links, and the uplinks were charged for it.
    let s = &l["slowdown"];
    let ratio = s["ratio"].as_f64().unwrap();
    assert!(ratio > 1.2, "{s}");
    assert_eq!(s["shared_runtime_s"].as_f64().unwrap(), runtime);
    for r in s["ranks"].as_array().unwrap() {
        assert!(r["ratio"].as_f64().unwrap() > 1.0, "{r}");
    }
    let slowed: f64 = busiest.iter().map(|b| b["slowed_s"].as_f64().unwrap()).sum();
    assert!(slowed > 0.0, "{l}");
    // The trace records no call site: the slowdown by site is by routine,
    // all of it in the ranks' one wait.
    let sites = s["sites"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{s}");
    assert_eq!(
        (&sites[0]["site"], sites[0]["calls"].as_u64()),
        (&"(no site)".into(), Some(16))
    );
    assert!(sites[0]["routine"].as_str().unwrap().contains("aitall"), "{s}");
    assert!(sites[0]["extra_s"].as_f64().unwrap() > 0.0, "{s}");
}

#[test]
fn messages_that_share_no_link_are_not_slowed() {
    // One message a leaf pair at a time, on links of its own: the run on
    // private links is the same run.
    let case = Case::new();
    case.write("m.toml", MACHINE);
    trace(&case, &|r| {
        if r % 4 == 0 {
            vec![((r + 4) % 16, ACROSS)]
        } else {
            vec![]
        }
    });
    let (text, l, _) = links(&case, &[]);
    let s = &l["slowdown"];
    let ratio = s["ratio"].as_f64().unwrap();
    assert!((ratio - 1.0).abs() < 1e-12, "{ratio}:\n{text}");
    for link in l["all"].as_array().unwrap() {
        assert_eq!(link["slowed_s"].as_f64().unwrap(), 0.0, "{link}");
    }
    // A model that shares no link has no links to report.
    let out = pnmpi_cli(
        &[
            "sim",
            "replay",
            "index.txt",
            "-m",
            "m.toml",
            "--model",
            "simple",
            "--links",
        ],
        case.dir(),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("--links: the simple model shares no link"),
        "{said}"
    );
}

#[test]
fn compare_names_each_machines_busiest_link() {
    // The same traffic on the tapered tree and on the full one (4
    // uplinks a leaf): the uplinks are the busiest only when tapered, and
    // flows lose more to sharing there.
    let case = Case::new();
    case.write("m.toml", MACHINE);
    case.write(
        "full.toml",
        &MACHINE
            .replace("2;4,4;1,2;1,1", "2;4,4;1,4;1,1")
            .replace("tapered fat tree", "full fat tree"),
    );
    trace(&case, &|r| vec![((r + 4) % 16, ACROSS), (r ^ 1, WITHIN)]);
    let out = pnmpi_cli(
        &[
            "sim",
            "compare",
            "index.txt",
            "-m",
            "m.toml",
            "-m",
            "full.toml",
            "--models",
            "cm02,simple",
            "--links",
            "--json",
            "c.json",
        ],
        case.dir(),
    );
    let text = succeeded(out);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(case.dir().join("c.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    let row = |machine: &str, model: &str| {
        rows.iter()
            .find(|r| r["machine"] == machine && r["model"] == model)
            .unwrap_or_else(|| panic!("no {machine} {model}:\n{text}"))
    };
    assert!(
        row("tapered fat tree", "simple").get("links").is_none(),
        "simple shares no link"
    );
    let (tapered, full) = (
        &row("tapered fat tree", "cm02")["links"],
        &row("full fat tree", "cm02")["links"],
    );
    let busiest = |l: &Value| l["busiest"].as_str().unwrap().to_owned();
    assert!(host_link(&busiest(tapered)).is_none(), "{text}");
    assert!(host_link(&busiest(full)).is_some(), "{text}");
    assert!(
        tapered["slowed_s"].as_f64().unwrap() > full["slowed_s"].as_f64().unwrap(),
        "{text}"
    );
    assert!(
        text.contains(&busiest(tapered)) && text.contains("busiest link"),
        "{text}"
    );
    // The difference, level by level: the tapered tree loses the most at
    // its uplinks, the full tree at its hosts' links (a host's two sends).
    let level = |l: &Value| l["slowed_level"].as_str().unwrap().to_owned();
    assert_eq!(
        (level(tapered), level(full)),
        ("level 2".into(), "level 1".into()),
        "{text}"
    );
    assert!(tapered["slowed_level_s"].as_f64().unwrap() <= tapered["slowed_s"].as_f64().unwrap());
    assert!(text.contains("most slowed"), "{text}");
}

#[test]
fn a_traced_program_names_the_call_sites_sharing_slowed() {
    // a2a.c's all-to-all and exchanges with the ranks 4 and 8 away cross
    // the tapered tree's uplinks: the slowdown by call site names its
    // lines, the routine called there, and every rank's calls.
    let (case, trace) = traced("a2a", 16, &["2"]);
    case.write(
        "m.toml",
        &format!("{MACHINE}[collectives]\nmode = \"algorithmic\"\n"),
    );
    let t = trace.display().to_string();
    let args = [
        "sim", "replay", &t, "-m", "m.toml", "--links", "50", "--json", "o.json",
    ];
    let text = succeeded(pnmpi_cli(&args, case.dir()));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(case.dir().join("o.json")).unwrap()).unwrap();
    let sites = json["links"]["slowdown"]["sites"].as_array().unwrap().clone();
    let line_of = |call: &str| {
        let src = std::fs::read_to_string(repo().join("c-tests/programs/a2a.c")).unwrap();
        src.lines().position(|l| l.contains(call)).unwrap() + 1
    };
    for (routine, call) in [
        ("MPI_Alltoall", "MPI_Alltoall("),
        ("MPI_Sendrecv", "MPI_Sendrecv("),
    ] {
        let place = format!("a2a.c:{}", line_of(call));
        let site = sites
            .iter()
            .find(|s| s["routine"] == routine && s["site"].as_str().unwrap().contains(&place))
            .unwrap_or_else(|| panic!("no {routine} at {place} among {sites:?}\n{text}"));
        // Two iterations, 16 ranks; the exchanges twice an iteration.
        let per = if routine == "MPI_Sendrecv" { 4 } else { 2 };
        assert_eq!(site["calls"].as_u64(), Some(16 * per), "{site}");
        let (shared, private) = (
            site["shared_s"].as_f64().unwrap(),
            site["private_s"].as_f64().unwrap(),
        );
        assert!(shared > private && private > 0.0, "{site}");
        assert!(text.contains(&place), "{text}");
    }
}
