//! The analysis on small traces built in memory, whose waits and paths
//! are known by construction.

use crate::load::{from_trace, Options, Run};
use crate::path::{critical_path, Activity};
use crate::summary;
use crate::waits::Pattern;
use pnmpi_trace::fields::V;
use pnmpi_trace::trace::{Event, Stream, Trace};

const ROUTINES: [&str; 9] = [
    "MPI_Init",
    "MPI_Finalize",
    "MPI_Send",
    "MPI_Recv",
    "MPI_Barrier",
    "MPI_Reduce",
    "MPI_Bcast",
    "MPI_Test",
    "MPI_Wtime",
];

/// A call of routine `name` from `start` to `end` (ns), with fields.
fn call(name: &str, start: u64, end: u64, fields: &[(V, i64)]) -> Event {
    let mut e = Event {
        routine: ROUTINES.iter().position(|r| *r == name).unwrap() as u32,
        start,
        end,
        ..Event::default()
    };
    e.set(V::Comm, Some(0));
    for &(v, x) in fields {
        e.set(v, Some(x));
    }
    e
}

/// A trace of one stream per rank, each its events as given.
fn trace(ranks: Vec<Vec<Event>>) -> Trace {
    let streams = ranks
        .into_iter()
        .enumerate()
        .map(|(r, events)| Stream {
            rank: r as u32,
            thread: 0,
            events,
        })
        .collect::<Vec<_>>();
    Trace {
        world_size: streams.len() as u32,
        mpi: "test".into(),
        routines: ROUTINES.iter().map(|r| r.to_string()).collect(),
        streams,
        ..Trace::default()
    }
}

/// A run of one stream per rank: `MPI_Init` over [0, 10], the calls,
/// `MPI_Finalize` at `fin`; sends above `eager` bytes are rendezvous.
fn run_eager(ranks: Vec<Vec<Event>>, fin: u64, eager: u64) -> Run {
    let ranks = ranks
        .into_iter()
        .map(|calls| {
            let mut events = vec![call("MPI_Init", 0, 10, &[])];
            events.extend(calls);
            events.push(call("MPI_Finalize", fin, fin + 10, &[]));
            events
        })
        .collect();
    let options = Options {
        eager,
        ..Options::default()
    };
    from_trace(trace(ranks), options).unwrap()
}

/// [`run_eager`] with a 64 KiB eager threshold.
fn run(ranks: Vec<Vec<Event>>, fin: u64) -> Run {
    run_eager(ranks, fin, 65536)
}

#[test]
fn late_sender_and_its_path() {
    let send = call(
        "MPI_Send",
        2010,
        2020,
        &[(V::Peer, 1), (V::Tag, 0), (V::Bytes, 8)],
    );
    let recv = call("MPI_Recv", 20, 2025, &[(V::Peer, 0), (V::Tag, 0), (V::Bytes, 8)]);
    let r = run(vec![vec![send], vec![recv]], 2030);
    let w = &r.waits;
    assert_eq!(w.len(), 1);
    assert_eq!(
        (w[0].pattern, w[0].time, r.rank(w[0].at.actor)),
        (Pattern::LateSender, 1990.0, 1)
    );
    assert_eq!((r.rank(w[0].cause.actor), r.routine(w[0].cause)), (0, "MPI_Send"));
    // Back from rank 1's MPI_Finalize: its last burst, the receive after
    // the send entered, then rank 0's compute from MPI_Init to the send.
    let p = critical_path(&r);
    let got: Vec<(u32, f64, f64, bool)> = p
        .iter()
        .map(|s| {
            (
                s.actor,
                s.start,
                s.end,
                matches!(s.what, Activity::Compute { .. }),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 10.0, 2010.0, true),
            (1, 2010.0, 2025.0, false),
            (1, 2025.0, 2030.0, true)
        ]
    );
    let s = summary::path(&r, &p);
    assert_eq!((s.length_s, s.hops), (2020e-9, 1));
}

#[test]
fn late_receiver_only_for_synchronous_sends() {
    let send = call("MPI_Send", 20, 2025, &[(V::Peer, 1), (V::Tag, 0), (V::Bytes, 8)]);
    let recv = call(
        "MPI_Recv",
        2010,
        2030,
        &[(V::Peer, 0), (V::Tag, 0), (V::Bytes, 8)],
    );
    // 8 bytes above an eager threshold of 4: a rendezvous.
    let r = run_eager(vec![vec![send.clone()], vec![recv.clone()]], 2040, 4);
    let w = &r.waits;
    let got: Vec<(u32, Pattern, f64, u32)> = w
        .iter()
        .map(|w| (r.rank(w.at.actor), w.pattern, w.time, r.rank(w.cause.actor)))
        .collect();
    assert_eq!(got, vec![(0, Pattern::LateReceiver, 1990.0, 1)]);
    // Eager: the sender did not wait for the receive.
    assert!(run(vec![vec![send], vec![recv]], 2040).waits.is_empty());
}

#[test]
fn collective_patterns_and_causes() {
    let barrier = |start| call("MPI_Barrier", start, 3110, &[]);
    let reduce = |start, end| call("MPI_Reduce", start, end, &[(V::Root, 0), (V::Bytes, 8)]);
    let bcast = |start, end| call("MPI_Bcast", start, end, &[(V::Root, 1), (V::Bytes, 8)]);
    let r = run(
        vec![
            vec![barrier(100), reduce(3200, 3800), bcast(3900, 4100)],
            vec![barrier(200), reduce(3600, 3610), bcast(4000, 4010)],
            vec![barrier(3100), reduce(3700, 3710), bcast(3950, 4100)],
        ],
        5000,
    );
    let w = &r.waits;
    let got: Vec<(u32, Pattern, f64, u32)> = w
        .iter()
        .map(|w| (r.rank(w.at.actor), w.pattern, w.time, r.rank(w.cause.actor)))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, Pattern::WaitBarrier, 3000.0, 2),
            (0, Pattern::EarlyReduce, 400.0, 1),
            (0, Pattern::LateBroadcast, 100.0, 1),
            (1, Pattern::WaitBarrier, 2900.0, 2),
            (2, Pattern::LateBroadcast, 50.0, 1),
        ]
    );
    let s = summary::waits(&r, w, 2);
    assert_eq!(s.worst.len(), 2);
    assert_eq!((s.worst[0].call.rank, s.worst[0].cause.rank), (0, 2));
    let total: f64 = s.by_rank.iter().map(|r| r.total_s).sum();
    assert!((total - s.total_s).abs() < 1e-12);
}

/// Polls that completed nothing (`MPI_Test`) and clock reads before
/// `MPI_Init`, around the calls that wait and cause waits, after
/// `MPI_Finalize`, and on a rank without `MPI_Init` whose path starts at
/// them: the analysis with them folded equals the one with each kept,
/// figure for figure, and keeps only the other calls.
#[test]
fn folded_polls_change_no_figure() {
    let test = |at: u64| call("MPI_Test", at, at + 1, &[]);
    let polls = |from: u64, n: u64| (0..n).map(|k| test(from + 3 * k)).collect::<Vec<_>>();
    let p2p = |peer: i64| [(V::Peer, peer), (V::Tag, 0), (V::Bytes, 8)];
    let mut r0 = vec![call("MPI_Wtime", 1, 2, &[]), call("MPI_Init", 10, 20, &[])];
    r0.extend(polls(30, 5));
    r0.push(call("MPI_Send", 2010, 2020, &p2p(1)));
    r0.extend(polls(2030, 100));
    r0.push(call("MPI_Barrier", 3000, 3110, &[]));
    r0.push(call("MPI_Finalize", 5000, 5010, &[]));
    r0.push(call("MPI_Wtime", 5020, 5021, &[]));
    let mut r1 = vec![call("MPI_Init", 10, 20, &[])];
    r1.extend(polls(100, 3));
    r1.push(call("MPI_Recv", 200, 2025, &p2p(0)));
    r1.extend(polls(2100, 7));
    r1.push(call("MPI_Barrier", 2900, 3110, &[]));
    r1.push(call("MPI_Finalize", 5000, 5010, &[]));
    // Rank 2 has no MPI_Init: the path, from its MPI_Finalize back
    // through its barrier (the last to enter it), starts at its first poll.
    let mut r2 = polls(5, 4);
    r2.push(call("MPI_Barrier", 3050, 3110, &[]));
    r2.extend(polls(3200, 9));
    r2.push(call("MPI_Finalize", 5100, 5110, &[]));
    let t = trace(vec![r0, r1, r2]);
    let runs: Vec<Run> = [true, false]
        .map(|fold| {
            from_trace(
                t.clone(),
                Options {
                    fold,
                    ..Options::default()
                },
            )
            .unwrap()
        })
        .into();
    let (folded, kept) = (&runs[0], &runs[1]);
    assert_eq!(folded.op_count(), kept.op_count());
    assert_eq!(kept.stored(), kept.op_count());
    assert_eq!(folded.stored(), 10, "the calls other than polls and clock reads");
    assert_eq!(folded.waits, kept.waits);
    assert_eq!(
        folded.waits.iter().map(|w| w.pattern).collect::<Vec<_>>(),
        [Pattern::WaitBarrier, Pattern::LateSender, Pattern::WaitBarrier]
    );
    let paths = runs.iter().map(critical_path).collect::<Vec<_>>();
    assert_eq!(paths[0], paths[1]);
    assert_eq!(paths[0].first().map(|s| (s.actor, s.start)), Some((2, 5.0)));
    let reports = runs
        .iter()
        .zip(&paths)
        .map(|(r, p)| {
            let report =
                crate::report::Report::new("t", r, summary::waits(r, &r.waits, 10), summary::path(r, p), p);
            (report.to_json(), report.to_string(), report.svg().unwrap())
        })
        .collect::<Vec<_>>();
    assert_eq!(reports[0], reports[1]);
    let marks = runs
        .iter()
        .zip(&paths)
        .map(|(r, p)| crate::marks::marks(r, p))
        .collect::<Vec<_>>();
    assert_eq!(marks[0], marks[1]);
}
