//! The workspace is built in layers, and every crate's files depend on
//! each other one way. This reads the code's own paths (`crate::`,
//! `super::`, `self::`, a parent naming its child module) and fails
//!
//! - on a crate whose workspace dependencies are not all in lower layers
//!   of [`CRATE_LAYERS`] (or a member the table does not place);
//! - on an import circle between the files of any crate, naming every
//!   file on it and the paths that tie it;
//! - on a layer of libpnmpi (`src/`) or of virtual ranks that reaches
//!   above itself in the order the architecture gives them.
//!
//! libpnmpi's order: the entry table at the bottom; the link-stack
//! tables, the binding and the loaded chain above it; start-up above
//! those; the exported stubs, which every call comes in by, on top.
//! Virtual ranks (`modules/vranks/src`): the scheduler of contexts at the
//! bottom, knowing nothing of messages; point-to-point, then the
//! collectives on it; the spread over processes; the tracer, an
//! observer; the engine that composes them; the report and the MPI API
//! on top; start-up last.
//!
//! Test code (`mod tests`, a `tests.rs` module) is not read: tests may
//! reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, by folder, in layers, bottom first: a crate
/// depends only on crates of lower layers. The trace formats and the
/// tools that stand alone; the MPI binding and OTF2 over the trace
/// format; the SDK, the loader's object reading, the simulator and the
/// benchmark; libpnmpi and the modules, the analysis and the simulator's
/// MPI side; virtual ranks, the command line and the integration suite
/// on top.
const CRATE_LAYERS: [&[&str]; 5] = [
    &["trace", "plot", "stubgen", "patcher"],
    &["mpi-sys", "otf2"],
    &["sdk", "objects", "sim", "bench"],
    &[
        ".",
        "analyze",
        "jitter",
        "sim-mpi",
        "modules/empty",
        "modules/examples/sendcount",
        "modules/examples/sdktour",
        "modules/tracer",
        "modules/profiler",
        "modules/vtime",
        "modules/replay",
        "modules/checker",
        "modules/status",
        "modules/requests",
        "modules/piggyback",
        "modules/datatype",
        "modules/comm",
    ],
    &["modules/vranks", "cli", "tests"],
];

/// The layers, bottom first, of libpnmpi's modules this order constrains
/// (the leaves below them, `config`, `error`, `loader`, `level`, `caller`,
/// `vranks`, may be used by any).
const ORDER: [&str; 7] = [
    "entry", "dispatch", "binding", "chain", "fortran", "startup", "stubs",
];

/// The layers of virtual ranks, bottom first.
const VRANKS_ORDER: [&str; 10] = [
    "sched", "p2p", "coll", "dist", "trace", "engine", "report", "api", "fortran", "start",
];

/// The simulator's layers, bottom first: quantities; collectives as
/// point-to-point steps; the network's links and routes; the machine
/// file; the models; what a replay reads; the timing kernel; the replay
/// engine and GOAL's; reports, live runs and comparisons on top.
const SIM_ORDER: [&str; 12] = [
    "units",
    "algorithms",
    "network",
    "machine",
    "model",
    "input",
    "kernel",
    "engine",
    "goal",
    "report",
    "live",
    "compare",
];

/// The simulator's modules that use no layer of [`SIM_ORDER`].
const SIM_LEAVES: [&str; 2] = ["motif", "calibrate"];

/// The modules of virtual ranks any layer may use, which use no layer.
const VRANKS_LEAVES: [&str; 11] = [
    "timing",
    "comm",
    "cart",
    "handles",
    "dtype",
    "globals",
    "stack",
    "overflow",
    "options",
    "windows",
    "one_sided",
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The workspace members' folders, as the root manifest lists them.
fn members() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&text).unwrap();
    manifest["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

/// The package name of the crate in `dir`, and the names of the path
/// dependencies of its library and binaries (tests and build scripts may
/// use anything below them).
fn manifest(dir: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
    let m: toml::Value = toml::from_str(&text).unwrap();
    let name = m["package"]["name"].as_str().unwrap().to_string();
    let deps = m
        .get("dependencies")
        .and_then(|d| d.as_table())
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.get("path").is_some())
        .map(|(k, v)| v.get("package").and_then(|p| p.as_str()).unwrap_or(k).to_string())
        .collect();
    (name, deps)
}

/// A module path (`["engine", "parallel"]`), the crate root being `[]`.
type ModPath = Vec<String>;

/// Every source file of the crate in `dir` by module path, test modules
/// left out (a `src/main.rs` beside a `src/lib.rs` is a root too).
fn files(dir: &Path) -> BTreeMap<ModPath, PathBuf> {
    fn walk(at: &Path, prefix: &ModPath, out: &mut BTreeMap<ModPath, PathBuf>) {
        for e in std::fs::read_dir(at).unwrap() {
            let path = e.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if stem == "tests" || stem == "bin" {
                continue;
            }
            let mut m = prefix.clone();
            if path.is_dir() {
                m.push(stem);
                walk(&path, &m, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                if !(stem == "mod" || prefix.is_empty() && (stem == "lib" || stem == "main")) {
                    m.push(stem);
                }
                out.insert(m, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    // The integration suite (tests/) has no src/: test code is not read.
    let src = dir.join("src");
    if src.is_dir() {
        walk(&src, &Vec::new(), &mut out);
    }
    out
}

/// `text` without comments, string and character literals (their
/// contents blanked), so that only code is read.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
            out.push(b' ');
        } else if b[i] == b'r'
            && (rest.starts_with(b"r#") || rest.starts_with(b"r\""))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = rest[1..].iter().take_while(|c| **c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let from = i + 2 + hashes;
            i = text[from..]
                .find(&close)
                .map_or(b.len(), |e| from + e + close.len());
            out.extend_from_slice(b"\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '{'), not a lifetime.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|c| *c == b'\'').map(|p| p + 3)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            match len {
                Some(n) => {
                    i += n;
                    out.extend_from_slice(b"' '");
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The paths a use tree starting at `text` names, whole (`{a::{b, c}, d}`
/// gives `a::b`, `a::c` and `d`), each as its segments, and the bytes of
/// `text` the tree takes.
fn use_paths(text: &str) -> (Vec<Vec<String>>, usize) {
    fn tree(s: &[char], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        loop {
            while *at < s.len() && s[*at].is_whitespace() {
                *at += 1;
            }
            if s.get(*at) == Some(&'{') {
                *at += 1;
                loop {
                    tree(s, at, &path, out);
                    while *at < s.len() && s[*at].is_whitespace() {
                        *at += 1;
                    }
                    match s.get(*at) {
                        Some(',') => *at += 1,
                        Some('}') => {
                            *at += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *at < s.len() && s[*at].is_whitespace() {
                        *at += 1;
                    }
                    if s.get(*at) == Some(&'}') {
                        *at += 1;
                        return;
                    }
                }
            }
            let start = *at;
            while *at < s.len() && (s[*at].is_ascii_alphanumeric() || s[*at] == '_') {
                *at += 1;
            }
            if *at == start {
                break;
            }
            path.push(s[start..*at].iter().collect());
            if s.get(*at) == Some(&':') && s.get(*at + 1) == Some(&':') {
                *at += 2;
            } else {
                break;
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let chars: Vec<char> = text.chars().take(4000).collect();
    let (mut out, mut at) = (Vec::new(), 0);
    tree(&chars, &mut at, &[], &mut out);
    (out, chars[..at].iter().map(|c| c.len_utf8()).sum())
}

/// The module paths (whole, items included) that the file of module `at`
/// names, its inline modules' paths resolved from where they stand;
/// test modules are left out.
fn named_paths(text: &str, at: &ModPath, children: &BTreeSet<String>) -> Vec<ModPath> {
    let code = code_only(text);
    let b = code.as_bytes();
    let mut out = Vec::new();
    // Inline modules open here: (the brace depth inside them, name, test?).
    let mut inline: Vec<(usize, String, bool)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    let word_start = |i: usize| i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                if inline.last().is_some_and(|(d, _, _)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
        let rest = &code[i..];
        if word_start(i) && rest.starts_with("mod ") {
            let name: String = rest[4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = rest[4 + name.len()..].trim_start();
            if after.starts_with('{') {
                let test = name == "tests" || code[..i].trim_end().ends_with("#[cfg(test)]");
                inline.push((depth + 1, name, test));
            }
        }
        let in_test = inline.iter().any(|(_, _, t)| *t);
        if !in_test && word_start(i) && (b[i].is_ascii_alphabetic() || b[i] == b'_') {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let preceded_by_path = i >= 2 && &b[i - 2..i] == b"::";
            if rest[word.len()..].starts_with("::") && !preceded_by_path {
                let mut here: ModPath = at.clone();
                here.extend(inline.iter().map(|(_, n, _)| n.clone()));
                let (paths, taken) = use_paths(rest);
                for p in paths {
                    let (mut base, skip) = match p[0].as_str() {
                        "crate" => (Vec::new(), 1),
                        "self" => (here.clone(), 1),
                        "super" => (here[..here.len().saturating_sub(1)].to_vec(), 1),
                        // A child module of the file's own, named bare.
                        c if inline.is_empty() && children.contains(c) => (here.clone(), 0),
                        _ => continue,
                    };
                    let mut segs = p[skip..].iter().peekable();
                    while segs.next_if(|s| *s == "super").is_some() {
                        base.pop();
                    }
                    base.extend(segs.cloned());
                    out.push(base);
                }
                i += taken;
                continue;
            }
            i += word.len().max(1);
            continue;
        }
        i += 1;
    }
    out
}

/// File -> the files it names, for every file of the crate in `dir`
/// (a path names the file of its longest module prefix; the crate roots
/// name nothing, as they only declare and hand on).
fn file_graph(dir: &str) -> BTreeMap<ModPath, BTreeMap<ModPath, BTreeSet<String>>> {
    let files = files(&root().join(dir));
    let mut g = BTreeMap::new();
    for (m, file) in &files {
        let mut edges: BTreeMap<ModPath, BTreeSet<String>> = BTreeMap::new();
        if !m.is_empty() {
            let children: BTreeSet<String> = files
                .keys()
                .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
                .map(|k| k[m.len()].clone())
                .collect();
            let text = std::fs::read_to_string(file).unwrap();
            for p in named_paths(&text, m, &children) {
                let target = (0..=p.len())
                    .rev()
                    .map(|n| p[..n].to_vec())
                    .find(|q| files.contains_key(q));
                if let Some(t) = target.filter(|t| t != m && !t.is_empty()) {
                    let name = p.get(t.len()).cloned().unwrap_or_else(|| "*".into());
                    edges.entry(t).or_default().insert(name);
                }
            }
        }
        g.insert(m.clone(), edges);
    }
    g
}

/// The circles of `g`: its strongly connected components of more than one
/// node (Tarjan's algorithm).
fn circles<N: Ord + Clone>(g: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct State<N> {
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        out: Vec<Vec<N>>,
    }
    fn visit<N: Ord + Clone>(g: &BTreeMap<N, BTreeSet<N>>, n: &N, s: &mut State<N>) {
        let i = s.index.len();
        s.index.insert(n.clone(), i);
        s.low.insert(n.clone(), i);
        s.stack.push(n.clone());
        for m in g.get(n).into_iter().flatten() {
            if !s.index.contains_key(m) {
                visit(g, m, s);
                let low = s.low[n].min(s.low[m]);
                s.low.insert(n.clone(), low);
            } else if s.stack.contains(m) {
                let low = s.low[n].min(s.index[m]);
                s.low.insert(n.clone(), low);
            }
        }
        if s.low[n] == s.index[n] {
            let at = s.stack.iter().position(|x| x == n).unwrap();
            let component = s.stack.split_off(at);
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for n in g.keys() {
        if !s.index.contains_key(n) {
            visit(g, n, &mut s);
        }
    }
    s.out
}

/// The import circles between the files of the crate in `dir`, each told
/// as its files and the arrows that tie it (`a.rs -> b.rs: X, Y`).
fn file_circles(dir: &str) -> Vec<String> {
    let g = file_graph(dir);
    let plain: BTreeMap<ModPath, BTreeSet<ModPath>> = g
        .iter()
        .map(|(m, e)| (m.clone(), e.keys().cloned().collect()))
        .collect();
    let show = |m: &ModPath| format!("{dir}/src/{}", m.join("/"));
    circles(&plain)
        .into_iter()
        .map(|c| {
            let on: BTreeSet<&ModPath> = c.iter().collect();
            let mut text = format!("{} files:", c.len());
            for m in &c {
                for (t, names) in &g[m] {
                    if on.contains(t) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        text += &format!("\n  {} -> {}: {}", show(m), show(t), names.join(", "));
                    }
                }
            }
            text
        })
        .collect()
}

/// Fails on any import circle in the crates of `dirs`, naming them all.
fn assert_no_circles<'a>(dirs: impl Iterator<Item = &'a str>) {
    let found: Vec<String> = dirs.flat_map(file_circles).collect();
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn every_crate_depends_only_on_lower_layers() {
    let layer_of: BTreeMap<&str, usize> = CRATE_LAYERS
        .iter()
        .enumerate()
        .flat_map(|(l, dirs)| dirs.iter().map(move |d| (*d, l)))
        .collect();
    let mut by_name = BTreeMap::new();
    for dir in members() {
        let layer = *layer_of
            .get(dir.as_str())
            .unwrap_or_else(|| panic!("the workspace member {dir} is in no layer of CRATE_LAYERS"));
        by_name.insert(manifest(&dir).0, (dir, layer));
    }
    assert_eq!(
        by_name.len(),
        layer_of.len(),
        "CRATE_LAYERS names a folder that is no member"
    );
    for (dir, layer) in by_name.values() {
        for dep in manifest(dir).1 {
            let (dep_dir, dep_layer) = &by_name[&dep];
            assert!(
                dep_layer < layer,
                "{dir} (layer {layer}) depends on {dep_dir} (layer {dep_layer}), not below it"
            );
        }
    }
}

#[test]
fn no_crate_has_an_import_circle() {
    let dirs = members();
    assert_no_circles(dirs.iter().map(String::as_str));
}

/// Fails on a module of `order` (bottom first) that names one above it,
/// and on a module of `leaves` that names any of `order`: the top-level
/// modules of the crate in `dir`, a folder's files counting as its
/// module's.
fn check_layers(dir: &str, order: &[&str], leaves: &[&str]) {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, edges) in file_graph(dir) {
        if let Some(top) = m.first() {
            let refs = g.entry(top.clone()).or_default();
            refs.extend(
                edges
                    .keys()
                    .filter_map(|t| t.first())
                    .filter(|t| *t != top)
                    .cloned(),
            );
        }
    }
    for m in order {
        assert!(g.contains_key(*m), "{dir}/src has no module {m}: {:?}", g.keys());
    }
    for (low, m) in order.iter().enumerate() {
        let above: Vec<&&str> = order[low + 1..]
            .iter()
            .filter(|up| g[*m].contains(**up))
            .collect();
        assert!(above.is_empty(), "{dir}: {m} names {above:?}, above it");
    }
    for m in leaves {
        let refs = g.get(*m).unwrap_or_else(|| panic!("{dir}/src has no module {m}"));
        let layers: Vec<&String> = refs.iter().filter(|r| order.contains(&r.as_str())).collect();
        assert!(layers.is_empty(), "{dir}: leaf {m} names the layers {layers:?}");
    }
}

#[test]
fn the_library_modules_depend_on_each_other_one_way() {
    check_layers(".", &ORDER, &[]);
}

#[test]
fn the_simulator_layers_depend_on_each_other_one_way() {
    check_layers("sim", &SIM_ORDER, &SIM_LEAVES);
}

#[test]
fn the_virtual_ranks_layers_depend_on_each_other_one_way() {
    check_layers("modules/vranks", &VRANKS_ORDER, &VRANKS_LEAVES);
}

/// The reader itself: groups, nested groups, `super::`, a bare child
/// and an inline module are resolved; comments, strings and test modules
/// are not read; a circle is found.
#[test]
fn the_checker_reads_paths_and_finds_circles() {
    let text = "use crate::{a, b::{c, d}, e::F};\n\
                // crate::commented::out\n\
                let s = \"crate::in_a_string\";\n\
                let x = super::g::h();\n\
                use kid::K;\n\
                mod inner { use super::Z; }\n\
                #[cfg(test)]\nmod tests { use crate::only_tests; }\n";
    let at = vec!["m".to_string(), "n".to_string()];
    let kids: BTreeSet<String> = ["kid".to_string()].into();
    let got: BTreeSet<String> = named_paths(text, &at, &kids)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    let want: BTreeSet<String> = ["a", "b::c", "b::d", "e::F", "m::g::h", "m::n::kid::K", "m::n::Z"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(got, want);
    let g: BTreeMap<&str, BTreeSet<&str>> = [("x", ["y"]), ("y", ["z"]), ("z", ["x"]), ("w", ["x"])]
        .into_iter()
        .map(|(a, b)| (a, b.into()))
        .collect();
    assert_eq!(circles(&g), vec![vec!["x", "y", "z"]]);
}
