//! The module author's guide, docs/writing-modules.md: its two complete
//! examples are the very files built here, and they do what it says when
//! built and configured as it says, under real mpirun. And the map: every
//! relative link of README.md and docs/*.md leads to a file that exists,
//! and to a heading of it when it names one.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Asserts that the guide shows `file` (relative to the repository) in a
/// fenced ```` ```lang ```` block, byte for byte.
fn assert_shown_verbatim(lang: &str, file: &str) {
    let guide = read(&repo().join("docs/writing-modules.md"));
    let block = format!("```{lang}\n{}```\n", read(&repo().join(file)));
    assert!(
        guide.contains(&block),
        "docs/writing-modules.md must show {file} verbatim in a ```{lang} block; copy the file into the guide"
    );
}

#[test]
fn the_guide_shows_the_example_sources_verbatim() {
    assert_shown_verbatim("c", "c-tests/modules/guide_example.c");
    assert_shown_verbatim("rust", "modules/examples/sendcount/src/lib.rs");
    assert_shown_verbatim("toml", "modules/examples/sendcount/Cargo.toml");
}

/// Builds the C example as the guide says: with `-I PREFIX/include` of an
/// installed layout (`pnmpi/pnmpi.h`, `pnmpi/xmpi.h`), into the folder the
/// tests put on PNMPI_LIB_PATH.
fn c_example() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let prefix = modules_dir().join("guide-prefix");
        let headers = prefix.join("include/pnmpi");
        std::fs::create_dir_all(&headers).expect("include folder");
        for (from, name) in [
            (repo().join("include/pnmpi.h"), "pnmpi.h"),
            (target_dir().join("include/xmpi.h"), "xmpi.h"),
        ] {
            std::fs::copy(&from, headers.join(name))
                .unwrap_or_else(|e| panic!("cannot copy {}: {e}", from.display()));
        }
        let out = modules_dir().join("guide_example.so");
        let run = Command::new(mpicc())
            .args(["-shared", "-fPIC", "-Wall", "-Werror"])
            .arg(format!("-I{}", prefix.join("include").display()))
            .arg("-o")
            .arg(&out)
            .arg(repo().join("c-tests/modules/guide_example.c"))
            .output()
            .expect("mpicc runs");
        assert!(
            run.status.success(),
            "building the guide's C example failed:\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        out
    })
}

/// The Rust example, built by `cargo build --workspace` as
/// target/<profile>/libsendcount.so.
fn rust_example() -> PathBuf {
    let lib = target_dir().join("libsendcount.so");
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --workspace` first",
        lib.display()
    );
    lib
}

/// A case whose PNMPI_LIB_PATH holds both examples, found by bare name as
/// the guide's configurations name them.
fn guide_case(conf: &str) -> Case {
    c_example();
    rust_example();
    let mut case = Case::new();
    let path = format!("{}:{}", modules_dir().display(), target_dir().display());
    case.env("PNMPI_LIB_PATH", &path);
    case.conf(conf);
    case
}

fn sorted_stdout(run: &Run) -> Vec<&str> {
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    lines.sort_unstable();
    lines
}

const RING: &str = "ring: size 2 token 2 sum 1 wtime_ok 1";

#[test]
fn the_c_example_counts_each_ranks_sends() {
    let case = guide_case("module guide_example\nargument label ring\n");
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    // Each rank prints its own line, in whichever order the ranks finish.
    assert_eq!(
        sorted_stdout(&run),
        [
            "guide_example[ring] rank 0: 1 sends, 4 bytes",
            "guide_example[ring] rank 1: 1 sends, 4 bytes",
            RING
        ]
    );
    assert!(!run.stderr.contains("guide_example:"), "{}", run.stderr);
}

#[test]
fn the_rust_example_reports_every_rank_on_rank_0() {
    let mut case = guide_case("module sendcount\nargument label ring\n");
    case.env("PNMPI_VERBOSE", "1");
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    // Named by its PNMPI_ModuleName (module!'s `name`), wrapping 2 routines.
    let listing = format!("pnmpi:   1. sendcount {} (2 routines)", rust_example().display());
    assert!(
        run.stderr.lines().any(|l| l == listing),
        "{listing}\n{}",
        run.stderr
    );
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            RING,
            "sendcount[ring] rank 0: 1 sends, 4 bytes",
            "sendcount[ring] rank 1: 1 sends, 4 bytes",
            "sendcount[ring] total: 2 sends, 8 bytes"
        ]
    );
    assert!(!run.stderr.contains("sendcount:"), "{}", run.stderr);
}

#[test]
fn both_examples_chain_each_with_its_own_arguments() {
    let case = guide_case("module guide_example\nargument label c\nmodule sendcount\nargument label rust\n");
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        sorted_stdout(&run),
        [
            "guide_example[c] rank 0: 1 sends, 4 bytes",
            "guide_example[c] rank 1: 1 sends, 4 bytes",
            RING,
            "sendcount[rust] rank 0: 1 sends, 4 bytes",
            "sendcount[rust] rank 1: 1 sends, 4 bytes",
            "sendcount[rust] total: 2 sends, 8 bytes"
        ]
    );
}

#[test]
fn every_part_of_the_sdk_works_under_mpi() {
    let tour = target_dir().join("libsdktour.so");
    assert!(
        tour.is_file(),
        "{} missing: run `cargo build --workspace` first",
        tour.display()
    );
    // sdktour routes the application's sends into stack `side`, where the
    // C example counts them.
    let case = guide_case(
        "module sdktour\nargument greeting hello\nargument route side\n\
         stack side\nmodule guide_example\nargument label side\n",
    );
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            RING,
            "sdktour: registered: Ok(())",
            "sdktour: arguments: greeting Some(\"hello\"), missing None",
            "sdktour: self is sdktour: true",
            "sdktour: module nope: NoModule, no such module (PNMPI status -3)",
            "sdktour: global served: same true, as a long Some(Signature)",
            "sdktour: service answer: Ok((\"answer\", \"i\", true)), as p Some(Signature)",
            "sdktour: pcontrol reaches sdktour: true",
            "sdktour: route: Some(true), stack nope: Some(NoStack)",
            "sdktour: rank 0 of 2; an int is 4 bytes; time goes on: true",
            "sdktour: ring on a dup: Received { source: 1, tag: 5, len: 1 }, value 10",
            "sdktour: gatherv: [[0], [1, 1]]",
            "sdktour: sends counted by guide_example: Ok(1)",
            "sdktour: fini",
            "sdktour: unregistration point"
        ]
    );
    assert!(!run.stderr.contains("sdktour:"), "{}", run.stderr);
}

/// GitHub's anchor of a Markdown heading: lower case, punctuation other
/// than `-` and `_` dropped, spaces made hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of a Markdown file,
/// outside fenced blocks and code spans. A code span may run across a line
/// break, so spans are cut per paragraph, not per line.
fn link_targets(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    let mut paragraph = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if fenced || line.starts_with("```") || line.trim().is_empty() {
            links_of_paragraph(&paragraph, &mut out);
            paragraph.clear();
            continue;
        }
        paragraph.push_str(line);
        paragraph.push('\n');
    }
    out
}

/// Adds the inline link targets of one paragraph, its code spans dropped.
fn links_of_paragraph(paragraph: &str, out: &mut Vec<String>) {
    let prose: String = paragraph.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let mut pages = vec![repo().join("README.md")];
    for entry in std::fs::read_dir(repo().join("docs")).expect("docs/") {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = read(page);
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a folder").join(file)
            };
            checked += 1;
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
            } else if let Some(fragment) = fragment {
                if path.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&path)).iter().any(|a| a == fragment)
                {
                    broken.push(format!("{}: {target}: no such heading", page.display()));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found: is the parser right?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_githubs_rule() {
    assert_eq!(
        anchor(" Virtual ranks: many ranks per process (`pnmpi run --vranks`)"),
        "virtual-ranks-many-ranks-per-process-pnmpi-run---vranks"
    );
    assert_eq!(
        anchor(" Running an application \"on\" a target machine"),
        "running-an-application-on-a-target-machine"
    );
}

/// Where `text` names a tracker entry ("issue" and a number) rather than
/// the reason: the byte offsets of each such mention.
fn issue_numbers(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    let word = "issue ";
    lower
        .match_indices(word)
        .filter(|(at, _)| lower[at + word.len()..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn issue_numbers_are_found_where_they_are() {
    let named = format!("see {} 12, not issue x or tissues 3", "Issue");
    assert_eq!(issue_numbers(&named), vec![4]);
    assert!(issue_numbers("the issue is 3 links").is_empty());
}

/// Code and docs say the reason, never a tracker entry's number, and
/// docs/performance.md stays a page one reads: at most 800 lines, one row
/// a figure.
#[test]
fn code_and_docs_give_reasons_and_performance_fits_its_page() {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo())
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files failed");
    let mut found = Vec::new();
    let mut read_files = 0;
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name);
        let Ok(text) = std::fs::read_to_string(repo().join(&*name)) else {
            continue; // binary, or removed in the work tree
        };
        read_files += 1;
        for at in issue_numbers(&text) {
            let line = text[..at].matches('\n').count() + 1;
            found.push(format!("{name}:{line}"));
        }
    }
    assert!(
        read_files > 200,
        "only {read_files} files read: is git ls-files right?"
    );
    assert!(
        found.is_empty(),
        "say the reason instead of a tracker number at:\n{}",
        found.join("\n")
    );
    let lines = read(&repo().join("docs/performance.md")).lines().count();
    assert!(
        lines <= 800,
        "docs/performance.md has {lines} lines: at most 800, one row a figure, no history"
    );
}
