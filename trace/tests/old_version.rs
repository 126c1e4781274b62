//! Format version 1 files (written by the last version-1 writer, kept in
//! `tests/fixtures/v1`) still read: rank files merge, in memory and
//! streamed, and a merged trace reads, with the same events; their `v`
//! collectives, recorded as totals only, carry no per-peer counts, and the
//! SimGrid export lists them as approximated.

use pnmpi_trace::folder::FolderReader;
use pnmpi_trace::merge::merge_dir;
use pnmpi_trace::trace::Trace;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1")
}

/// The two version 1 rank files, alone in a folder.
fn rank_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for r in ["rank-00000.pnr", "rank-00001.pnr"] {
        std::fs::copy(fixtures().join(r), dir.path().join(r)).unwrap();
    }
    dir
}

fn routine_counts(t: &Trace) -> Vec<(String, usize)> {
    let mut n: std::collections::BTreeMap<String, usize> = Default::default();
    for s in &t.streams {
        for e in &s.events {
            *n.entry(t.routine(e).to_string()).or_default() += 1;
        }
    }
    n.into_iter().collect()
}

#[test]
fn version_1_rank_files_and_merged_trace_read_alike() {
    let dir = rank_folder();
    let (merged, warnings) = merge_dir(dir.path(), &|_| {}).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let (old, damage) = Trace::read(&fixtures().join("v1.pnt")).unwrap();
    assert!(damage.is_none());
    assert_eq!(merged.event_count(), 40);
    assert_eq!(routine_counts(&merged), routine_counts(&old));
    // 2 iterations of vcoll on 2 ranks.
    let a2av: Vec<_> = old.streams[0]
        .events
        .iter()
        .filter(|e| old.routine(e) == "MPI_Alltoallv")
        .collect();
    assert_eq!(a2av.len(), 2);
    assert!(a2av
        .iter()
        .all(|e| e.counts.is_none() && e.get(pnmpi_trace::fields::V::Bytes).is_some()));

    // The streaming folder reader too.
    let mut folder = FolderReader::open(dir.path()).unwrap();
    assert_eq!(folder.event_count(), 40);
    let mut n = 0;
    for i in 0..2 {
        while folder.next(i).unwrap().is_some() {
            n += 1;
        }
    }
    assert_eq!(n, 40);
}

#[test]
fn a_version_1_export_lists_its_v_collectives_as_approximated() {
    let dir = rank_folder();
    let mut src = FolderReader::open(dir.path()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let x = pnmpi_trace::simgrid::export(&mut src, out.path(), &|_| {}).unwrap();
    let names: Vec<&str> = x.approximated.iter().map(|(r, _)| r.as_str()).collect();
    for r in [
        "MPI_Allgatherv",
        "MPI_Alltoallv",
        "MPI_Ialltoallv",
        "MPI_Reduce_scatter",
    ] {
        assert!(names.contains(&r), "{r} in {names:?}");
    }
}
