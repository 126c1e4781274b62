//! Merging rank files: clocks, communicators, requests, wildcards; and
//! the exports of the merged trace.

use crate::common;
use common::*;
use pnmpi_trace::fields::*;
use pnmpi_trace::merge::{merge, merge_dir};
use pnmpi_trace::rank::{RankFile, RawEvent};
use pnmpi_trace::trace::{Event, ReqRef, Trace};

/// `t` saved and opened streamed (keep the folder while reading).
fn streamed(t: &Trace) -> (pnmpi_trace::stream::MergedReader, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.pnt");
    t.save(&p, &|_| {}).unwrap();
    (pnmpi_trace::stream::MergedReader::open(&p).unwrap(), dir)
}

fn merged() -> (Trace, Vec<String>) {
    let files = three_ranks()
        .iter()
        .enumerate()
        .map(|(i, b)| (format!("rank{i}"), RankFile::parse(b).unwrap()))
        .collect();
    merge(files).unwrap()
}

fn find<'a>(t: &'a Trace, rank: u32, name: &str) -> Vec<&'a Event> {
    t.streams
        .iter()
        .filter(|s| s.rank == rank)
        .flat_map(|s| &s.events)
        .filter(|e| t.routine(e) == name)
        .collect()
}

#[test]
fn clocks_are_aligned_to_rank_0() {
    let (t, warnings) = merged();
    assert!(warnings.is_empty(), "{warnings:?}");
    // Rank 1's Init ran at 1_000_000 ns of rank 0's clock, rank 0's at
    // 1_000_100: the origin is rank 1's, and rank 0 starts 100 ns later.
    assert_eq!(find(&t, 1, "MPI_Init")[0].start, 0);
    assert_eq!(find(&t, 0, "MPI_Init")[0].start, 100);
    let recv = find(&t, 1, "MPI_Recv")[0];
    assert_eq!((recv.start, recv.end), (4_000, 5_000));
    assert_eq!(t.clocks.len(), 3);
    assert_eq!(t.clocks[1].init_offset, Some(-5_000));
    assert!(t.clocks.iter().all(|c| c.complete));
}

/// Two ranks, rank 1 on `host1` (rank 0 on "n0"), whose syncs measured
/// offsets `o_i` at 1 ms and `o_f` at 9 ms with 500 ns round trips; each
/// calls MPI_Init at 1 ms and MPI_Finalize at 9 ms of its own clock.
/// Returns rank 1's two calls' merged starts minus rank 0's.
fn aligned(host1: &str, o_i: i64, o_f: i64) -> (i128, i128) {
    let files = (0..2)
        .map(|rank| {
            let mut r = RankBuilder::new(rank, 2, 0).on(if rank == 0 { "n0" } else { host1 });
            r.ev(plain("MPI_Init", 1_000_000, 1_000_100));
            r.sync_measured(0, 1_000_000, if rank == 0 { 0 } else { o_i }, 500);
            r.ev(plain("MPI_Finalize", 9_000_000, 9_000_100));
            r.flush(9_000_100);
            r.sync_measured(1, 9_000_000, if rank == 0 { 0 } else { o_f }, 500);
            (format!("rank{rank}"), RankFile::parse(&r.finish(true)).unwrap())
        })
        .collect();
    let (t, warnings) = merge(files).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let at = |rank, name| i128::from(find(&t, rank, name)[0].start);
    (
        at(1, "MPI_Init") - at(0, "MPI_Init"),
        at(1, "MPI_Finalize") - at(0, "MPI_Finalize"),
    )
}

#[test]
fn clock_offsets_are_applied_only_where_they_are_not_noise() {
    // Across nodes: the measured offset, and a drift beyond the round
    // trips interpolated between the two measurements.
    assert_eq!(aligned("n1", 3_000, 3_000), (3_000, 3_000));
    assert_eq!(aligned("n1", 3_000, 7_000), (3_000, 7_000));
    // A drift the round trips explain (each offset is off by up to half
    // of its 500 ns): the mean offset, both calls equally shifted.
    assert_eq!(aligned("n1", 3_000, 3_400), (3_200, 3_200));
    // On rank 0's node: one kernel clock, whatever was measured.
    assert_eq!(aligned("n0", 3_000, 7_000), (0, 0));
}

#[test]
fn communicators_and_ranks_are_resolved() {
    let (t, _) = merged();
    assert_eq!(t.comms.len(), 1);
    assert_eq!(t.comms[0].members, [0, 2]);
    let id = FIRST_TABLE_COMM;
    assert_eq!(find(&t, 0, "MPI_Comm_split")[0].newcomm, Some(Some(id as u32)));
    assert_eq!(find(&t, 2, "MPI_Comm_split")[0].newcomm, Some(Some(id as u32)));
    assert_eq!(find(&t, 1, "MPI_Comm_split")[0].newcomm, Some(None));
    for rank in [0, 2] {
        assert_eq!(find(&t, rank, "MPI_Allreduce")[0].get(V::Comm), Some(id));
    }
    // Rank 0's receive on the split communicator from its rank 1: world rank 2.
    let recv = find(&t, 0, "MPI_Recv")[0];
    assert_eq!(
        (recv.get(V::Peer), recv.get(V::Tag), recv.get(V::Wild)),
        (Some(2), Some(3), None)
    );
    let send = find(&t, 2, "MPI_Send")[1];
    assert_eq!(send.get(V::Peer), Some(0));
}

#[test]
fn requests_and_wildcards_are_resolved() {
    let (t, _) = merged();
    let s0 = t.streams.iter().position(|s| s.rank == 0).unwrap() as u32;
    let irecv = find(&t, 0, "MPI_Irecv")[0];
    assert_eq!(irecv.get(V::Peer), Some(ANY_SOURCE));
    assert_eq!(irecv.get(V::Tag), Some(ANY_TAG));
    assert_eq!(irecv.get(V::Wild), Some(WILD_SOURCE | WILD_TAG));
    assert_eq!((find(&t, 0, "MPI_Isend")[0].first_req, irecv.first_req), (0, 1));
    let wait = find(&t, 0, "MPI_Waitall")[0];
    assert_eq!(wait.done.len(), 2);
    assert_eq!(wait.done[0].req, Some(ReqRef { stream: s0, index: 0 }));
    assert_eq!(wait.done[0].status, None, "a send's status is not kept");
    assert_eq!(wait.done[1].req, Some(ReqRef { stream: s0, index: 1 }));
    assert_eq!(wait.done[1].status, Some((2, 9)));
}

#[test]
fn the_merged_trace_round_trips_and_is_compact() {
    let (t, _) = merged();
    let mut bytes = Vec::new();
    t.write(&mut bytes, &|_| {}).unwrap();
    let (back, truncated) = Trace::parse(&bytes).unwrap();
    assert!(truncated.is_none());
    assert_eq!(back, t);
    // The most frequent routines come first in the table.
    let counts: Vec<usize> = t
        .routines
        .iter()
        .map(|r| (0..3).map(|k| find(&t, k, r).len()).sum())
        .collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]),
        "{:?} {counts:?}",
        t.routines
    );
}

#[test]
fn messages_match_sends_to_receives() {
    let (t, _) = merged();
    let msgs = pnmpi_trace::messages::messages(&mut streamed(&t).0).unwrap();
    let named: Vec<(String, String, i64)> = msgs
        .iter()
        .map(|m| {
            let ev = |(s, e): (usize, usize)| {
                let st = &t.streams[s];
                format!("{}:{}", st.rank, t.routine(&st.events[e]))
            };
            (ev(m.send), ev(m.recv), m.bytes)
        })
        .collect();
    let want = [
        ("0:MPI_Isend", "1:MPI_Recv", 80),
        ("2:MPI_Send", "0:MPI_Waitall", 16),
        ("2:MPI_Send", "0:MPI_Recv", 4),
    ];
    assert_eq!(named.len(), 3, "{named:?}");
    for w in want {
        assert!(
            named.iter().any(|n| (n.0.as_str(), n.1.as_str(), n.2) == w),
            "{w:?} in {named:?}"
        );
    }
}

#[test]
fn simgrid_export_decomposes_the_split_allreduce() {
    let (t, _) = merged();
    let dir = tempfile::tempdir().unwrap();
    let x = pnmpi_trace::simgrid::export(&mut streamed(&t).0, dir.path(), &|_| {}).unwrap();
    let r0 = std::fs::read_to_string(dir.path().join("rank-00000.txt")).unwrap();
    let r2 = std::fs::read_to_string(dir.path().join("rank-00002.txt")).unwrap();
    let tag = pnmpi_trace::simgrid::SUBCOMM_TAG + FIRST_TABLE_COMM;
    assert!(
        r0.contains(&format!("0 recv 2 {tag} 8\n0 send 2 {tag} 8\n")),
        "{r0}"
    );
    assert!(
        r2.contains(&format!("2 send 0 {tag} 8\n2 recv 0 {tag} 8\n")),
        "{r2}"
    );
    assert!(r0.contains("0 irecv 2 9 16\n"), "the wildcard's source: {r0}");
    assert!(r0.contains("0 wait 0 1 7\n0 wait 2 0 9\n"), "{r0}");
    assert!(x.approximated.is_empty(), "{:?}", x.approximated);
}

#[test]
fn a_folder_with_an_unfinished_rank_still_merges() {
    let dir = tempfile::tempdir().unwrap();
    unfinished_folder(dir.path(), None);
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let (t, warnings) = merge_dir(dir.path(), &|_| {}).unwrap();
    assert_eq!(t.world_size, 3);
    assert!(warnings.iter().any(|w| w.contains("truncated")), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("did not reach MPI_Finalize")),
        "{warnings:?}"
    );
}

#[test]
fn files_from_two_runs_do_not_merge() {
    let files = three_ranks();
    let mut other = RankFile::parse(&files[1]).unwrap();
    other.header.run_id = 1;
    let set = vec![
        ("a".to_string(), RankFile::parse(&files[0]).unwrap()),
        ("b".to_string(), other),
    ];
    let e = merge(set).unwrap_err().to_string();
    assert!(e.contains("another run"), "{e}");
}

#[test]
fn threads_become_streams_in_thread_order() {
    // A worker thread's buffer reaches the file before the main thread's.
    let mut worker = RankBuilder::new(0, 1, 0);
    worker.stream = 1;
    worker.ev(RawEvent {
        peer: Some(0),
        tag: Some(1),
        comm: Some(SELF),
        bytes: Some(4),
        reqs: &[0x77],
        ..plain("MPI_Isend", 1_000_200, 1_000_300)
    });
    worker.flush(1_000_300);
    let mut main = RankBuilder::new(0, 1, 0);
    main.chunks = std::mem::take(&mut worker.chunks);
    main.ev(plain("MPI_Init", 1_000_000, 1_000_100));
    main.ev(RawEvent {
        done: &[pnmpi_trace::rank::RawDone {
            handle: 0x77,
            status: None,
        }],
        ..plain("MPI_Waitall", 1_000_400, 1_000_500)
    });
    main.flush(1_000_500);
    let file = RankFile::parse(&main.finish(true)).unwrap();
    assert_eq!(file.streams[0].id, 1, "the worker's chunk came first");
    let (t, warnings) = merge(vec![("r".into(), file)]).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let threads: Vec<u32> = t.streams.iter().map(|s| s.thread).collect();
    assert_eq!(threads, [0, 1]);
    let wait = find(&t, 0, "MPI_Waitall")[0];
    assert_eq!(wait.done[0].req, Some(ReqRef { stream: 1, index: 0 }));
    let (back, _) = Trace::parse(&{
        let mut b = Vec::new();
        t.write(&mut b, &|_| {}).unwrap();
        b
    })
    .unwrap();
    assert_eq!(back, t, "a completion on another stream round-trips");
}
