//! Files of older format versions still read. Version 1 (written by the
//! last version-1 writer, kept in `tests/fixtures/v1`): rank files merge,
//! in memory and streamed, and a merged trace reads, with the same events;
//! their `v` collectives, recorded as totals only, carry no per-peer
//! counts, and the SimGrid export lists them as approximated. Version 2
//! rank files (`tests/fixtures/v2`, whose events are encoded without the
//! packed times and repeated arguments of version 3) dump, streamed and
//! merged in memory, exactly as the last version-2 reader dumped them
//! (times re-dumped once when ranks on rank 0's host stopped being
//! aligned by measured offsets: only ranks 1-3's times changed).
//! Version 3 rank files and version 2 merged traces (`tests/fixtures/v3`,
//! before call sites) dump as their writer dumped them.

use pnmpi_trace::dump;
use pnmpi_trace::folder::FolderReader;
use pnmpi_trace::merge::merge_dir;
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::trace::Trace;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1")
}

/// The rank files of `fixtures/VERSION`, alone in a folder.
fn rank_folder_of(version: &str, ranks: u32) -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(version);
    let dir = tempfile::tempdir().unwrap();
    for r in 0..ranks {
        let name = format!("rank-{r:05}.pnr");
        std::fs::copy(from.join(&name), dir.path().join(&name)).unwrap();
    }
    dir
}

/// The two version 1 rank files, alone in a folder.
fn rank_folder() -> tempfile::TempDir {
    rank_folder_of("v1", 2)
}

/// `pnmpi trace dump` of `src`.
fn dump_of(src: &mut dyn StreamedTrace) -> String {
    let mut out = Vec::new();
    dump::dump(src, None, &mut out, "dump", &|_| {}).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn version_2_rank_files_dump_as_the_version_2_reader_dumped_them() {
    let dir = rank_folder_of("v2", 4);
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v2/tracecheck.dump"),
    )
    .unwrap();
    assert!(want.contains("MPI_Waitall") && want.contains("MPI_Comm_split"));
    // Streamed, window by window.
    let mut folder = FolderReader::open(dir.path()).unwrap();
    assert_eq!(dump_of(&mut folder), want);
    // Decoded whole by the merge, written and read back.
    let (merged, warnings) = merge_dir(dir.path(), &|_| {}).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let pnt = dir.path().join("t.pnt");
    let mut file = std::fs::File::create(&pnt).unwrap();
    merged.write(&mut file, &|_| {}).unwrap();
    drop(file);
    let mut reader = MergedReader::open(&pnt).unwrap();
    assert_eq!(dump_of(&mut reader), want);
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

#[test]
fn version_3_rank_files_and_version_2_merged_traces_dump_as_their_writer_dumped_them() {
    let dir = rank_folder_of("v3", 4);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v3");
    let want = std::fs::read_to_string(fixtures.join("tracecheck.dump")).unwrap();
    assert!(want.contains("MPI_Waitall") && !want.contains("site="));
    let mut folder = FolderReader::open(dir.path()).unwrap();
    assert!(folder.sites().is_empty());
    assert_eq!(dump_of(&mut folder), want);
    let mut merged = MergedReader::open(&fixtures.join("v3.pnt")).unwrap();
    assert_eq!(dump_of(&mut merged), want);
    // Merged again by today's writer.
    let pnt = dir.path().join("t.pnt");
    pnmpi_trace::folder::save_merged(dir.path(), &pnt, &|_| {}).unwrap();
    assert_eq!(
        std::fs::read(&pnt).unwrap()[8],
        pnmpi_trace::container::MERGED_VERSION
    );
    assert_eq!(dump_of(&mut MergedReader::open(&pnt).unwrap()), want);
}
