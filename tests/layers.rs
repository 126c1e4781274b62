//! libpnmpi's modules depend on each other one way: the entry table at the
//! bottom; the link-stack tables, the binding and the loaded chain above
//! it; start-up above those; the exported stubs, which every call comes in
//! by, on top. This reads `src/` and fails on any import cycle between its
//! top-level modules, naming the cycle, and on a layer that reaches above
//! itself in the order the architecture gives.
//!
//! Virtual ranks (`modules/vranks/src`) are layered the same way, with
//! their own order: the scheduler of contexts at the bottom, knowing
//! nothing of messages; point-to-point, then the collectives on it; the
//! spread over processes; the tracer, an observer; the engine that
//! composes them; the report and the MPI API on top; start-up last.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, bottom first, of the modules this order constrains (the
/// leaves below them, `config`, `error`, `loader`, `level`, `caller`,
/// `vranks`, may be used by any).
const ORDER: [&str; 7] = [
    "entry", "dispatch", "binding", "chain", "fortran", "startup", "stubs",
];

/// The layers of virtual ranks, bottom first.
const VRANKS_ORDER: [&str; 10] = [
    "sched", "p2p", "coll", "dist", "trace", "engine", "report", "api", "fortran", "start",
];

/// The modules of virtual ranks any layer may use, which use no layer.
const VRANKS_LEAVES: [&str; 9] = [
    "timing", "comm", "cart", "handles", "dtype", "globals", "stack", "overflow", "options",
];

/// The first path segments after `crate::` in `text`, groups included
/// (`use crate::{a, b::c}` gives `a` and `b`).
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level entries of the group, up to its closing brace.
            let (mut depth, mut entry) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(first_segment(&entry));
                        entry.clear();
                        continue;
                    }
                    _ => {}
                }
                entry.push(c);
            }
            out.insert(first_segment(&entry));
        } else {
            out.insert(first_segment(rest));
        }
    }
    out.remove("");
    out
}

fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Module name -> the modules it names, for every top-level module of
/// `src/` (a folder's files count as its module's).
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut visit = |module: String, file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        let refs = crate_refs(&text);
        let entry = g.entry(module.clone()).or_default();
        entry.extend(refs.into_iter().filter(|r| *r != module));
    };
    for e in std::fs::read_dir(src).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            for f in std::fs::read_dir(&path).unwrap() {
                visit(name.clone(), &f.unwrap().path());
            }
        } else if name != "lib" {
            visit(name, &path);
        }
    }
    g
}

/// A cycle of `g`, if any: the modules on it, the first one again at the end.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn walk(
        g: &BTreeMap<String, BTreeSet<String>>,
        at: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            let mut c = path[i..].to_vec();
            c.push(at.to_string());
            return Some(c);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in g.get(at).into_iter().flatten() {
            if let Some(c) = walk(g, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|m| walk(g, m, &mut Vec::new(), &mut done))
}

/// Fails on an import cycle between the top-level modules of `src`, on
/// a module of `order` (bottom first) that names one above it, and on a
/// module of `leaves` that names any of `order`.
fn check_layers(src: &str, order: &[&str], leaves: &[&str]) {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join(src));
    for m in order {
        assert!(g.contains_key(*m), "{src}/ has no module {m}: {:?}", g.keys());
    }
    assert_eq!(cycle(&g), None, "an import cycle in {src}/");
    for (low, m) in order.iter().enumerate() {
        let above: Vec<&&str> = order[low + 1..]
            .iter()
            .filter(|up| g[*m].contains(**up))
            .collect();
        assert!(above.is_empty(), "{src}: {m} names {above:?}, above it");
    }
    for m in leaves {
        let refs = g.get(*m).unwrap_or_else(|| panic!("{src}/ has no module {m}"));
        let layers: Vec<&String> = refs.iter().filter(|r| order.contains(&r.as_str())).collect();
        assert!(layers.is_empty(), "{src}: leaf {m} names the layers {layers:?}");
    }
}

#[test]
fn the_library_modules_depend_on_each_other_one_way() {
    check_layers("src", &ORDER, &[]);
}

#[test]
fn the_virtual_ranks_layers_depend_on_each_other_one_way() {
    check_layers("modules/vranks/src", &VRANKS_ORDER, &VRANKS_LEAVES);
}

/// The checker itself: a group, a nested group and a plain path are
/// read, and a cycle is found and named.
#[test]
fn the_checker_reads_groups_and_finds_cycles() {
    let refs = crate_refs("use crate::{a, b::{c, d}, e::F};\nlet x = crate::g::h();");
    assert_eq!(refs, ["a", "b", "e", "g"].iter().map(|s| s.to_string()).collect());
    let g: BTreeMap<String, BTreeSet<String>> = [("x", "y"), ("y", "z"), ("z", "x")]
        .iter()
        .map(|(a, b)| (a.to_string(), [b.to_string()].into()))
        .collect();
    assert_eq!(cycle(&g).unwrap().len(), 4);
}
