//! `-m platform.xml`: a SimGrid platform file read as the machine it
//! describes. It takes the SimGrid export's own platform (a `<zone
//! routing="Cluster">` of hosts with identical private links, `<host_link>`s
//! and loopback `<route>`s) and one `<cluster>`, flat (with its backbone)
//! or of topology `FAT_TREE`, `DRAGONFLY` or `TORUS`, with SimGrid's units.
//! The platform becomes the machine file that says the same (hosts as
//! nodes, `[network.topology]` with the cluster's links, a host's loopback
//! as `[network.intra]`), with the flat parts of the export's
//! `machine.toml`: eager below 64 KiB, a 16-byte envelope, SimGrid's
//! collective algorithms, so that with the export README's `smpirun`
//! options both simulators model one machine. Anything else is an error
//! naming the file, the line and the element.

use roxmltree::{Document, Node};
use std::fmt::Write as _;

/// Whether a machine file's text is a platform file (XML).
pub(super) fn is_platform(source: &str) -> bool {
    source.trim_start().starts_with('<')
}

/// SimGrid's unit prefixes, decimal and binary.
fn prefixed(s: &str, units: &[(&str, f64)]) -> Option<f64> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .unwrap_or(s.len());
    let value: f64 = s[..end]
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let unit = &s[end..];
    let prefixes = [
        ("", 1.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("Ki", 1024.0),
        ("Mi", 1024f64.powi(2)),
        ("Gi", 1024f64.powi(3)),
        ("Ti", 1024f64.powi(4)),
    ];
    for (base, scale) in units {
        if let Some(p) = unit.strip_suffix(base) {
            if let Some((_, f)) = prefixes.iter().find(|(q, _)| *q == p) {
                return Some(value * f * scale);
            }
        }
    }
    None
}

/// A bandwidth in SimGrid's units (`Bps`, `bps` with prefixes), B/s.
fn bandwidth(s: &str) -> Result<f64, String> {
    prefixed(s, &[("Bps", 1.0), ("bps", 0.125)])
        .filter(|&b| b > 0.0)
        .ok_or_else(|| format!("`{s}` is not a bandwidth in SimGrid's units (e.g. 10GBps, 100Gbps)"))
}

/// A time in SimGrid's units, ns.
fn time(s: &str) -> Result<f64, String> {
    let units = [
        ("ps", 1e-3),
        ("ns", 1.0),
        ("us", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
        ("m", 6e10),
        ("h", 3.6e12),
    ];
    let s = s.trim();
    units
        .iter()
        .find_map(|&(u, f)| {
            let v: f64 = s.strip_suffix(u)?.parse().ok()?;
            (v.is_finite() && v >= 0.0).then_some(v * f)
        })
        .or_else(|| s.parse::<f64>().ok().filter(|v| *v >= 0.0).map(|v| v * 1e9))
        .ok_or_else(|| format!("`{s}` is not a time in SimGrid's units (e.g. 2.5us, 1ms)"))
}

/// A speed in SimGrid's units (`f`, `flops`, with prefixes), flop/s.
fn speed(s: &str) -> Result<f64, String> {
    prefixed(s, &[("flops", 1.0), ("f", 1.0)])
        .filter(|&f| f > 0.0)
        .ok_or_else(|| format!("`{s}` is not one speed in SimGrid's units (e.g. 1Gf)"))
}

/// What a platform has that cannot be read: its 1-based line and what
/// is wrong (the machine's error adds the file).
pub(super) type Fault = (usize, String);

/// Reads one platform file.
struct Reader<'a> {
    doc: &'a Document<'a>,
}

impl Reader<'_> {
    fn err(&self, n: Node, what: String) -> Fault {
        (
            self.doc.text_pos_at(n.range().start).row as usize,
            format!("<{}>: {what}", n.tag_name().name()),
        )
    }

    /// Its attributes, each checked to be one pnmpi reads.
    fn attrs(&self, n: Node, known: &[&str]) -> Result<(), Fault> {
        match n.attributes().find(|a| !known.contains(&a.name())) {
            Some(a) => Err(self.err(
                n,
                format!(
                    "attribute `{}` is not one pnmpi reads (it reads {})",
                    a.name(),
                    known.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    fn get<'n>(&self, n: Node<'n, '_>, name: &str) -> Result<&'n str, Fault> {
        n.attribute(name)
            .ok_or_else(|| self.err(n, format!("needs attribute `{name}`")))
    }

    fn value<T>(&self, n: Node, name: &str, parse: fn(&str) -> Result<T, String>) -> Result<T, Fault> {
        parse(self.get(n, name)?).map_err(|e| self.err(n, format!("{name}: {e}")))
    }

    fn elements<'n>(&self, n: Node<'n, 'n>) -> impl Iterator<Item = Node<'n, 'n>> {
        n.children()
            .filter(|c| c.is_element() && c.tag_name().name() != "prop")
    }
}

/// The machine file `source` (a platform) describes, as TOML, and the
/// line of the element it comes from (for the errors found in it).
pub(super) fn to_toml(source: &str) -> Result<(String, usize), Fault> {
    // SimGrid's platforms name their DTD.
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = Document::parse_with_options(source, options)
        .map_err(|e| (e.pos().row as usize, format!("not a SimGrid platform: {e}")))?;
    let r = Reader { doc: &doc };
    let root = doc.root_element();
    if root.tag_name().name() != "platform" {
        return Err(r.err(root, "a SimGrid platform file's root is <platform>".into()));
    }
    let parts: Vec<Node> = r.elements(root).collect();
    let [zone] = parts[..] else {
        return Err(r.err(
            root,
            format!(
                "pnmpi reads a platform of one <cluster> or one <zone routing=\"Cluster\">; this one has {} elements",
                parts.len()
            ),
        ));
    };
    let line = doc.text_pos_at(zone.range().start).row as usize;
    match zone.tag_name().name() {
        "cluster" => cluster(&r, zone).map(|t| (t, line)),
        "zone" => star_zone(&r, zone).map(|t| (t, line)),
        other => Err(r.err(
            zone,
            format!("<{other}> is not read: give one <cluster> or one <zone routing=\"Cluster\">"),
        )),
    }
}

/// The TOML of a machine of `hosts` nodes of `cores` and speed `flops`,
/// its loopback (latency ns, bandwidth B/s), the least bandwidth of its
/// links, and its `[network.topology]` keys.
fn machine(hosts: usize, cores: u32, flops: f64, loopback: (f64, f64), least: f64, topology: &str) -> String {
    format!(
        "[machine]\nname = \"SimGrid platform: {hosts} hosts\"\nmodel = \"cm02\"\nnodes = {hosts}\ncores_per_node = {cores}\n\
         cpu_ratio = {:?}\n\n[network]\nlatency = \"0s\"\nbandwidth = \"{least:?}B/s\"\n\
         eager_threshold = \"65535B\"\nenvelope = \"16B\"\n\n[network.intra]\nlatency = \"{:?}ns\"\n\
         bandwidth = \"{:?}B/s\"\n\n[collectives]\nmode = \"algorithmic\"\n\n[network.topology]\n{topology}",
        flops / 1e9,
        loopback.0,
        loopback.1
    )
}

/// The hosts' indices of a `radical` list (`0-15`, `0-3,4-7`): they must
/// be 0, 1, ... in order, as the nodes are numbered.
fn radicals(r: &Reader, n: Node) -> Result<usize, Fault> {
    let text = r.get(n, "radical")?;
    let mut next = 0u64;
    for part in text.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u64, u64) = match (a.trim().parse(), b.trim().parse()) {
            (Ok(a), Ok(b)) if a == next && b >= a => (a, b),
            _ => {
                return Err(r.err(
                    n,
                    format!(
                    "radical `{text}`: pnmpi numbers hosts 0, 1, ... in order; write e.g. radical=\"0-15\""
                ),
                ))
            }
        };
        next = b + 1;
        let _ = a;
    }
    Ok(next as usize)
}

fn cluster(r: &Reader, n: Node) -> Result<String, Fault> {
    r.attrs(
        n,
        &[
            "id",
            "prefix",
            "suffix",
            "radical",
            "speed",
            "core",
            "bw",
            "lat",
            "sharing_policy",
            "topology",
            "topo_parameters",
            "bb_bw",
            "bb_lat",
            "bb_sharing_policy",
            "router_id",
            "limiter_link",
            "loopback_bw",
            "loopback_lat",
        ],
    )?;
    if let Some(c) = r.elements(n).next() {
        return Err(r.err(c, "a <cluster> holds only <prop>s".into()));
    }
    let id = r.get(n, "id")?;
    let hosts = radicals(r, n)?;
    let flops = r.value(n, "speed", speed)?;
    let cores: u32 = match n.attribute("core") {
        None => 1,
        Some(c) => c
            .trim()
            .parse()
            .ok()
            .filter(|&c| c > 0)
            .ok_or_else(|| r.err(n, format!("core `{c}` is not a count of at least 1")))?,
    };
    let bw = r.value(n, "bw", bandwidth)?;
    let lat = r.value(n, "lat", time)?;
    // SimGrid 3.32 makes a cluster's FATPIPE links SHARED.
    let sharing = match n.attribute("sharing_policy").unwrap_or("SPLITDUPLEX") {
        "SPLITDUPLEX" | "FULLDUPLEX" => "splitduplex",
        "SHARED" | "FATPIPE" => "shared",
        other => {
            return Err(r.err(
                n,
                format!("sharing_policy `{other}`: use SHARED, SPLITDUPLEX or FATPIPE"),
            ))
        }
    };
    let mut least = bw;
    let mut topology = format!(
        "name = {id:?}\nbandwidth = \"{bw:?}B/s\"\nlatency = \"{lat:?}ns\"\nsharing = \"{sharing}\"\n"
    );
    let kind = n.attribute("topology").unwrap_or("FLAT");
    let params = n.attribute("topo_parameters").unwrap_or("");
    let shape = match kind {
        "FLAT" => "cluster",
        "FAT_TREE" => "fat_tree",
        "DRAGONFLY" => "dragonfly",
        "TORUS" => "torus",
        other => {
            return Err(r.err(
                n,
                format!("topology `{other}`: use FLAT, FAT_TREE, DRAGONFLY or TORUS"),
            ))
        }
    };
    let _ = writeln!(topology, "shape = \"{shape}\"");
    if kind != "FLAT" {
        let _ = writeln!(topology, "topology = {params:?}");
    }
    if let Some(l) = n.attribute("limiter_link").filter(|l| !l.is_empty()) {
        let l = bandwidth(l).map_err(|e| r.err(n, format!("limiter_link: {e}")))?;
        least = least.min(l);
        let _ = writeln!(topology, "limiter = \"{l:?}B/s\"");
    }
    let bb_lat = match n.attribute("bb_lat") {
        Some(t) => time(t).map_err(|e| r.err(n, format!("bb_lat: {e}")))?,
        None => 0.0,
    };
    match n.attribute("bb_bw").filter(|b| !b.is_empty()) {
        Some(b) if kind == "FLAT" => {
            let b = bandwidth(b).map_err(|e| r.err(n, format!("bb_bw: {e}")))?;
            least = least.min(b);
            let policy = match n.attribute("bb_sharing_policy").unwrap_or("SHARED") {
                "SHARED" => "shared",
                "FATPIPE" => "fatpipe",
                other => return Err(r.err(n, format!("bb_sharing_policy `{other}`: use SHARED or FATPIPE"))),
            };
            let _ = write!(
                topology,
                "[network.topology.backbone]\nbandwidth = \"{b:?}B/s\"\nlatency = \"{bb_lat:?}ns\"\nsharing = \"{policy}\"\n"
            );
        }
        None if kind == "FLAT" && bb_lat > 0.0 => {
            return Err(r.err(
                n,
                "bb_lat without bb_bw: SimGrid makes a backbone of no bandwidth; give bb_bw".into(),
            ))
        }
        _ => {}
    }
    let loopback = match (n.attribute("loopback_bw"), n.attribute("loopback_lat")) {
        (None, None) => (0.0, bw),
        (Some(b), Some(l)) => (
            time(l).map_err(|e| r.err(n, format!("loopback_lat: {e}")))?,
            bandwidth(b).map_err(|e| r.err(n, format!("loopback_bw: {e}")))?,
        ),
        _ => return Err(r.err(n, "give both loopback_bw and loopback_lat, or neither".into())),
    };
    Ok(machine(hosts, cores, flops, loopback, least, &topology))
}

/// A declared link: bandwidth, latency, policy.
type Declared = (f64, f64, String);

/// The export's own platform: a `<zone routing="Cluster">` of hosts whose
/// private links (one up and one down each) are alike.
fn star_zone(r: &Reader, z: Node) -> Result<String, Fault> {
    r.attrs(z, &["id", "routing"])?;
    if z.attribute("routing") != Some("Cluster") {
        return Err(r.err(
            z,
            "pnmpi reads a <zone routing=\"Cluster\"> (or a <cluster>)".into(),
        ));
    }
    let mut links: std::collections::HashMap<&str, Declared> = Default::default();
    let (mut hosts, mut host_links, mut loops) = (Vec::new(), Vec::new(), Vec::new());
    for n in r.elements(z) {
        match n.tag_name().name() {
            "host" => {
                r.attrs(n, &["id", "speed", "core"])?;
                let cores: u32 = n
                    .attribute("core")
                    .unwrap_or("1")
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&c| c > 0)
                    .ok_or_else(|| r.err(n, "core is not a count of at least 1".into()))?;
                hosts.push((r.get(n, "id")?, r.value(n, "speed", speed)?, cores, n));
            }
            "link" => {
                r.attrs(n, &["id", "bandwidth", "latency", "sharing_policy"])?;
                let policy = n.attribute("sharing_policy").unwrap_or("SHARED");
                if !matches!(policy, "SHARED" | "FATPIPE") {
                    return Err(r.err(
                        n,
                        format!("sharing_policy `{policy}`: a host link here is SHARED or FATPIPE"),
                    ));
                }
                let lat = match n.attribute("latency") {
                    Some(t) => time(t).map_err(|e| r.err(n, format!("latency: {e}")))?,
                    None => 0.0,
                };
                links.insert(
                    r.get(n, "id")?,
                    (r.value(n, "bandwidth", bandwidth)?, lat, policy.to_owned()),
                );
            }
            "host_link" => {
                r.attrs(n, &["id", "up", "down"])?;
                host_links.push((r.get(n, "id")?, r.get(n, "up")?, r.get(n, "down")?, n));
            }
            "route" => {
                r.attrs(n, &["src", "dst", "symmetrical"])?;
                let ctn: Vec<Node> = r.elements(n).collect();
                match (r.get(n, "src")? == r.get(n, "dst")?, &ctn[..]) {
                    (true, [l]) if l.tag_name().name() == "link_ctn" => loops.push((r.get(*l, "id")?, n)),
                    _ => {
                        return Err(r.err(
                            n,
                            "pnmpi reads only a host's loopback route here: src = dst, one <link_ctn>".into(),
                        ))
                    }
                }
            }
            other => {
                return Err(r.err(
                    n,
                    format!("<{other}> is not read in a <zone routing=\"Cluster\">"),
                ))
            }
        }
    }
    let Some(&(_, flops, cores, _)) = hosts.first() else {
        return Err(r.err(z, "the zone has no <host>".into()));
    };
    if let Some(&(id, _, _, n)) = hosts.iter().find(|h| h.1 != flops || h.2 != cores) {
        return Err(r.err(
            n,
            format!("host `{id}` differs from the first in speed or cores: pnmpi reads hosts alike"),
        ));
    }
    let find = |id: &str, n: Node| {
        links
            .get(id)
            .cloned()
            .ok_or_else(|| r.err(n, format!("no <link id=\"{id}\"> declared before")))
    };
    let mut private: Option<(Declared, bool)> = None;
    for &(host, _, _, n) in &hosts {
        let Some(&(_, up, down, hl)) = host_links.iter().find(|h| h.0 == host) else {
            return Err(r.err(n, format!("host `{host}` has no <host_link>")));
        };
        let spec = (find(up, hl)?, up != down);
        if spec.1 && find(down, hl)? != spec.0 {
            return Err(r.err(
                hl,
                format!("host `{host}`'s up and down links differ: pnmpi reads them alike"),
            ));
        }
        match &private {
            Some(p) if *p != spec => {
                return Err(r.err(
                    hl,
                    format!("host `{host}`'s links differ from the first host's: pnmpi reads them alike"),
                ))
            }
            _ => private = Some(spec),
        }
    }
    let ((bw, lat, policy), split) = private.expect("there are hosts");
    let sharing = match (split, policy.as_str()) {
        (true, "SHARED") => "splitduplex",
        (true, _) => return Err(r.err(z, "split FATPIPE host links: give one link up and down".into())),
        (false, "FATPIPE") => "fatpipe",
        _ => "shared",
    };
    let loopback = match loops.first() {
        None => (0.0, bw),
        Some(&(id, n)) => {
            let l = find(id, n)?;
            if let Some(&(other, n)) = loops.iter().find(|(i, n)| find(i, *n).ok() != Some(l.clone())) {
                return Err(r.err(
                    n,
                    format!("loopback `{other}` differs from the first: pnmpi reads them alike"),
                ));
            }
            if loops.len() != hosts.len() {
                return Err(r.err(
                    z,
                    format!(
                        "{} loopback routes for {} hosts: give one per host, or none",
                        loops.len(),
                        hosts.len()
                    ),
                ));
            }
            (l.1, l.0)
        }
    };
    let topology = format!(
        "shape = \"cluster\"\nname = {:?}\nbandwidth = \"{bw:?}B/s\"\nlatency = \"{lat:?}ns\"\nsharing = \"{sharing}\"\n",
        z.attribute("id").unwrap_or("world")
    );
    Ok(machine(hosts.len(), cores, flops, loopback, bw, &topology))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::machine::Machine;

    /// The SimGrid export's platform of 3 hosts.
    const EXPORT: &str = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
        <platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Cluster\">\n\
        <host id=\"node-0\" speed=\"1Gf\"/>\n<link id=\"link-0\" bandwidth=\"10GBps\" latency=\"2.5us\" sharing_policy=\"FATPIPE\"/>\n\
        <host_link id=\"node-0\" up=\"link-0\" down=\"link-0\"/>\n<link id=\"loop-0\" bandwidth=\"20GBps\" latency=\"0us\" sharing_policy=\"FATPIPE\"/>\n\
        <host id=\"node-1\" speed=\"1Gf\"/>\n<link id=\"link-1\" bandwidth=\"10GBps\" latency=\"2.5us\" sharing_policy=\"FATPIPE\"/>\n\
        <host_link id=\"node-1\" up=\"link-1\" down=\"link-1\"/>\n<link id=\"loop-1\" bandwidth=\"20GBps\" latency=\"0us\" sharing_policy=\"FATPIPE\"/>\n\
        <route src=\"node-0\" dst=\"node-0\"><link_ctn id=\"loop-0\"/></route>\n\
        <route src=\"node-1\" dst=\"node-1\"><link_ctn id=\"loop-1\"/></route>\n  </zone>\n</platform>\n";

    #[test]
    fn the_exports_platform_is_its_machine() {
        let m = Machine::parse("platform.xml", EXPORT).expect("valid");
        assert_eq!(m.nodes.len(), 2);
        assert_eq!(m.network.eager_threshold.0, 65535);
        assert_eq!(m.network.envelope.0, 16);
        // 2.5 us a link, two links: the export's machine.toml's 5 us.
        assert_eq!(m.hop_delay(0, 1), 5000.0);
        assert_eq!(m.p2p_cost(0, 1, 1000), 5000.0 + 1016.0 / 10.0);
        assert_eq!(m.level(0, 0).cost(2000), 100.0);
        let g = m.graph().expect("a graph");
        assert!(g
            .links()
            .iter()
            .all(|l| l.sharing == crate::network::Sharing::Fatpipe));
    }

    #[test]
    fn what_it_cannot_take_names_the_line_and_the_element() {
        let cases = [
            (EXPORT.replace("<host_link id=\"node-1\"", "<host_link id=\"node-9\""), "platform.xml:9: <host>: host `node-1` has no <host_link>"),
            (EXPORT.replace("latency=\"2.5us\" sharing_policy=\"FATPIPE\"/>\n<host_link id=\"node-1\"", "latency=\"3us\" sharing_policy=\"FATPIPE\"/>\n<host_link id=\"node-1\""), "platform.xml:11: <host_link>: host `node-1`'s links differ"),
            (EXPORT.replace("<route src=\"node-1\" dst=\"node-1\">", "<route src=\"node-1\" dst=\"node-0\">"), "platform.xml:14: <route>: pnmpi reads only a host's loopback route"),
            ("<platform><cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\" topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,4;1,1\"/></platform>".into(), "platform.xml:1: [network.topology] FAT_TREE 2;4,4;1,4;1,1's make 16 positions but [machine] has 4 nodes"),
            ("<platform>\n<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"1-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/></platform>".into(), "platform.xml:2: <cluster>: radical `1-3`"),
            ("<platform>\n<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1GB/s\" lat=\"1us\"/></platform>".into(), "platform.xml:2: <cluster>: bw: `1GB/s` is not a bandwidth"),
            ("<platform>\n<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\" color=\"red\"/></platform>".into(), "platform.xml:2: <cluster>: attribute `color` is not one pnmpi reads"),
            ("<platform>\n<zone id=\"a\" routing=\"Full\"/></platform>".into(), "platform.xml:2: <zone>: pnmpi reads a <zone routing=\"Cluster\">"),
            ("<platform><cluster></platform>".into(), "platform.xml:1: not a SimGrid platform"),
        ];
        for (xml, want) in cases {
            let e = Machine::parse("platform.xml", &xml).expect_err(want).to_string();
            assert!(e.contains(want), "want `{want}` in `{e}`");
        }
    }

    #[test]
    fn simgrid_units() {
        assert_eq!(bandwidth("10GBps"), Ok(1e10));
        assert_eq!(bandwidth("100Gbps"), Ok(1.25e10));
        assert_eq!(bandwidth("1KiBps"), Ok(1024.0));
        assert_eq!(time("2.5us"), Ok(2500.0));
        assert_eq!(time("1ms"), Ok(1e6));
        assert_eq!(speed("1Gf"), Ok(1e9));
        assert!(bandwidth("10GB/s").is_err());
        assert!(time("fast").is_err());
    }
}
